"""Finding what `fe train` saved, so that `fe test` tests the trained model rather than freshly initialised weights.

An Estimator's `BestModelSaver` and `ModelSaver` traces say where they write each model's weights. Before `fe test`
runs, every model that was built without a `weights_path` gets the weights those traces saved in their `save_dir`
(the best one of a BestModelSaver first, else the newest one of a ModelSaver), and the file loaded is printed. A model
for which nothing saved can be found (and that was given no weights) is tested as `model_fn` built it: one warning
line on stderr says so (under a launcher such as torchrun every process loads the weights, and rank 0 alone says
so). `fe test SCRIPT --weights PATH` (or `--weights MODEL=PATH`, repeatable) loads a file the
user names into a model, whatever arguments the script's get_estimator() takes.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import Any, List, Optional, TextIO, Tuple

from fe_core.distributed.communicator import is_main_process
from fe_core.schedule import get_current_items
from fe_core.trace.adapt.model_metric import model_loss_keys, model_name_of
from fe_core.framework.registry import model_backend
from fe_core.trace.io.best_model_saver import BestModelSaver
from fe_core.trace.io.model_saver import ModelSaver, weights_extension

from fe.cli.errors import CLIError

__all__ = ["SavedWeights", "find_saved_weights", "restore_saved_weights", "load_given_weights"]


@dataclass(frozen=True)
class SavedWeights:
    """A weights file a saver trace wrote for a model.

    Attributes:
        path: The file.
        saver: The name of the trace class that writes it ('BestModelSaver' or 'ModelSaver').
    """

    path: str
    saver: str


def _savers_of(model: Any, traces: List[Any]) -> Tuple[List[BestModelSaver], List[ModelSaver]]:
    best = [trace for trace in traces if isinstance(trace, BestModelSaver) and trace.model is model]
    periodic = [trace for trace in traces if isinstance(trace, ModelSaver) and trace.model is model]
    return best, periodic


def _best_stem(saver: BestModelSaver, network: Any) -> Optional[str]:
    if saver.weights_name or saver.metric is not None:
        return saver.model_name
    losses = model_loss_keys(saver.model, network)  # the metric is resolved only once the System is attached
    return f"{model_name_of(saver.model)}_best_{losses[0]}" if len(losses) == 1 else None


def _best_file(saver: BestModelSaver, extension: str, network: Any) -> Optional[str]:
    stem = _best_stem(saver, network)
    if not saver.save_dir or stem is None:
        return None
    path = os.path.join(saver.save_dir, f"{stem}.{extension}")
    return path if os.path.isfile(path) else None


def _newest_file(saver: ModelSaver, extension: str) -> Optional[str]:
    if not saver.save_dir or not os.path.isdir(saver.save_dir):
        return None
    prefix = saver.weights_name or model_name_of(saver.model)
    pattern = re.compile(rf"{re.escape(prefix)}_(epoch|step)_(\d+)\.{re.escape(extension)}")
    found = []
    for name in os.listdir(saver.save_dir):
        match = pattern.fullmatch(name)
        path = os.path.join(saver.save_dir, name)
        if match and os.path.isfile(path):
            found.append((os.path.getmtime(path), int(match.group(2)), path))
    return max(found)[2] if found else None


def find_saved_weights(model: Any, traces: List[Any], extension: str, network: Any = None) -> Optional[SavedWeights]:
    """The weights file that `traces` saved for `model`: a BestModelSaver's best, else a ModelSaver's newest.

    Args:
        model: A model of the network.
        traces: The Estimator's traces (schedulers already expanded).
        extension: The extension of the savers' weight files ('pt', 'h5': `weights_extension` of the model's backend).
        network: The network (to name a BestModelSaver's file when its metric is the model's loss).

    Returns:
        The file and the trace type that wrote it, or None when no saver of `model` has a file in its `save_dir`.
    """
    best, periodic = _savers_of(model, traces)
    for saver in best:
        path = _best_file(saver, extension, network)
        if path:
            return SavedWeights(path, type(saver).__name__)
    newest = [(os.path.getmtime(path), path) for path in (_newest_file(saver, extension) for saver in periodic) if path]
    if newest:
        return SavedWeights(max(newest)[1], "ModelSaver")
    return None


def _save_dirs(model: Any, traces: List[Any]) -> List[str]:
    best, periodic = _savers_of(model, traces)
    return sorted({str(saver.save_dir) for saver in [*best, *periodic] if saver.save_dir})


def restore_saved_weights(estimator: Any, command: str = "fe test", out: Optional[TextIO] = None,
                          err: Optional[TextIO] = None) -> List[SavedWeights]:
    """Load the weights saved by the Estimator's saver traces into each model that was given no `weights_path`.

    A model built with `weights_path` is left as it is. For any other model, the best weights of its
    BestModelSaver (else the newest of its ModelSaver) are loaded and `<command>: loaded model 'model' from <path>
    (saved by BestModelSaver)` is printed; when none exist, one warning line on stderr says that the model's weights
    are freshly initialised.

    Args:
        estimator: The Estimator about to be tested.
        command: How to name the command in the printed lines.
        out: Where to print what was loaded (default: stdout).
        err: Where to print warnings (default: stderr).

    Returns:
        The files loaded.

    Raises:
        CLIError: If a saved file cannot be loaded into its model (for example the architecture changed).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    network = getattr(estimator, "network", None)
    models = list(getattr(network, "models", []) or [])
    backend = getattr(network, "backend", None)
    if not models or backend is None:
        return []
    traces = get_current_items(getattr(estimator, "traces", []))
    loaded: List[SavedWeights] = []
    for model in models:
        if getattr(model, "fe_weights_path", None):
            continue
        name = model_name_of(model)
        saved = find_saved_weights(model, traces, weights_extension(model_backend(model)), network)
        if saved is None:
            directories = _save_dirs(model, traces)
            where = (f"no weights saved by its BestModelSaver/ModelSaver in {', '.join(directories)}" if directories
                     else "no BestModelSaver or ModelSaver saves its weights")
            option = "--weights PATH" if len(models) == 1 else f"--weights {name}=PATH"
            if is_main_process():  # under torchrun every process loads; the one that logs says it
                print(f"{command}: warning: testing FRESHLY INITIALISED weights of model {name!r}: it was given no "
                      f"weights_path and {where} (train it first, or pass the weights file: {command} SCRIPT "
                      f"{option})", file=err, flush=True)
            continue
        try:
            model_backend(model).load_weights(model, saved.path)
        except (OSError, ValueError, RuntimeError, KeyError) as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise CLIError(f"cannot load {saved.path} (saved by {saved.saver}) into model {name!r}: "
                           f"{first_line}") from error
        if is_main_process():
            print(f"{command}: loaded model {name!r} from {saved.path} (saved by {saved.saver})", file=out,
                  flush=True)
        loaded.append(saved)
    return loaded


def load_given_weights(estimator: Any, specs: List[str], command: str = "fe test",
                       out: Optional[TextIO] = None) -> List[str]:
    """Load the weights files named on the command line (`--weights PATH` or `--weights MODEL=PATH`) into the models.

    A bare PATH is for the only model of the Network; with several models each file names its model. A model loaded
    here counts as given weights, so `restore_saved_weights` leaves it alone.

    Args:
        estimator: The Estimator about to be tested.
        specs: The `--weights` values.
        command: How to name the command in the printed lines.
        out: Where to print what was loaded (default: stdout).

    Returns:
        The names of the models loaded.

    Raises:
        CLIError: For a file that does not exist, an unknown model name, a bare PATH with several models, or a file
            that cannot be loaded into its model.
    """
    out = out or sys.stdout
    network = getattr(estimator, "network", None)
    models = {model_name_of(model): model for model in list(getattr(network, "models", []) or [])}
    loaded: List[str] = []
    for spec in specs:
        name, separator, path = spec.partition("=")
        if not separator or name not in models and os.path.exists(spec):
            name, path = "", spec
        if not name:
            if len(models) != 1:
                raise CLIError(f"--weights {spec}: the network has {len(models)} models ({', '.join(sorted(models))})"
                               f"; name the model: --weights MODEL=PATH")
            name = next(iter(models))
        if name not in models:
            raise CLIError(f"--weights {spec}: no model named {name!r}; the network's models are "
                           f"{', '.join(sorted(models))}")
        if not os.path.isfile(path):
            raise CLIError(f"--weights {spec}: no such file {path!r}")
        model = models[name]
        try:
            model_backend(model).load_weights(model, path)
        except (OSError, ValueError, RuntimeError, KeyError) as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise CLIError(f"cannot load {path} into model {name!r}: {first_line}") from error
        model.fe_weights_path = path  # given weights: what fe train saved is not loaded over them
        if is_main_process():
            print(f"{command}: loaded model {name!r} from {path} (--weights)", file=out, flush=True)
        loaded.append(name)
    return loaded
