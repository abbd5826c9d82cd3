"""The `fe` command line (FastEstimator's `fastestimator` command): `fe train`, `fe test`, `fe run`, `fe logs`,
`fe plot` and `fe history`."""
from fe.cli.errors import CLIError
from fe.cli.history import configure_history_parser
from fe.cli.logs import configure_log_parser
from fe.cli.main import build_parser, main, run_main
from fe.cli.plot import configure_plot_parser
from fe.cli.run import configure_run_parser
from fe.cli.train import configure_test_parser, configure_train_parser

__all__ = ["CLIError", "build_parser", "main", "run_main", "configure_history_parser", "configure_log_parser",
           "configure_plot_parser", "configure_run_parser", "configure_test_parser", "configure_train_parser"]
