"""The `fe` command line (FastEstimator's `fastestimator` command): `fe train`, `fe test`, `fe run`, `fe logs`,
`fe plot` and `fe history`.

As in FastEstimator, `fe.cli.run_main` runs a command line and `fe.cli.main` is the module (its `main()` is the
console script's entry point).
"""
from fe.cli.errors import CLIError
from fe.cli.history import configure_history_parser
from fe.cli.logs import configure_log_parser
from fe.cli.main import build_parser, run_main
from fe.cli.plot import configure_plot_parser
from fe.cli.run import configure_run_parser
from fe.cli.train import configure_test_parser, configure_train_parser

__all__ = ["CLIError", "build_parser", "run_main", "configure_history_parser", "configure_log_parser",
           "configure_plot_parser", "configure_run_parser", "configure_test_parser", "configure_train_parser"]
