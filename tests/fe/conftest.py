"""Fixtures for the fe suite."""
from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture
def fresh_build_names() -> Iterator[None]:
    """Restart fe.build's automatic model names ('model', 'model1', ...) for one test."""
    from fe_core.build import reset_build_count
    reset_build_count()
    yield
    reset_build_count()
