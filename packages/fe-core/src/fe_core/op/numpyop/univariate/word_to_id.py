"""`WordtoId`: map tokens to integer ids through a dictionary or a function."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Union

import numpy as np

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["WordtoId"]


@fe_export("fe.op.numpyop.univariate.word_to_id.WordtoId", "fe.op.numpyop.univariate.WordtoId")
class WordtoId(UnivariateOp):
    """Convert words to their ids with a mapping dictionary or a function, giving a numpy array.

    Args:
        mapping: A dict from word to id, or a function taking the list of words and returning their ids.
        inputs: Key(s) of sequences to be converted to ids.
        outputs: Key(s) of sequences converted to ids.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.

    Raises:
        ValueError: If `mapping` is neither a dict nor callable.
        KeyError: (when run) If a word is missing from the mapping dictionary; the message names the word.

    Example:
        >>> WordtoId({"a": 1, "b": 2}, "x", "x").forward([["b", "a"]], {})[0].tolist()
        [2, 1]
    """

    def __init__(self,
                 mapping: Union[Dict[str, int], Callable[[List[str]], List[int]]],
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if not (callable(mapping) or isinstance(mapping, dict)):
            raise ValueError(f"WordtoId mapping must be a dict or a function, got {type(mapping).__name__}")
        self.mapping = mapping

    def transform_sample(self, value: Any) -> np.ndarray:
        mapping = self.mapping
        if callable(mapping):
            return np.array(mapping(value))
        try:
            return np.array([mapping[word] for word in value])
        except KeyError as error:
            raise KeyError(f"WordtoId {self.inputs}: the word {error.args[0]!r} is not in the mapping") from None

    def transform_batch(self, values: Any) -> Any:
        return [self.transform_sample(value) for value in values]
