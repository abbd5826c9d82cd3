"""Issue 30 item 9: `fe test`'s hint works for any script: `fe test SCRIPT --weights PATH` (an option of the CLI
itself, not an argument the script must take) loads the file, and the warning names it."""
from __future__ import annotations

import textwrap

import pytest

from test_cli_saved_weights import TINY, run_cli, test_accuracy

# A script whose get_estimator takes no weights argument at all (most scripts).
SCRIPT = textwrap.dedent('''
    import fe
    from fe.examples.digits import load_digits_datasets
    from fe.examples.digits_torch_mlp import mlp
    from fe.op.numpyop.univariate import Minmax
    from fe.op.tensorop.loss import CrossEntropy
    from fe.op.tensorop.model import ModelOp, UpdateOp
    from fe.trace.metric import Accuracy


    def get_estimator(epochs: int = 1):
        train, evaluation, test = load_digits_datasets(flatten=True)
        pipeline = fe.Pipeline(train_data=train, test_data=test, batch_size=16, ops=[Minmax("x", "x")])
        model = fe.build(model_fn=mlp, optimizer_fn="adam", model_name="net")
        network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                  UpdateOp(model=model, loss_name="ce")])
        return fe.Estimator(pipeline=pipeline, network=network, epochs=epochs, train_steps_per_epoch=2,
                            log_steps=0, traces=Accuracy("y", "y_pred"))
''')


def test_the_warning_names_an_option_every_script_accepts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.py").write_text(SCRIPT)
    code, _, errors = run_cli(["test", "plain.py"], capsys)
    assert code == 0
    assert "pass the weights file: fe test SCRIPT --weights PATH" in errors
    assert "--weights_path" not in errors


@pytest.mark.slow
def test_fe_test_weights_loads_the_file_into_the_model(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli(["train", "fe.examples.digits_torch_mlp", *TINY], capsys)[0] == 0
    weights = tmp_path / "fe_runs" / "digits_torch_mlp" / "model_best_accuracy.pt"
    (tmp_path / "plain.py").write_text(SCRIPT)
    for option in (str(weights), f"net={weights}"):
        code, tested, errors = run_cli(["test", "plain.py", "--weights", option], capsys)
        assert code == 0, errors
        assert f"fe test: loaded model 'net' from {weights} (--weights)" in tested
        assert "warning" not in errors
        assert test_accuracy(tested)
    fresh = run_cli(["test", "plain.py"], capsys)[1]
    assert _test_loss(fresh) != _test_loss(tested)  # the file's weights, not the initial ones


def _test_loss(out):
    return [line for line in out.splitlines() if line.startswith("FastEstimator-Test")][-1].split("ce: ")[1]


def test_a_wrong_weights_option_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.py").write_text(SCRIPT)
    code, _, errors = run_cli(["test", "plain.py", "--weights", "missing.pt"], capsys)
    assert code == 2 and errors.strip() == "fe test: error: --weights missing.pt: no such file 'missing.pt'"
    code, _, errors = run_cli(["test", "plain.py", "--weights", "other=missing.pt"], capsys)
    assert code == 2 and "no model named 'other'; the network's models are net" in errors
