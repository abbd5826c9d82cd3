"""Every public trace of fe in one run, launched by tests/fe/test_trace_matrix.py in each execution mode.

`TRACE_ARGS` builds each public trace (a `fe.trace.*` class) that needs no user data of its own, with small
arguments; `EXCLUDED` names the public traces it leaves out, each with its reason. The test fails when a public trace
is in neither, so a new trace joins the matrix by being added to one of them.

Run as `python trace_matrix_script.py <framework> <mode>[,<mode>...]` (framework 'torch' or 'tf'; modes 'single',
'ddp', 'sharded' (torchrun) or 'multiworker' (TF_CONFIG)). Each mode trains the same tiny model on the same data
with every trace of the table, twice over 2 epochs, then tests it, writing into `<FE_T_OUT>/<mode>/run/` and
`<FE_T_OUT>/<mode>/rank<R>.json` (the history, what this rank wrote, the printed trace lines).

A checkpoint warning ("... is not saved in checkpoints ... Give X get_state()/set_state()") is an error here: fe's
own traces checkpoint their state or declare they need none.
"""
from __future__ import annotations

import json
import os
import sys
import warnings
from types import SimpleNamespace
from typing import Any, Callable, Dict, List

import numpy as np

import fe

#: Per public trace (by class name): how to build it for a run, given the run's context `c` (c.model, c.dir(name),
#: c.framework, c.x). Arguments are chosen to be cheap (few samples, small figures).
TRACE_ARGS: Dict[str, Callable[[Any], Any]] = {
    # adapt
    "EarlyStopping": lambda c: fe.trace.adapt.EarlyStopping(monitor="ce", patience=5),
    "LRScheduler": lambda c: fe.trace.adapt.LRScheduler(c.model, lr_fn=lambda epoch: 0.05 / epoch),
    "PBMCalibrator": lambda c: fe.trace.adapt.PBMCalibrator(true_key="y", pred_key="y_pred",
                                                            save_path=c.dir("calibrator") + "/pbm.pkl"),
    "ReduceLROnPlateau": lambda c: fe.trace.adapt.ReduceLROnPlateau(c.model, metric="ce", patience=1, factor=0.5),
    "TerminateOnNaN": lambda c: fe.trace.adapt.TerminateOnNaN(),
    # io
    "BatchDisplay": lambda c: fe.trace.io.BatchDisplay(image="img", batch_limit=2, frequency="epoch",
                                                       save_dir=c.dir("display"), mode="eval"),
    "BestModelSaver": lambda c: fe.trace.io.BestModelSaver(c.model, save_dir=c.dir("best"), metric="accuracy",
                                                           save_best_mode="max", load_best_final=True),
    "CSVLogger": lambda c: fe.trace.io.CSVLogger(filename=c.dir("csv") + "/log.csv"),
    "GridDisplay": lambda c: fe.trace.io.GridDisplay(
        columns=[fe.trace.io.BatchDisplay(image="img"), fe.trace.io.BatchDisplay(text="y")], batch_limit=2,
        frequency="epoch", save_dir=c.dir("grid"), mode="eval"),
    "ImageSaver": lambda c: fe.trace.io.ImageSaver(inputs=["gradcam", "eigencam", "sample_ce_by_idx"],
                                                   save_dir=c.dir("images")),
    "ImageViewer": lambda c: fe.trace.io.ImageViewer(inputs="sample_ce_by_y"),
    "MLflowLogger": lambda c: fe.trace.io.MLflowLogger(tracking_uri=f"file://{c.dir('mlruns')}",
                                                       experiment_name="matrix"),
    "ModelExporter": lambda c: fe.trace.io.ModelExporter(c.model, save_dir=c.dir("export"),
                                                         example_inputs=c.x[:2],
                                                         format="onnx" if c.framework == "torch" else None),
    "ModelSaver": lambda c: fe.trace.io.ModelSaver(c.model, save_dir=c.dir("saver"), frequency=1, max_to_keep=1),
    "RestoreWizard": lambda c: fe.trace.io.RestoreWizard(directory=c.dir("ckpt"), frequency=1),
    "TensorBoard": lambda c: fe.trace.io.TensorBoard(log_dir=c.dir("tb"), update_freq=2),
    "TestReport": lambda c: fe.trace.io.TestReport(
        test_cases=[fe.trace.io.test_report.TestCase("accuracy is a fraction", lambda accuracy: 0 <= accuracy <= 1),
                    fe.trace.io.test_report.TestCase("few samples of class 2", lambda y: np.asarray(y) < 2,
                                                     aggregate=False, fail_threshold=4)],
        save_path=c.dir("report")),
    "Traceability": lambda c: fe.trace.io.Traceability(save_path=c.dir("traceability")),
    # metrics
    "AUCScore": lambda c: fe.trace.metric.AUCScore(true_key="y", pred_key="y_pred", multi_class="ovr"),
    "Accuracy": lambda c: fe.trace.metric.Accuracy(true_key="y", pred_key="y_pred"),
    "CalibrationError": lambda c: fe.trace.metric.CalibrationError(true_key="y", pred_key="y_pred"),
    "ConfusionMatrix": lambda c: fe.trace.metric.ConfusionMatrix(true_key="y", pred_key="y_pred", num_classes=3),
    "Dice": lambda c: fe.trace.metric.Dice(true_key="mask", pred_key="mask_pred"),
    "F1Score": lambda c: fe.trace.metric.F1Score(true_key="y", pred_key="y_pred"),
    "MCC": lambda c: fe.trace.metric.MCC(true_key="y", pred_key="y_pred"),
    "Precision": lambda c: fe.trace.metric.Precision(true_key="y", pred_key="y_pred",
                                                     zero_division=0),
    "Recall": lambda c: fe.trace.metric.Recall(true_key="y", pred_key="y_pred",  zero_division=0),
    # progress
    "ProgressBar": lambda c: fe.trace.progress_bar.ProgressBar(),
    # xai
    "EigenCAM": lambda c: fe.trace.xai.EigenCAM(images="img", activations="act", n_components=2, n_samples=3),
    "GradCAM": lambda c: fe.trace.xai.GradCAM(images="img", grads="act", n_components=2, n_samples=3),
    "InstanceTracker": lambda c: fe.trace.xai.InstanceTracker(index="idx", metric="sample_ce", n_max_to_keep=2,
                                                              n_min_to_keep=1),
    "LabelTracker": lambda c: fe.trace.xai.LabelTracker(label="y", metric="sample_ce"),
    "Saliency": lambda c: fe.trace.xai.Saliency(c.model, model_inputs="img", model_outputs="y_pred", class_key="y",
                                                samples=3, smoothing=2, integrating=(2, 0)),
}

#: Public traces the matrix does not build, with the reason.
EXCLUDED: Dict[str, str] = {
    "Trace": "the base class of all traces (does nothing by itself)",
    "PerDSTrace": "a base class of per-dataset traces (the metrics here derive from it)",
    "ConfusionMetric": "a base class: subclasses implement compute() (Precision, Recall, F1Score, MCC run here)",
    "TrainEssential": "added by the Estimator to every run (runs in every cell of the matrix)",
    "EvalEssential": "added by the Estimator to every run (runs in every cell of the matrix)",
    "TestEssential": "added by the Estimator to every test run (runs in every cell of the matrix)",
    "Logger": "added by the Estimator to every run (runs in every cell of the matrix)",
    "BleuScore": "needs token sequences of a text model (user data of its own)",
    "MeanAveragePrecision": "needs bounding boxes of a detection model (user data of its own)",
}


def _data(framework: str) -> Dict[str, np.ndarray]:
    """24 samples (16 train, 8 eval = test): a 4x4 one-channel image per sample, in the framework's layout."""
    rng = np.random.RandomState(0)
    n = 24
    x = rng.normal(size=(n, 16)).astype(np.float32)
    y = (np.argmax(x[:, :3], axis=1)).astype(np.int64)
    img = x.reshape(n, 1, 4, 4) if framework == "torch" else x.reshape(n, 4, 4, 1)
    act = np.abs(rng.normal(size=(n, 2, 2, 2))).astype(np.float32)  # a layer's activations (channels first)
    act = act if framework == "torch" else act.transpose(0, 2, 3, 1)
    mask = (img > 0).astype(np.float32)
    return {"x": x, "y": y, "img": img.astype(np.float32), "act": act, "mask": mask,
            "mask_pred": np.clip(mask + rng.normal(0, 0.4, size=mask.shape), 0, 1).astype(np.float32),
            "idx": np.arange(n)}


def _model(framework: str, sharded: bool) -> Any:
    if framework == "torch":
        import torch  # pylint: disable=import-outside-toplevel
        return fe.build(model_fn=lambda: torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 8), torch.nn.ReLU(),
                                                             torch.nn.Linear(8, 3), torch.nn.Softmax(dim=-1)),
                        optimizer_fn=lambda params: torch.optim.SGD(params, lr=0.05), model_name="net",
                        sharding="fsdp" if sharded else None)
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    keras = tf.keras
    return fe.build(model_fn=lambda: keras.Sequential([keras.Input((4, 4, 1)), keras.layers.Flatten(), keras.layers.Dense(8, activation="relu"),
                                                       keras.layers.Dense(3, activation="softmax")]),
                    optimizer_fn=lambda: keras.optimizers.SGD(0.05), model_name="net")


class _Writes:
    """Records the files this process opens for writing (or renames, creates) under `root`, but not under `allowed`."""

    def __init__(self, root: str, allowed: List[str]) -> None:
        self.root, self.allowed, self.paths, self.active = root, allowed, set(), True

    def __call__(self, event: str, args: Any) -> None:
        if not self.active:
            return
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            mode, flags = (args[1] or "r") if len(args) > 1 else "r", args[2] if len(args) > 2 else 0
            writing = any(ch in str(mode) for ch in "wax+") or (isinstance(flags, int) and flags & (os.O_WRONLY |
                                                                                                     os.O_RDWR))
            if writing:
                self._note(args[0])
        elif event in ("os.rename", "os.mkdir", "shutil.copyfile", "os.symlink") and args:
            self._note(args[1] if event in ("os.rename", "shutil.copyfile") else args[0])

    def _note(self, path: Any) -> None:
        try:
            path = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return
        if path.startswith(self.root + os.sep) and not any(path.startswith(a + os.sep) or path == a
                                                           for a in self.allowed):
            self.paths.add(os.path.relpath(path, self.root))


def _history(summary: Any) -> Dict[str, Dict[str, Dict[str, Any]]]:
    result: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for mode, keys in summary.history.items():
        for key, values in keys.items():
            row = {}
            for step, value in values.items():
                array = np.asarray(value)
                if array.dtype.kind in "biuf":
                    row[str(step)] = array.astype(np.float64).tolist()
            if row:
                result.setdefault(mode, {})[key] = row
    return result


def _plain(value: Any) -> Any:
    """A checkpoint state as JSON: numbers, strings, lists and dicts (other objects by their type's name)."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return _plain(value.tolist()) if value.dtype.kind in "biufUS" else type(value).__name__
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return type(value).__name__


def run(framework: str, mode: str, out: str) -> None:
    """Train and test with every trace of TRACE_ARGS in `mode`, writing `<out>/<mode>/...`."""
    from fe_core.build import reset_build_count  # pylint: disable=import-outside-toplevel
    from fe_core.checkpoint.object_state import get_object_state  # pylint: disable=import-outside-toplevel
    from fe_core.distributed import get_communicator  # pylint: disable=import-outside-toplevel
    reset_build_count()
    fe.enable_deterministic(7)
    base = os.path.join(out, mode)
    root = os.path.join(base, "run")
    os.makedirs(root, exist_ok=True)

    def directory(name: str) -> str:
        return os.path.join(root, name)

    data = _data(framework)
    train = fe.dataset.NumpyDataset({key: value[:16] for key, value in data.items()})
    evaluation = fe.dataset.NumpyDataset({key: value[16:] for key, value in data.items()})
    pipeline = fe.Pipeline(train_data=train, eval_data=evaluation, test_data=evaluation, batch_size=4)
    model = _model(framework, sharded=mode == "sharded")
    from fe.op.tensorop.loss import CrossEntropy  # pylint: disable=import-outside-toplevel
    from fe.op.tensorop.model import ModelOp, UpdateOp  # pylint: disable=import-outside-toplevel
    network = fe.Network(ops=[ModelOp(model=model, inputs="img", outputs="y_pred"),
                              CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                              CrossEntropy(inputs=("y_pred", "y"), outputs="sample_ce", average_loss=False,
                                           mode="!train"),
                              UpdateOp(model=model, loss_name="ce")])
    context = SimpleNamespace(model=model, dir=directory, framework=framework, x=data["img"])
    only = [name for name in os.environ.get("FE_T_TRACES", "").split(",") if name]  # a subset, when debugging
    traces = [make(context) for name, make in TRACE_ARGS.items() if not only or name in only]
    communicator = get_communicator()
    writes = _Writes(root, [directory("ckpt")] if mode == "sharded" else [])
    if communicator.rank != 0:
        sys.addaudithook(writes)
    estimator = fe.Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=2)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*is not saved in checkpoints.*")
        summary = estimator.fit("matrix")
        states = {type(trace).__name__: _plain(get_object_state(trace)) for trace in traces}
        tested = estimator.test("matrix")
    writes.active = False
    result = {"rank": communicator.rank, "world_size": communicator.world_size,
              "fit": _history(summary), "test": _history(tested),
              "states": states, "rank_writes": sorted(writes.paths)}
    with open(os.path.join(base, f"rank{communicator.rank}.json"), "w", encoding="utf-8") as stream:
        json.dump(result, stream)
    communicator.barrier()


def main() -> None:
    framework, modes = sys.argv[1], sys.argv[2].split(",")
    import matplotlib  # pylint: disable=import-outside-toplevel
    matplotlib.use("Agg")
    for mode in modes:
        run(framework, mode, os.environ["FE_T_OUT"])


if __name__ == "__main__":
    main()
