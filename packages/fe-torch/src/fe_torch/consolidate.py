"""Turn a sharded model's distributed checkpoint into one ordinary weights file, in one process, without a launcher.

    python -m fe_torch.consolidate CHECKPOINT MODEL OUT.pt

CHECKPOINT is a checkpoint directory that RestoreWizard wrote (`<dir>/step-<N>`), or the RestoreWizard directory
itself (its newest checkpoint is used). The model's slice files are verified against the checkpoint's manifest, the
slices read (safely: see `fe_torch.dcp_storage`) into whole tensors, and written atomically as the model's
`state_dict` - the file `fe.backend.save_model` / ModelSaver write, which `build(weights_path=...)`,
`fe.backend.load_model` and `torch.load(weights_only=True)` read. The whole model is in this process's memory once.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from typing import Dict, List, Optional

import torch
from fe_core.checkpoint.checkpoint_dir import read_manifest, verify_file

from fe_torch.dcp_storage import dcp_module, read_metadata, safe_reader, tensors_only_planner
from fe_torch.sharded_checkpoint import dcp_dir_name
from fe_torch.single_file import write_torch_file

__all__ = ["consolidate", "main"]

_STEP = re.compile(r"^step-(\d+)$")


def _checkpoint_directory(path: str) -> str:
    """`path` if it is a checkpoint, else the newest `step-<N>` checkpoint in it.

    Raises:
        FileNotFoundError: If there is none.
    """
    if os.path.isfile(os.path.join(path, "system.json")):
        return path
    steps = sorted((int(match.group(1)), name) for name in (os.listdir(path) if os.path.isdir(path) else [])
                   for match in [_STEP.match(name)] if match and os.path.isdir(os.path.join(path, name)))
    if not steps:
        raise FileNotFoundError(f"{path!r} is neither an fe checkpoint (no system.json) nor a RestoreWizard "
                                f"directory holding step-<N> checkpoints")
    return os.path.join(path, steps[-1][1])


def consolidate(checkpoint: str, model_name: str, out: str) -> Dict[str, torch.Tensor]:
    """Write the whole weights of sharded model `model_name` in `checkpoint` to `out` (an ordinary `state_dict`
    file, written atomically).

    Args:
        checkpoint: A checkpoint directory, or a RestoreWizard directory (its newest checkpoint).
        model_name: The model's name (its `build(model_name=...)`).
        out: The weights file to write.

    Returns:
        The whole weights written.

    Raises:
        FileNotFoundError: If the checkpoint or the model's distributed checkpoint is missing.
        ValueError: If a file is damaged or not a distributed checkpoint fe can read safely.
    """
    directory = _checkpoint_directory(os.path.abspath(checkpoint))
    folder = dcp_dir_name(model_name)
    path = os.path.join(directory, folder)
    if not os.path.isdir(path):
        found = sorted(name[:-len(".dcp")] for name in os.listdir(directory) if name.endswith(".dcp"))
        raise FileNotFoundError(f"{directory!r} holds no distributed checkpoint of a model {model_name!r} (sharded "
                                f"models there: {found}; an unsharded model's weights are already {model_name}.pt)")
    files = read_manifest(directory)["files"]
    for name, entry in files.items():
        if name.startswith(folder + "/"):
            verify_file(directory, name, entry)
    stored = read_metadata(path).state_dict_metadata
    from torch.distributed.checkpoint.metadata import TensorStorageMetadata  # pylint: disable=import-outside-toplevel
    wanted = {key: torch.empty(tuple(entry.size), dtype=entry.properties.dtype) for key, entry in stored.items()
              if key.startswith("model.") and isinstance(entry, TensorStorageMetadata)}
    with warnings.catch_warnings():  # one process reading what several wrote is the point here
        warnings.filterwarnings("ignore", message=".*assuming the intent is to load in a single process")
        dcp_module().load(wanted, storage_reader=safe_reader(path), planner=tensors_only_planner())
    state = {key[len("model."):]: value for key, value in wanted.items()}
    write_torch_file(state, out)
    return state


def main(argv: Optional[List[str]] = None) -> int:
    """`python -m fe_torch.consolidate CHECKPOINT MODEL OUT`: returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m fe_torch.consolidate",
                                     description="Write a sharded model's whole weights from a checkpoint into one "
                                                 "ordinary .pt file (one process, no launcher).")
    parser.add_argument("checkpoint", help="a checkpoint directory (step-<N>) or a RestoreWizard directory")
    parser.add_argument("model", help="the model's name")
    parser.add_argument("out", help="the .pt file to write")
    args = parser.parse_args(argv)
    try:
        state = consolidate(args.checkpoint, args.model, args.out)
    except (OSError, ValueError, RuntimeError) as error:
        print(f"fe_torch.consolidate: {error}", file=sys.stderr)
        return 1
    count = sum(value.numel() for value in state.values())
    print(f"Wrote {args.out}: {len(state)} tensors, {count:,} values of model {args.model!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
