"""Resume restores what the user's code changed during training (FastEstimator restores every plain attribute of ops,
traces, slicers and datasets): a curriculum `prob`, a `var` a trace adjusts, constructor-named or not, in ops nested
in meta ops and in datasets inside schedulers; while a checkpoint still never decides paths, URLs or callables."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.build import reset_build_count
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.numpyop import NumpyOp
from fe_core.op.numpyop.meta import Fuse, OneOf, Repeat, Sometimes
from fe_core.op.tensorop import MeanSquaredError, ModelOp, TensorOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.schedule import EpochScheduler
from fe_core.summary import System
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


# ----------------------------------------------------------------------------------------------- a user's objects
class Jitter(NumpyOp):
    """Adds noise with probability `prob` (a constructor argument a curriculum raises)."""

    def __init__(self, inputs: str, outputs: str, prob: float = 0.0, scale: float = 0.5) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode="train")
        self.prob = prob
        self.scale = scale

    def forward(self, data: np.ndarray, state: Dict[str, Any]) -> np.ndarray:
        if np.random.uniform() < self.prob:
            return (data + np.random.normal(0, self.scale, size=data.shape)).astype(np.float32)
        return data


class Shift(NumpyOp):

    def __init__(self, inputs: str, outputs: str, amount: float = 0.0) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode="train")
        self.amount = amount

    def forward(self, data: np.ndarray, state: Dict[str, Any]) -> np.ndarray:
        return (data + self.amount).astype(np.float32)


class ScaleInput(TensorOp):
    """Multiplies the input by `var`, an array a trace adjusts in place."""

    def __init__(self, inputs: str, outputs: str, var: np.ndarray) -> None:
        super().__init__(inputs=inputs, outputs=outputs)
        self.var = var

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        return nb.value_of(data) * self.var


class Offset(NumpyDataset):
    """A dataset whose samples move by `offset` (a constructor argument a trace changes)."""

    def __init__(self, data: Dict[str, np.ndarray], offset: float = 0.0) -> None:
        super().__init__(data)
        self.offset = offset

    def __getitem__(self, index: int) -> Dict[str, Any]:
        sample = dict(super().__getitem__(index))
        sample["x"] = (sample["x"] + self.offset).astype(np.float32)
        return sample


class Curriculum(Trace):
    """At the end of each training epoch, makes the data harder: every change lives in another object's attributes."""

    def __init__(self, sometimes: Sometimes, jitter: Jitter, nested: List[Shift], scale: ScaleInput,
                 dataset: Offset, level: int = 0) -> None:
        super().__init__(mode="train")
        self.sometimes, self.jitter, self.nested, self.scale, self.dataset = sometimes, jitter, nested, scale, dataset
        self.level = level
        self.var = scale.var  # the same array as the op's

    def on_epoch_end(self, data) -> None:
        self.level += 1
        self.sometimes.prob = min(1.0, self.sometimes.prob + 0.4)
        self.jitter.prob += 0.3
        for op in self.nested:
            op.amount += 0.25
        self.var *= 0.8  # in place: the op and this trace share the array
        self.dataset.offset += 0.1


class KillAt(Trace):

    def __init__(self, step: Optional[int]) -> None:
        super().__init__(mode="train")
        self.step = step

    def on_batch_end(self, data) -> None:
        if self.system.global_step == self.step:
            raise Crash(f"killed at step {self.step}")

    def get_state(self) -> Dict[str, Any]:  # the harness's own setting: not part of the run
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        pass


def build(directory: str, kill_at: Optional[int] = None, extra: Callable[[Any], List[Trace]] = lambda model: []
          ) -> Dict[str, Any]:
    """A user's script with a curriculum (a fresh 'process' each call), built but not yet trained."""
    np.random.seed(0)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 2)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0]]) + 0.3).astype(np.float32)
    dataset = Offset({"x": x, "y": y})
    sometimes = Sometimes(Shift("x", "x", amount=0.5), prob=0.0)
    jitter = Jitter("x", "x")
    nested = [Shift("x", "x"), Shift("x", "x"), Shift("x", "x")]
    pipeline = Pipeline(train_data=EpochScheduler({1: dataset}), batch_size=5,
                        ops=[sometimes, jitter, Fuse([nested[0]]), OneOf(nested[1]), Repeat(nested[2], repeat=1)])
    model = nb.build(2, 1, lr=0.05, name="reg")
    scale = ScaleInput("x", "x", var=np.ones(2))
    network = make_network([scale, ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    curriculum = Curriculum(sometimes, jitter, nested, scale, dataset)
    traces = [KillAt(kill_at), curriculum, *extra(model), RestoreWizard(directory, frequency="3s")]
    estimator = Estimator(pipeline=pipeline, network=network, epochs=3, traces=traces, log_steps=None)
    return {"estimator": estimator, "model": model, "curriculum": curriculum, "traces": traces,
            "system": estimator.system}


def run(directory: str, kill_at: Optional[int] = None, extra: Callable[[Any], List[Trace]] = lambda model: []
        ) -> Dict[str, Any]:
    script = build(directory, kill_at, extra)
    script["estimator"].fit()
    return dict(script, W=script["model"].W.copy(), step=script["system"].global_step)


def _observed(result: Dict[str, Any]) -> Dict[str, Any]:
    curriculum = result["curriculum"]
    return {"level": curriculum.level, "prob": curriculum.sometimes.prob, "jitter": curriculum.jitter.prob,
            "nested": [op.amount for op in curriculum.nested], "var": curriculum.scale.var.tolist(),
            "offset": curriculum.dataset.offset}


def test_a_curriculum_resumes_exactly_after_a_crash(tmp_path):
    reference = run(str(tmp_path / "reference"))
    with pytest.raises(Crash):
        run(str(tmp_path / "ckpt"), kill_at=20)  # epoch 3: two curriculum steps taken, the newest checkpoint at 18
    resumed = run(str(tmp_path / "ckpt"))
    assert resumed["step"] == reference["step"] == 24
    assert _observed(resumed) == _observed(reference)
    assert _observed(reference)["level"] == 3 and _observed(reference)["jitter"] == pytest.approx(0.9)
    np.testing.assert_array_equal(resumed["W"], reference["W"])


def test_save_state_and_load_state_restore_what_a_trace_changed(tmp_path):
    trained = run(str(tmp_path / "a"))
    trained["system"].save_state(str(tmp_path / "state"))
    fresh = build(str(tmp_path / "b"))
    shared = fresh["curriculum"].var
    assert _observed(fresh) != _observed(trained)
    fresh["system"].load_state(str(tmp_path / "state"))
    assert _observed(fresh) == _observed(trained)
    # assigned in place: the op and the trace still share one array
    assert fresh["curriculum"].var is shared and fresh["curriculum"].scale.var is shared
    np.testing.assert_array_equal(fresh["model"].W, trained["W"])


# ---------------------------------------------------------------------------------------- slicers (unit level)
class Window:
    """A user's slicer-like object with a constructor-named number a trace changes (slicers are restored from the
    network's `slicers` list like ops)."""

    def __init__(self, stride: int = 1, keys: str = "x") -> None:
        self.stride = stride
        self.keys = keys


class _Network:

    def __init__(self, slicers: List[Any]) -> None:
        self.backend = nb.NumpyBackend()
        self.models: List[Any] = []
        self.ops: List[Any] = []
        self.slicers = slicers
        self.postprocessing: List[Any] = []


def test_a_slicer_attribute_changed_during_training_is_restored(tmp_path):
    window = Window()
    window.stride = 4
    System(network=_Network([window]), pipeline=None, traces=[]).save_state(str(tmp_path / "ckpt"))
    fresh = Window()
    System(network=_Network([fresh]), pipeline=None, traces=[]).load_state(str(tmp_path / "ckpt"))
    assert fresh.stride == 4 and fresh.keys == "x"


# ------------------------------------------------------------------------------- what a checkpoint never decides
class Exporter(Trace):
    """A user's trace that writes files: its paths, URL and callable are the script's."""

    def __init__(self, save_dir: str, threshold: float = 0.5) -> None:
        super().__init__(mode="train")
        self.save_dir = save_dir
        self.threshold = threshold
        self.out_file = os.path.join(save_dir, "rows.csv")  # not a constructor argument, still a path
        self.endpoint = "https://example.invalid/upload"
        self.transform = np.log1p
        self.loader = "numpy"  # a plain name: data
        self.exported = 0

    def on_batch_end(self, data) -> None:
        self.exported += 1


def _resign(checkpoint: str, edit_state: Callable[[Dict[str, Any]], None]) -> None:
    """Edit state.json and recompute the digests, as the author of a malicious checkpoint would."""
    state_path, meta_path = os.path.join(checkpoint, "state.json"), os.path.join(checkpoint, "system.json")
    with open(meta_path, encoding="utf-8") as file:
        meta = json.load(file)
    with open(state_path, encoding="utf-8") as file:
        state = json.load(file)
    edit_state(state)
    text = json.dumps(state).encode()
    with open(state_path, "wb") as file:
        file.write(text)
    meta["files"]["state.json"] = {"size": len(text), "sha256": hashlib.sha256(text).hexdigest()}
    covered = {key: value for key, value in meta.items() if key != "system_sha256"}
    meta["system_sha256"] = hashlib.sha256(json.dumps(covered, sort_keys=True, separators=(",", ":")).encode()
                                           ).hexdigest()
    with open(meta_path, "w", encoding="utf-8") as file:
        json.dump(meta, file)


def test_a_crafted_checkpoint_cannot_set_paths_urls_or_callables(tmp_path, capsys):
    saves, log, exports = tmp_path / "saves", str(tmp_path / "run.csv"), str(tmp_path / "exports")
    evil = tmp_path / "evil"

    def extra(model: Any) -> List[Trace]:
        return [Exporter(exports), CSVLogger(log), ModelSaver(model=model, save_dir=str(saves))]

    directory = str(tmp_path / "ckpt")
    with pytest.raises(Crash):
        run(directory, kill_at=10, extra=extra)
    checkpoint = os.path.join(directory, "step-9")

    def inject(state: Dict[str, Any]) -> None:
        for entry in state["traces"]:
            if not {"exported", "written_rows", "saved_files"} & set(entry):
                continue  # the Exporter, the CSVLogger and the ModelSaver
            entry.update(save_dir=str(evil), filename=str(evil / "x.pth"), out_file=str(evil / "rows.csv"),
                         endpoint="https://attacker.invalid", transform="os.system", loader="os.system")
            if "exported" in entry:
                entry.update(threshold=0.75, exported=123)
    _resign(checkpoint, inject)
    script = build(directory, extra=extra)
    traces = script["traces"]
    exporter, logger, saver = (next(t for t in traces if isinstance(t, kind)) for kind in (Exporter, CSVLogger,
                                                                                          ModelSaver))
    script["system"].load_state(checkpoint)
    assert exporter.threshold == 0.75 and exporter.exported == 123  # data: taken from the checkpoint, as FastEstimator
    assert exporter.save_dir == exports and exporter.out_file == os.path.join(exports, "rows.csv")
    assert exporter.endpoint == "https://example.invalid/upload" and exporter.transform is np.log1p
    assert exporter.loader == "numpy"
    assert logger.filename == log and saver.save_dir == str(saves)
    assert not evil.exists()


def test_what_is_never_saved_in_a_checkpoint():
    exporter = Exporter("/tmp/exports")
    exporter.note = "see /etc/passwd"
    state = get_object_state(exporter)
    assert {"threshold", "exported", "loader"} <= set(state)
    assert not {"save_dir", "out_file", "endpoint", "transform", "note", "system"} & set(state)
    # and what a checkpoint says about them is ignored
    set_object_state(exporter, {"save_dir": "/", "out_file": "/x", "transform": 3, "note": "fine", "exported": 2})
    assert exporter.save_dir == "/tmp/exports" and exporter.out_file == "/tmp/exports/rows.csv"
    assert exporter.transform is np.log1p and exporter.note == "see /etc/passwd" and exporter.exported == 2


def test_large_constructor_arrays_are_input_data_not_state():
    from fe_core.checkpoint.object_state import LARGE_ARRAY_BYTES

    class Table(NumpyOp):
        def __init__(self, table: np.ndarray, small: np.ndarray) -> None:
            super().__init__(inputs="x", outputs="x")
            self.table, self.small = table, small

    op = Table(np.zeros(LARGE_ARRAY_BYTES // 8 + 1), np.ones(3))
    assert set(get_object_state(op)) >= {"small"} and "table" not in get_object_state(op)


def test_numbers_written_as_text_are_data():
    """A CSVLogger keeps its rows as text ('0.25'): they are saved, so a resumed run writes the whole file."""
    logger = CSVLogger("/tmp/never_written.csv")
    logger.rows = [{"mode": "train", "step": "3", "epoch": "1", "ce": "0.25", "lr": "1e-05"}]
    assert get_object_state(logger)["rows"] == logger.rows
    exporter = Exporter("/tmp/exports")
    exporter.last = "loss 0.125 at step 3"
    assert get_object_state(exporter)["last"] == "loss 0.125 at step 3"


def test_csv_logger_rows_naming_files_are_still_saved():
    """Instance rows may name image files: they are the logger's own text, saved with it (fe_text_data), while a
    user's attribute holding a path is not."""
    logger = CSVLogger("/tmp/never_written.csv")
    logger.rows = [{"mode": "eval", "step": "3", "epoch": "1", "id": "images/cat_01.png", "ce": "0.25"}]
    assert get_object_state(logger)["rows"] == logger.rows
    fresh = CSVLogger("/tmp/never_written.csv")
    set_object_state(fresh, {"rows": logger.rows})
    assert fresh.rows == logger.rows
