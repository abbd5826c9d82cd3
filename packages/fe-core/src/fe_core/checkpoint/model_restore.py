"""Loading a checkpoint's models all or nothing.

If loading one model fails, the models loaded before it must not be left changed. Two ways to get there:

- A backend that can tell beforehand whether its files fit (`check_model(model, checkpoint, record)`: reads what it
  needs without changing the model, and verifies the files left to it, see `read_checkpoint(verified_when_read=...)`)
  gets every model checked first and then loaded: no copy of any model is made (a sharded model's state may be
  larger than one process's memory or disk). Loading after a successful check can then fail only by an I/O error.
- Any other backend: every model is first saved into a temporary directory, and put back from it if a load fails.
"""
from __future__ import annotations

import contextlib
import shutil
import tempfile
from typing import Any, Iterator, List, Sequence

__all__ = ["restore_models"]


@contextlib.contextmanager
def _saved_name(model: Any, name: str) -> Iterator[None]:
    """Give the model the name its files carry (automatic names may differ between runs) while they are read."""
    current = getattr(model, "model_name", None)
    model.model_name = name
    try:
        yield
    finally:
        model.model_name = current


def restore_models(backend: Any, models: Sequence[Any], checkpoint: Any) -> None:
    """Load every model of `checkpoint` (a verified `Checkpoint`) into `models` (matched by position), all or
    nothing.

    Args:
        backend: The models' backend.
        models: The models, in the checkpoint's order.
        checkpoint: The checkpoint.

    Raises:
        Whatever the backend raises for files that do not fit (nothing has been changed then).
    """
    if not models:
        return
    records = list(checkpoint.models)
    check = getattr(backend, "check_model", None)
    if callable(check):
        for model, record in zip(models, records):
            with _saved_name(model, record.name):
                check(model, checkpoint, record)
        for model, record in zip(models, records):
            with _saved_name(model, record.name):
                backend.load_model(model, checkpoint.directory, load_optimizer=record.optimizer)
        return
    backup = tempfile.mkdtemp(prefix="fe-restore-")
    try:
        for model in models:
            backend.save_model(model, backup, save_optimizer=getattr(model, "optimizer", None) is not None)
        loaded: List[Any] = []
        try:
            for model, record in zip(models, records):
                with _saved_name(model, record.name):
                    backend.load_model(model, checkpoint.directory, load_optimizer=record.optimizer)
                loaded.append(model)
        except Exception:
            for model in loaded:
                backend.load_model(model, backup, load_optimizer=getattr(model, "optimizer", None) is not None)
            raise
    finally:
        shutil.rmtree(backup, ignore_errors=True)
