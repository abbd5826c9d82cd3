"""tf checkpoints record the sha256 of the bytes meant to be written (`.weights.h5` serialized in memory,
`_opt.npz` hashed while streamed): a file damaged after save_model returns is refused on load naming it; an
undamaged checkpoint restores weights and optimizer variables bitwise."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Callable, Dict

import keras
import numpy as np
import pytest

from fe_core.build import build
from fe_core.checkpoint import WrittenFile
from fe_core.framework import get_backend
from fe_core.summary import System
from tf_testing import classifier_network, snapshot

BACKEND = get_backend("tf")


def _model_fn() -> keras.Model:
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])


def trained_system(seed: int) -> System:
    keras.utils.set_random_seed(seed)
    model = build(model_fn=_model_fn, optimizer_fn="adam", model_name="dense")
    network = classifier_network(model)
    rng = np.random.default_rng(seed)
    with network(mode="train", epoch=1):
        network.run_step({"x": rng.normal(size=(8, 4)).astype(np.float32), "y": rng.integers(0, 3, 8)})
    system = System(network=network, pipeline=None, traces=[])
    system.global_step = 1
    return system


def state_of(system: System) -> list:
    model = system.network.models[0]
    return snapshot(model.weights + model.optimizer.variables)


def flip_byte(path: str) -> None:
    with open(path, "r+b") as file:
        data = bytearray(file.read())
        data[len(data) // 2] ^= 0x01
        file.seek(0)
        file.write(data)


def zero_page(path: str) -> None:
    with open(path, "r+b") as file:
        file.write(bytes(min(4096, os.path.getsize(path))))


def replace_opt_with_valid(path: str) -> None:
    """Another writer replaces the optimizer file with a valid one (same keys, other values)."""
    with np.load(path, allow_pickle=False) as saved:
        arrays = {key: saved[key] for key in saved.files}
    arrays = {key: value + 1 if value.dtype.kind == "f" else value for key, value in arrays.items()}
    with open(path, "wb") as file:
        np.savez(file, **arrays)


DAMAGE: Dict[str, Callable[[str], None]] = {
    "truncated": lambda path: os.truncate(path, os.path.getsize(path) - 16),
    "flipped byte": flip_byte,
    "zeroed page": zero_page,
    "replaced by a valid file": replace_opt_with_valid,
}
CASES = [("dense.weights.h5", "truncated"), ("dense.weights.h5", "flipped byte"), ("dense.weights.h5", "zeroed page"),
         ("dense_opt.npz", "flipped byte"), ("dense_opt.npz", "replaced by a valid file")]


@pytest.mark.parametrize("file_name, damage", CASES, ids=[f"{f}-{d}" for f, d in CASES])
def test_a_model_file_damaged_after_save_model_is_refused_on_load(file_name, damage, tmp_path, monkeypatch):
    original = type(BACKEND).save_model

    def save_then_damage(self, model, save_dir, save_optimizer):
        files = original(self, model, save_dir, save_optimizer)
        DAMAGE[damage](os.path.join(save_dir, file_name))
        return files

    monkeypatch.setattr(type(BACKEND), "save_model", save_then_damage)
    trained_system(seed=0).save_state(str(tmp_path / "ckpt"))
    monkeypatch.undo()
    fresh = trained_system(seed=1)
    before = state_of(fresh)
    with pytest.raises(ValueError, match=rf"Checkpoint file '[^']*{file_name.replace('.', '[.]')}' is corrupt: "
                                         rf"expected"):
        fresh.load_state(str(tmp_path / "ckpt"))
    for kept, now in zip(before, state_of(fresh)):
        np.testing.assert_array_equal(kept, now)


def test_an_undamaged_checkpoint_restores_weights_and_optimizer_bitwise(tmp_path):
    saved = trained_system(seed=0)
    saved.save_state(str(tmp_path / "ckpt"))
    with open(tmp_path / "ckpt" / "system.json", encoding="utf-8") as file:
        manifest = json.load(file)["files"]
    for name in ("dense.weights.h5", "dense_opt.npz"):
        data = (tmp_path / "ckpt" / name).read_bytes()
        assert manifest[name] == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    restored = trained_system(seed=1)
    assert not np.array_equal(state_of(restored)[0], state_of(saved)[0])
    restored.load_state(str(tmp_path / "ckpt"))
    expected, got = state_of(saved), state_of(restored)
    assert len(expected) == len(got)
    for want, have in zip(expected, got):
        assert want.dtype == have.dtype and want.tobytes() == have.tobytes()


def test_save_model_reports_digests_and_falls_back_for_a_keras_that_takes_paths_only(tmp_path, monkeypatch):
    model = trained_system(seed=0).network.models[0]
    os.makedirs(tmp_path / "memory")
    files = BACKEND.save_model(model, str(tmp_path / "memory"), save_optimizer=True)
    assert files == ["dense.weights.h5", "dense_opt.npz"] and all(isinstance(name, WrittenFile) for name in files)
    for name in files:
        data = (tmp_path / "memory" / name).read_bytes()
        assert (name.size, name.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    keras_save = type(model).save_weights

    def paths_only(self, filepath, *args, **kwargs):
        if not isinstance(filepath, str):
            raise TypeError("path_or_io should be a str")
        return keras_save(self, filepath, *args, **kwargs)

    monkeypatch.setattr(type(model), "save_weights", paths_only)
    os.makedirs(tmp_path / "path")
    weights = BACKEND.save_model(model, str(tmp_path / "path"), save_optimizer=False)[0]
    data = (tmp_path / "path" / weights).read_bytes()
    assert weights.sha256 == hashlib.sha256(data).hexdigest() and os.listdir(tmp_path / "path") == [weights]
    monkeypatch.undo()
    fresh = trained_system(seed=1).network.models[0]
    BACKEND.load_model(fresh, str(tmp_path / "path"), load_optimizer=False)
    for want, have in zip(snapshot(model.weights), snapshot(fresh.weights)):
        np.testing.assert_array_equal(want, have)
