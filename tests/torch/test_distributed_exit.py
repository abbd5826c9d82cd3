"""Leaving a process group at exit: over gloo every process first waits (bounded) for the others, except when the
script is dying of an unhandled exception. A real one-process gloo group on 127.0.0.1."""
from __future__ import annotations

import datetime
import sys
from typing import Any, Iterator, List

import pytest
import torch.distributed as dist

from fe_torch import distributed
from process_helpers import PORT_TAKEN, free_port


@pytest.fixture
def gloo_group() -> Iterator[None]:
    for attempt in range(2):  # once more on a new port if the first was taken between picking and binding it
        try:
            dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", world_size=1, rank=0,
                                    timeout=datetime.timedelta(seconds=30))
            break
        except (RuntimeError, OSError) as error:
            if attempt or not any(marker in str(error) for marker in PORT_TAKEN):
                raise
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def barriers(monkeypatch: pytest.MonkeyPatch) -> List[Any]:
    calls: List[Any] = []
    real = dist.monitored_barrier
    monkeypatch.setattr(dist, "monitored_barrier", lambda **kwargs: calls.append(kwargs) or real(**kwargs))
    return calls


def test_a_normal_exit_waits_for_every_process_within_the_exit_timeout(gloo_group, barriers, monkeypatch) -> None:
    monkeypatch.setenv("FE_DIST_EXIT_TIMEOUT", "7")
    monkeypatch.delattr(sys, "last_value", raising=False)
    distributed._last_barrier()  # pylint: disable=protected-access
    assert barriers == [{"timeout": datetime.timedelta(seconds=7)}]


def test_an_exit_on_an_unhandled_exception_does_not_wait(gloo_group, barriers, monkeypatch) -> None:
    monkeypatch.setattr(sys, "last_value", RuntimeError("the script failed"), raising=False)
    distributed._last_barrier()  # pylint: disable=protected-access
    assert barriers == []


def test_a_peer_that_never_arrives_does_not_stop_the_exit(gloo_group, monkeypatch) -> None:
    def timed_out(**kwargs: Any) -> None:
        raise RuntimeError("Rank 1 failed to pass monitoredBarrier")
    monkeypatch.setattr(dist, "monitored_barrier", timed_out)
    monkeypatch.delattr(sys, "last_value", raising=False)
    distributed._last_barrier()  # pylint: disable=protected-access  # returns: the group is left regardless
