"""Shared fixtures for fe-torch's tests."""
from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest
import torch

from fe_core.build import reset_build_count


@pytest.fixture(autouse=True)
def _fresh_run() -> Iterator[None]:
    """Every test starts with model names from 'model' and fixed torch and numpy seeds."""
    reset_build_count()
    torch.manual_seed(0)
    np.random.seed(0)
    yield
    reset_build_count()
