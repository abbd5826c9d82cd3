"""`fe checkpoint consolidate CHECKPOINT MODEL OUT.pt`: a sharded model's checkpoint as one ordinary weights file."""
from __future__ import annotations

from typing import Any, Dict, List

from fe.cli.errors import CLIError

__all__ = ["configure_checkpoint_parser"]


def consolidate(args: Dict[str, Any], unknown: List[str]) -> int:
    """Write the whole weights of a sharded model in a checkpoint into one file, in this process (no launcher)."""
    if unknown:
        raise CLIError(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        from fe_torch.consolidate import main  # pylint: disable=import-outside-toplevel
    except ImportError:
        from fe_core.install_hint import install_command  # pylint: disable=import-outside-toplevel
        raise CLIError(f"consolidating a sharded checkpoint needs fe-torch: {install_command('fe-torch')}") from None
    return main([args["checkpoint"], args["model"], args["out"]])


def configure_checkpoint_parser(subparsers: Any) -> None:
    """Add the `checkpoint` command (and its `consolidate` sub-command) to `subparsers`."""
    parser = subparsers.add_parser("checkpoint", help="work with RestoreWizard checkpoints",
                                   description="Work with checkpoints that RestoreWizard wrote.", allow_abbrev=False)
    commands = parser.add_subparsers(dest="checkpoint_command", metavar="{consolidate}", parser_class=type(parser))
    commands.required = True
    merge = commands.add_parser("consolidate", allow_abbrev=False,
                                help="write a sharded model's whole weights into one ordinary .pt file",
                                description="Read a sharded (FSDP) model's slices from a checkpoint and write its "
                                            "whole weights as one state_dict file (what ModelSaver writes), in this "
                                            "process: no launcher, no process group.")
    merge.add_argument("checkpoint", metavar="CHECKPOINT", help="a checkpoint (step-<N>) or RestoreWizard directory")
    merge.add_argument("model", metavar="MODEL", help="the model's name")
    merge.add_argument("out", metavar="OUT", help="the .pt file to write")
    merge.set_defaults(func=consolidate)
