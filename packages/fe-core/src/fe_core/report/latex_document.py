"""Writing a PyLaTeX document: always its .tex source, and a PDF when a LaTeX compiler is installed.

Reports (TestReport, Traceability) are built with PyLaTeX (the `report` extra). Compiling them to PDF needs a TeX
distribution (`latexmk` or `pdflatex` on the PATH), which pip cannot install; without one the .tex source is still
written and one line says how to get the PDF.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any, Optional

__all__ = ["latex_compiler", "write_document", "MISSING_COMPILER"]

MISSING_COMPILER = ("no LaTeX compiler (latexmk or pdflatex) is installed, so only the .tex source was written; "
                    "install a TeX distribution (for example `apt-get install texlive-latex-extra latexmk`) to get the PDF")


def latex_compiler() -> Optional[str]:
    """'latexmk' or 'pdflatex' when found on the PATH, else None."""
    for compiler in ("latexmk", "pdflatex"):
        if shutil.which(compiler):
            return compiler
    return None


def write_document(doc: Any, path_stem: str, owner: str) -> str:
    """Write `doc` (a pylatex Document) to `<path_stem>.tex`, and compile `<path_stem>.pdf` when possible.

    Args:
        doc: The document.
        path_stem: The output path without extension.
        owner: Who writes it, for messages ('TestReport').

    Returns:
        The path of the PDF, or of the .tex source when no PDF could be made.
    """
    folder = os.path.dirname(os.path.abspath(path_stem))
    os.makedirs(folder, exist_ok=True)
    doc.generate_tex(path_stem)
    compiler = latex_compiler()
    if compiler is None:
        print(f"FastEstimator-{owner}: {MISSING_COMPILER}: {path_stem}.tex")
        return f"{path_stem}.tex"
    try:
        doc.generate_pdf(path_stem, clean_tex=False, compiler=compiler if compiler == "pdflatex" else None,
                         silent=True)
    except (subprocess.CalledProcessError, OSError) as err:
        print(f"FastEstimator-{owner}: compiling {path_stem}.tex with {compiler} failed ({err}); the .tex source "
              f"is kept")
        return f"{path_stem}.tex"
    print(f"FastEstimator-{owner}: Report written to {path_stem}.pdf")
    return f"{path_stem}.pdf"
