"""Torch architectures are built module for module as FastEstimator's: the same children, in the same order, with
the same names (so FastEstimator's state_dicts load) and the same forward computation."""
from __future__ import annotations

from typing import Any, List

import pytest
import torch

from fe_core.build import build
from fe_torch.architecture import AttentionUNet, LeNet, ResNet9, UNet, WideResidualNetwork


def _children(module: torch.nn.Module) -> List[str]:
    return [name for name, _ in module.named_children()]


def test_lenet_modules_in_order_and_flat_features() -> None:
    model = LeNet()
    assert _children(model) == ["conv1", "conv2", "conv3", "fc1", "fc2"]
    assert model.fc1.in_features == 576 and model.pool_kernel == 2
    assert LeNet(input_shape=(3, 32, 32)).fc1.in_features == 1024
    out = model(torch.zeros(2, 1, 28, 28))
    torch.testing.assert_close(out.sum(dim=-1), torch.ones(2))  # softmax inside forward


def test_resnet9_modules_names_and_batchnorm_momentum() -> None:
    model = ResNet9(input_size=(3, 16, 16), classes=5)
    assert _children(model) == ["conv0", "conv0_bn", "conv1", "conv1_bn", "residual1", "conv2", "conv2_bn",
                                "residual2", "conv3", "conv3_bn", "residual3", "fc1"]
    assert _children(model.residual1) == ["conv1", "conv1_bn", "conv2", "conv2_bn"]
    assert [model.conv0_bn.momentum, model.conv3_bn.momentum, model.residual1.conv1_bn.momentum] == [0.8, 0.8, 0.1]
    assert model(torch.zeros(2, 3, 16, 16)).shape == (2, 5)


def test_unet_and_attention_unet_children_in_order() -> None:
    blocks = ["enc1", "enc2", "enc3", "enc4", "bottle_neck"]
    assert _children(UNet(input_size=(1, 16, 16))) == blocks + ["dec4", "dec3", "dec2", "dec1"]
    attention = AttentionUNet(input_size=(1, 16, 16))
    assert _children(attention) == blocks + ["attn4", "attn3", "attn2", "attn1", "dec4", "dec3", "dec2", "dec1"]
    assert _children(attention.attn4) == ["dec_layers", "enc_layers", "attn_layers"]
    assert [type(layer).__name__ for layer in attention.dec1] == ["Conv2d", "ReLU", "Conv2d", "ReLU", "Conv2d",
                                                                  "Sigmoid"]


def test_wide_residual_network_uses_fastestimator_module_names() -> None:
    model = WideResidualNetwork(depth=10, classes=4, widen_factor=2)
    assert _children(model) == ["conv1", "block1", "block2", "block3", "bn1", "relu", "avgpool", "fc"]
    assert _children(model.block1.layer[0]) == ["bn1", "relu1", "conv1", "bn2", "relu2", "conv2", "convShortcut"]
    assert model.nChannels == 128 and model.block1.layer[0].equalInOut is False
    keys = set(model.state_dict())
    assert {"block1.layer.0.convShortcut.weight", "block3.layer.0.bn1.running_mean", "fc.weight"} <= keys
    same_width = WideResidualNetwork(depth=16, classes=4, widen_factor=1)
    assert same_width.block1.layer[0].convShortcut is None and same_width.block1.layer[1].equalInOut
    assert model(torch.zeros(2, 3, 8, 8)).shape == (2, 4)


def test_wide_residual_network_forward_matches_the_pre_activation_recipe() -> None:
    torch.manual_seed(0)
    model = WideResidualNetwork(depth=10, classes=3, widen_factor=1, dropout=0.5).eval()
    x = torch.randn(2, 3, 8, 8)

    def block(blk: Any, value: torch.Tensor) -> torch.Tensor:
        activated = torch.relu(blk.bn1(value))
        out = blk.conv2(torch.relu(blk.bn2(blk.conv1(activated))))
        return out + (value if blk.convShortcut is None else blk.convShortcut(activated))

    with torch.no_grad():
        out = model.conv1(x)
        for stage in (model.block1, model.block2, model.block3):
            for blk in stage.layer:
                out = block(blk, out)
        expected = model.fc(torch.relu(model.bn1(out)).mean(dim=(2, 3)))
        torch.testing.assert_close(model(x), expected)


@pytest.mark.parametrize("model_fn", [lambda: WideResidualNetwork(depth=10, classes=3, widen_factor=1),
                                      lambda: ResNet9(input_size=(3, 16, 16), classes=3)], ids=["wrn", "resnet9"])
def test_weights_path_loads_a_saved_state_dict(model_fn: Any, tmp_path: Any) -> None:
    torch.manual_seed(1)
    source = model_fn()
    torch.save(source.state_dict(), str(tmp_path / "source.pt"))
    loaded = build(model_fn=model_fn, optimizer_fn="adam", weights_path=str(tmp_path / "source.pt"))
    for (name, a), (_, b) in zip(source.state_dict().items(), loaded.state_dict().items()):
        assert torch.equal(a.cpu(), b.cpu()), name


def test_saliency_masks_keep_the_input_layout_with_one_channel() -> None:
    from fe_core.xai import SaliencyNet  # pylint: disable=import-outside-toplevel
    torch.manual_seed(0)
    model = LeNet()
    images = torch.rand(4, 1, 28, 28)
    net = SaliencyNet(model, model_inputs="x", model_outputs="y_pred")
    masks = net.get_masks({"x": images})
    assert masks["saliency"].shape == (4, 1, 28, 28) and isinstance(masks["saliency"], torch.Tensor)
    assert net.get_integrated_masks({"x": images}, nsamples=2)["saliency"].shape == (4, 1, 28, 28)
    assert net.get_smoothed_masks({"x": images}, nsamples=2)["saliency"].shape == (4, 1, 28, 28)
    assert masks["y_pred"].shape == (4,)
    rgb = SaliencyNet(ResNet9(input_size=(3, 16, 16)), model_inputs="x", model_outputs="y_pred")
    assert rgb.get_masks({"x": torch.rand(2, 3, 16, 16)})["saliency"].shape == (2, 1, 16, 16)


@pytest.mark.parametrize("layout", ["channels_last", "channels_first"])
def test_image_display_takes_torch_masks_with_labels_in_either_layout(layout: str) -> None:
    pytest.importorskip("plotly")
    from fe_core.util.display import BatchDisplay, ImageDisplay  # pylint: disable=import-outside-toplevel
    image = torch.rand(1, 128, 128)  # channel first, as the Pipeline hands torch images
    mask = torch.zeros(128, 128, 2)
    mask[10:60, 10:50, 0] = 1.0
    mask[10:60, 70:120, 1] = 1.0
    if layout == "channels_first":
        mask = mask.permute(2, 0, 1).contiguous()
    display = ImageDisplay(image=image, masks=(mask, ["left", "right"]))
    assert display.masks.shape == (128, 128, 2) and display.masks[20, 20].tolist() == [1.0, 0.0]
    fig = display.prepare()
    assert {"left", "right"} <= {annotation.text for annotation in fig.layout.annotations}
    batch = BatchDisplay(image=torch.stack([image, image]), masks=(torch.stack([mask, mask]), ["left", "right"]))
    assert all(item.masks.shape == (128, 128, 2) for item in batch.items)
