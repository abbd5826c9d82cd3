"""fe.util on torch values: to_number, get_type/get_shape/get_batch_size, move/detach, devices, model parameters,
and ImageDisplay/BatchDisplay with channel-first tensors."""
from __future__ import annotations

import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.util import (count_params, detach_tensors, get_batch_size, get_model_parameters, get_num_devices,
                          get_num_gpus, get_optimizer_name, get_shape, get_type, move_tensors_to_device, to_number)
from fe_torch.util import get_device


def test_to_number_detaches_moves_and_widens_bfloat16():
    leaf = torch.tensor([1.0, 2.0], requires_grad=True)
    value = to_number(leaf * 2)
    assert isinstance(value, np.ndarray) and value.tolist() == [2.0, 4.0] and value.dtype == np.float32
    assert to_number(torch.tensor([1, 2, 3])).tolist() == [1, 2, 3]
    half = to_number(torch.tensor([1.5], dtype=torch.bfloat16))
    assert half.dtype == np.float32 and half.tolist() == [1.5]
    assert to_number(torch.tensor(7)).shape == ()


def test_type_shape_and_batch_size_of_tensors():
    assert get_type(torch.ones((10, 10)).type(torch.float)) == "torch.float32"
    assert get_type([torch.ones(2, dtype=torch.int64)]) == "List[torch.int64]"
    assert get_shape(torch.ones((3, 2, 2))) == [3, 2, 2]
    assert get_shape([torch.ones((4, 5)), torch.ones((4, 6))]) == [None, 4, None]
    assert get_batch_size({"x": torch.ones((6, 3)), "y": np.ones(6)}) == 6


def test_move_tensors_to_device_walks_collections():
    Pair = namedtuple("Pair", "a b")
    data = {"x": torch.ones(2), "nested": [torch.zeros(1), ("keep", Pair(torch.ones(1), 3))], "n": 5}
    moved = move_tensors_to_device(data, "meta")  # a real move that needs no GPU
    assert moved["x"].device.type == "meta" and moved["nested"][0].device.type == "meta"
    assert isinstance(moved["nested"][1][1], Pair) and moved["nested"][1][1].a.device.type == "meta"
    assert moved["nested"][1][0] == "keep" and moved["n"] == 5 and data["x"].device.type == "cpu"
    same = move_tensors_to_device(data, torch.device("cpu"))
    assert same["x"] is data["x"]  # already there: not copied


def test_detach_tensors():
    leaf = torch.ones(2, requires_grad=True)
    out = detach_tensors({"y": [leaf * 3], "z": "text"})
    assert not out["y"][0].requires_grad and out["y"][0].tolist() == [3.0, 3.0] and out["z"] == "text"
    assert (leaf * 3).requires_grad


def test_devices_with_torch_loaded():
    assert get_device() == (torch.device("cuda:0") if torch.cuda.is_available() else get_device())
    assert get_device().type in ("cuda", "mps", "cpu")
    assert get_num_gpus() == torch.cuda.device_count()
    assert get_num_devices() == max(1, torch.cuda.device_count())


def test_model_parameters_and_optimizer_name():
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1)),
                  optimizer_fn="adam")
    model[1].bias.requires_grad_(False)
    assert get_model_parameters(model) == {"total_params": 11, "trainable_params": 10, "non_trainable_params": 1}
    assert count_params(model.parameters()) == 11
    assert get_optimizer_name(model) == "Adam"
    assert get_optimizer_name(torch.nn.Linear(1, 1)) == "None"
    with pytest.raises(ValueError, match="torch.nn.Module or a tf.keras.Model"):
        get_model_parameters(object())


def test_displays_read_torch_images_channel_first():
    fe_display = pytest.importorskip("fe_core.util.display")
    image = torch.zeros((3, 4, 6))
    image[0] = 1.0  # red
    display = fe_display.ImageDisplay(image=image, masks=torch.ones((2, 4, 6)), keypoints=torch.tensor([1.0, 2.0]))
    assert display.image.shape == (4, 6, 3) and display.image[..., 0].min() == 1.0
    assert display.masks.shape == (4, 6, 2) and display.keypoints.tolist() == [[1.0, 2.0]]
    batch = fe_display.BatchDisplay(image=torch.zeros((2, 1, 5, 7)), text=torch.tensor([3, 4]))
    assert [item.image.shape for item in batch.items] == [(5, 7), (5, 7)]
    assert [item.text for item in batch.items] == ["3", "4"]
    fig = batch.prepare()
    assert len(fig.data) == 2 and [note.text for note in fig.layout.annotations] == ["3", "4"]


def test_cpu_count_limit_caps_torch_threads():
    code = ("import torch; from fe_core.util import cpu_count; n = cpu_count(limit=1); "
            "print(n, torch.get_num_threads())")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["1", "1"]
