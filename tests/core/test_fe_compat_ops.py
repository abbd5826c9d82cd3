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
