"""`fe test` after `fe train` tests what was trained: it loads the weights the script's saver traces wrote (the
BestModelSaver's best, else the ModelSaver's newest) into models given no weights_path, says which file it loaded,
and warns in one stderr line when it can only test freshly initialised weights (in process, in a temp working dir)."""
from __future__ import annotations

import textwrap

import pytest

from fe.cli.main import main
from fe_core.build import reset_build_count

EXAMPLE = "fe.examples.digits_torch_mlp"
TINY = ["--epochs", "1", "--train_steps_per_epoch", "2", "--eval_steps_per_epoch", "1", "--log_steps", "0"]


def run_cli(argv, capsys):
    """Run `fe ARGV` in this process as a fresh process would (model names restart at 'model')."""
    reset_build_count()
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_accuracy(out):
    return [line for line in out.splitlines() if line.startswith("FastEstimator-Test")][-1].split("accuracy: ")[1] \
        .split(";")[0]


test_accuracy.__test__ = False  # a helper, not a test


def test_fe_test_after_fe_train_tests_the_trained_model(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, trained, _ = run_cli(["train", EXAMPLE, *TINY, "--then_test"], capsys)
    assert code == 0
    saved = tmp_path / "fe_runs" / "digits_torch_mlp" / "model_best_accuracy.pt"
    assert saved.is_file()  # the documented default save_dir, under the working directory
    code, tested, errors = run_cli(["test", EXAMPLE], capsys)
    assert code == 0
    assert "fe test: loaded model 'model' from fe_runs/digits_torch_mlp/model_best_accuracy.pt (saved by " \
           "BestModelSaver)" in tested
    assert "warning" not in errors
    assert test_accuracy(tested) == test_accuracy(trained)  # the same model as the one fe train tested
    assert "FastEstimator-Train" not in tested


def test_fe_test_with_nothing_saved_warns_in_one_line_that_weights_are_fresh(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code, tested, errors = run_cli(["test", EXAMPLE], capsys)
    assert code == 0
    lines = errors.strip().splitlines()
    assert len(lines) == 1, errors
    assert lines[0].startswith("fe test: warning: testing FRESHLY INITIALISED weights of model 'model'")
    assert "fe_runs/digits_torch_mlp" in lines[0] and "fe test SCRIPT --weights PATH" in lines[0]
    assert "loaded model" not in tested
    assert not (tmp_path / "fe_runs").exists() or not any((tmp_path / "fe_runs").rglob("*.pt"))


def test_fe_test_leaves_a_model_given_weights_path_alone(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli(["train", EXAMPLE, *TINY], capsys)[0] == 0
    weights = tmp_path / "fe_runs" / "digits_torch_mlp" / "model_best_accuracy.pt"
    code, tested, errors = run_cli(["test", EXAMPLE, "--weights_path", str(weights), "--save_dir", "elsewhere"],
                                   capsys)
    assert code == 0
    assert "loaded model" not in tested and "warning" not in errors  # build loaded the given file itself


SCRIPT = textwrap.dedent('''
    import fe
    from fe.examples.digits import load_digits_datasets
    from fe.examples.digits_torch_mlp import mlp
    from fe.op.numpyop.univariate import Minmax
    from fe.op.tensorop.loss import CrossEntropy
    from fe.op.tensorop.model import ModelOp, UpdateOp
    from fe.trace.io import ModelSaver


    def get_estimator(epochs: int = 2, save_dir: str = "checkpoints"):
        train, evaluation, test = load_digits_datasets(flatten=True)
        pipeline = fe.Pipeline(train_data=train, test_data=test, batch_size=16, ops=[Minmax("x", "x")])
        model = fe.build(model_fn=mlp, optimizer_fn="adam")
        network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                  CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                                  UpdateOp(model=model, loss_name="ce")])
        return fe.Estimator(pipeline=pipeline, network=network, epochs=epochs, train_steps_per_epoch=2,
                            log_steps=0, traces=[ModelSaver(model=model, save_dir=save_dir, frequency=1)])
''')


def test_fe_test_loads_the_newest_model_saver_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "periodic.py").write_text(SCRIPT)
    assert run_cli(["train", "periodic.py"], capsys)[0] == 0
    assert sorted(path.name for path in (tmp_path / "checkpoints").iterdir()) == ["model_epoch_1.pt",
                                                                                   "model_epoch_2.pt"]
    code, tested, errors = run_cli(["test", "periodic.py"], capsys)
    assert code == 0, errors
    assert "fe test: loaded model 'model' from checkpoints/model_epoch_2.pt (saved by ModelSaver)" in tested


def test_a_saved_file_that_does_not_fit_the_model_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "periodic.py").write_text(SCRIPT)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model_epoch_3.pt").write_bytes(b"not a torch file")
    code, _, errors = run_cli(["test", "periodic.py"], capsys)
    assert code == 2
    lines = errors.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fe test: error: cannot load checkpoints/model_epoch_3.pt "
                                                   "(saved by ModelSaver) into model 'model':"), errors


@pytest.mark.parametrize("command", ["train", "test"])
def test_fe_commands_write_only_the_documented_save_dir_into_the_working_directory(command, tmp_path, monkeypatch,
                                                                                  capsys):
    monkeypatch.chdir(tmp_path)
    assert run_cli([command, EXAMPLE, *TINY], capsys)[0] == 0
    written = {path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*")}
    assert written <= {"fe_runs", "fe_runs/digits_torch_mlp", "fe_runs/digits_torch_mlp/model_best_accuracy.pt"}
