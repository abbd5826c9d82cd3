"""Checks shared by the torch and tf tests of FastEstimator semantics part 4 (test_fe_compat4_{torch,tf}.py): the
`Delete` TensorOp inside `Network.transform` (FastEstimator's ChainMap layers under `maps`), a TensorOp `Fuse`
holding a `Delete`, SuperLoss's state through a save and a load, and RestoreWizard's `key.txt` and `frequency`.
Framework-free (fe_core only): the tensors' own `.numpy()` is all it calls."""
from __future__ import annotations

import os
from typing import Any, Callable, Dict

import numpy as np

from fe_core.build import build, reset_build_count
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.network import make_network
from fe_core.op.tensorop import Delete, LambdaOp, ModelOp, TensorOp
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.regularized_losses import SuperLoss
from fe_core.op.tensorop.meta import Fuse
from fe_core.pipeline import Pipeline
from fe_core.summary import System
from fe_core.trace.io import RestoreWizard

#: FastEstimator's `CrossEntropy(inputs='x', outputs='x', class_weights=...)` called through `forward`: (y_pred,
#: y_true, class weights, its value).
WEIGHTED_CROSS_ENTROPY = {
    "categorical": ([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]], [[0, 1, 0], [1, 0, 0], [0, 0, 1]],
                    {1: 2.0, 2: 3.0}, 0.54055756),
    "sparse": ([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]], [[0], [1], [0]], {1: 2.0, 2: 3.0}, 3.532212),
    "binary": ([[0.9], [0.3], [0.8], [0.1]], [[1], [0], [1], [0]], {1: 2.0}, 0.2797609),
}


def _batch() -> Dict[str, np.ndarray]:
    return {"x": np.ones((4, 1), dtype=np.float32), "y": np.zeros((4, 1), dtype=np.uint8)}


def _numpy(value: Any) -> np.ndarray:
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def check_delete_in_transform(model_fn: Callable[[], Any], fused: bool) -> None:
    """FastEstimator's Delete test, also with the LambdaOp and Delete inside one Fuse: deleting a new key removes it;
    deleting a key the network overwrote leaves the input's value, and only the ops' outputs are in `maps[0]`."""
    for deleted in ("y_pred", "x"):
        reset_build_count()
        ops = [LambdaOp(inputs="x", outputs="x", fn=lambda x: x + 1), Delete(keys=deleted)]
        network = make_network([ModelOp(inputs="x", outputs="y_pred", model=build(model_fn, "adam"))]
                               + ([Fuse(ops)] if fused else ops))
        result = network.transform(data=_batch(), mode="test")
        produced, inputs = result.maps
        if deleted == "y_pred":
            assert "y_pred" not in result and "y_pred" not in produced
            np.testing.assert_array_equal(_numpy(result["x"]), np.full((4, 1), 2.0))
            assert "x" in produced
        else:
            np.testing.assert_array_equal(_numpy(result["x"]), np.ones((4, 1)))  # the input, not the deleted update
            assert "x" not in produced and "y_pred" in produced and "y_pred" in result
            np.testing.assert_array_equal(_numpy(inputs["x"]), np.ones((4, 1)))


class VarOp(TensorOp):
    """FastEstimator's test op: returns its input as is (whatever its outputs say)."""

    def __init__(self, inputs: Any, outputs: Any, mode: Any, var: int) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode)
        self.var = var


def check_fuse_holding_a_delete(data: Any) -> None:
    """A Fuse's outputs leave out what a Delete inside removes; `forward` runs on `data` (a 2-row tensor)."""
    fused = Fuse(ops=[VarOp(inputs="x", outputs=["x", "y"], mode="train", var=1), Delete(keys="y", mode="train")])
    assert (fused.inputs, fused.outputs) == (["x"], ["x"])
    (x, ) = fused.forward(data=[data], state={})
    np.testing.assert_array_equal(_numpy(x), _numpy(data)[0])  # the op's 2 rows went to x and y; y was deleted
    fused = Fuse(ops=[VarOp(inputs="x", outputs=["x"], mode="train", var=1), Delete(keys="x", mode="train")])
    assert (fused.inputs, fused.outputs) == (["x"], [])
    assert fused.forward(data=[data], state={}) == []


def check_super_loss_state_round_trip(model_fn: Callable[[], Any], pred: Any, true: Any, tmp_path: Any,
                                      flag: Callable[[Any], bool]) -> None:
    """SuperLoss's moving-average threshold after one train-mode forward, through System.save_state / load_state."""
    def system() -> System:
        reset_build_count()
        model = build(model_fn, "adam", model_name="lin")
        network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                                SuperLoss(CrossEntropy(inputs=["y_pred", "y"], outputs="ce"))])
        pipeline = Pipeline(train_data=NumpyDataset({"x": np.ones((2, 2), np.float32), "y": np.zeros(2)}),
                            batch_size=1)
        return System(network=network, pipeline=pipeline, traces=[], total_epochs=2, mode="train")

    first = system()
    first.network.ops[1].forward(data=[pred, true], state={"warmup": False, "epoch": 1, "mode": "train"})
    first.save_state(str(tmp_path / "state"))
    loaded = system()
    loaded.load_state(str(tmp_path / "state"))
    op = loaded.network.ops[1]
    assert flag(op.initialized["train"]) is True and flag(op.initialized["eval"]) is False
    assert np.allclose(_numpy(op.tau["train"]), 0.22839302) and np.allclose(_numpy(op.tau["eval"]), 0.0)


def check_restore_wizard_key_file(model_fn: Callable[[], Any], directory: Any) -> None:
    """Called directly at the end of a train epoch (no run around it), RestoreWizard saves and writes `key.txt`, as
    FastEstimator's does, even where eval data follows; inside a run it waits for the evaluation. Its `frequency`
    reads back as given."""
    def wizard(path: Any) -> RestoreWizard:
        reset_build_count()
        model = build(model_fn, "adam", model_name="lin")
        data = NumpyDataset({"x": np.ones((2, 2), np.float32), "y": np.ones((2, 1), np.float32)})
        restore = RestoreWizard(directory=str(path), frequency=2)
        restore.system = System(network=make_network([ModelOp(model=model, inputs="x", outputs="y_pred")]),
                                pipeline=Pipeline(train_data=data, eval_data=data, batch_size=1), traces=[],
                                total_epochs=4, mode="train")
        return restore

    direct = wizard(directory / "direct")
    assert direct.frequency == 2 and isinstance(direct.frequency, int)
    direct.system.epoch_idx, direct.system.global_step = 2, 4
    direct.on_epoch_end(Data({}))
    assert (directory / "direct" / "key.txt").read_text() == "step-4"
    in_run = wizard(directory / "run")
    in_run.on_begin(Data({}))
    in_run.system.epoch_idx, in_run.system.global_step = 2, 4
    in_run.on_epoch_end(Data({}))  # the end of training; evaluation follows
    assert not os.path.exists(directory / "run" / "key.txt")
    in_run.system.mode = "eval"
    in_run.on_epoch_end(Data({}))
    assert (directory / "run" / "key.txt").read_text() == "step-4"
