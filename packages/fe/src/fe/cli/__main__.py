"""`python -m fe.cli ...` runs the `fe` command."""
import sys

from fe.cli.main import main

sys.exit(main())
