"""FastEstimator's documented op behaviour that needs no framework (issue 28): NumpyOp meta ops, augmentation ops."""
from __future__ import annotations

import numpy as np

from fe_core.op.numpyop import LambdaOp
from fe_core.op.numpyop.meta import Repeat


# ------------------------------------------------------------------------------------------------ item 2: meta ops
def test_numpyop_repeat_has_fastestimators_ops_attribute() -> None:
    add_one = LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="x")
    repeat = Repeat(add_one, repeat=3)
    assert repeat.ops == [add_one] and repeat.op is add_one
    repeat.ops[0] = LambdaOp(fn=lambda x: x + 2, inputs="x", outputs="x")  # users swap or tweak the op in place
    assert repeat.forward([np.array(0)], {"mode": "train"}) == [6]


# ------------------------------------------------------------------------------------------------ item 6
def test_hadamard_takes_float_labels_holding_whole_numbers() -> None:
    import pytest  # pylint: disable=import-outside-toplevel

    from fe_core.op.numpyop.univariate import Hadamard  # pylint: disable=import-outside-toplevel
    op = Hadamard(inputs="y", outputs="y", n_classes=4)
    assert op.forward([np.float32(1.0)], {})[0].tolist() == op.forward([1], {})[0].tolist()
    assert op.forward_batch([np.array([[2.0], [0.0]])], {})[0].tolist() == op.forward_batch([np.array([2, 0])],
                                                                                           {})[0].tolist()
    with pytest.raises(ValueError, match="fractional"):
        op.forward([np.float32(1.5)], {})
