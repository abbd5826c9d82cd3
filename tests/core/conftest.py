"""Shared fixtures for fe-core's tests."""
from __future__ import annotations

from typing import Iterator

import pytest

from fe_core.framework import registry


@pytest.fixture
def clean_backend_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run a test against an empty backend registry (built-ins only, entry points not read yet).

    The registry's module state is restored afterwards, so backends other tests registered come back.
    """
    monkeypatch.setattr(registry, "_discovered", {})
    monkeypatch.setattr(registry, "_registered", {})
    monkeypatch.setattr(registry, "_instances", {})
    monkeypatch.setattr(registry, "_entry_points_read", False)
    yield
