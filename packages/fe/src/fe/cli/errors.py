"""`CLIError`: a mistake on the command line, reported as one line on stderr with exit code 2."""

__all__ = ["CLIError", "USAGE_EXIT_CODE"]

USAGE_EXIT_CODE = 2


class CLIError(Exception):
    """A usage error of the `fe` command (bad script, unknown argument, missing log files).

    `fe.cli.main` prints it as `fe <command>: error: <message>` on stderr and exits with code 2, without a traceback.
    """
