"""torch checkpoints record the sha256 of the bytes torch serialized: a `.pt` file damaged after its write (before
the manifest is written) is refused on load naming it; an undamaged checkpoint restores weights and optimizer state
bitwise."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Callable, Dict

import numpy as np
import pytest
import torch

from fe_core.build import build
from fe_core.checkpoint import WrittenFile
from fe_core.framework import get_backend
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.summary import System
from torch_helpers import assert_same_tensors, optimizer_state_tensors, parameters_of

BACKEND = get_backend("torch")


def trained_system(seed: int) -> System:
    torch.manual_seed(seed)
    model = build(model_fn=lambda: torch.nn.Linear(4, 2), optimizer_fn="adam", model_name="lin")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    rng = np.random.default_rng(seed)
    with network(mode="train", epoch=1):
        network.run_step({"x": rng.normal(size=(8, 4)).astype(np.float32),
                          "y": rng.normal(size=(8, 2)).astype(np.float32)})
    system = System(network=network, pipeline=None, traces=[])
    system.global_step = 1
    return system


def flip_byte(path: str) -> None:
    with open(path, "r+b") as file:
        data = bytearray(file.read())
        data[len(data) // 2] ^= 0x01
        file.seek(0)
        file.write(data)


def zero_page(path: str) -> None:
    with open(path, "r+b") as file:
        file.write(bytes(min(4096, os.path.getsize(path))))


def replace_with_valid(path: str) -> None:
    """Another writer replaces the file with a valid torch file (it would load without complaint)."""
    payload = torch.load(path, weights_only=True)
    if "weight" in payload:
        payload["weight"] = payload["weight"] + 1
    else:
        payload["current"] = -1
    torch.save(payload, path)


DAMAGE: Dict[str, Callable[[str], None]] = {
    "truncated": lambda path: os.truncate(path, os.path.getsize(path) // 2),
    "flipped byte": flip_byte,
    "zeroed page": zero_page,
    "replaced by a valid file": replace_with_valid,
}
CASES = [("lin.pt", damage) for damage in DAMAGE] + [("lin_opt.pt", "flipped byte"),
                                                     ("lin_opt.pt", "replaced by a valid file")]


@pytest.mark.parametrize("file_name, damage", CASES, ids=[f"{f}-{d}" for f, d in CASES])
def test_a_pt_file_damaged_after_save_model_is_refused_on_load(file_name, damage, tmp_path, monkeypatch):
    original = type(BACKEND).save_model

    def save_then_damage(self, model, save_dir, save_optimizer):
        files = original(self, model, save_dir, save_optimizer)
        DAMAGE[damage](os.path.join(save_dir, file_name))
        return files

    monkeypatch.setattr(type(BACKEND), "save_model", save_then_damage)
    trained_system(seed=0).save_state(str(tmp_path / "ckpt"))
    monkeypatch.undo()
    fresh = trained_system(seed=1)
    before = parameters_of(fresh.network.models[0])
    with pytest.raises(ValueError, match=rf"Checkpoint file '[^']*{file_name.replace('.', '[.]')}' is corrupt: "
                                         rf"expected"):
        fresh.load_state(str(tmp_path / "ckpt"))
    assert_same_tensors(parameters_of(fresh.network.models[0]), before)


def test_an_undamaged_checkpoint_restores_weights_and_optimizer_bitwise(tmp_path):
    saved = trained_system(seed=0)
    saved.save_state(str(tmp_path / "ckpt"))
    with open(tmp_path / "ckpt" / "system.json", encoding="utf-8") as file:
        manifest = json.load(file)["files"]
    for name in ("lin.pt", "lin_opt.pt"):
        data = (tmp_path / "ckpt" / name).read_bytes()
        assert manifest[name] == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    restored = trained_system(seed=1)
    model, clone = saved.network.models[0], restored.network.models[0]
    assert not torch.equal(parameters_of(model)[0], parameters_of(clone)[0])
    restored.load_state(str(tmp_path / "ckpt"))
    assert_same_tensors(parameters_of(clone), parameters_of(model))
    assert_same_tensors(optimizer_state_tensors(clone.current_optimizer),
                        optimizer_state_tensors(model.current_optimizer))


def test_save_model_reports_the_digest_of_what_torch_serialized(tmp_path):
    model = trained_system(seed=0).network.models[0]
    files = BACKEND.save_model(model, str(tmp_path), save_optimizer=True)
    assert files == ["lin.pt", "lin_opt.pt"] and all(isinstance(name, WrittenFile) for name in files)
    for name in files:
        data = (tmp_path / name).read_bytes()
        assert (name.size, name.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert sorted(os.listdir(tmp_path)) == ["lin.pt", "lin_opt.pt"]  # no temporaries left
