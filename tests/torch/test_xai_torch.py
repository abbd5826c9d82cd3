"""Explanations of torch models: SaliencyNet masks, the Saliency trace's figure, GradCAM from fe.backend gradients."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from fe_core.backend import feed_forward, get_gradient, watch
from fe_core.data import Data
from fe_core.summary.system import System
from fe_core.trace.xai import GradCAM, Saliency
from fe_core.xai import SaliencyNet


class TopLeftModel(torch.nn.Module):
    """Class 0's score is the sum of the top-left 4x4 pixels of channel 0; class 1's a constant."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3 * 16 * 16, 2)
        with torch.no_grad():
            weight = torch.zeros(2, 3, 16, 16)
            weight[0, 0, :4, :4] = 1.0
            self.linear.weight.copy_(weight.reshape(2, -1))
            self.linear.bias.copy_(torch.tensor([0.0, 1.0]))

    def forward(self, x):
        return self.linear(x.flatten(1))


def _system(trace, mode="eval"):
    system = System(network=type("Net", (), {"backend": type("B", (), {"name": "torch"})()})(), pipeline=None,
                    traces=[trace], mode=mode, ds_id="")
    system.epoch_idx = 1
    trace.system = system
    return system


def _images(n=2):
    x = np.zeros((n, 3, 16, 16), dtype=np.float32)
    x[:, 0, :4, :4] = 1.0  # score of class 0 = 16 > 1: predicted class 0
    return x


def test_saliency_masks_light_up_the_pixels_the_model_reads():
    net = SaliencyNet(TopLeftModel(), model_inputs="x", model_outputs="y_pred")
    masks = net.get_masks({"x": _images()})
    assert all(isinstance(value, torch.Tensor) for value in masks.values())  # torch tensors, as FastEstimator
    assert masks["y_pred"].tolist() == [0, 0]
    mask = masks["saliency"]
    assert mask.shape == (2, 1, 16, 16) and mask.dtype == torch.float32  # the input's layout, one channel
    assert net.get_masks({"x": torch.from_numpy(_images())})["saliency"].tolist() == mask.tolist()  # tensors in
    mask = mask[:, 0]
    assert (mask[:, :4, :4] == 1.0).all() and (mask[:, 4:, :] == 0.0).all()
    integrated = net.get_integrated_masks({"x": _images()}, nsamples=4)["saliency"][:, 0]
    assert (integrated[:, :4, :4] > 0.9).all() and (integrated[:, 8:, 8:] == 0).all()
    np.random.seed(0)
    smooth = net.get_smoothed_masks({"x": _images()}, nsamples=3)["saliency"][:, 0]
    assert isinstance(integrated, torch.Tensor) and isinstance(smooth, torch.Tensor)
    assert (smooth[:, :4, :4] > 0.9).all() and (smooth[:, 8:, 8:] < 0.1).all()
    with pytest.raises(ValueError, match="one output key per model input"):
        SaliencyNet(TopLeftModel(), model_inputs="x", model_outputs="y", outputs=["a", "b"])


def test_saliency_net_leaves_the_model_in_training_mode():
    model = TopLeftModel().train()
    SaliencyNet(model, "x", "y").get_masks({"x": _images(1)})
    assert model.training


def test_saliency_trace_writes_a_grid_of_masks_for_collected_samples():
    trace = Saliency(TopLeftModel(), model_inputs="x", model_outputs="y_pred", class_key="y", samples=3,
                     smoothing=2, integrating=(3, 0), label_mapping={"corner": 0, "flat": 1})
    _system(trace)
    trace.on_epoch_begin(Data())
    for _ in range(2):
        trace.on_batch_end(Data({"x": _images(2), "y": np.array([0, 1])}))
    end = Data()
    trace.on_epoch_end(end)
    grid = end["saliency"]
    assert [column.title for column in grid.columns] == ["y", "y_pred", "x", "saliency (x)", "smoothgrad (x)",
                                                         "integrated (x)"]
    assert [item.text for item in grid.columns[0].items] == ["corner", "flat", "corner"]
    assert trace.last_masks["saliency_0"].shape == (3, 16, 16)
    assert (trace.last_masks["integrated_0"][:, :4, :4] > 0.9).all()


class TinyCNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        features = torch.relu(self.conv(x))
        return self.head(features.mean(dim=(2, 3))), features


def test_grad_cam_from_fe_backend_gradients_of_a_torch_cnn():
    torch.manual_seed(0)
    model = TinyCNN()
    images = torch.zeros((2, 1, 8, 8))
    images[:, :, :3, :3] = 1.0  # only the top-left corner has signal
    logits, features = feed_forward(model, images, training=False)
    features = watch(features)
    score = model.head(features.mean(dim=(2, 3)))[:, 0].sum()
    grads = get_gradient(score, features)  # d score / d activations: uniform per channel for a mean pool
    grads = (grads * (features > 0)).detach().numpy()  # gradients reach only the active (corner) positions
    trace = GradCAM(images="x", grads="g", n_samples=2)
    _system(trace)
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data({"x": images.numpy(), "g": grads}))
    trace.on_epoch_end(Data())
    overlay = trace.last_overlays[0]
    assert overlay.shape == (2, 8, 8, 3)
    assert logits.shape == (2, 2)
    corner, far = overlay[:, :2, :2], overlay[:, 6:, 6:]
    assert (corner[..., 0] - corner[..., 2]).mean() > (far[..., 0] - far[..., 2]).mean()
