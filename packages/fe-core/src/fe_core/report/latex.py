"""PyLaTeX building blocks for fe's reports (FastEstimator's `fe.util.latex_util`).

This module imports PyLaTeX (the `report` extra) when it is imported; the `fe` namespace imports it only on use.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Union

from fe_core.export import fe_export
from fe_core.optional import import_optional

pylatex = import_optional("pylatex", extra="report", feature="fe.util.latex_util")

from pylatex import NoEscape, Package  # noqa: E402  pylint: disable=wrong-import-position
from pylatex.base_classes import Container, ContainerCommand, Environment, LatexObject  # noqa: E402
from pylatex.utils import bold, escape_latex  # noqa: E402

__all__ = ["ContainerList", "PyContainer", "Verbatim", "Center", "AdjustBox", "Form", "TextField", "TextFieldBox",
           "HrefFEID", "IterJoin", "WrapText", "FeSplitSummary"]


def _latex(item: Any) -> str:
    return item.dumps() if isinstance(item, LatexObject) else escape_latex(str(item))


@fe_export("fe.util.latex_util.ContainerList", "fe.util.ContainerList")
class ContainerList(Container):
    """A class to expedite combining pieces of latex together.

    This class is intentionally not @traceable.

    Example:
        >>> c = ContainerList(data=["a_b", NoEscape(r"\\textbf{c}")])
        >>> c.dumps()
        'a\\\\_b\\\\textbf{c}'
    """

    content_separator = ""

    def dumps(self) -> str:
        """Get a string representation of this container.

        Returns:
            A string representation of itself.
        """
        return str(self.dumps_content())


@fe_export("fe.util.latex_util.PyContainer", "fe.util.PyContainer")
class PyContainer(ContainerList):
    """A class to convert python containers to a LaTeX representation.

    This class is intentionally not @traceable.

    Args:
        data: The python object to be converted to LaTeX.
        truncate: How many values to display before truncating with an ellipsis. This should be a positive integer or
            None to disable truncation.

    Raises:
        AssertionError: If `data` is not a list, tuple, set or dict, or `truncate` is not positive.

    Example:
        >>> PyContainer([1, "x", 3], truncate=2).dumps()
        '[1, x, \\\\ldots]'
    """

    def __init__(self, data: Union[list, tuple, set, dict], truncate: Optional[int] = None) -> None:
        assert isinstance(data, (list, tuple, set, dict)), f"PyContainer needs a list/tuple/set/dict, got {type(data)}"
        assert truncate is None or truncate > 0, "PyContainer truncate must be a positive integer or None"
        open_close = {list: ("[", "]"), tuple: ("(", ")")}.get(type(data), (r"\{", r"\}"))
        if isinstance(data, dict):
            items = [NoEscape(f"{_latex(key)}: {_latex(value)}") for key, value in data.items()]
        else:
            items = [NoEscape(_latex(item)) for item in data]
        if truncate is not None and len(items) > truncate:
            items = items[:truncate] + [NoEscape(r"\ldots")]
        content = [NoEscape(open_close[0])]
        for idx, item in enumerate(items):
            if idx:
                content.append(NoEscape(", "))
            content.append(item)
        content.append(NoEscape(open_close[1]))
        super().__init__(data=content)


@fe_export("fe.util.latex_util.Verbatim", "fe.util.Verbatim")
class Verbatim(Environment):
    """A class to put a string inside the latex verbatim environment.

    This class is intentionally not @traceable.

    Args:
        data: The string to be wrapped.
    """

    escape = False
    content_separator = "\n"

    def __init__(self, data: str) -> None:
        super().__init__()
        self.append(NoEscape(data))


@fe_export("fe.util.latex_util.Center", "fe.util.Center")
class Center(Environment):
    """A class to center content in a page.

    This class is intentionally not @traceable.
    """

    _latex_name = "center"


@fe_export("fe.util.latex_util.AdjustBox", "fe.util.AdjustBox")
class AdjustBox(Environment):
    """A class to adjust the size of boxes.

    This class is intentionally not @traceable.
    """

    _latex_name = "adjustbox"
    packages = [Package("adjustbox")]


@fe_export("fe.util.latex_util.Form")
class Form(Environment):
    """A class to allow Form elements.

    This class is intentionally not @traceable. Only one Form is allowed per document.
    """

    _latex_name = "Form"
    packages = [Package("hyperref")]


@fe_export("fe.util.latex_util.TextField")
class TextField(ContainerCommand):
    """A class to create editable text fields.

    This class is intentionally not @traceable. It can only be used inside of a Form.
    """

    _latex_name = "TextField"
    packages = [Package("hyperref")]


@fe_export("fe.util.latex_util.TextFieldBox")
class TextFieldBox(ContainerList):
    """A class to wrap TextFields into padded boxes for use in nesting within tables.

    Args:
        name: The name to assign to this TextField. It should be unique within the document since changes to one box
            will impact all boxes with the same name.
        height: How tall should the TextField box be? Note that it will be wrapped by 10pt space on the top and bottom.
    """

    def __init__(self, name: str, height: str = "2.5cm") -> None:
        super().__init__(data=[NoEscape(r"\vspace{10pt}"),
                               TextField(options=[NoEscape("multiline=true"), NoEscape(rf"height={height}"),
                                                  NoEscape(r"width=\linewidth"), NoEscape("bordercolor={0 0 0}"),
                                                  NoEscape(rf"name={escape_latex(name)}")]),
                               NoEscape(r"\vspace{10pt}")])


@fe_export("fe.util.latex_util.HrefFEID", "fe.util.HrefFEID")
class HrefFEID(ContainerList):
    """A class to represent a colored and underlined hyperref based on a given fe_id.

    This class is intentionally not @traceable.

    Args:
        fe_id: The id used to link this hyperref.
        name: A string suffix to be printed as part of the link text.
        link_prefix: The prefix for the hyperlink.
        id_in_name: Whether to include the id in front of the name text.
        bold_name: Whether to bold the name.
        color: The color of the link text.
    """

    packages = [Package("hyperref", options="hidelinks"), Package("ulem"), Package("xcolor")]

    def __init__(self, fe_id: Any, name: str, link_prefix: str = "tbl", id_in_name: bool = True,
                 bold_name: bool = False, color: str = "blue") -> None:
        self.fe_id = fe_id
        self.name = name
        text = escape_latex(name)
        if bold_name:
            text = bold(name).dumps() if isinstance(bold(name), LatexObject) else str(bold(name))
        if id_in_name:
            text = f"{escape_latex(str(fe_id))} {text}" if name else escape_latex(str(fe_id))
        super().__init__(data=[NoEscape(rf"\hyperref[{link_prefix}:{fe_id}]{{\textcolor{{{color}}}{{\uline{{"
                                        rf"{text}}}}}}}")])


@fe_export("fe.util.latex_util.IterJoin")
class IterJoin(Container):
    """A class to convert an iterable to a latex representation.

    Args:
        data: Data of the cell.
        token: String to serve as separator among items of `data`.

    Example:
        >>> IterJoin(["a", "b_c"], token=", ").dumps()
        'a, b\\\\_c'
    """

    def __init__(self, data: Iterable, token: str) -> None:
        self.token = token
        super().__init__(data=list(data))

    def dumps(self) -> str:
        """Get a string representation of this cell.

        Returns:
            A string representation of itself.
        """
        return self.token.join(_latex(item) for item in self.data)


@fe_export("fe.util.latex_util.WrapText")
class WrapText(LatexObject):
    """A class to convert strings or numbers to wrappable latex representation.

    This class will first convert the data to string, and then to a wrappable latex representation if its length is too
    long. This fixes an issue which prevents the first element placed into a latex X column from wrapping correctly.

    Args:
        data: Input data to be converted.
        threshold: When the length of `data` is greater than `threshold`, the resulting string will be made wrappable.

    Raises:
        AssertionError: If `data` is not a string, int, or float.

    Example:
        >>> WrapText("short", threshold=10).dumps(), WrapText("a_long_name", threshold=4).dumps()
        ('short', '\\\\seqsplit{a\\\\_long\\\\_name}')
    """

    packages = [Package("seqsplit")]

    def __init__(self, data: Union[str, int, float], threshold: int) -> None:
        assert isinstance(data, (str, int, float)), "WrapText data must be a string, int or float"
        super().__init__()
        self.data = str(data)
        self.threshold = threshold

    def dumps(self) -> str:
        """Get a string representation of this cell.

        Returns:
            A string representation of itself.
        """
        text = str(escape_latex(self.data))
        return rf"\seqsplit{{{text}}}" if len(self.data) > self.threshold else text


@fe_export("fe.util.traceability_util.FeSplitSummary", "fe.util.FeSplitSummary")
class FeSplitSummary(LatexObject):
    """A class to summarize splits performed on an FE Dataset.

    This class is intentionally not @traceable.

    Example:
        >>> summary = FeSplitSummary()
        >>> summary.add_split(parent="self", fraction="0.2", seed=0, stratify=None)
        >>> "0.2" in summary.dumps()
        True
    """

    def __init__(self) -> None:
        super().__init__()
        self.data: list = []

    def add_split(self, parent: Any, fraction: str, seed: Optional[int], stratify: Optional[str]) -> None:
        """Record another split on this dataset.

        Args:
            parent: The id of the parent involved in the split (or 'self' if you are the parent).
            fraction: The string representation of the split fraction that was used.
            seed: The random seed used during the split.
            stratify: The stratify key used during the split.
        """
        self.data.append((parent, fraction, seed, stratify))

    def dumps(self) -> str:
        """Generate a LaTeX formatted representation of this object.

        Returns:
            A LaTeX string representation of this object.
        """
        rows = [r"\begin{tabular}{|c|c|c|c|}", r"\hline", r"\textbf{Parent} & \textbf{Fraction} & \textbf{Seed} & "
                r"\textbf{Stratify} \\", r"\hline"]
        for parent, fraction, seed, stratify in self.data:
            cells = [parent.dumps() if isinstance(parent, LatexObject) else escape_latex(str(parent)),
                     escape_latex(str(fraction)), escape_latex(str(seed)), escape_latex(str(stratify))]
            rows.append(" & ".join(cells) + r" \\")
            rows.append(r"\hline")
        rows.append(r"\end{tabular}")
        return "\n".join(rows)
