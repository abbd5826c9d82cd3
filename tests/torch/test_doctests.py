"""The examples in fe_torch's docstrings run and show what they claim."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["fe_torch.devices", "fe_torch.precision", "fe_torch.optimizers", "fe_torch.network", "fe_torch.framework",
           "fe_torch.architecture.lenet", "fe_torch.architecture.resnet9"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
