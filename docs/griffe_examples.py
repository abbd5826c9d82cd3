"""A griffe extension for the API reference: read Google-style `Example:` sections as examples (griffe knows only
`Examples:`), so doctest lines render as code instead of Markdown."""
from __future__ import annotations

import re
from typing import Any

import griffe

_SINGULAR = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    """Rename `Example:` to `Examples:` in every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # pylint: disable=unused-argument
        if obj.docstring is not None:
            obj.docstring.value = _SINGULAR.sub(r"\1Examples:", obj.docstring.value)
