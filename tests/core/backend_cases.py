"""The value table of `fe.backend`'s tensor functions, shared by the numpy, torch and TensorFlow test suites.

Each case calls one function with numpy inputs (each suite converts every array to its own tensors first) and gives
the expected numpy result (FastEstimator's documented examples, or a hand-computed reference). `layout` marks cases
whose expected value holds only where the class/channel axis is last (numpy, TensorFlow) or first after the batch
(torch). This module needs numpy only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["Case", "CASES", "convert_arrays", "case_id", "cases_for"]


@dataclass
class Case:
    """One call: `function(*args, **kwargs)` should give `expected` (to `atol`); `expected_dtype` is a dtype name."""
    function: str
    args: Tuple[Any, ...]
    expected: Any
    kwargs: Dict[str, Any] = field(default_factory=dict)
    atol: float = 1e-4
    layout: Optional[str] = None  # None: any backend; 'last': numpy/tf only; 'first': torch only
    expected_dtype: Optional[str] = None
    name: str = ""


def a(values: Any, dtype: Optional[str] = None) -> np.ndarray:
    return np.array(values, dtype=dtype)


CUBE = a([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], "float32")
GRID = a([[1, 2, 3], [4, 5, 6], [7, 8, 9]], "int32")
BLOCKS = a([[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [10, 11]]], "int32")
ONE_HOT = a([[0, 1, 0], [1, 0, 0], [0, 0, 1]], "int32")
PROBS = a([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.1, 0.2, 0.7]], "float32")
REG_TRUE = a([[0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 0]], "int32")
REG_PRED = a([[0.1, 0.9, 0.05, 0.05], [0.1, 0.2, 0.0, 0.7], [0.0, 0.15, 0.8, 0.05], [1.0, 0.0, 0.0, 0.0]], "float32")
COL_TRUE = a([[1], [3], [2], [0]], "int32")
COL_PRED = a([[2.0], [0.0], [2.0], [1.0]], "float32")
FOCAL_TRUE = a([[1], [1], [1], [0], [0], [0]], "int32")
FOCAL_PRED = a([[0.97], [0.91], [0.73], [0.27], [0.09], [0.03]], "float32")
DICE_TRUE = a([[[[0, 1, 1], [1, 0, 1], [1, 0, 1]], [[0, 1, 1], [1, 0, 1], [1, 0, 1]],
                [[0, 1, 1], [1, 0, 1], [1, 0, 1]]]], "int32")
DICE_PRED = a([[[[0, 1, 0], [1, 0, 0], [1, 0, 1]], [[0, 1, 1], [1, 0, 1], [0, 0, 0]],
                [[0, 0, 1], [1, 0, 1], [1, 0, 1]]]], "int32")
LAMBERT_IN = a([-1.0 / math.e, -0.34, -0.32, -0.2, 0, 0.12, 0.15, math.e, 5, math.exp(1 + math.e), 100], "float32")
LAMBERT_OUT = a([-1, -0.65444, -0.56006, -0.25917, 0, 0.10825, 0.13185, 1, 1.32672, 2.71828, 3.38563])


def _bce(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


CASES: List[Case] = [
    # ------------------------------------------------------------------ reductions
    Case("reduce_sum", (CUBE,), 36.0),
    Case("reduce_sum", (CUBE,), [[6, 8], [10, 12]], {"axis": 0}),
    Case("reduce_sum", (CUBE,), [14, 22], {"axis": [0, 2]}),
    Case("reduce_sum", (CUBE,), [[[36]]], {"keepdims": True}),
    Case("reduce_mean", (CUBE,), 4.5),
    Case("reduce_mean", (CUBE,), [[2, 3], [6, 7]], {"axis": 1}),
    Case("reduce_mean", (CUBE,), [[[3.5], [5.5]]], {"axis": [0, 2], "keepdims": True}, name="keepdims-list"),
    Case("reduce_min", (CUBE,), 1.0),
    Case("reduce_min", (CUBE,), [[1, 2], [5, 6]], {"axis": 1}),
    Case("reduce_min", (CUBE,), [1, 3], {"axis": [0, 2]}),
    Case("reduce_max", (CUBE,), 8.0),
    Case("reduce_max", (CUBE,), [[5, 6], [7, 8]], {"axis": 0}),
    Case("reduce_max", (CUBE,), [6, 8], {"axis": (0, 2)}),
    Case("reduce_std", (CUBE,), 2.29129),
    Case("reduce_std", (CUBE,), [[2, 2], [2, 2]], {"axis": 0}),
    Case("reduce_std", (CUBE,), [[1, 1], [1, 1]], {"axis": 1}),
    Case("argmax", (a([[2, 7, 5], [9, 1, 3], [4, 8, 2]]),), [1, 2, 0], {"axis": 0}, expected_dtype="int64"),
    Case("argmax", (a([[2, 7, 5], [9, 1, 3], [4, 8, 2]]),), [1, 0, 1], {"axis": 1}),
    Case("percentile", (GRID,), [[[6]]], {"percentiles": [66]}),
    Case("percentile", (GRID,), [[[4, 5, 6]]], {"percentiles": [66], "axis": 0}),
    Case("percentile", (GRID,), [[[2], [5], [8]]], {"percentiles": [66], "axis": 1}),
    Case("percentile", (GRID,), [1, 5], {"percentiles": [0, 50], "keepdims": False}, name="several"),
    Case("percentile", (GRID,), 5, {"percentiles": 50, "keepdims": False}, name="scalar-percentile"),
    Case("check_nan", (a([[1.0, 2.0], [3.0, np.nan]], "float32"),), True),
    Case("check_nan", (CUBE,), False),
    Case("check_nan", (GRID,), False, name="integers"),
    # ------------------------------------------------------------------ element-wise
    Case("abs", (a([-2, 7, -19], "int32"),), [2, 7, 19], expected_dtype="int32"),
    Case("exp", (a([-2.0, 2, 1], "float32"),), [0.1353, 7.3891, 2.7183]),
    Case("sign", (a([-2, 7, -19], "int32"),), [-1, 1, -1]),
    Case("pow", (a([-2, 7, -19], "int32"), 2), [4, 49, 361]),
    Case("pow", (a([1.0, 2.0, 3.0], "float32"), a([2.0, 0.5, 0.0], "float32")), [1, 1.41421, 1], name="tensor"),
    Case("tensor_pow", (a([[1, 4, 6], [2.3, 0.5, 0]], "float32"), 3.2), [[1.0, 84.449, 309.089], [14.372, 0.109, 0]],
         atol=2e-3),
    Case("tensor_pow", (a([[1, 4, 6], [2.3, 0.5, 0]], "float32"), 0.21), [[1.0, 1.338, 1.457], [1.191, 0.865, 0]],
         atol=1e-3),
    Case("tensor_sqrt", (a([[1, 4, 6], [4, 9, 16]], "float32"),), [[1.0, 2.0, 2.44949], [2.0, 3.0, 4.0]]),
    Case("tensor_round", (a([[1.25, 4.5, 6], [4, 9.11, 16.9]], "float32"),), [[1, 4, 6], [4, 9, 17]]),
    Case("clip_by_value", (a([-5, 4, 2, 0, 9, -2], "int32"),), [-2, 3, 2, 0, 3, -2], {"min_value": -2, "max_value": 3}),
    Case("clip_by_value", (a([-5, 4, 2, 0, 9, -2], "int32"),), [-2, 4, 2, 0, 9, -2], {"min_value": -2}),
    Case("clip_by_value", (a([-5.0, 4.0], "float32"),), [-5.0, 1.5], {"max_value": 1.5}),
    Case("maximum", (a([[2, 7, 6]], "int32"), a([[2, 7, 5]], "int32")), [[2, 7, 6]]),
    Case("maximum", (a([[-2.0, 7.0]], "float32"), 0.0), [[0.0, 7.0]], name="number"),
    Case("where", (a([[0, 1, 2], [3, 4, 5], [6, 7, 8]]) > 4, a([[0, 1, 2], [3, 4, 5], [6, 7, 8]], "int32"), -1),
         [[-1, -1, -1], [-1, -1, 5], [6, 7, 8]]),
    Case("matmul", (a([[0, 1, 2], [3, 4, 5]], "int32"), a([[1], [2], [3]], "int32")), [[8], [26]]),
    Case("lambertw", (LAMBERT_IN,), LAMBERT_OUT, atol=2e-3),
    # ------------------------------------------------------------------ normalization
    Case("zscore", (a([[0, 1], [2, 3]], "int32"),), [[-1.34164, -0.44721], [0.44721, 1.34164]]),
    Case("normalize", (CUBE, 0.5625, 0.2864, 8.0), (CUBE - 4.5) / 2.2912, atol=1e-3),
    Case("normalize", (CUBE, (0.5, 0.625), (0.2795, 0.2795), 8.0),
         [[[-1.34164, -1.34164], [-0.44721, -0.44721]], [[0.44721, 0.44721], [1.34164, 1.34164]]], atol=1e-3,
         layout="last", name="channels-last"),
    Case("normalize", (CUBE, (0.5, 0.625), (0.2795, 0.2795), 8.0),
         [[[-1.34164, -0.89443], [-0.44721, 0.0]], [[0.0, 0.44721], [0.89443, 1.34164]]], atol=1e-3,
         layout="first", name="channels-first"),
    Case("normalize", (CUBE.astype("float64"), 0.5, 0.25, 1.0), (CUBE - 0.5) / 0.25, expected_dtype="float32",
         name="float32"),
    Case("iwd", (a([[0.5] * 5, [0] + [1] * 4], "float32"),),
         [[0.2, 0.2, 0.2, 0.2, 0.2], [0.95, 0.0125, 0.0125, 0.0125, 0.0125]]),
    Case("iwd", (a([[0, 1, 1]], "float32"),), [[0.95, 0.025, 0.025]], {"power": 2.0}),
    Case("iwd", (a([[0, 0.3, 2.0]], "float32"),), [[10 / 13.8333, 3.3333 / 13.8333, 0.5 / 13.8333]], {"eps": 0.1},
         name="floored-at-eps"),
    # ------------------------------------------------------------------ shapes and indexing
    Case("reshape", (CUBE,), [1, 2, 3, 4, 5, 6, 7, 8], {"shape": [-1]}),
    Case("reshape", (CUBE,), [[1, 2], [3, 4], [5, 6], [7, 8]], {"shape": [4, 2]}),
    Case("expand_dims", (a([2, 7, 5]),), [[2, 7, 5]], {"axis": 0}),
    Case("expand_dims", (a([2, 7, 5]),), [[2], [7], [5]], {"axis": 1}),
    Case("squeeze", (a([[[[1], [2]]], [[[3], [4]]], [[[5], [6]]]]),), [[1, 2], [3, 4], [5, 6]]),
    Case("squeeze", (a([[[[1], [2]]], [[[3], [4]]], [[[5], [6]]]]),), [[[1], [2]], [[3], [4]], [[5], [6]]],
         {"axis": 1}),
    Case("squeeze", (a([[[[1], [2]]], [[[3], [4]]], [[[5], [6]]]]),), [[[1, 2]], [[3, 4]], [[5, 6]]], {"axis": 3}),
    Case("permute", (BLOCKS, [2, 0, 1]), [[[0, 2], [4, 6], [8, 10]], [[1, 3], [5, 7], [9, 11]]]),
    Case("permute", (BLOCKS, [0, 2, 1]), [[[0, 2], [1, 3]], [[4, 6], [5, 7]], [[8, 10], [9, 11]]]),
    Case("transpose", (a([[0, 1, 2], [3, 4, 5], [6, 7, 8]]),), [[0, 3, 6], [1, 4, 7], [2, 5, 8]]),
    Case("transpose", (BLOCKS,), np.transpose(BLOCKS), name="3d"),
    Case("flip", (BLOCKS,), [[[8, 9], [10, 11]], [[4, 5], [6, 7]], [[0, 1], [2, 3]]], {"axis": [0]}),
    Case("flip", (BLOCKS,), [[[10, 11], [8, 9]], [[6, 7], [4, 5]], [[2, 3], [0, 1]]], {"axis": [0, 1]}),
    Case("roll", (a([[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]], "float32"),), [[5, 6, 7], [1, 2, 3]], {"shift": 1, "axis": 0}),
    Case("roll", (a([[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]], "float32"),), [[2, 3, 1], [6, 7, 5]], {"shift": 2, "axis": 1}),
    Case("roll", (a([[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]], "float32"),), [[3, 1, 2], [7, 5, 6]],
         {"shift": -2, "axis": 1}),
    Case("roll", (a([[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]], "float32"),), [[6, 7, 5], [2, 3, 1]],
         {"shift": [-1, -1], "axis": [0, 1]}),
    Case("concat", ([a([[0, 1]]), a([[2, 3]]), a([[4, 5]])],), [[0, 1], [2, 3], [4, 5]], {"axis": 0}),
    Case("concat", ([a([[0, 1]]), a([[2, 3]]), a([[4, 5]])],), [[0, 1, 2, 3, 4, 5]], {"axis": 1}),
    Case("gather", (a([[0, 1], [2, 3], [4, 5]]), a([1, 0, 1])), [[2, 3], [0, 1], [2, 3]]),
    Case("gather", (BLOCKS, a([1, 0, 1])), [[[4, 5], [6, 7]], [[0, 1], [2, 3]], [[4, 5], [6, 7]]]),
    Case("gather", (a([[0, 1], [2, 3], [4, 5]]), a([[2], [0]])), [[4, 5], [0, 1]], name="squeezed-indices"),
    Case("gather_from_batch", (a([[0, 1], [2, 3], [4, 5]]), a([1, 0, 1])), [1, 2, 5]),
    Case("gather_from_batch", (BLOCKS, a([[1], [0], [1]])), [[2, 3], [4, 5], [10, 11]]),
    # ------------------------------------------------------------------ creation
    Case("zeros_like", (a([[0, 1], [2, 3]], "int32"),), [[0, 0], [0, 0]], expected_dtype="int32"),
    Case("zeros_like", (a([[0, 1], [2, 3]], "int32"),), [[0.0, 0.0], [0.0, 0.0]], {"dtype": "float32"},
         expected_dtype="float32"),
    Case("ones_like", (a([[0, 1], [2, 3]], "int32"),), [[1, 1], [1, 1]], expected_dtype="int32"),
    Case("ones_like", (a([[0, 1], [2, 3]], "int32"),), [[1.0, 1.0], [1.0, 1.0]], {"dtype": "float32"},
         expected_dtype="float32"),
    # ------------------------------------------------------------------ cross entropy
    Case("binary_crossentropy", (a([[0.9], [0.3], [0.8], [0.1]], "float32"), a([[1], [0], [1], [0]], "int32")),
         0.19763),
    Case("binary_crossentropy", (a([[0.9], [0.3], [0.8], [0.1]], "float32"), a([[1], [0], [1], [0]], "int32")),
         [0.10536, 0.35667, 0.22314, 0.10536], {"average_loss": False}),
    Case("binary_crossentropy", (a([[0.9], [0.3], [0.8], [0.1]], "float32"), a([[1], [0], [1], [0]], "int32")),
         [0.21072, 0.35667, 0.44629, 0.10536], {"average_loss": False, "class_weights": {1: 2.0}}),
    Case("binary_crossentropy", (a([[2.0, -1.0]], "float32"), a([[1.0, 0.0]], "float32")),
         np.mean(_bce(1 / (1 + np.exp(-a([[2.0, -1.0]]))), a([[1.0, 0.0]])), axis=1),
         {"from_logits": True, "average_loss": False}, name="logits"),
    Case("categorical_crossentropy", (PROBS, ONE_HOT), 0.22839),
    Case("categorical_crossentropy", (PROBS, ONE_HOT), [0.22314, 0.10536, 0.35667], {"average_loss": False}),
    Case("categorical_crossentropy", (PROBS, ONE_HOT), [0.44629, 0.10536, 1.07003],
         {"average_loss": False, "class_weights": {1: 2.0, 2: 3.0}}),
    Case("categorical_crossentropy", (np.log(PROBS), ONE_HOT), [0.22314, 0.10536, 0.35667],
         {"average_loss": False, "from_logits": True}, name="logits"),
    Case("sparse_categorical_crossentropy", (PROBS, a([[1], [0], [2]], "int32")), 0.22839),
    Case("sparse_categorical_crossentropy", (PROBS, a([1, 0, 2], "int64")), [0.22314, 0.10536, 0.35667],
         {"average_loss": False}),
    Case("sparse_categorical_crossentropy", (PROBS, a([[1], [0], [2]], "int32")), [0.44629, 0.10536, 1.07003],
         {"average_loss": False, "class_weights": {1: 2.0, 2: 3.0}}),
    Case("sparse_categorical_crossentropy", (np.log(PROBS), a([1, 0, 2], "int64")), 0.22839, {"from_logits": True},
         name="logits"),
    # ------------------------------------------------------------------ other losses
    Case("mean_squared_error", (REG_TRUE, REG_PRED), [0.00625, 0.035, 0.01625, 0.0]),
    Case("mean_squared_error", (COL_TRUE, COL_PRED), [1.0, 9.0, 0.0, 1.0]),
    Case("l1_loss", (REG_TRUE, REG_PRED), [0.075, 0.15, 0.1, 0.0]),
    Case("l1_loss", (COL_TRUE, COL_PRED), [1.0, 3.0, 0.0, 1.0]),
    Case("smooth_l1_loss", (REG_TRUE, REG_PRED), [0.0048, 0.02692, 0.0125, 0.0], {"beta": 0.65}),
    Case("smooth_l1_loss", (COL_TRUE, COL_PRED), [0.675, 2.675, 0.0, 0.675], {"beta": 0.65}),
    Case("huber", (REG_TRUE, REG_PRED), [0.003125, 0.0175, 0.008125, 0.0], {"beta": 0.65}),
    Case("huber", (COL_TRUE, COL_PRED), [0.43875, 1.73875, 0.0, 0.43875], {"beta": 0.65}),
    Case("hinge", (a([[-1, 1, 1, -1], [1, 1, 1, 1], [-1, -1, 1, -1], [1, -1, -1, -1]], "int32"),
                   a([[0.1, 0.9, 0.05, 0.05], [0.1, -0.2, 0.0, -0.7], [0.0, 0.15, 0.8, 0.05], [1.0, -1.0, -1.0, -1.0]],
                     "float32")), [0.8, 1.2, 0.85, 0.0]),
    Case("focal_loss", (FOCAL_TRUE, FOCAL_PRED), 0.14649, {"gamma": None, "alpha": None}),
    Case("focal_loss", (FOCAL_TRUE, FOCAL_PRED), 0.0039556, {"gamma": 2.0, "alpha": 0.25}, atol=1e-6),
    Case("focal_loss", (FOCAL_TRUE, FOCAL_PRED), 0.0039556 * 6, {"sample_reduction": "sum"}, atol=1e-5),
    Case("focal_loss", (a([[1, 1, 0]], "int32"), a([[0.9, 0.8, 0.3]], "float32")),
         [(_bce(0.9, 1) + _bce(0.8, 1) + _bce(0.3, 0)) / 2], {"gamma": 0.0, "alpha": None, "sample_reduction": "none"},
         name="normalized-by-positives"),
    Case("dice_score", (DICE_PRED, DICE_TRUE), [[0.90909, 0.8, 0.8]], layout="last"),
    Case("dice_score", (DICE_PRED, DICE_TRUE), [[0.90909, 0.8, 0.8]], {"soft_dice": True}, layout="last"),
    Case("dice_score", (DICE_PRED, DICE_TRUE), [0.83636], {"channel_average": True}, layout="last"),
    Case("dice_score", (DICE_PRED, DICE_TRUE), [0.90909, 0.8, 0.8], {"sample_average": True}, layout="last"),
    Case("dice_score", (DICE_PRED, DICE_TRUE), [[0.8, 0.8, 0.90909]], layout="first"),
    Case("dice_score", (DICE_PRED, DICE_TRUE), [0.83636], {"channel_average": True}, layout="first"),
    Case("dice_score", (a([[[0.2, 0.7], [0.6, 0.1]]], "float32"), a([[[0, 1], [1, 0]]], "int32")), [[1.0, 1.0]],
         {"threshold": 0.5}, layout="last", name="threshold"),
    Case("dice_score", (a([[[0.6, 0.7], [0.6, 0.1]]], "float32"), a([[[0, 1], [1, 0]]], "int32")), [[1.0, 1.0]],
         {"mask_overlap": False, "threshold": 0.0}, layout="last", name="no-overlap"),
    Case("dice_score", (a([[[0.0, 1.0], [0.0, 1.0]]], "float32"), a([[[0, 1], [0, 1]]], "int32")), [[np.nan, 1.0]],
         {"empty_nan": True}, layout="last", name="empty-nan"),
    Case("dice_score", (a([[[0.0, 1.0], [0.0, 1.0]]], "float32"), a([[[0, 1], [0, 1]]], "int32")), [[0.0, 2.0]],
         {"channel_weights": a([[3.0, 2.0]], "float32")}, layout="last", name="weights"),
]


def case_id(case: Case) -> str:
    """A readable pytest id: function, then the case's name or its keyword arguments."""
    detail = case.name or ",".join(f"{key}={value}" for key, value in case.kwargs.items() if key != "class_weights")
    if "class_weights" in case.kwargs:
        detail += ",weighted"
    return f"{case.function}[{detail}]" if detail else case.function


def convert_arrays(value: Any, convert: Callable[[np.ndarray], Any]) -> Any:
    """Every numpy array in `value` (also inside lists and tuples) passed through `convert`."""
    if isinstance(value, np.ndarray):
        return convert(value)
    if isinstance(value, list):
        return [convert_arrays(item, convert) for item in value]
    if isinstance(value, tuple):
        return tuple(convert_arrays(item, convert) for item in value)
    return value


def cases_for(layout: str, exclude: Sequence[str] = ()) -> List[Case]:
    """The cases that apply to a backend whose channel axis is `layout` ('last' or 'first')."""
    return [case for case in CASES if case.layout in (None, layout) and case.function not in exclude]
