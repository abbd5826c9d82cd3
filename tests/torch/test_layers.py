"""fe_torch.layers: Cropping2D and HadamardCode (FastEstimator's fe.layers.pytorch)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fe_core.op.tensorop.hadamard import code_book
from fe_torch.layers import Cropping2D, HadamardCode


def test_cropping2d_matches_the_documented_examples() -> None:
    x = torch.arange(100).view(1, 1, 10, 10)
    assert Cropping2D(3)(x)[0, 0].tolist() == [[33, 34, 35, 36], [43, 44, 45, 46], [53, 54, 55, 56],
                                               [63, 64, 65, 66]]
    assert Cropping2D((3, 4))(x)[0, 0].tolist() == [[34, 35], [44, 45], [54, 55], [64, 65]]
    assert Cropping2D(((1, 4), 4))(x)[0, 0].tolist() == [[14, 15], [24, 25], [34, 35], [44, 45], [54, 55]]
    assert Cropping2D()(x).shape == x.shape


@pytest.mark.parametrize("bad", ["2", (1, 2, 3), ((1, 2, 3), 1), 1.5, -1])
def test_cropping2d_rejects_bad_cropping(bad: object) -> None:
    with pytest.raises(ValueError, match="Cropping2D"):
        Cropping2D(bad)  # type: ignore[arg-type]


def test_hadamard_code_outputs_probabilities_and_trains() -> None:
    layer = HadamardCode(in_features=[8, 8, 8], n_classes=10)
    assert layer.code_length == 16
    assert [head.out_features for head in layer.heads] == [6, 5, 5]
    inputs = [torch.randn(4, 8) for _ in range(3)]
    out = layer(inputs)
    assert out.shape == (4, 10)
    torch.testing.assert_close(out.sum(dim=-1), torch.ones(4))
    out[:, 0].sum().backward()
    assert all(head.weight.grad is not None for head in layer.heads)


def test_hadamard_code_gives_max_prob_on_a_code_word() -> None:
    layer = HadamardCode(in_features=4, n_classes=4, code_length=4, max_prob=0.8)
    with torch.no_grad():  # make the head output a huge multiple of code word 2 so tanh saturates onto it
        layer.heads[0].weight.copy_(torch.eye(4) * 100.0)
        layer.heads[0].bias.zero_()
    code = torch.from_numpy(code_book(4, 4)[2].copy())
    with torch.no_grad():
        out = layer(code[None, :])
    assert 0.8 - 1e-4 <= float(out[0, 2]) < 0.9  # other code words are at least L/2 away: at least max_prob
    assert int(out.argmax()) == 2


def test_hadamard_code_default_length_and_validation() -> None:
    assert HadamardCode(4, n_classes=40).code_length == 64
    with pytest.raises(ValueError, match="power of 2"):
        HadamardCode(4, n_classes=10, code_length=24)
    with pytest.raises(ValueError, match="at least n_classes"):
        HadamardCode(4, n_classes=10, code_length=8)
    with pytest.raises(ValueError, match="max_prob"):
        HadamardCode(4, n_classes=10, max_prob=1.0)
    with pytest.raises(ValueError, match="power"):
        HadamardCode(4, n_classes=10, power=0)


def test_code_book_is_the_hadamard_numpyops_and_unhadamard_decodes_it() -> None:
    from fe_core.op.numpyop.univariate import Hadamard  # pylint: disable=import-outside-toplevel
    from fe_core.op.tensorop import UnHadamard  # pylint: disable=import-outside-toplevel
    labels = np.arange(10)
    coded = Hadamard(inputs="y", outputs="code", n_classes=10).transform_batch(labels)
    np.testing.assert_array_equal(coded, code_book(10, 16))
    decoded = UnHadamard(inputs="code", outputs="p", n_classes=10).forward([torch.from_numpy(coded)], {})[0]
    assert decoded.argmax(dim=-1).tolist() == labels.tolist()


@pytest.mark.parametrize("name", ["fe_torch.layers.cropping_2d", "fe_torch.layers.hadamard",
                                  "fe_torch.architecture.unet", "fe_torch.architecture.attention_unet",
                                  "fe_torch.architecture.wideresnet", "fe_core.op.tensorop.hadamard",
                                  "fe_core.op.tensorop.tensorop"])
def test_docstring_examples(name: str) -> None:
    import doctest  # pylint: disable=import-outside-toplevel
    import importlib  # pylint: disable=import-outside-toplevel
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"torch": torch}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
