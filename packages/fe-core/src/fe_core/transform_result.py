"""`TransformResult`: what `Network.transform` returns for one batch, a dict that also keeps FastEstimator's layers.

FastEstimator's torch `Network.transform` returns a `ChainMap(predictions, batch)`: reading a key gives the network's
value where it wrote one and the input's otherwise, and `result.maps[0]` holds only what the ops produced (a key an
op wrote and a later `Delete` removed is not there, while the input of that name still is). fe returns a plain dict
of the merged view, for every backend, with those two layers under `maps`.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping

__all__ = ["TransformResult", "transform_result"]


class TransformResult(Dict[str, Any]):
    """The merged result of one transformed batch (a dict), with `maps` = [predictions, inputs] as in a ChainMap.

    Attributes:
        maps: `maps[0]`: the keys the network's ops and postprocessing ops produced (and did not delete);
            `maps[1]`: the input batch's keys, with their input values.

    Example:
        >>> result = TransformResult({"x": 1, "y_pred": 2}, [{"y_pred": 2}, {"x": 1}])
        >>> result["x"], list(result.maps[0])
        (1, ['y_pred'])
    """

    def __init__(self, merged: Mapping[str, Any], maps: List[Dict[str, Any]]) -> None:
        super().__init__(merged)
        self.maps = maps


def transform_result(merged: Mapping[str, Any], inputs: Mapping[str, Any],
                     convert: Callable[[Any], Any]) -> TransformResult:
    """Split a step's merged result into what the network produced and what was input.

    Args:
        merged: The step's result (host values, before `convert`).
        inputs: The batch as it went in (the same value objects where the network left a key alone).
        convert: Makes the public value of a (nested) dict, e.g. the backend's tensors (`to_public`).

    Returns:
        The converted result, with `maps` = [produced keys, input keys].
    """
    produced = [key for key, value in merged.items() if key not in inputs or value is not inputs[key]]
    public = convert(dict(merged))
    replaced = convert({key: inputs[key] for key in produced if key in inputs})  # inputs the network overwrote
    return TransformResult(public, [{key: public[key] for key in produced},
                                    {key: replaced[key] if key in replaced else public[key]
                                     for key in inputs if key in public or key in replaced}])
