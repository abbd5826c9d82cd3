"""`ProgressBar`: a live progress line (step, epoch, steps/sec, the latest losses) for interactive runs."""
from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Dict, Iterable, List, Optional, TextIO, Union

import numpy as np

from fe_core.data import Data
from fe_core.distributed.communicator import is_main_process
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["ProgressBar"]


def _columns() -> int:
    """The terminal's width (COLUMNS when set), 80 when unknown."""
    return max(20, shutil.get_terminal_size((80, 24)).columns)


def _bar_width(columns: int) -> int:
    """A fixed bar width for the terminal: the same on every line, leaving room for the text in narrow terminals."""
    return 20 if columns >= 100 else 10


def fit_postfix(parts: List[str], room: int) -> str:
    """Join `parts` with '; ', dropping the last ones (the monitored values) until the text fits in `room` columns;
    the first part (the step) is cut if even it does not fit."""
    parts = list(parts)
    while len(parts) > 1 and len("; ".join(parts)) > room:
        parts.pop()
    text = "; ".join(parts)
    return text if len(text) <= room else text[:max(room, 0)]


class _PlainBar:
    """A minimal single-line bar for when tqdm is not installed."""

    def __init__(self, total: Optional[int], desc: str, file: TextIO) -> None:
        self.total, self.desc, self.file, self.n, self.postfix = total, desc, file, 0, ""
        self.columns = _columns()
        self.width = _bar_width(self.columns)

    def room(self) -> int:
        """Columns left for the postfix."""
        done = f"{self.total}/{self.total}" if self.total else "0000000"
        return self.columns - 1 - len(f"{self.desc}: [{'#' * self.width}] {done} ") if self.total else \
            self.columns - 1 - len(f"{self.desc}: {done} ")

    def update(self, count: int) -> None:
        self.n += count

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix = text
        if refresh:
            self.refresh()

    def refresh(self) -> None:
        done = f"{self.n}/{self.total}" if self.total else str(self.n)
        width = self.width
        filled = min(width, int(width * self.n / self.total)) if self.total else 0
        bar = f"[{'#' * filled}{'.' * (width - filled)}] " if self.total else ""
        line = f"{self.desc}: {bar}{done} {self.postfix}".rstrip()
        self.file.write(f"\r\033[K{line[:self.columns - 1]}")
        self.file.flush()

    def clear(self) -> None:
        self.file.write("\r\033[K")
        self.file.flush()

    def write_lines(self, text: str, out: TextIO) -> None:
        """Print whole lines above the bar: clear it, print, draw it again."""
        self.clear()
        out.write(text)
        out.flush()
        self.refresh()

    def close(self) -> None:
        """Leave the finished bar on its own line (as Keras and Lightning do)."""
        self.refresh()
        self.file.write("\n")
        self.file.flush()


class _TqdmBar:
    """tqdm with one rate (fe's steps/s in the postfix; tqdm's own it/s is not shown)."""

    FORMAT = "{desc}: {percentage:3.0f}%|{bar:WIDTH}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}{postfix}]"
    FORMAT_NARROW = "{desc}: {percentage:3.0f}%|{bar:WIDTH}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"  # < 80 cols
    FORMAT_NO_TOTAL = "{desc}: {n_fmt} [{elapsed}{postfix}]"

    def __init__(self, tqdm: Any, total: Optional[int], desc: str, file: TextIO) -> None:
        self.tqdm = tqdm
        self.columns = _columns()
        self.width = _bar_width(self.columns)
        self.total, self.desc = total, desc
        # a fixed bar width: the same on every line, whatever the text after it; the text is fitted to the terminal
        self.narrow = self.columns < 80  # no time-remaining estimate: room for the step and the losses
        bar_format = (self.FORMAT_NARROW if self.narrow else self.FORMAT).replace("WIDTH", str(self.width))
        # A terminal that reports no size (0 rows: some ptys, IDE consoles, `docker exec`) makes tqdm hide the bar
        # but still end it with a newline: a blank line before each epoch's Train and Eval line. Draw it as on a
        # terminal of the usual height instead.
        self.bar = tqdm(total=total, desc=desc, file=file, leave=True, ncols=self.columns, mininterval=0.1,
                        nrows=shutil.get_terminal_size((80, 24)).lines or 24,
                        bar_format=bar_format if total else self.FORMAT_NO_TOTAL)

    def room(self) -> int:
        """Columns left for the postfix (tqdm adds ', ' before it)."""
        total = self.total or 0
        times = "00:00" if self.narrow else "00:00<00:00"  # elapsed (and remaining) under an hour
        fixed = len(f"{self.desc}: 100%|{'#' * self.width}| {total}/{total} [{times}, ]") if total else \
            len(f"{self.desc}: 0000000 [00:00, ]")
        return self.columns - 1 - fixed

    @property
    def n(self) -> int:
        return self.bar.n

    def update(self, count: int) -> None:
        self.bar.update(count)

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.bar.set_postfix_str(text, refresh=refresh)

    def clear(self) -> None:
        self.bar.clear()

    def write_lines(self, text: str, out: TextIO) -> None:
        """Print whole lines above the bar (what tqdm.write does, for this bar whatever streams are involved)."""
        self.bar.clear()
        out.write(text)
        out.flush()
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def _make_bar(total: Optional[int], desc: str, file: TextIO, use_tqdm: bool) -> Any:
    if use_tqdm:
        try:
            from tqdm import tqdm  # pylint: disable=import-outside-toplevel  (optional dependency)
        except ImportError:
            pass
        else:
            return _TqdmBar(tqdm, total, desc, file)
    return _PlainBar(total, desc, file)


class _LinesThroughBar:
    """Stands in for sys.stdout while a bar is live: whole lines are printed above the bar (never over it).

    Text without a newline yet is held until its line is complete, so a line printed in pieces (`print(a, end="")`,
    then the rest) is never split by a redraw of the bar.
    """

    def __init__(self, real: TextIO, bar: Any) -> None:
        self.real, self.bar, self.pending = real, bar, ""

    def write(self, text: str) -> int:
        self.pending += text
        cut = self.pending.rfind("\n")
        if cut >= 0:
            lines, self.pending = self.pending[:cut + 1], self.pending[cut + 1:]
            self.bar.write_lines(lines, self.real)
        return len(text)

    def flush(self) -> None:
        self.real.flush()

    def finish(self) -> None:
        if self.pending:
            self.bar.write_lines(self.pending, self.real)
            self.pending = ""

    def isatty(self) -> bool:
        return self.real.isatty()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@fe_export("fe.trace.progress_bar.ProgressBar", "fe.trace.ProgressBar")
class ProgressBar(Trace):
    """Show a progress bar per epoch: step, epoch, steps/sec and the latest values of the monitored keys.

    The Estimator adds one automatically when standard output is a terminal (and logging is on). It uses tqdm when it
    is installed (`pip install tqdm`; the `fe` package brings it) and a plain single-line bar otherwise. Values are
    read from the device only when the bar is redrawn (at most every `refresh_seconds`), so the bar costs nothing
    per step. While a bar is live, every line printed to standard output (the Logger's lines, "Eval Progress", trace
    messages) is printed above it, never over it; a finished epoch's bar stays on screen. The bar shows one rate:
    fe's steps/s.

    Args:
        monitor_names: Keys to show (default: the network's loss keys).
        mode: Modes to show bars for.
        refresh_seconds: The minimum time between redraws.
        file: Where to draw (default: standard error).
        use_tqdm: Use tqdm when available.
    """

    def __init__(self,
                 monitor_names: Union[None, str, Iterable[str]] = None,
                 mode: Union[None, str, Iterable[str]] = ("train", "eval", "test"),
                 refresh_seconds: float = 0.2,
                 file: Optional[TextIO] = None,
                 use_tqdm: bool = True) -> None:
        super().__init__(inputs="*", mode=mode)
        self.monitor_names: Optional[List[str]] = None if monitor_names is None else (
            [monitor_names] if isinstance(monitor_names, str) else list(monitor_names))
        self.refresh_seconds = refresh_seconds
        self.file = file
        self.use_tqdm = use_tqdm
        self._bar: Any = None
        self._last_draw = 0.0
        self._steps_at_draw = 0
        self._count = 0
        self._rate: Optional[float] = None
        self._values: Dict[str, float] = {}

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: none (a bar is display only)."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`'s output (nothing)."""

    def on_epoch_begin(self, data: Data) -> None:
        system = self.system
        if not is_main_process():  # a data-parallel run: rank 0 shows the bar
            return
        if self.monitor_names is None:
            self.monitor_names = sorted(system.network.get_loss_keys()) if system.network is not None else []
        total = self._epoch_steps()
        desc = f"{system.mode} epoch {system.epoch_idx}/{system.total_epochs}" if system.mode != "test" else "test"
        self._bar = _make_bar(total, desc, self.file or sys.stderr, self.use_tqdm)
        self._stdout = _LinesThroughBar(sys.stdout, self._bar)
        sys.stdout = self._stdout  # type: ignore[assignment]
        self._last_draw = time.perf_counter()
        self._steps_at_draw = 0
        self._count = 0
        self._rate: Optional[float] = None
        self._values: Dict[str, float] = {}

    def _epoch_steps(self) -> Optional[int]:
        """How many steps this epoch runs over all its datasets (None when a loader has no length)."""
        system = self.system
        pipeline = system.pipeline
        if pipeline is None:
            return None
        total = 0
        for ds_id in pipeline.get_ds_ids(epoch=system.epoch_idx, mode=system.mode):
            steps = pipeline.get_num_steps(mode=system.mode, epoch=system.epoch_idx, ds_id=ds_id,
                                           steps_per_epoch=system.steps_per_epoch)
            if steps is None:
                return None
            total += steps
        return total

    def on_batch_end(self, data: Data) -> None:
        bar = self._bar
        if bar is None:
            return
        self._count += 1  # the bar itself is only told at a redraw: tqdm.update costs more than a tiny step
        system = self.system
        log_steps = system.log_steps
        logging_now = system.mode == "train" and bool(log_steps) and (
            system.global_step % log_steps == 0 or system.global_step == 1)
        if logging_now:
            return  # the Logger prints a line next (above the bar)
        now = time.perf_counter()
        if now - self._last_draw < self.refresh_seconds:
            return
        rate = (self._count - self._steps_at_draw) / (now - self._last_draw)
        self._last_draw, self._steps_at_draw = now, self._count
        bar.update(self._count - bar.n)
        self._rate = rate
        for key in self.monitor_names or []:
            if key in data:
                value = np.asarray(data[key])
                if value.size == 1:
                    self._values[key] = float(value)
        bar.set_postfix_str(self._postfix(), refresh=True)

    def _postfix(self) -> str:
        """'step 77; 12.3 steps/s; ce 0.2345' (the current step or batch), fitted to the terminal."""
        system = self.system
        parts = [f"step {system.global_step}" if system.mode == "train" else f"batch {system.batch_idx}"]
        if self._rate is not None:
            parts.append(f"{self._rate:.1f} steps/s")
        parts += [f"{key} {value:.4g}" for key, value in self._values.items()]
        return fit_postfix(parts, self._bar.room())

    def on_epoch_end(self, data: Data) -> None:
        if self._bar is not None:
            self._release_stdout()
            self._bar.update(self._count - self._bar.n)
            if self._count:  # the finished bar names the epoch's last step, not the one of the last redraw
                self._bar.set_postfix_str(self._postfix(), refresh=False)
            self._bar.close()
            self._bar = None

    def _release_stdout(self) -> None:
        proxy = getattr(self, "_stdout", None)
        if proxy is None:
            return
        proxy.finish()
        if sys.stdout is proxy:
            sys.stdout = proxy.real
        self._stdout = None

    def on_end(self, data: Data) -> None:
        self.on_epoch_end(data)

    def fe_abort(self) -> None:
        """The run failed or was interrupted: give standard output back and leave the bar where it stopped."""
        if self._bar is not None:
            self._release_stdout()
            self._bar.close()
            self._bar = None
