"""`Data`: the dictionary traces read and write during a run, and its per-dataset view `DSData`."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, MutableMapping, Optional

from fe_core.export import fe_export

__all__ = ["Data", "DSData"]


@fe_export("fe.util.data.Data", "fe.util.Data")
class Data(MutableMapping[str, Any]):
    """The values a trace sees: the batch (inputs and predictions) plus what traces write.

    Reads look in the logs first, then the batch. Writes choose where a value goes:
    `write_with_log` (printed by the Logger and recorded in the Summary), `write_without_log` (visible to later
    traces only) and `write_per_instance_log` (one value per sample, for per-instance reports). `data[key] = value` is
    the same as `write_with_log`.

    Args:
        batch_data: The batch the network returned (None for epoch-level hooks).

    Example:
        >>> data = Data({"x": 1})
        >>> data.write_with_log("loss", 0.5)
        >>> data["x"], data["loss"], dict(data.read_logs())
        (1, 0.5, {'loss': 0.5})
    """

    __slots__ = ("_logs", "_batch", "_per_instance")

    def __init__(self, batch_data: Optional[MutableMapping[str, Any]] = None) -> None:
        self._logs: Dict[str, Any] = {}
        self._batch: MutableMapping[str, Any] = {} if batch_data is None else batch_data
        self._per_instance: Dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        logs = self._logs
        if key in logs:
            return logs[key]
        return self._batch[key]

    def __contains__(self, key: object) -> bool:
        return key in self._logs or key in self._batch

    def __setitem__(self, key: str, value: Any) -> None:
        self._logs[key] = value

    def __delitem__(self, key: str) -> None:
        found = False
        for mapping in (self._logs, self._batch):
            if key in mapping:
                del mapping[key]
                found = True
        if not found:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        seen = set(self._logs)
        yield from self._logs
        for key in self._batch:
            if key not in seen:
                yield key

    def __len__(self) -> int:
        return len(set(self._logs) | set(self._batch))

    def __repr__(self) -> str:
        return f"Data(logs={self._logs!r}, batch_keys={list(self._batch)!r})"

    def write_with_log(self, key: str, value: Any) -> None:
        """Write a value that will be logged and recorded in the Summary."""
        self._logs[key] = value

    def write_without_log(self, key: str, value: Any) -> None:
        """Write a value that later traces can read but that is not logged."""
        self._batch[key] = value

    def write_per_instance_log(self, key: str, value: Any) -> None:
        """Write a per-sample value (an array with one entry per sample in the batch)."""
        self._per_instance[key] = value

    def read_logs(self, extra_keys: Optional[Iterable[str]] = None) -> Dict[str, Any]:
        """The values written with `write_with_log`, plus the current values of `extra_keys` (when present)."""
        if not extra_keys:
            return self._logs
        extra = {key: self[key] for key in extra_keys if key in self}
        extra.update(self._logs)
        return extra

    def read_per_instance_logs(self) -> Dict[str, Any]:
        """The values written with `write_per_instance_log`."""
        return self._per_instance

    @property
    def batch(self) -> MutableMapping[str, Any]:
        """The underlying batch mapping."""
        return self._batch


@fe_export("fe.util.data.DSData")
class DSData(Data):
    """A view of `Data` for one dataset: reads are unchanged, logged writes get a `|ds_id` suffix.

    Args:
        ds_id: The dataset id appended to logged keys.
        data: The Data being viewed.

    Example:
        >>> data = Data()
        >>> DSData("ds1", data).write_with_log("acc", 0.9)
        >>> data.read_logs()
        {'acc|ds1': 0.9}
    """

    __slots__ = ("ds_id", "data")

    def __init__(self, ds_id: str, data: Data) -> None:  # pylint: disable=super-init-not-called
        self.ds_id = ds_id
        self.data = data
        self._logs = data._logs
        self._batch = data._batch
        self._per_instance = data._per_instance

    def __setitem__(self, key: str, value: Any) -> None:
        self.write_with_log(key, value)

    def write_with_log(self, key: str, value: Any) -> None:
        self._logs[f"{key}|{self.ds_id}"] = value

    def write_per_instance_log(self, key: str, value: Any) -> None:
        self._per_instance[f"{key}|{self.ds_id}"] = value
