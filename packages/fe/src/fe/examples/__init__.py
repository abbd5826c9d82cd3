"""Example scripts in the FastEstimator style, training on scikit-learn's bundled digits data (no download).

Each module defines `get_estimator(...)`, so it runs with the `fe` command or as a module:

```bash
fe train fe.examples.digits_torch_cnn --epochs 2     # or: fe train path/to/digits_torch_cnn.py ...
fe test fe.examples.digits_torch_cnn                 # tests the best model the training saved
python -m fe.examples.digits_torch_cnn --epochs 2 --batch_size 64
```

Each saves its best model into `--save_dir`, by default `./fe_runs/<module>` under the working directory, where a
later `fe test` in the same directory finds it (nothing is written to the temporary directory).

| module | backend | model |
|---|---|---|
| `digits_torch_cnn` | torch | LeNet on the digits upscaled to 28x28 |
| `digits_torch_mlp` | torch | a 3-layer MLP on the 64 pixels |
| `digits_tf_cnn` | tf | LeNet on the digits upscaled to 28x28 |
| `digits_tf_mlp` | tf | a 3-layer MLP on the 64 pixels |

They need the `examples` extra (scikit-learn) and their backend; from a clone of fe:
`pip install ./packages/fe-core ./packages/fe-torch "./packages/fe[torch,examples]"`.
Importing this package imports no framework; each example imports only its own.
"""

__all__ = ["EXAMPLES"]

EXAMPLES = ("digits_torch_cnn", "digits_torch_mlp", "digits_tf_cnn", "digits_tf_mlp")
