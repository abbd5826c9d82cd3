"""fe-core's TensorOps without a framework: documented defaults, input/output wiring, argument errors, and the
framework-free meta ops."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.op.tensorop import (FGSM, CrossEntropy, CutMixBatch, DiceLoss, FocalLoss, Fuse, Gather, GradientOp,
                                 Hinge, LambdaOp, LossOp, MeanSquaredError, MixUpBatch, Normalize, OneOf, Permute,
                                 Repeat, Reshape, Resize3D, Sometimes, SuperLoss, UnHadamard, Watch)


def test_documented_defaults() -> None:
    assert MixUpBatch(inputs=("x", "y"), outputs=("x", "y")).mode == {"train"}
    mixup = MixUpBatch(inputs=("x", "y"), outputs=("x", "y"))
    assert (mixup.alpha, mixup.shared_beta) == (1.0, False)
    assert CutMixBatch(inputs=("x", "y"), outputs=("x", "y")).alpha == 1.0
    assert Permute(inputs="x", outputs="y").permutation == [0, 3, 1, 2]
    normalize = Normalize(inputs="x", outputs="y")
    assert (normalize.mean, normalize.std, normalize.max_pixel_value) == ((0.485, 0.456, 0.406),
                                                                          (0.229, 0.224, 0.225), 255.0)
    assert Resize3D(inputs="x", outputs="y", output_shape=(4, 4, 4)).resize_mode == "nearest"
    focal = FocalLoss(inputs=("p", "t"), outputs="l")
    assert (focal.gamma, focal.alpha, focal.sample_reduction, focal.shape_reduction, focal.from_logits,
            focal.normalize) == (2.0, 0.25, "mean", "sum", False, True)
    dice = DiceLoss(inputs=("p", "t"), outputs="l")
    assert (dice.soft_dice, dice.average_loss, dice.channel_average, dice.epsilon) == (False, True, True, 1e-6)
    assert Hinge(inputs=("p", "t"), outputs="l").mode == {"train", "eval", "test"}
    fgsm = FGSM(data="x", loss="ce", outputs="x_adv")
    assert (fgsm.inputs, fgsm.epsilon, fgsm.clip_low, fgsm.clip_high) == (["x", "ce"], 0.01, None, None)
    assert Sometimes(LambdaOp(fn=abs, inputs="x", outputs="x")).prob == 0.5
    assert UnHadamard(inputs="x", outputs="y", n_classes=10).code_length == 16


def test_input_wiring() -> None:
    assert Gather(inputs=["a", "b"], outputs=["c", "d"], indices="i").inputs == ["i", "a", "b"]
    gradient = GradientOp(finals=["f", "g"], inputs="x", outputs=["df", "dg"])
    assert gradient.inputs == ["x", "f", "g"] and gradient.single_source
    assert Watch(inputs=["x", "z"]).outputs == ["x", "z"]
    sometimes = Sometimes(LambdaOp(fn=lambda x: x, inputs="x", outputs="y"))
    assert sometimes.inputs == ["x", "y"] and sometimes.outputs == ["y"]  # y's old value passes through on a skip
    repeat = Repeat(LambdaOp(fn=lambda z: z, inputs="z", outputs="z"), repeat=lambda z, limit: z < limit)
    assert repeat.inputs == ["z", "limit"]
    super_loss = SuperLoss(CrossEntropy(inputs=("pred", "true"), outputs="ce", mode="train"), output_confidence="c")
    assert (super_loss.inputs, super_loss.outputs, super_loss.mode) == (["pred", "true"], ["ce", "c"], {"train"})
    assert super_loss.loss.average_loss is False
    loss = MeanSquaredError(inputs=("pred", "true"), outputs="mse")
    assert (loss.pred_key, loss.true_key, loss.pred_key_idx, loss.true_key_idx) == ("pred", "true", 0, 1)


def test_argument_errors_name_the_op() -> None:
    with pytest.raises(ValueError, match="CutMixBatch alpha"):
        CutMixBatch(inputs=("x", "y"), outputs=("x", "y"), alpha=-1)
    with pytest.raises(ValueError, match="Resize3D output_shape"):
        Resize3D(inputs="x", outputs="y", output_shape=(4, 4))
    with pytest.raises(ValueError, match="Reshape needs one output per input"):
        Reshape(inputs=["a", "b"], outputs="c", shape=(1, ))
    with pytest.raises(ValueError, match="UnHadamard code_length"):
        UnHadamard(inputs="x", outputs="y", n_classes=10, code_length=8)
    with pytest.raises(ValueError, match="SuperLoss needs a LossOp"):
        SuperLoss(CrossEntropy(inputs=("a", "b"), outputs=["c"]))
    with pytest.raises(ValueError, match="Fuse can only wrap TensorOps"):
        Fuse([object()])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="Repeat max_iter"):
        Repeat(LambdaOp(fn=abs, inputs="x", outputs="x"), repeat=lambda x: True, max_iter=0)


def test_a_kernel_op_outside_a_network_needs_framework_tensors() -> None:
    with pytest.raises(TypeError, match="UnHadamard runs on torch or TensorFlow tensors"):
        UnHadamard(inputs="x", outputs="y", n_classes=4).forward([np.zeros((1, 4))], {})


def test_ops_written_with_fe_backend_functions_also_take_numpy() -> None:
    x = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4)
    assert Permute(inputs="x", outputs="y").forward([x], {})[0].shape == (1, 4, 2, 3)
    assert Reshape(inputs="x", outputs="y", shape=(2, 12)).forward([x], {})[0].shape == (2, 12)
    hinge = Hinge(inputs=("p", "t"), outputs="l", average_loss=False)
    np.testing.assert_allclose(hinge.forward([np.array([[0.1, 0.9, 0.05, 0.05]]), np.array([[-1, 1, 1, -1]])], {}),
                               [0.8], rtol=1e-6)


def test_framework_free_meta_ops_and_loss_pass_through() -> None:
    fused = Fuse([LambdaOp(fn=lambda x: x + 1, inputs="x", outputs="y"),
                  LambdaOp(fn=lambda x, y: x * y, inputs=("x", "y"), outputs="z")])
    assert (fused.inputs, fused.outputs) == (["x"], ["y", "z"])
    assert fused.forward([2], {}) == [3, 6]
    assert Repeat(LambdaOp(fn=lambda z: z + 2, inputs="z", outputs="z"), repeat=3).forward([1], {}) == [7]
    assert Sometimes(LambdaOp(fn=lambda x: -x, inputs="x", outputs="x"), prob=1.0).forward([4], {}) == [-4]
    assert Sometimes(LambdaOp(fn=lambda x: -x, inputs="x", outputs="x"), prob=0.0).forward([4], {}) == [4]
    # OneOf takes and returns what the wrapped op does: one value for a single key
    assert OneOf(LambdaOp(fn=lambda x: -x, inputs="x", outputs="x")).forward([4], {}) == -4
    assert LossOp(inputs="adv", outputs="loss").forward(0.5, {}) == 0.5
