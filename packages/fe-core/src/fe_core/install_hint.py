"""The one place that words "how to install it" hints, so every message names a package that is fe's own.

fe is not on a public package index yet, and the name `fe` there belongs to an unrelated project: installing
`fe[torch]` from an index would replace fe with that package. Hints therefore give the command that works today, from
a clone of this repository (`pip install ./packages/fe-torch`), and the distribution name that fe's own release
will use (`fe-torch`, `fe-tf`, `fe-core[image]`), never `fe` from an index.

Example:
    >>> install_command("fe-torch")
    'pip install ./packages/fe-torch from a clone of fe (pip install fe-torch once released)'
    >>> install_command("fe-core", "image")
    'pip install "./packages/fe-core[image]" from a clone of fe (pip install "fe-core[image]" once released)'
"""
from __future__ import annotations

from typing import Optional

__all__ = ["install_command", "BACKEND_DISTRIBUTIONS"]

# The backends' short names (the `fe.backends` entry names) -> the distributions that hold them.
BACKEND_DISTRIBUTIONS = {"torch": "fe-torch", "tf": "fe-tf"}


def install_command(distribution: str, extra: Optional[str] = None) -> str:
    """The pip command that installs one of fe's own distributions, from a clone and once released.

    Args:
        distribution: 'fe-core', 'fe-torch', 'fe-tf' or 'fe' (the last only from a clone: its index name is taken).
        extra: An extra of that distribution ('image', 'table', 'examples', ...), or None.

    Returns:
        One phrase, e.g. `pip install ./packages/fe-torch from a clone of fe (pip install fe-torch once released)`.
    """
    if extra:
        local, released = f'"./packages/{distribution}[{extra}]"', f'"{distribution}[{extra}]"'
    else:
        local, released = f"./packages/{distribution}", distribution
    if distribution == "fe":  # the index name `fe` belongs to another project: only the clone's path is a command
        return f"pip install {local} from a clone of fe"
    return f"pip install {local} from a clone of fe (pip install {released} once released)"
