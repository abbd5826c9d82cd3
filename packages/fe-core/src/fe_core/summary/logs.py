"""Reading FastEstimator-format logs back into `Summary` objects.

The `Logger` trace prints lines such as

```
FastEstimator-Train: step: 20; ce: 0.73; steps/sec: 7.1;
FastEstimator-Eval: step: 60; epoch: 1; ce: 0.51; accuracy: 0.9;
FastEstimator-Test: step: 60; epoch: 1; accuracy: (0.97, 0.98, 0.99);
```

(and FastEstimator 1.x printed the same), so a saved console log is a complete record of a run's history. The
functions here parse such text into `Summary.history[mode][key][step]`, with numbers as numbers: integers as `int`,
other numbers (including `nan` and `inf`) as `float`, `(low, value, high)` triples as `ValWithError`, and the array
blocks printed after a line (`\\nconfusion_matrix:\\n[[...]];`) as numpy arrays. Anything else in the text is ignored.
"""
from __future__ import annotations

import ast
import os
import re
from typing import Iterable, List, Optional, Tuple, Union

import numpy as np
from natsort import natsorted

from fe_core.summary.summary import Summary, ValWithError
from fe_core.export import fe_export

__all__ = ["parse_log_value", "parse_log_lines", "parse_log_iter", "parse_log_text", "parse_log_file", "parse_log_files",
           "find_log_files", "parse_log_dir"]

# Which history mode each kind of line records into ('Finish' carries train-time values such as the final lr).
_LINE_MODES = {"Train": "train", "Finish": "train", "Eval": "eval", "Test": "test"}
_LINE_RE = re.compile(r"FastEstimator-(Train|Eval|Test|Finish):(.*)$")
_ARRAY_HEADER_RE = re.compile(r"^([^:;\s][^:;]*):\s*$")
_INT_RE = re.compile(r"^[-+]?\d+$")
_FLOAT_RE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[-+]?(nan|inf|infinity)$", re.IGNORECASE)
_TRIPLE_RE = re.compile(r"^\(\s*([^,()]+),\s*([^,()]+),\s*([^,()]+)\)$")

LogValue = Union[int, float, ValWithError, np.ndarray]


@fe_export("fe.summary.logs.log_parse.parse_log_value", "fe.summary.logs.parse_log_value")
def parse_log_value(text: str) -> Optional[LogValue]:
    """Turn one logged value back into a number.

    Args:
        text: The value as printed ('0.73', '12', 'nan', '(0.1, 0.2, 0.3)', '[1, 2]').

    Returns:
        An int, a float, a `ValWithError`, a numpy array for a printed list, or None when the text is not a number
        (such as 'None' or a string).

    Example:
        >>> parse_log_value("0.73"), parse_log_value("20"), parse_log_value("None")
        (0.73, 20, None)
        >>> parse_log_value("(0.1, 0.2, 0.3)")
        ValWithError(y_min=0.1, y=0.2, y_max=0.3)
    """
    text = text.strip()
    if _INT_RE.match(text):
        return int(text)
    if _FLOAT_RE.match(text):
        return float(text)
    triple = _TRIPLE_RE.match(text)
    if triple:
        parts = [parse_log_value(group) for group in triple.groups()]
        if all(isinstance(part, (int, float)) for part in parts):
            return ValWithError(*(float(part) for part in parts))  # type: ignore[arg-type]
        return None
    if text.startswith("["):
        return _parse_array(text)
    return None


def _parse_array(text: str) -> Optional[np.ndarray]:
    """A printed numpy array ('[[1,2],\\n [3,4]]', with or without commas) as an array, or None."""
    body = re.sub(r"\s+", " ", text.replace("\n", " ")).strip()
    if "," not in body:  # numpy's default print separates with spaces
        body = re.sub(r"(?<=[\d.\]eEn])\s+(?=[-+\d.\[n])", ", ", body)
    body = re.sub(r"\bnan\b", "None", body)
    try:
        value = ast.literal_eval(body)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return array


def _split_fields(body: str) -> List[Tuple[str, str]]:
    """'step: 20; ce: 0.73;' -> [('step', '20'), ('ce', '0.73')]."""
    fields = []
    for segment in body.split(";"):
        key, colon, value = segment.partition(":")
        if colon and key.strip():
            fields.append((key.strip(), value.strip()))
    return fields


@fe_export("fe.summary.logs.log_parse.parse_log_lines", "fe.summary.logs.parse_log_lines")
def parse_log_lines(lines: Iterable[str], name: Optional[str] = None, source: str = "<log>") -> Summary:
    """Parse FastEstimator log lines into a Summary.

    Lines that are not log lines (progress bars, warnings, 'Eval Progress', 'FastEstimator-Start') are skipped; a log
    line may carry a prefix (a timestamp, a logger name) before 'FastEstimator-'. A line whose step is 'None' (a test
    run without training) is recorded at the previous line's step.

    Args:
        lines: The lines of a log.
        name: The Summary's name.
        source: What the lines came from, for error messages.

    Returns:
        The Summary, with `history[mode][key][step]` for every numeric value.

    Raises:
        ValueError: If a log line does not start with its step.
    """
    summary = Summary(name)
    last_step = 0
    last_epoch: Optional[LogValue] = None
    array_key: Optional[str] = None
    array_text: List[str] = []
    array_target: Optional[Tuple[str, int]] = None
    line_mode: Optional[str] = None
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        match = _LINE_RE.search(line)
        if array_key is not None:  # inside a printed array block that follows a log line
            if match is None and (array_text or line.lstrip().startswith("[")):
                array_text.append(line)
                if line.rstrip().endswith("];"):
                    value = _parse_array("\n".join(array_text).rstrip()[:-1])
                    if value is not None and array_target is not None:
                        summary.history[array_target[0]][array_key][array_target[1]] = value
                    array_key, array_text = None, []
                continue
            array_key, array_text = None, []  # not an array block after all
        if match is None:
            header = _ARRAY_HEADER_RE.match(line)
            if header and line_mode is not None:
                array_key, array_text, array_target = header.group(1).strip(), [], (line_mode, last_step)
            else:
                line_mode = None
            continue
        mode = _LINE_MODES[match.group(1)]
        fields = _split_fields(match.group(2))
        if not fields or fields[0][0] != "step":
            raise ValueError(f"{source}, line {number}: a FastEstimator log line must start with 'step: N;', got "
                             f"{line.strip()!r}")
        step_value = parse_log_value(fields[0][1])
        guessed_step = not isinstance(step_value, int)
        step = last_step if guessed_step else int(step_value)  # type: ignore[arg-type]
        last_step = step
        line_mode = mode
        for key, text in fields[1:]:
            value = parse_log_value(text)
            if value is None:
                continue
            if key == "epoch":
                if guessed_step and mode == "test" and last_epoch is not None:
                    value = last_epoch  # a test run without training guesses its epoch; keep the last known one
                last_epoch = value
            summary.history[mode][key][step] = value
    return summary


@fe_export("fe.summary.logs.log_parse.parse_log_iter")
def parse_log_iter(source: Iterable[str], sync: Summary) -> Summary:
    """Parse FastEstimator log lines into an existing Summary (FastEstimator's `parse_log_iter`).

    Args:
        source: The lines of a log.
        sync: The Summary to add the parsed history into (its values are overwritten where the log has the same mode,
            key and step).

    Returns:
        `sync`, updated.

    Example:
        >>> s = Summary("run")
        >>> parse_log_iter(["FastEstimator-Train: step: 5; ce: 0.5;"], s) is s, s.history["train"]["ce"]
        (True, {5: 0.5})
    """
    sync.merge(parse_log_lines(source, name=sync.name))
    return sync


@fe_export("fe.summary.logs.log_parse.parse_log_text", "fe.summary.logs.parse_log_text")
def parse_log_text(text: str, name: Optional[str] = None) -> Summary:
    """Parse the text of a FastEstimator log (for example captured stdout) into a Summary.

    Args:
        text: The log text.
        name: The Summary's name.

    Example:
        >>> s = parse_log_text("FastEstimator-Train: step: 20; ce: 0.73;\\nFastEstimator-Eval: step: 20; epoch: 1; "
        ...                    "ce: 0.5;", name="run")
        >>> s.history["train"]["ce"], s.history["eval"]["ce"]
        ({20: 0.73}, {20: 0.5})
    """
    return parse_log_lines(text.splitlines(), name=name)


def _strip_extension(file_name: str, extension: Optional[str]) -> str:
    if extension and file_name.endswith(extension):
        return file_name[:-len(extension)]
    return os.path.splitext(file_name)[0] if not extension else file_name


@fe_export("fe.summary.logs.log_parse.parse_log_file", "fe.summary.logs.parse_log_file")
def parse_log_file(file_path: str, file_extension: Optional[str] = ".txt") -> Summary:
    """Parse a saved log file into a Summary named after the file.

    Args:
        file_path: The log file.
        file_extension: The extension to strip from the file name to make the Summary's name (None: strip any).

    Returns:
        The Summary.

    Raises:
        FileNotFoundError: If the file does not exist.
        ValueError: If a log line in it does not start with its step.
    """
    name = _strip_extension(os.path.basename(file_path), file_extension)
    with open(file_path, encoding="utf-8", errors="replace") as file:
        return parse_log_lines(file, name=name, source=file_path)


def parse_log_files(file_paths: Iterable[str], log_extension: Optional[str] = ".txt") -> List[Summary]:
    """Parse several log files, one Summary each (in the given order).

    Raises:
        ValueError: If no file is given.
    """
    paths = list(file_paths)
    if not paths:
        raise ValueError("parse_log_files needs at least one log file")
    return [parse_log_file(path, log_extension) for path in paths]


@fe_export("fe.summary.logs.find_log_files")
def find_log_files(dir_path: str, log_extension: str = ".txt", recursive_search: bool = False) -> List[str]:
    """The log files in a directory, in natural order ('run_2' before 'run_10').

    Args:
        dir_path: The directory.
        log_extension: Only files ending with this are logs.
        recursive_search: Also look in sub-directories.

    Raises:
        FileNotFoundError: If `dir_path` is not a directory.
    """
    if not os.path.isdir(dir_path):
        raise FileNotFoundError(f"Log directory {dir_path!r} does not exist")
    found = []
    for root, dirs, files in os.walk(dir_path):
        found.extend(os.path.join(root, name) for name in files if name.endswith(log_extension))
        if not recursive_search:
            dirs.clear()
    return natsorted(found)


def parse_log_dir(dir_path: str, log_extension: str = ".txt", recursive_search: bool = False) -> List[Summary]:
    """Parse every log file in a directory, one Summary each.

    Raises:
        FileNotFoundError: If `dir_path` is not a directory.
        ValueError: If it holds no file ending with `log_extension`.
    """
    paths = find_log_files(dir_path, log_extension, recursive_search)
    if not paths:
        where = "or its sub-directories " if recursive_search else ""
        raise ValueError(f"No log files ending with {log_extension!r} in {dir_path!r} {where}".rstrip())
    return parse_log_files(paths, log_extension)
