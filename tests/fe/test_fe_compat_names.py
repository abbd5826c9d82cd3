"""FastEstimator's public names that scripts import (issue 28, item 7): every name of its `types` module,
`fe.trace.trace.Freq`, and the `focal_loss` function beside `FocalLoss`."""
from __future__ import annotations

import subprocess
import sys
import typing

import numpy as np


def test_fe_types_holds_every_name_of_fastestimators_types() -> None:
    import fe.types as types  # pylint: disable=import-outside-toplevel
    for name in ("FilteredData", "MapDataset", "DataSequence", "Tensor", "Array", "Model", "TensorT", "ArrayT",
                 "ModelT", "CollectionT"):
        assert name in types.__all__ and getattr(types, name) is not None, name
    from fe.types import DataSequence  # pylint: disable=import-outside-toplevel
    assert isinstance([1, 2], DataSequence) and isinstance((1, ), DataSequence)
    assert isinstance(np.zeros(2), DataSequence) and not isinstance(3, DataSequence)
    assert isinstance(types.CollectionT, typing.TypeVar)

    def first(items: DataSequence) -> typing.Any:  # usable in annotations
        return items[0]

    assert first([5]) == 5


def test_data_sequence_knows_framework_tensors_without_importing_a_framework() -> None:
    code = ("import sys; from fe.types import DataSequence; assert not isinstance(1.0, DataSequence); "
            "assert 'torch' not in sys.modules and 'tensorflow' not in sys.modules; "
            "import torch; assert isinstance(torch.zeros(2), DataSequence); print('ok')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_freq_and_focal_loss_are_at_fastestimators_paths() -> None:
    from fe.backend import focal_loss as backend_focal_loss  # pylint: disable=import-outside-toplevel
    from fe.op.tensorop.loss.focal_loss import FocalLoss, focal_loss  # pylint: disable=import-outside-toplevel
    from fe.trace.trace import Freq, parse_freq  # pylint: disable=import-outside-toplevel
    assert focal_loss is backend_focal_loss and FocalLoss.__name__ == "FocalLoss"
    assert parse_freq("3s") == Freq(is_step=True, freq=3) and isinstance(parse_freq(2), Freq)
    loss = focal_loss(np.array([[1.0, 0.0]]), np.array([[0.9, 0.2]]), gamma=None, alpha=None)
    assert float(loss) > 0
