"""Trial functions for the search tests, importable by Ray workers and by a driver script run in a subprocess."""
from __future__ import annotations

import os
import time
from typing import Any, Dict, List

import numpy as np

from fe_core.data import Data
from fe_core.trace import Trace


def noisy_sum(search_idx: int, a: int, b: int) -> Dict[str, float]:
    """a * 10 + b plus a draw from numpy's global generator (so the result shows whether the trial was seeded)."""
    return {"score": a * 10 + b + float(np.random.rand()), "pid": os.getpid()}


def fails_on_b2(search_idx: int, a: int, b: int) -> float:
    """Fails for b == 2 (after printing, so the trial's log shows it)."""
    print(f"trial {search_idx} starts with a={a}, b={b}")
    if b == 2:
        raise ValueError(f"b=2 is not allowed (trial {search_idx})")
    return a + b


def blocking_sum(search_idx: int, a: int, b: int, work: str) -> Dict[str, float]:
    """`noisy_sum` that notes each call in `<work>/calls.txt`, and waits for `<work>/release` from trial 3 on."""
    with open(os.path.join(work, "calls.txt"), "a", encoding="utf-8") as file:
        file.write(f"{search_idx}\n")
    while search_idx >= 3 and not os.path.exists(os.path.join(work, "release")):
        time.sleep(0.05)
    return {"score": a * 10 + b + float(np.random.rand())}


class EvalRecorder(Trace):
    """Keeps the eval value of `key` at the end of every epoch."""

    def __init__(self, key: str) -> None:
        super().__init__(inputs=key, mode="eval")
        self.key = key
        self.values: List[float] = []

    def on_epoch_end(self, data: Data) -> None:
        self.values.append(float(data[self.key]))


def regression_fit(search_idx: int, lr: float) -> Dict[str, Any]:
    """A real 6-epoch Estimator fit of a linear model on the numpy test backend, reporting eval mse to Optuna."""
    import numpy_backend as nb  # pylint: disable=import-outside-toplevel
    from fe_core.dataset import NumpyDataset  # pylint: disable=import-outside-toplevel
    from fe_core.estimator import Estimator  # pylint: disable=import-outside-toplevel
    from fe_core.network import make_network  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    from fe_core.pipeline import Pipeline  # pylint: disable=import-outside-toplevel
    from fe_core.search import OptunaPruning  # pylint: disable=import-outside-toplevel
    nb.install()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 2)).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0]]) + 0.5).astype(np.float32)
    data = NumpyDataset({"x": x, "y": y})
    model = nb.build(2, 1, lr=lr)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    recorder = EvalRecorder("mse")
    estimator = Estimator(pipeline=Pipeline(train_data=data, eval_data=data, batch_size=16), network=network,
                          epochs=6, traces=[recorder, OptunaPruning("mse")], log_steps=None)
    estimator.fit()
    return {"mse": recorder.values[-1], "epochs": len(recorder.values)}
