"""Torch: an optimizer_fn that builds no torch optimizer is a configuration error that FastEstimator code catches as
AssertionError (FastEstimator asserts the optimizer's type) and fe code as ValueError or TypeError."""
from __future__ import annotations

import pytest
import torch

from fe_core.build import build, reset_build_count
from fe_core.config_error import ConfigurationError


@pytest.fixture(autouse=True)
def fresh_names():
    reset_build_count()


@pytest.mark.parametrize("optimizer_fn", [lambda params: "adam", lambda params: object()])
def test_an_optimizer_fn_returning_no_torch_optimizer(optimizer_fn):
    with pytest.raises(AssertionError, match="must return a torch.optim.Optimizer") as caught:
        build(model_fn=lambda: torch.nn.Linear(2, 1), optimizer_fn=optimizer_fn)
    assert isinstance(caught.value, (ValueError, TypeError, ConfigurationError))
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)


def test_inconsistent_build_counts_on_torch():
    with pytest.raises(AssertionError, match="one optimizer, weights path and name per model"):
        build(model_fn=lambda: [torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)], optimizer_fn=["adam"])
    with pytest.raises(ValueError, match="one optimizer, weights path and name per model"):
        build(model_fn=lambda: torch.nn.Linear(2, 1), optimizer_fn="adam", model_name=["a", "b"])
