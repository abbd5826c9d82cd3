"""`Tokenize`: split text into tokens."""
from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional, Union

from fe_core.export import fe_export
from fe_core.op.numpyop.univariate.univariate import UnivariateOp

__all__ = ["Tokenize"]


@fe_export("fe.op.numpyop.univariate.tokenize.Tokenize", "fe.op.numpyop.univariate.Tokenize")
class Tokenize(UnivariateOp):
    """Split each document/sequence into a list of tokens, optionally lower-cased.

    Args:
        inputs: Key(s) of sequences to be tokenized.
        outputs: Key(s) of sequences that are tokenized.
        mode: What mode(s) to execute this Op in ("train", "!infer", ...); None runs in every mode.
        ds_id: What dataset id(s) to execute this Op in ("ds1", "!ds1", ...); None runs on every dataset.
        tokenize_fn: Tokenization function (str -> list of str); None splits on whitespace (`str.split()`).
        to_lower_case: Whether to convert tokens to lowercase.

    Example:
        >>> Tokenize("x", "x", to_lower_case=True).forward(["Hello big World"], {})[0]
        ['hello', 'big', 'world']
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None,
                 tokenize_fn: Optional[Callable[[str], List[str]]] = None,
                 to_lower_case: bool = False) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if tokenize_fn is not None and not callable(tokenize_fn):
            raise ValueError(f"Tokenize tokenize_fn must be callable or None, got {tokenize_fn!r}")
        self.tokenize_fn = tokenize_fn
        self.to_lower_case = to_lower_case

    def transform_sample(self, value: Any) -> List[str]:
        tokens = self.tokenize_fn(value) if self.tokenize_fn is not None else str(value).split()
        if self.to_lower_case:
            tokens = [token.lower() for token in tokens]
        return list(tokens)

    def transform_batch(self, values: Any) -> List[List[str]]:
        return [self.transform_sample(value) for value in values]
