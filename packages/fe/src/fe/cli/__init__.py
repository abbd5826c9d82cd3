"""The `fe` command line: `fe train`, `fe test` and `fe logs` (FastEstimator's `fastestimator` command)."""
from fe.cli.errors import CLIError
from fe.cli.main import build_parser, main

__all__ = ["CLIError", "build_parser", "main"]
