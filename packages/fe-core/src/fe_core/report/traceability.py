"""Traceability helpers (FastEstimator's `fe.util.traceability_util`): how objects were made, as report tables.

`traceable()` records the arguments a class was constructed with and gives it `fe_summary()` (tables for the
Traceability report) and `fe_state()` (its plain, restorable attributes). Nothing here imports PyLaTeX until a table
is rendered, so decorating a class with `@traceable()` costs only the argument recording.
"""
from __future__ import annotations

import functools
import inspect
import sys
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.util.wrappers import FEID

__all__ = ["FeInputSpec", "FeSummaryTable", "SummaryTable", "fe_summary", "trace_model", "traceable", "is_restorable",
           "describe_value", "object_path"]

_SIMPLE = (type(None), bool, int, float, complex, str, bytes, np.generic)
_PENDING = object()
_MODEL_INFO: "weakref.WeakKeyDictionary[Any, Dict[str, Any]]" = weakref.WeakKeyDictionary()


def object_path(obj: Any) -> str:
    """The import path of a class, function or of an instance's class ('module.QualName')."""
    target = obj if inspect.isclass(obj) or inspect.isroutine(obj) else type(obj)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', type(target).__name__)}"


def describe_value(value: Any, limit: int = 80) -> str:
    """A short, readable description of any value for a report cell.

    Example:
        >>> describe_value(np.zeros((2, 3))), describe_value([1, 2]), describe_value(len)
        ('ndarray(shape=(2, 3), dtype=float64)', '[1, 2]', 'builtins.len')
    """
    if isinstance(value, np.ndarray):
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.generic):
        return f"{type(value).__name__}(shape={tuple(value.shape)}, dtype={value.dtype})"
    if inspect.isroutine(value) or inspect.isclass(value):
        if getattr(value, "__name__", "") == "<lambda>":
            try:
                return inspect.getsource(value).strip()[:limit]
            except (OSError, TypeError):
                return "lambda"
        return object_path(value)
    if isinstance(value, (list, tuple, set, dict)) or isinstance(value, _SIMPLE):
        text = _container_text(value, limit) if isinstance(value, (list, tuple, set, dict)) else repr(value)
        return text if len(text) <= limit else text[:limit - 3] + "..."
    return f"{type(value).__name__} object"


def _container_text(value: Any, limit: int) -> str:
    """A container written like its repr, but each tensor as its type, shape and dtype: the repr of a tensor may
    read it whole (a sharded model's parameter is gathered from every process, which only rank 0 reaches here)."""
    if isinstance(value, dict):
        parts = [f"{describe_value(key, limit)}: {describe_value(item, limit)}" for key, item in value.items()]
        return "{" + ", ".join(parts) + "}"
    parts = [describe_value(item, limit) if not isinstance(item, str) else repr(item) for item in value]
    if isinstance(value, tuple):
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(parts)) + "}" if parts else "set()"
    return "[" + ", ".join(parts) + "]"


@fe_export("fe.util.traceability_util.is_restorable")
def is_restorable(data: Any, memory_limit: int = 0) -> Tuple[bool, int]:
    """Determine whether a given object can be restored easily via Pickle.

    Args:
        data: The object in question.
        memory_limit: The maximum memory size (in bytes) to allow for an object (or 0 for no limit).

    Returns:
        (result, memory size) where result is True iff `data` is only comprised of 'simple' objects and does not exceed
        the `memory_limit`. If the result is False, then memory size will be <= the true memory size of the `data`.

    Example:
        >>> is_restorable({"a": [1, 2.0, "x"]})[0], is_restorable(print)[0]
        (True, False)
    """
    size = 0
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, np.ndarray):
            if item.dtype == object:
                return False, size
            size += item.nbytes
        elif isinstance(item, _SIMPLE):
            size += sys.getsizeof(item)
        elif isinstance(item, (list, tuple, set, frozenset)):
            size += sys.getsizeof(item)
            stack.extend(item)
        elif isinstance(item, dict):
            size += sys.getsizeof(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        else:
            return False, size
        if memory_limit and size > memory_limit:
            return False, size
    return True, size


@fe_export("fe.util.traceability_util.FeInputSpec")
class FeInputSpec:
    """A class to keep track of a model's input so that fake inputs can be generated.

    This class is intentionally not @traceable.

    Args:
        model_input: The input to the model.
        model: The model which corresponds to the given `model_input`.
    """

    def __init__(self, model_input: Any, model: Any) -> None:
        self.shape = tuple(np.shape(model_input))
        self.dtype = getattr(model_input, "dtype", np.asarray(model_input).dtype)
        self.model = model

    def get_dummy_input(self) -> Any:
        """Get fake input for the model.

        Returns:
            Input of the correct shape and dtype for the model (a tensor of the model's framework when its backend is
            loaded, else a numpy array).
        """
        dtype = np.dtype(str(self.dtype).replace("torch.", "").split("'")[-1]) if not isinstance(
            self.dtype, np.dtype) else self.dtype
        dummy = np.ones(self.shape, dtype=dtype)
        from fe_core.framework import backend_for_model  # pylint: disable=import-outside-toplevel
        backend = backend_for_model(self.model)
        return backend.to_tensor(dummy) if backend is not None else dummy


@fe_export("fe.util.traceability_util.FeSummaryTable")
class FeSummaryTable:
    """A class containing summaries of traceability information.

    This class is intentionally not @traceable.

    Args:
        name: The string to be used as the title line in the summary table.
        fe_id: The id of this table, used for cross-referencing from other tables.
        target_type: The type of the object being summarized.
        path: The import path of the object in question. Might be more complicated when methods/functions are involved.
        kwargs: The keyword arguments used to instantiate the object being summarized.
        **fields: Any other information about the summarized object / function.
    """

    def __init__(self, name: str, fe_id: FEID, target_type: Type, path: Union[None, str, Any] = None,
                 kwargs: Optional[Dict[str, Any]] = None, **fields: Any) -> None:
        self.name = name
        self.fe_id = fe_id
        self.type = target_type
        self.path = path
        self.kwargs = kwargs or {}
        self.fields = fields

    def rows(self) -> List[Tuple[str, str]]:
        """The table's rows as text: type, path, other fields, then one row per argument."""
        rows = [("Type", object_path(self.type) if self.type is not None else "?")]
        if self.path is not None:
            rows.append(("Path", self.path if isinstance(self.path, str) else describe_value(self.path)))
        rows += [(str(key), describe_value(value)) for key, value in self.fields.items()]
        rows += [(f"arg: {key}", describe_value(value)) for key, value in self.kwargs.items()]
        return rows

    def render_table(self, doc: Any, name_override: Optional[Any] = None, toc_ref: Optional[str] = None,
                     extra_rows: Optional[List[Tuple[str, Any]]] = None) -> None:
        """Write this table into a LaTeX document.

        Args:
            doc: The LaTeX document to be appended to.
            name_override: An optional replacement for this table's name field.
            toc_ref: A reference to be added to the table of contents.
            extra_rows: Any extra rows to be added to the table before the kwargs.
        """
        _render(doc, name_override or f"{self.fe_id}: {self.name}", self.rows(), extra_rows, toc_ref,
                label=f"tbl:{self.fe_id}")


@fe_export("fe.util.traceability_util.SummaryTable")
class SummaryTable(FeSummaryTable):
    """A class containing summaries of traceability information.

    This class is intentionally not @traceable.

    Args:
        name: The string to be used as the title line in the summary table.
        kwargs: The keyword arguments used to instantiate the object being summarized.
        **fields: Any other information about the summarized object / function.
    """

    def __init__(self, name: str, kwargs: Optional[Dict[str, Any]] = None, **fields: Any) -> None:
        super().__init__(name, FEID(0), None, None, kwargs, **fields)

    def rows(self) -> List[Tuple[str, str]]:
        return [(str(key), describe_value(value)) for key, value in self.fields.items()] + \
            [(f"arg: {key}", describe_value(value)) for key, value in self.kwargs.items()]

    def render_table(self, doc: Any, name_override: Optional[Any] = None, toc_ref: Optional[str] = None,
                     extra_rows: Optional[List[Tuple[str, Any]]] = None) -> None:
        _render(doc, name_override or self.name, self.rows(), extra_rows, toc_ref, label=None)


def _render(doc: Any, title: Any, rows: List[Tuple[str, str]], extra_rows: Optional[List[Tuple[str, Any]]],
            toc_ref: Optional[str], label: Optional[str]) -> None:
    from fe_core.optional import import_optional  # pylint: disable=import-outside-toplevel
    pylatex = import_optional("pylatex", extra="report", feature="Traceability")
    from pylatex.utils import bold, escape_latex  # pylint: disable=import-outside-toplevel
    if toc_ref:
        doc.append(pylatex.NoEscape(rf"\addcontentsline{{toc}}{{subsection}}{{{escape_latex(toc_ref)}}}"))
    if label:
        doc.append(pylatex.NoEscape(rf"\phantomsection\label{{{label}}}"))
    with doc.create(pylatex.LongTable("|p{0.28\\linewidth}|p{0.62\\linewidth}|")) as table:
        table.add_hline()
        table.add_row((pylatex.MultiColumn(2, align="|c|", data=bold(str(title)) if isinstance(title, str)
                                           else title),))
        table.add_hline()
        for key, value in list(extra_rows or []) + rows:
            table.add_row((escape_latex(str(key)), escape_latex(describe_value(value) if not isinstance(value, str)
                                                                else value)))
            table.add_hline()
    doc.append(pylatex.NoEscape(r"\vspace{8pt}"))


@fe_export("fe.util.traceability_util.fe_summary")
def fe_summary(self: Any) -> List[FeSummaryTable]:
    """Return a summary of how this class was instantiated (for traceability).

    Args:
        self: The bound class instance.

    Returns:
        A summary of the instance.
    """
    info = None
    try:
        info = _MODEL_INFO.get(self) if _weakable(self) else None  # models made traceable by trace_model
    except TypeError:  # unhashable
        pass
    if info is None:
        info = getattr(self, "_fe_traceability_summary", None)
    if not isinstance(info, dict):
        info = {}
    return [FeSummaryTable(name=type(self).__name__, fe_id=FEID(id(self)), target_type=type(self),
                           path=object_path(self), kwargs=dict(info.get("kwargs", {})),
                           **{key: value for key, value in info.items() if key != "kwargs"})]


def _weakable(obj: Any) -> bool:
    try:
        weakref.ref(obj)
        return True
    except TypeError:
        return False


def _fe_state(self: Any) -> Dict[str, Any]:
    """The restorable attributes of a traceable object (within its whitelist / outside its blacklist)."""
    whitelist, blacklist = getattr(type(self), "_fe_state_whitelist", ()), getattr(type(self), "_fe_state_blacklist",
                                                                                    ())
    state = {}
    for key, value in vars(self).items():
        if key.startswith("_fe_") or key in blacklist or (whitelist and key not in whitelist):
            continue
        if is_restorable(value)[0]:
            state[key] = value
    return state


@fe_export("fe.util.traceability_util.traceable", "fe.util.traceable")
def traceable(whitelist: Union[str, Tuple[str, ...]] = (), blacklist: Union[str, Tuple[str, ...]] = ()) -> Callable:
    """A decorator to be placed on classes in order to make them traceable and to enable a deep restore.

    Decorated classes will gain the .fe_summary() and .fe_state() methods. The arguments of the outermost constructor
    call are recorded once per instance.

    Args:
        whitelist: Arguments which should be included in a deep restore of the decorated class.
        blacklist: Arguments which should be excluded from a deep restore of the decorated class.

    Returns:
        The decorated class.

    Raises:
        ValueError: If both a whitelist and a blacklist are given.

    Example:
        >>> @traceable()
        ... class Scale:
        ...     def __init__(self, factor=2):
        ...         self.factor = factor
        >>> table = Scale(factor=3).fe_summary()[0]
        >>> table.kwargs, Scale().fe_state()
        ({'factor': 3}, {'factor': 2})
    """
    whitelist = (whitelist,) if isinstance(whitelist, str) else tuple(whitelist)
    blacklist = (blacklist,) if isinstance(blacklist, str) else tuple(blacklist)
    if whitelist and blacklist:
        raise ValueError("traceable takes a whitelist or a blacklist, not both")

    def decorate(cls: type) -> type:
        original = cls.__init__
        signature = inspect.signature(original)

        @functools.wraps(original)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            outer = False
            try:
                if "_fe_traceability_summary" not in vars(self):
                    self._fe_traceability_summary = _PENDING
                    outer = True
            except TypeError:  # no __dict__ (slots): nothing to record
                pass
            original(self, *args, **kwargs)
            if outer:
                try:
                    bound = signature.bind(self, *args, **kwargs)
                    bound.apply_defaults()
                    arguments = dict(bound.arguments)
                    arguments.pop(next(iter(signature.parameters)), None)
                except TypeError:
                    arguments = {"args": args, **kwargs}
                self._fe_traceability_summary = {"kwargs": arguments}

        cls.__init__ = __init__
        cls.fe_summary = fe_summary
        cls.fe_state = _fe_state
        cls._fe_state_whitelist = whitelist
        cls._fe_state_blacklist = blacklist
        return cls

    return decorate


@fe_export("fe.util.traceability_util.trace_model", "fe.util.trace_model")
def trace_model(model: Any, model_idx: int, model_fn: Any, optimizer_fn: Any, weights_path: Any) -> Any:
    """A function to add traceability information to an FE-compiled model.

    Args:
        model: The model to be made traceable.
        model_idx: Which of the return values from the `model_fn` is this model (or -1 if only a single return value).
        model_fn: The function used to generate this model.
        optimizer_fn: The thing used to define this model's optimizer.
        weights_path: The path to the weights for this model.

    Returns:
        The `model`, but now with an fe_summary() method.
    """
    info = {"kwargs": {"model_fn": model_fn, "optimizer_fn": optimizer_fn, "weights_path": weights_path},
            "model_idx": model_idx}
    if _weakable(model):
        _MODEL_INFO[model] = info
    try:
        object.__setattr__(model, "fe_summary", functools.partial(fe_summary, model))
    except (AttributeError, TypeError):
        pass  # the summary is still found through the registry
    return model
