"""Shared output of the benchmarks in tools/bench: the machine line, summarising repeats, and the table.

Every benchmark prints one `machine:` line, then a table whose columns are: workload, configuration, the median and
best rate of its repeats, and the ratio of each to the reference configuration of the same workload (fe speed /
hand-written speed: above 1 means fe is faster). Where fe and the hand-written code were timed in back-to-back pairs,
the median ratio is the median of the per-pair ratios.
"""
from __future__ import annotations

import datetime
import math
import os
import platform
import statistics
from typing import Dict, List, Sequence, Tuple

__all__ = ["cpu_model", "machine_line", "median_interval", "summarize", "summarize_pairs", "print_table",
           "PAIRED_HEADER"]


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo ('unknown' elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_line(**versions: str) -> str:
    """One line naming the machine, the thread setting and the library versions."""
    try:
        import numpy  # pylint: disable=import-outside-toplevel
        numpy_version = numpy.__version__
    except ImportError:  # the memory benchmark's driver may run on a bare interpreter
        numpy_version = "not installed"
    parts = [f"machine: {cpu_model()}, {os.cpu_count()} cores, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}",
             f"Python {platform.python_version()}", f"numpy {numpy_version}"]
    parts += [f"{name} {version}" for name, version in versions.items()]
    parts.append(datetime.date.today().isoformat())
    return "; ".join(parts)


def _rate(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if value >= 1000 else f"{value:,.1f} {unit}"


def summarize(workload: str, configurations: Dict[str, Sequence[float]], reference: str,
              unit: str = "steps/s") -> List[List[str]]:
    """Table rows for one workload: median and best of each configuration's rates, and their ratios to `reference`.

    Args:
        workload: The workload's name (first column).
        configurations: Configuration name -> the rates measured (higher is faster).
        reference: The configuration the ratios divide by.
        unit: What the rates count.
    """
    ref = configurations[reference]
    ref_median, ref_best = statistics.median(ref), max(ref)
    rows = []
    for name, rates in configurations.items():
        median, best = statistics.median(rates), max(rates)
        rows.append([workload, name, _rate(median, unit), _rate(best, unit), f"{median / ref_median:.3f}x",
                     f"{best / ref_best:.3f}x"])
    return rows


def median_interval(values: Sequence[float], z: float = 1.96) -> Tuple[float, float]:
    """A distribution-free ~95% confidence interval for the median of `values` (binomial order statistics).

    With n values sorted, the interval runs from the j-th to the k-th, where j and k lie z * sqrt(n) / 2 below and above
    the middle rank: the median of the population lies between them with ~95% probability whatever the distribution.
    With fewer than 6 values it is the whole range.
    """
    ordered = sorted(values)
    n = len(ordered)
    if n < 6:
        return ordered[0], ordered[-1]
    half_width = z * math.sqrt(n) / 2
    low = max(0, math.floor(n / 2 - half_width) - 1)
    high = min(n - 1, math.ceil(n / 2 + half_width))
    return ordered[low], ordered[high]


def summarize_pairs(workload: str, configurations: Dict[str, Sequence[Tuple[float, float]]], reference: str,
                    unit: str = "steps/s") -> List[List[str]]:
    """Table rows for one workload measured in pairs (configuration rate, reference rate) taken back to back.

    The reference row pools the reference side of every pair. A configuration's 'ratio (median)' is the median of its
    per-pair ratios (drifts in machine speed cancel within a pair), '95% interval' the confidence interval of that
    median (`median_interval`); 'ratio (best)' is its best rate over the best reference rate of its own pairs.

    Args:
        workload: The workload's name (first column).
        configurations: Configuration name -> its (rate, reference rate) pairs.
        reference: The name of the reference row.
        unit: What the rates count.
    """
    pooled = [ref for pairs in configurations.values() for _, ref in pairs]
    rows = [[workload, reference, _rate(statistics.median(pooled), unit), _rate(max(pooled), unit), "1.000x", "",
             "1.000x"]]
    for name, pairs in configurations.items():
        rates = [rate for rate, _ in pairs]
        ratios = [rate / ref for rate, ref in pairs]
        low, high = median_interval(ratios)
        best_ratio = max(rates) / max(ref for _, ref in pairs)
        rows.append([workload, name, _rate(statistics.median(rates), unit), _rate(max(rates), unit),
                     f"{statistics.median(ratios):.3f}x", f"{low:.3f}-{high:.3f}", f"{best_ratio:.3f}x"])
    return rows


PAIRED_HEADER = ("workload", "configuration", "median", "best", "ratio (median)", "95% interval", "ratio (best)")


def print_table(rows: List[List[str]],
                header: Sequence[str] = ("workload", "configuration", "median", "best", "ratio (median)",
                                         "ratio (best)"),
                text_columns: int = 2) -> None:
    """Print rows as an aligned text table (the first `text_columns` left-aligned, the numbers right-aligned)."""
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(len(header))]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(cell.ljust(w) if i < text_columns else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(row, widths))))
