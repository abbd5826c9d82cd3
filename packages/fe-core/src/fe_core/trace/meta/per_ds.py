"""`per_ds`: a class decorator giving any metric-like trace per-dataset results next to its epoch-wide ones."""
from __future__ import annotations

import copy
from typing import Any, List, Type, Union

from fe_core.containers import to_list
from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.modes import ds_id_matches
from fe_core.trace.tensor_data import forwards_hook
from fe_core.trace.trace import PerDSTrace, Trace

__all__ = ["per_ds"]


@fe_export("fe.trace.meta._per_ds.per_ds", "fe.trace.meta.per_ds")
def per_ds(clz: Type[Trace]) -> Type[Trace]:
    """A class decorator which automatically generates a per-ds version of a given trace.

    The decorated trace runs as before over the whole epoch; in addition, for each named dataset of an epoch, a
    shadow copy of it runs `on_epoch_begin` at the dataset's start, sees that dataset's batches, and runs
    `on_epoch_end` at the dataset's end on a per-dataset view of the data, so whatever it logs there is recorded as
    `<key>|<ds_id>`. This is off for an instance whose `per_ds` attribute is False, or one of whose outputs already
    contains '|'. The trace must reset its state in `on_epoch_begin` (as metric traces do). The shadow lives only
    between a dataset's begin and end, so checkpoints (taken between epochs) never need it.

    Args:
        clz: A Trace subclass.

    Returns:
        A subclass of `clz` (and of PerDSTrace) with the per-dataset behaviour.

    Example:
        >>> @per_ds
        ... class Mean(Trace):
        ...     def __init__(self, key, per_ds=True):
        ...         super().__init__(inputs=key, outputs="mean", mode="eval")
        ...         self.per_ds = per_ds
        ...     def on_epoch_begin(self, data):
        ...         self.values = []
        ...     def on_batch_end(self, data):
        ...         self.values.append(float(data[self.inputs[0]]))
        ...     def on_epoch_end(self, data):
        ...         data.write_with_log("mean", sum(self.values) / len(self.values))
        >>> Mean("x").get_outputs(["a", "b"])
        ['mean', 'mean|a', 'mean|b']
    """
    if not (isinstance(clz, type) and issubclass(clz, Trace)):
        raise TypeError(f"per_ds decorates Trace classes, got {clz!r}")

    def _active(self: Any) -> bool:
        return bool(getattr(self, "per_ds", True)) and not any("|" in name for name in self.outputs)

    def get_outputs(self: Any, ds_ids: Union[None, str, List[str]]) -> List[str]:
        outputs = clz.get_outputs(self, ds_ids)
        if _active(self):
            outputs += [f"{name}|{ds_id}" for ds_id in to_list(ds_ids) if ds_id and ds_id_matches(self.ds_id, ds_id)
                        for name in self.outputs]
        return outputs

    def on_ds_begin(self: Any, data: Data) -> None:
        self._fe_per_ds_shadow = None
        if _active(self) and self.system.ds_id:
            shadow = copy.copy(self)
            shadow.__dict__.pop("_fe_per_ds_shadow", None)
            clz.on_epoch_begin(shadow, data)
            self._fe_per_ds_shadow = shadow

    @forwards_hook  # clz's own hook decides whether the trace reads framework tensors
    def on_batch_end(self: Any, data: Data) -> None:
        clz.on_batch_end(self, data)
        shadow = self.__dict__.get("_fe_per_ds_shadow")
        if shadow is not None:
            clz.on_batch_end(shadow, data)

    def on_ds_end(self: Any, data: Data) -> None:
        shadow = self.__dict__.pop("_fe_per_ds_shadow", None)
        if shadow is not None:
            clz.on_epoch_end(shadow, data)

    namespace = {"get_outputs": get_outputs, "on_ds_begin": on_ds_begin, "on_batch_end": on_batch_end,
                 "on_ds_end": on_ds_end, "__doc__": clz.__doc__, "__module__": clz.__module__,
                 "__qualname__": clz.__qualname__}
    bases = (clz,) if issubclass(clz, PerDSTrace) else (clz, PerDSTrace)
    return type(clz.__name__, bases, namespace)

