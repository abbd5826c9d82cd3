"""Checkpoints written by someone else, damaged checkpoints and notebook re-runs: a checkpoint restores state, never
configuration; restoring is all or nothing; a checkpoint the run cannot use is set aside, never deleted or blocking."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.build import build, reset_build_count
from fe_core.checkpoint.object_state import get_object_state
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_core.trace.io import CSVLogger, ModelSaver, RestoreWizard


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    reset_build_count()
    yield backend
    nb.uninstall()


class Crash(RuntimeError):
    pass


class KillAt(Trace):
    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")

    # The step to die at belongs to this run of the test harness: a checkpoint (which restores numbers a trace holds,
    # constructor arguments included, as FastEstimator does) must not carry it into the resumed run.
    def get_state(self):
        return {}

    def set_state(self, state) -> None:
        pass


def run(directory: str, extra: Callable[[Any], List[Trace]] = lambda model: [], kill_at: Optional[int] = None,
        epochs: int = 3, auto_name: bool = False, frequency: str = "3s") -> Dict[str, Any]:
    """A user's script: build everything, then fit with a RestoreWizard (a fresh 'process' each call)."""
    np.random.seed(0)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 2)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0]]) + 0.3).astype(np.float32)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y}), eval_data=NumpyDataset({"x": x[:10], "y": y[:10]}),
                        batch_size=5)
    if auto_name:
        model = build(model_fn=lambda: nb.LinearModel(2, 1, seed=0), optimizer_fn=0.05)
    else:
        model = nb.build(2, 1, lr=0.05, name="reg")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    traces = [KillAt(kill_at), *extra(model), RestoreWizard(directory, frequency=frequency)]
    estimator = Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=None)
    estimator.fit()
    return {"W": model.W.copy(), "step": estimator.system.global_step, "model": model, "traces": traces}


def crash(directory: str, **kwargs: Any) -> None:
    with pytest.raises(Crash):
        run(directory, kill_at=10, **kwargs)


# ------------------------------------------------------------------------------------------- crafted checkpoints
def _resign(checkpoint: str, edit_state: Optional[Callable[[Dict[str, Any]], None]] = None,
            edit_meta: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
    """Edit a checkpoint and recompute every digest, as someone writing a malicious checkpoint would."""
    state_path = os.path.join(checkpoint, "state.json")
    meta_path = os.path.join(checkpoint, "system.json")
    with open(meta_path, encoding="utf-8") as file:
        meta = json.load(file)
    if edit_state is not None:
        with open(state_path, encoding="utf-8") as file:
            state = json.load(file)
        edit_state(state)
        text = json.dumps(state).replace('"__DEEP__"', "[" * 100000 + "]" * 100000).encode()
        with open(state_path, "wb") as file:
            file.write(text)
        meta["files"]["state.json"] = {"size": len(text), "sha256": hashlib.sha256(text).hexdigest()}
    if edit_meta is not None:
        edit_meta(meta)
    covered = {key: value for key, value in meta.items() if key != "system_sha256"}
    meta["system_sha256"] = hashlib.sha256(json.dumps(covered, sort_keys=True, separators=(",", ":")).encode()
                                           ).hexdigest()
    with open(meta_path, "w", encoding="utf-8") as file:
        json.dump(meta, file)


def _trace_index(checkpoint: str, name: str) -> int:
    with open(os.path.join(checkpoint, "state.json"), encoding="utf-8") as file:
        return next(i for i, entry in enumerate(json.load(file)["traces"]) if name in entry)


def test_s1_a_checkpoint_cannot_redirect_a_csv_logger_into_a_startup_file(tmp_path):
    """A crafted `filename` would write Python into a .pth file that runs at the next interpreter start."""
    directory, log = str(tmp_path / "ckpt"), str(tmp_path / "run.csv")
    payload = tmp_path / "site-packages" / "zz.pth"
    payload.parent.mkdir()
    crash(directory, extra=lambda model: [CSVLogger(log)])
    checkpoint = os.path.join(directory, "step-9")
    # What an unsafe restore (every saved attribute set back) would do with the crafted state: write the payload.
    unsafe = CSVLogger(log)
    for name, value in {"filename": str(payload)}.items():
        setattr(unsafe, name, value)
    assert unsafe.filename == str(payload)  # the attack works when configuration is taken from a checkpoint

    def inject(state: Dict[str, Any]) -> None:
        for entry in state["traces"]:
            entry["filename"] = str(payload)
            entry["_rows"] = ["import os;os.system('touch pwned')"]
    _resign(checkpoint, edit_state=inject)
    resumed = run(directory, extra=lambda model: [CSVLogger(log)])
    logger = next(t for t in resumed["traces"] if isinstance(t, CSVLogger))
    assert logger.filename == log  # the script's configuration wins
    assert not payload.exists()
    assert os.path.isfile(log)
    assert "filename" not in get_object_state(logger)


def test_r7_a_changed_script_wins_over_the_checkpoint(tmp_path):
    directory = str(tmp_path / "ckpt")
    crash(directory, extra=lambda model: [CSVLogger(str(tmp_path / "old.csv"))])
    resumed = run(directory, extra=lambda model: [CSVLogger(str(tmp_path / "new.csv"))])
    assert next(t for t in resumed["traces"] if isinstance(t, CSVLogger)).filename == str(tmp_path / "new.csv")
    assert os.path.isfile(tmp_path / "new.csv")


def test_s2_a_checkpoint_cannot_make_model_saver_delete_other_files(tmp_path):
    directory, saves = str(tmp_path / "ckpt"), str(tmp_path / "saves")
    victim = tmp_path / "precious"
    victim.mkdir()
    (victim / "data.txt").write_text("keep me")
    crash(directory, extra=lambda model: [ModelSaver(model, save_dir=saves, frequency=1, max_to_keep=1)])
    checkpoint = os.path.join(directory, "step-9")
    index = _trace_index(checkpoint, "saved_files")
    _resign(checkpoint, edit_state=lambda state: state["traces"][index].update(saved_files=[[str(victim)]]))
    resumed = run(directory, extra=lambda model: [ModelSaver(model, save_dir=saves, frequency=1, max_to_keep=1)])
    assert (victim / "data.txt").read_text() == "keep me"
    assert resumed["step"] == 24  # the crafted checkpoint was refused; an older one or a fresh start was used
    assert any(name.startswith("refused-step-9") for name in os.listdir(directory))


def test_s2_saver_deletes_only_its_own_files_even_with_a_stale_list(tmp_path):
    saves = tmp_path / "saves"
    saves.mkdir()
    outside = tmp_path / "outside.pt"
    outside.write_text("x")
    model = nb.build(2, 1, name="reg")
    saver = ModelSaver(model, save_dir=str(saves), max_to_keep=1)
    with pytest.raises(ValueError, match="not names of files this saver writes"):
        saver.set_state({"saved_files": [["../outside.pt"]]})
    with pytest.raises(ValueError, match="not names of files this saver writes"):
        saver.set_state({"saved_files": [[str(outside)]]})
    saver.set_state({"saved_files": [["reg_epoch_1.npz"]]})
    assert saver.saved_files == [[os.path.join(str(saves), "reg_epoch_1.npz")]]
    assert outside.read_text() == "x"


def test_s4_symbolic_links_in_or_as_a_checkpoint_are_never_followed(tmp_path, capsys):
    directory = str(tmp_path / "ckpt")
    crash(directory)
    elsewhere = tmp_path / "elsewhere"
    os.rename(os.path.join(directory, "step-9"), elsewhere)
    os.symlink(elsewhere, os.path.join(directory, "step-99"))  # a link posing as the newest checkpoint
    resumed = run(directory)
    out = capsys.readouterr().out
    assert "symbolic link" in out and "restored" in out and "step-6" in out
    assert resumed["step"] == 24

    linked = str(tmp_path / "ckpt2")
    crash(linked)
    model_file = next(name for name in os.listdir(os.path.join(linked, "step-9")) if name.startswith("reg"))
    target = os.path.join(linked, "step-9", model_file)
    os.rename(target, tmp_path / "moved")
    os.symlink(tmp_path / "moved", target)
    run(linked)
    out = capsys.readouterr().out
    assert "holds a symbolic link" in out and "step-9" in out


# ------------------------------------------------------------------------------------------------ resume correctness
def test_r0_a_rerun_in_the_same_process_resumes_with_automatic_model_names(tmp_path, capsys):
    directory = str(tmp_path / "ckpt")
    reference = run(str(tmp_path / "ref"), auto_name=True)
    assert reference["model"].model_name == "model"
    crash(directory, auto_name=True)  # the notebook's second run: its model is 'model1'
    resumed = run(directory, auto_name=True)  # the third: 'model2', and it must still resume
    out = capsys.readouterr().out
    assert resumed["model"].model_name == "model2"
    assert "restored" in out and "refusing" not in out
    np.testing.assert_array_equal(resumed["W"], reference["W"])


def test_r0_user_given_names_must_still_match(tmp_path, capsys):
    directory = str(tmp_path / "ckpt")
    crash(directory)  # model 'reg'
    run(directory, auto_name=True)  # model 'model': a different network
    assert "holds the models ['reg'], but the network has ['model']" in capsys.readouterr().out


def test_r1_a_refused_checkpoint_leaves_the_run_untouched_and_it_trains(tmp_path, capsys):
    directory = str(tmp_path / "ckpt")
    crash(directory)
    checkpoint = os.path.join(directory, "step-9")
    # Valid manifest, but a trace state that does not fit: detected before anything is restored.
    _resign(checkpoint, edit_state=lambda state: state.update(rng={"python": "not a state"}))
    reference = run(str(tmp_path / "fresh"))
    resumed = run(directory)
    out = capsys.readouterr().out
    assert "refusing checkpoint" in out and "step-9" in out
    assert resumed["step"] == 24  # it trained all the way, from the older checkpoint
    np.testing.assert_array_equal(resumed["W"], reference["W"])


def test_r1_a_failing_model_load_puts_the_loaded_models_back(tmp_path, monkeypatch):
    def two_models(directory: str):
        np.random.seed(0)
        x = np.random.default_rng(1).normal(size=(20, 2)).astype(np.float32)
        pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": x[:, :1]}), batch_size=5)
        first, second = nb.build(2, 1, lr=0.05, name="first"), nb.build(2, 1, lr=0.05, name="second", seed=3)
        network = make_network([ModelOp(model=first, inputs="x", outputs="p1"),
                                ModelOp(model=second, inputs="x", outputs="p2"),
                                MeanSquaredError(inputs=("p1", "y"), outputs="l1"),
                                MeanSquaredError(inputs=("p2", "y"), outputs="l2"),
                                UpdateOp(model=first, loss_name="l1"), UpdateOp(model=second, loss_name="l2")])
        estimator = Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=None,
                              traces=RestoreWizard(directory, frequency="2s"))
        return estimator, first, second

    directory = str(tmp_path / "ckpt")
    estimator, _, _ = two_models(directory)
    estimator.fit()
    fresh, first, second = two_models(str(tmp_path / "unused"))
    before = (first.W.copy(), second.W.copy())
    original = nb.NumpyBackend.load_model

    def failing(self, model, load_dir, load_optimizer):
        if model.model_name == "second" and "ckpt" in load_dir:
            raise ValueError("second model's file does not fit")
        original(self, model, load_dir, load_optimizer)

    monkeypatch.setattr(nb.NumpyBackend, "load_model", failing)
    with pytest.raises(ValueError, match="does not fit"):
        fresh.system.load_state(os.path.join(directory, "step-8"))
    np.testing.assert_array_equal(first.W, before[0])  # loaded first, then put back
    np.testing.assert_array_equal(second.W, before[1])
    assert fresh.system.global_step is None and fresh.system.epoch_idx == 0


@pytest.mark.parametrize("field, value", [("global_step", -5), ("global_step", 45.0), ("global_step", "45"),
                                          ("epoch_idx", 1000), ("stop_training", "yes"), ("batch_idx", -1),
                                          ("mode", "hack")])
def test_r3_system_json_fields_are_type_and_range_checked(tmp_path, capsys, field, value):
    directory = str(tmp_path / "ckpt")
    crash(directory)
    _resign(os.path.join(directory, "step-9"), edit_meta=lambda meta: meta["system"].update({field: value}))
    resumed = run(directory)
    out = capsys.readouterr().out
    assert f"system.json has {field} = " in out
    assert resumed["step"] == 24


def test_r3_configuration_in_system_json_is_not_restored(tmp_path):
    directory = str(tmp_path / "ckpt")
    crash(directory)
    _resign(os.path.join(directory, "step-9"), edit_meta=lambda meta: meta["system"].update(total_epochs=1))
    resumed = run(directory)  # the script says 3 epochs
    assert resumed["step"] == 24


def test_r3_system_json_damage_is_detected_by_its_digest(tmp_path, capsys):
    directory = str(tmp_path / "ckpt")
    crash(directory)
    path = os.path.join(directory, "step-9", "system.json")
    text = open(path, encoding="utf-8").read().replace('"global_step": 9', '"global_step": 8')
    open(path, "w", encoding="utf-8").write(text)
    run(directory)
    assert "do not match its system_sha256" in capsys.readouterr().out


def test_r2_r4_an_unreadable_checkpoint_is_set_aside_and_never_blocks_or_deletes(tmp_path, capsys):
    directory = str(tmp_path / "ckpt")
    crash(directory)
    for name in ("step-6", "step-9"):
        open(os.path.join(directory, name, "system.json"), "w").write("{not json")
    resumed = run(directory)  # every checkpoint refused: trains from scratch, saving new checkpoints
    out = capsys.readouterr().out
    assert out.count("refusing checkpoint") == 2 and resumed["step"] == 24
    names = sorted(os.listdir(directory))
    assert "refused-step-6" in names and "refused-step-9" in names  # kept, renamed aside
    assert "step-24" in names and "step-21" in names  # the new run's own checkpoints were not rotated away
    again = run(directory)  # and a re-run resumes from them instead of dying or starting over
    assert "restored" in capsys.readouterr().out and again["step"] == 24


@pytest.mark.parametrize("damage", ["zip", "json-type", "deep"])
def test_r5_any_error_from_a_damaged_checkpoint_falls_back(tmp_path, capsys, damage):
    directory = str(tmp_path / "ckpt")
    crash(directory)
    checkpoint = os.path.join(directory, "step-9")
    if damage == "zip":
        open(os.path.join(checkpoint, "arrays.npz"), "wb").write(b"PK\x03\x04garbage")
        size = os.path.getsize(os.path.join(checkpoint, "arrays.npz"))
        digest = hashlib.sha256(open(os.path.join(checkpoint, "arrays.npz"), "rb").read()).hexdigest()
        _resign(checkpoint, edit_meta=lambda meta: meta["files"].update(
            {"arrays.npz": {"size": size, "sha256": digest}}))
    elif damage == "json-type":
        _resign(checkpoint, edit_state=lambda state: state.update(traces="not a list"))
    else:
        _resign(checkpoint, edit_state=lambda state: state.update(summary="__DEEP__"))  # JSON nested 100000 deep
    resumed = run(directory)
    assert "refusing checkpoint" in capsys.readouterr().out
    assert resumed["step"] == 24


def test_restore_wizard_given_a_file_says_so(tmp_path):
    path = tmp_path / "ckpt.txt"
    path.write_text("")
    with pytest.raises(ValueError, match="RestoreWizard directory .* is not a directory"):
        RestoreWizard(str(path))
