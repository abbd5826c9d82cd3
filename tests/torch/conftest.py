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


@pytest.fixture(autouse=True)
def _cpu_unless_marked_gpu(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests not marked `gpu` run on the CPU on every machine, a GPU machine included: their expected values are
    CPU-exact (bitwise resume, hand-computed references with CPU tensors), and fe's own choice of device is what the
    `gpu`-marked tests check. So fe and any subprocess a test starts see no CUDA device."""
    if request.node.get_closest_marker("gpu") is None and torch.cuda.is_available():
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
