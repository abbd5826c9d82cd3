"""`RestoreWizard`: checkpoint a run at a fixed frequency and resume it exactly after a crash."""
from __future__ import annotations

import os
import re
import shutil
from typing import Any, Dict, List, Optional, Union

from fe_core.data import Data
from fe_core.distributed.communicator import get_communicator
from fe_core.trace.freq import Freq, parse_freq
from fe_core.trace.trace import Trace
from fe_core.export import fe_export

__all__ = ["RestoreWizard"]

_CHECKPOINT_NAME = re.compile(r"^step-(\d+)$")
_KEY_FILE = "key.txt"


@fe_export("fe.trace.io.restore_wizard.RestoreWizard", "fe.trace.io.RestoreWizard")
class RestoreWizard(Trace):
    """Save the whole training state every `frequency`, and restore the newest good checkpoint when a run starts.

    Run the same script again after a crash (or a kill) and training continues where the newest checkpoint was
    taken: weights, optimizer and loss-scaler state, gradient accumulation, trace state, the Summary's history, the
    position inside the epoch, and the python / numpy / framework random states — so the resumed run ends with the
    same weights as a run that was never interrupted. Deterministic mode (`enable_deterministic`) is supported.

    Checkpoints are directories `<directory>/step-<global_step>` in fe's checkpoint format, written atomically; the
    newest `keep` are kept, and `<directory>/key.txt` names the newest (replaced atomically after each save, as
    FastEstimator's key file is; restoring reads the checkpoints themselves, newest first). After a restore, the
    `data` of `on_begin` holds the restored `epoch`, as in FastEstimator. If the newest one cannot be used (a file
    missing, truncated or altered, a symbolic link, or a checkpoint of a different network), it is reported, renamed
    aside to `refused-step-<N>` (never deleted, and never counted again), and the previous one is used. Restoring is
    all or nothing; a checkpoint restores the run's state (weights, counters, statistics, random states, and the
    numbers, arrays and tensors of ops, traces, slicers and fe's datasets that the run changed, constructor arguments
    included, as FastEstimator does), never what reaches the filesystem, imports or code (file names, directories,
    URLs, names of classes or callables).

    In a data-parallel run (torchrun, several TF workers) rank 0 writes the checkpoints, holding every rank's random
    and trace state, while the other ranks wait; every rank restores from the same directory (on several machines it
    must be shared storage), so the run resumes exactly with the same number of processes.

    Args:
        directory: Where to keep the checkpoints.
        frequency: How often to save: an integer N or 'Ne' for every N epochs (after that epoch's evaluation), 'Ns'
            for every N training steps, 'epoch' / 'step'.
        keep: How many checkpoints to keep (at least 1; 2 means a damaged newest one still leaves a good one).

    Example:
        >>> # Estimator(..., traces=[RestoreWizard(directory="/tmp/run1", frequency="500s")])  # doctest: +SKIP
    """

    def __init__(self, directory: str, frequency: Union[int, str] = 1, keep: int = 2) -> None:
        super().__init__(inputs="*", mode=("train", "eval"))  # '*': save after the other traces (and the Logger)
        self.frequency = frequency
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"RestoreWizard keep must be a positive integer, got {keep!r}")
        self.directory = os.path.abspath(directory)
        if os.path.exists(self.directory) and not os.path.isdir(self.directory):
            raise ValueError(f"RestoreWizard directory {directory!r} exists and is not a directory: give the directory "
                             f"to keep checkpoints in")
        self.keep = keep
        self._in_run = False  # between on_begin and on_end: an Estimator drives the epochs

    @property
    def frequency(self) -> Union[int, str]:
        """How often to save, as given (FastEstimator's int number of epochs, or a string like '500s')."""
        return self._frequency_given

    @frequency.setter
    def frequency(self, frequency: Union[int, str]) -> None:
        if isinstance(frequency, bool) or not isinstance(frequency, (int, str)):
            raise ValueError(f"RestoreWizard frequency must be an int or a string like '2e' / '500s', got "
                             f"{frequency!r}")
        parsed = Freq(False, frequency) if isinstance(frequency, int) else parse_freq(frequency)
        if parsed.freq < 1:
            raise ValueError(f"RestoreWizard frequency must be positive, got {frequency!r}")
        self._frequency_given, self._frequency = frequency, parsed

    def get_state(self) -> Dict[str, Any]:
        """Checkpoint state: none (everything here is configuration)."""
        return {}

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore `get_state()`'s output (nothing)."""

    # ------------------------------------------------------------------ restoring
    def checkpoints(self) -> List[str]:
        """The checkpoint directories, newest first."""
        if not os.path.isdir(self.directory):
            return []
        found = []
        for name in os.listdir(self.directory):
            match = _CHECKPOINT_NAME.match(name)
            path = os.path.join(self.directory, name)
            if match and os.path.isdir(path) and not os.path.islink(path):
                found.append((int(match.group(1)), os.path.join(self.directory, name)))
        return [path for _, path in sorted(found, reverse=True)]

    @property
    def key_path(self) -> str:
        """`<directory>/key.txt`: the name of the newest checkpoint, written after each save (FastEstimator's key
        file)."""
        return os.path.join(self.directory, _KEY_FILE)

    def _write_key(self, name: str) -> None:
        """Replace `key.txt` atomically with `name` (a crash leaves the previous key or the new one, never half)."""
        temporary = self.key_path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(name)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, self.key_path)

    def should_restore(self) -> bool:
        """Whether a restore will be performed.

        Returns:
            True iff the wizard will perform a restore: `directory` holds a checkpoint to try.
        """
        return bool(self.checkpoints())

    def on_begin(self, data: Data) -> None:
        """Restore the newest good checkpoint, if any (the Estimator calls this before any other trace's on_begin)."""
        self._in_run = True
        communicator = get_communicator()
        main = communicator.is_main
        for name in sorted(os.listdir(self.directory)) if os.path.isdir(self.directory) else []:
            path = os.path.join(self.directory, name)
            if _CHECKPOINT_NAME.match(name) and os.path.islink(path) and main:
                print(f"FastEstimator-RestoreWizard: ignoring {path}: a symbolic link is never read as a checkpoint")
        for path in self.checkpoints():
            try:
                self.system.load_state(path)
            except Exception as error:  # pylint: disable=broad-except  (any damage means: use an older checkpoint)
                if main:
                    aside = self._set_aside(path)
                    print(f"FastEstimator-RestoreWizard: refusing checkpoint {path} ({type(error).__name__}: "
                          f"{error}); kept as {aside}")
                continue
            if main:
                print(f"FastEstimator-RestoreWizard: restored {path} (epoch {self.system.epoch_idx}, step "
                      f"{self.system.global_step})")
            self.system.mode = "train"  # fit() begins in train mode, whichever phase the checkpoint was taken in
            data.write_without_log("epoch", self.system.epoch_idx)  # for the other traces (history unchanged)
            break
        communicator.barrier()  # no rank starts (or renames a refused checkpoint) before every rank has read

    def _set_aside(self, path: str) -> str:
        """Rename a refused checkpoint to `refused-step-N[-k]` so it is neither used, counted nor overwritten."""
        base = os.path.join(self.directory, "refused-" + os.path.basename(path))
        target, suffix = base, 1
        while os.path.lexists(target):
            target, suffix = f"{base}-{suffix}", suffix + 1
        try:
            os.rename(path, target)
        except OSError as error:
            return f"{path} (could not be renamed: {error})"
        return target

    # ------------------------------------------------------------------ saving
    def on_batch_end(self, data: Data) -> None:
        system = self.system
        if self._frequency.is_step and system.mode == "train" and system.global_step % self._frequency.freq == 0:
            self._save()

    def on_epoch_end(self, data: Data) -> None:
        system = self.system
        if self._frequency.is_step or system.epoch_idx % self._frequency.freq:
            return
        # Save once per epoch, after its last phase: evaluation when the epoch has any, else training. Called outside
        # a run (no on_begin: no evaluation follows), it saves at once, as FastEstimator's does.
        if (not self._in_run or system.mode == "eval"
                or "eval" not in system.pipeline.get_modes(epoch=system.epoch_idx)):
            self._save()

    def on_end(self, data: Data) -> None:
        self._in_run = False

    def _save(self) -> None:
        path = os.path.join(self.directory, f"step-{self.system.global_step or 0}")
        main = get_communicator().is_main
        if main:
            os.makedirs(self.directory, exist_ok=True)
        self.system.save_state(path)  # in a data-parallel run: a collective, rank 0 writes, the others wait
        if not main:
            return
        self._write_key(os.path.basename(path))
        for old in self.checkpoints()[self.keep:]:
            shutil.rmtree(old, ignore_errors=True)

    def latest(self) -> Optional[str]:
        """The newest checkpoint directory, or None."""
        found = self.checkpoints()
        return found[0] if found else None
