"""FastEstimator 1.x's dotted paths reach fe's objects, by attribute (`fe.trace.metric.Accuracy`) and by import
(`from fe.trace.metric import Accuracy`), and every namespace module re-exports explicitly."""
from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from pathlib import Path
from typing import List, Tuple

import pytest

import fe

FE_SRC = Path(fe.__file__).resolve().parent


def _entries() -> List[Tuple[str, str]]:
    """(fe dotted path, the defining module:attribute) for every FastEstimator path fe mirrors."""
    core = "fe_core"
    table = [
        ("fe.Estimator", f"{core}.estimator:Estimator"),
        ("fe.estimator.Estimator", f"{core}.estimator:Estimator"),
        ("fe.Pipeline", f"{core}.pipeline:Pipeline"),
        ("fe.pipeline.Pipeline", f"{core}.pipeline:Pipeline"),
        ("fe.build", f"{core}.build:build"),
        ("fe.network.build", f"{core}.build:build"),
        ("fe.enable_deterministic", f"{core}.determinism:enable_deterministic"),
        ("fe.estimator.enable_deterministic", f"{core}.determinism:enable_deterministic"),
        ("fe.Network", "fe.network:Network"),
        ("fe.network.BaseNetwork", f"{core}.network:BaseNetwork"),
        ("fe.dataset.NumpyDataset", f"{core}.dataset.numpy_dataset:NumpyDataset"),
        ("fe.dataset.numpy_dataset.NumpyDataset", f"{core}.dataset.numpy_dataset:NumpyDataset"),
        ("fe.op.op.Op", f"{core}.op.op:Op"),
        ("fe.op.NumpyOp", f"{core}.op.numpyop.numpyop:NumpyOp"),
        ("fe.op.TensorOp", f"{core}.op.tensorop.tensorop:TensorOp"),
        ("fe.op.tensorop.TensorOp", f"{core}.op.tensorop.tensorop:TensorOp"),
        ("fe.op.tensorop.tensorop.TensorOp", f"{core}.op.tensorop.tensorop:TensorOp"),
        ("fe.op.tensorop.LambdaOp", f"{core}.op.tensorop.tensor_ops:LambdaOp"),
        ("fe.op.tensorop.tensorop.LambdaOp", f"{core}.op.tensorop.tensor_ops:LambdaOp"),
        ("fe.op.tensorop.Argmax", f"{core}.op.tensorop.tensor_ops:Argmax"),
        ("fe.op.tensorop.argmax.Argmax", f"{core}.op.tensorop.tensor_ops:Argmax"),
        ("fe.op.tensorop.Average", f"{core}.op.tensorop.tensor_ops:Average"),
        ("fe.op.tensorop.average.Average", f"{core}.op.tensorop.tensor_ops:Average"),
        ("fe.op.tensorop.Delete", f"{core}.op.tensorop.tensor_ops:Delete"),
        ("fe.op.tensorop.model.ModelOp", f"{core}.op.tensorop.model:ModelOp"),
        ("fe.op.tensorop.model.UpdateOp", f"{core}.op.tensorop.model:UpdateOp"),
        ("fe.op.tensorop.model.model.ModelOp", f"{core}.op.tensorop.model:ModelOp"),
        ("fe.op.tensorop.model.update.UpdateOp", f"{core}.op.tensorop.model:UpdateOp"),
        ("fe.op.tensorop.loss.CrossEntropy", f"{core}.op.tensorop.loss:CrossEntropy"),
        ("fe.op.tensorop.loss.MeanSquaredError", f"{core}.op.tensorop.loss:MeanSquaredError"),
        ("fe.op.tensorop.loss.L1_Loss", f"{core}.op.tensorop.loss:L1_Loss"),
        ("fe.op.tensorop.loss.LossOp", f"{core}.op.tensorop.loss:LossOp"),
        ("fe.op.tensorop.loss.cross_entropy.CrossEntropy", f"{core}.op.tensorop.loss:CrossEntropy"),
        ("fe.op.tensorop.loss.mean_squared_error.MeanSquaredError", f"{core}.op.tensorop.loss:MeanSquaredError"),
        ("fe.op.tensorop.loss.l1_loss.L1_Loss", f"{core}.op.tensorop.loss:L1_Loss"),
        ("fe.op.tensorop.loss.loss.LossOp", f"{core}.op.tensorop.loss:LossOp"),
        ("fe.op.numpyop.NumpyOp", f"{core}.op.numpyop.numpyop:NumpyOp"),
        ("fe.op.numpyop.numpyop.NumpyOp", f"{core}.op.numpyop.numpyop:NumpyOp"),
        ("fe.op.numpyop.Batch", f"{core}.op.numpyop.batch:Batch"),
        ("fe.op.numpyop.numpyop.Batch", f"{core}.op.numpyop.batch:Batch"),
        ("fe.op.numpyop.RemoveIf", f"{core}.op.numpyop.remove_if:RemoveIf"),
        ("fe.op.numpyop.numpyop.RemoveIf", f"{core}.op.numpyop.remove_if:RemoveIf"),
        ("fe.op.numpyop.LambdaOp", f"{core}.op.numpyop.lambda_op:LambdaOp"),
        ("fe.op.numpyop.numpyop.LambdaOp", f"{core}.op.numpyop.lambda_op:LambdaOp"),
        ("fe.op.numpyop.Delete", f"{core}.op.numpyop.delete:Delete"),
        ("fe.op.numpyop.numpyop.Delete", f"{core}.op.numpyop.delete:Delete"),
        ("fe.op.numpyop.meta.Sometimes", f"{core}.op.numpyop.meta.sometimes:Sometimes"),
        ("fe.op.numpyop.meta.sometimes.Sometimes", f"{core}.op.numpyop.meta.sometimes:Sometimes"),
        ("fe.op.numpyop.meta.OneOf", f"{core}.op.numpyop.meta.one_of:OneOf"),
        ("fe.op.numpyop.meta.one_of.OneOf", f"{core}.op.numpyop.meta.one_of:OneOf"),
        ("fe.trace.Trace", f"{core}.trace.trace:Trace"),
        ("fe.trace.PerDSTrace", f"{core}.trace.trace:PerDSTrace"),
        ("fe.trace.trace.Trace", f"{core}.trace.trace:Trace"),
        ("fe.trace.trace.PerDSTrace", f"{core}.trace.trace:PerDSTrace"),
        ("fe.trace.trace.Logger", f"{core}.trace.logger:Logger"),
        ("fe.trace.trace.TrainEssential", f"{core}.trace.essential:TrainEssential"),
        ("fe.trace.trace.EvalEssential", f"{core}.trace.essential:EvalEssential"),
        ("fe.trace.ProgressBar", f"{core}.trace.progress_bar:ProgressBar"),
        ("fe.schedule.EpochScheduler", f"{core}.schedule.scheduler:EpochScheduler"),
        ("fe.schedule.RepeatScheduler", f"{core}.schedule.scheduler:RepeatScheduler"),
        ("fe.schedule.Scheduler", f"{core}.schedule.scheduler:Scheduler"),
        ("fe.schedule.get_current_items", f"{core}.schedule.scheduler:get_current_items"),
        ("fe.schedule.get_signature_epochs", f"{core}.schedule.scheduler:get_signature_epochs"),
        ("fe.schedule.cosine_decay", f"{core}.schedule.lr_shape:cosine_decay"),
        ("fe.schedule.schedule.EpochScheduler", f"{core}.schedule.scheduler:EpochScheduler"),
        ("fe.schedule.lr_shedule.cosine_decay", f"{core}.schedule.lr_shape:cosine_decay"),
        ("fe.slicer.Slicer", f"{core}.slicer.slicer:Slicer"),
        ("fe.slicer.AxisSlicer", f"{core}.slicer.axis_slicer:AxisSlicer"),
        ("fe.slicer.MeanUnslicer", f"{core}.slicer.mean_unslicer:MeanUnslicer"),
        ("fe.slicer.SlidingSlicer", f"{core}.slicer.sliding_slicer:SlidingSlicer"),
        ("fe.slicer.axis_slicer.AxisSlicer", f"{core}.slicer.axis_slicer:AxisSlicer"),
        ("fe.summary.Summary", f"{core}.summary.summary:Summary"),
        ("fe.summary.ValWithError", f"{core}.summary.summary:ValWithError"),
        ("fe.summary.summary.Summary", f"{core}.summary.summary:Summary"),
        ("fe.summary.System", f"{core}.summary.system:System"),
        ("fe.summary.system.System", f"{core}.summary.system:System"),
        ("fe.summary.logs.parse_log_file", f"{core}.summary.logs:parse_log_file"),
        ("fe.summary.logs.log_parse.parse_log_file", f"{core}.summary.logs:parse_log_file"),
        ("fe.summary.logs.parse_log_dir", "fe.summary.logs.log_parse:parse_log_dir"),
        ("fe.summary.logs.parse_log_files", "fe.summary.logs.log_parse:parse_log_files"),
        ("fe.summary.logs.visualize_logs", f"{core}.summary.plot:visualize_logs"),
        ("fe.summary.logs.log_plot.visualize_logs", f"{core}.summary.plot:visualize_logs"),
        ("fe.summary.logs.plot_logs", f"{core}.summary.plot:plot_logs"),
        ("fe.summary.plot.plot_summaries", f"{core}.summary.plot:plot_summaries"),
    ]
    for name, module in [("ExpandDims", "expand_dims"), ("Minmax", "minmax"), ("Normalize", "normalize"),
                         ("Onehot", "onehot"), ("Reshape", "reshape"), ("ToFloat", "to_float")]:
        target = f"{core}.op.numpyop.univariate.{module}:{name}"
        table += [(f"fe.op.numpyop.univariate.{name}", target), (f"fe.op.numpyop.univariate.{module}.{name}", target)]
    traces = {
        "metric": [("Accuracy", "accuracy"), ("Precision", "precision"), ("Recall", "recall"), ("F1Score", "f1_score"),
                   ("ConfusionMatrix", "confusion_matrix"), ("MCC", "mcc")],
        "io": [("BestModelSaver", "best_model_saver"), ("ModelSaver", "model_saver"), ("CSVLogger", "csv_logger"),
               ("RestoreWizard", "restore_wizard"), ("TensorBoard", "tensorboard")],
        "adapt": [("EarlyStopping", "early_stopping"), ("LRScheduler", "lr_scheduler"),
                  ("ReduceLROnPlateau", "reduce_lr_on_plateau"), ("TerminateOnNaN", "terminate_on_nan")],
    }
    for library, names in traces.items():
        for name, module in names:
            target = f"{core}.trace.{library}.{module}:{name}"
            table += [(f"fe.trace.{library}.{name}", target), (f"fe.trace.{library}.{module}.{name}", target)]
    return table


ENTRIES = _entries()


def _target(spec: str):
    module, _, attribute = spec.partition(":")
    return getattr(importlib.import_module(module), attribute)


@pytest.mark.parametrize("path, spec", ENTRIES, ids=[path for path, _ in ENTRIES])
def test_path_is_reachable_by_attribute_from_fe(path, spec):
    assert functools.reduce(getattr, path.split(".")[1:], fe) is _target(spec)


@pytest.mark.parametrize("path, spec", ENTRIES, ids=[path for path, _ in ENTRIES])
def test_path_is_reachable_by_import(path, spec):
    module, _, name = path.rpartition(".")
    namespace = {}
    exec(f"from {module} import {name}", namespace)  # the form user scripts use  # pylint: disable=exec-used
    assert namespace[name] is _target(spec)


@pytest.mark.parametrize("backend, package", [("pytorch", "fe_torch"), ("tensorflow", "fe_tf")])
def test_architectures_come_from_their_backend(backend, package):
    architecture = importlib.import_module(f"{package}.architecture")
    module = importlib.import_module(f"fe.architecture.{backend}")
    for name, leaf in (("LeNet", "lenet"), ("ResNet9", "resnet9")):
        assert getattr(module, name) is getattr(architecture, name)
        assert getattr(getattr(fe.architecture, backend), name) is getattr(architecture, name)
        assert getattr(importlib.import_module(f"fe.architecture.{backend}.{leaf}"), name) is getattr(architecture,
                                                                                                       name)


def test_backend_networks_are_reachable_from_fe_network():
    from fe_tf.network import TFNetwork
    from fe_torch.network import TorchNetwork
    assert fe.network.TorchNetwork is TorchNetwork
    assert fe.network.TFNetwork is TFNetwork


def test_unknown_attributes_are_attribute_errors_naming_them():
    with pytest.raises(AttributeError, match="module 'fe' has no attribute 'Estimater'"):
        _ = fe.Estimater
    with pytest.raises(AttributeError, match="'fe.architecture' has no attribute 'jax'"):
        _ = fe.architecture.jax
    with pytest.raises(AttributeError, match="'fe.network' has no attribute 'JaxNetwork'"):
        _ = fe.network.JaxNetwork


def test_dir_lists_the_lazy_names():
    names = dir(fe)
    for name in ("Estimator", "Pipeline", "Network", "build", "enable_deterministic", "op", "trace", "summary",
                 "architecture", "schedule", "slicer", "dataset", "__version__"):
        assert name in names
    assert {"pytorch", "tensorflow"} <= set(dir(fe.architecture))


def _fe_modules() -> List[str]:
    names = ["fe"]
    for info in pkgutil.walk_packages([str(FE_SRC)], prefix="fe."):
        if not info.name.endswith(("__main__", "__about__")):
            names.append(info.name)
    return names


@pytest.mark.parametrize("module_name", _fe_modules())
def test_every_public_name_a_module_declares_exists(module_name):
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{module_name} has no __all__"
    assert len(set(exported)) == len(exported), f"{module_name}.__all__ repeats a name"
    missing = [name for name in exported if not hasattr(module, name)]
    assert not missing, f"{module_name}.__all__ names missing attributes: {missing}"


def test_no_module_star_imports():
    offenders = [str(path.relative_to(FE_SRC)) for path in FE_SRC.rglob("*.py")
                 if re.search(r"^\s*from\s+\S+\s+import\s+\*", path.read_text(), re.M)]
    assert offenders == []
