"""FastEstimator semantics, part 4 (issue 43) on torch: CrossEntropy with class weights called through `forward`,
binary Accuracy of a one-column prediction, the Delete TensorOp in `Network.transform` and inside a Fuse, SuperLoss
state through a checkpoint, RestoreWizard's key file, and a saved backbone read back with `load_state_dict`."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from compat4_helpers import (WEIGHTED_CROSS_ENTROPY, check_delete_in_transform, check_fuse_holding_a_delete,
                             check_restore_wizard_key_file, check_super_loss_state_round_trip)
from fe_core.build import build, reset_build_count
from fe_core.data import Data
from fe_core.framework.registry import model_backend
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.trace.io.model_saver import save_model_files
from fe_core.trace.metric import Accuracy


class Identity(torch.nn.Module):
    """FastEstimator's Delete test model: a layer it never uses, and its input back."""

    def __init__(self) -> None:
        super().__init__()
        self.dense = torch.nn.Linear(1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def linear() -> torch.nn.Module:
    return torch.nn.Linear(2, 3)


@pytest.mark.parametrize("form", sorted(WEIGHTED_CROSS_ENTROPY))
def test_cross_entropy_with_class_weights_of_one_input_key_through_forward(form: str) -> None:
    pred, true, weights, expected = WEIGHTED_CROSS_ENTROPY[form]
    loss = CrossEntropy(inputs="x", outputs="x", class_weights=weights)
    output = loss.forward(data=[torch.tensor(pred), torch.tensor(true)], state={})
    assert isinstance(output, torch.Tensor) and np.allclose(output.detach().numpy(), expected)


@pytest.mark.parametrize("label", [[[1, 0], [0, 1]], [0, 1]])
def test_binary_accuracy_of_a_one_column_prediction(label: Any) -> None:
    for from_logits, pred in ((False, [[0.3], [0.6]]), (True, [[-1], [1]])):  # integer logits: still logits
        accuracy = Accuracy(true_key="label", pred_key="pred", output_name="acc", from_logits=from_logits)
        accuracy.on_epoch_begin(Data())
        accuracy.on_batch_end(Data({"label": torch.tensor(label), "pred": torch.tensor(pred)}))
        end = Data()
        accuracy.on_epoch_end(end)
        assert end["acc"] == 1.0


@pytest.mark.parametrize("fused", [False, True])
def test_delete_in_transform_leaves_fastestimators_chainmap_layers(fused: bool) -> None:
    check_delete_in_transform(Identity, fused)


def test_fuse_holding_a_delete_leaves_the_key_out_of_its_outputs() -> None:
    with pytest.warns(UserWarning, match="only the first 1 are written, as FastEstimator does"):
        check_fuse_holding_a_delete(torch.tensor([[1., 2., 4.], [1., 2., 6.]]))


def test_super_loss_state_is_saved_and_loaded(tmp_path: Any) -> None:
    pred = torch.tensor([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]])
    true = torch.tensor([[0, 1, 0], [1, 0, 0], [0, 0, 1]])

    def flag(value: Any) -> bool:
        assert isinstance(value, torch.Tensor)  # FastEstimator's flags are tensors (`.to("cpu").numpy()`)
        return bool(value.to("cpu").numpy())

    check_super_loss_state_round_trip(lambda: torch.nn.Linear(2, 3), pred, true, tmp_path, flag)


def test_restore_wizard_writes_its_key_file_and_reads_back_its_frequency(tmp_path: Any) -> None:
    check_restore_wizard_key_file(lambda: torch.nn.Linear(2, 1), tmp_path)


def test_a_saved_backbone_loads_with_torch_load_state_dict(tmp_path: Any) -> None:
    reset_build_count()
    backbone = build(linear, optimizer_fn=None, model_name="backbone")
    (path, ) = save_model_files(model_backend(backbone), backbone, str(tmp_path), "backbone_best_accuracy")
    fresh = linear()
    fresh.load_state_dict(torch.load(path))
    assert all(torch.equal(a, b) for a, b in zip(fresh.state_dict().values(), backbone.state_dict().values()))
