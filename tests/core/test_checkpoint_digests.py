"""Checkpoint digests come from the bytes the writers meant to write: a file damaged after its write (before the
manifest is even written) is refused on load, naming the file; an undamaged checkpoint loads bitwise."""
from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import pickle
import zipfile
from typing import Any, Callable, Dict, List

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.checkpoint import HashingWriter, WrittenFile, read_checkpoint, write_hashed_file
from fe_core.framework import Backend
from fe_core.summary import System


class Network:
    """What System's checkpoints ask of a network."""

    def __init__(self, backend: Backend, models: List[Any]) -> None:
        self.backend, self.models, self.ops, self.slicers, self.postprocessing = backend, models, [], [], []


def make_system(backend: Backend, step: int) -> System:
    models = [nb.LinearModel(3, 2, seed=1), nb.LinearModel(3, 2, seed=2)]
    for name, model in zip(("m1", "m2"), models):
        model.model_name, model.optimizer = name, None
        model.W = model.W + step
    system = System(network=Network(backend, models), pipeline=None, traces=[])
    system.global_step = step
    return system


def flip_byte(path: str) -> None:
    with open(path, "r+b") as file:
        data = bytearray(file.read())
        data[len(data) // 2] ^= 0x01
        file.seek(0)
        file.write(data)


def zero_page(path: str) -> None:
    size = os.path.getsize(path)
    with open(path, "r+b") as file:
        file.write(bytes(min(4096, size)))


def replace_with_valid_other(path: str) -> None:
    """Another writer replaces the file with a valid one of the same shape (it would load without complaint)."""
    other = path + ".other"
    with open(other, "wb") as file:
        np.savez(file, W=np.full((3, 2), 7.0), b=np.zeros(2))
    os.replace(other, path)


def rewrite_in_place(path: str) -> None:
    """A concurrent writer rewrites the same inode with different, valid content."""
    buffer = io.BytesIO()
    np.savez(buffer, W=np.full((3, 2), 9.0), b=np.ones(2))
    with open(path, "r+b") as file:
        file.truncate(0)
        file.write(buffer.getvalue())


def swap_with_sibling(path: str) -> None:
    sibling = os.path.join(os.path.dirname(path), "m1.npz" if path.endswith("m2.npz") else "m2.npz")
    os.replace(path, path + ".swap")
    os.replace(sibling, path)
    os.replace(path + ".swap", sibling)


DAMAGE: Dict[str, Callable[[str], None]] = {
    "truncated": lambda path: os.truncate(path, os.path.getsize(path) - 10),
    "emptied": lambda path: os.truncate(path, 0),
    "flipped byte": flip_byte,
    "zeroed page": zero_page,
    "appended bytes": lambda path: open(path, "ab").write(b"\0" * 7),
    "replaced by a valid file": replace_with_valid_other,
    "rewritten in place": rewrite_in_place,
    "swapped with another model's file": swap_with_sibling,
}


@pytest.fixture
def damage_after_save_model(monkeypatch):
    """Damage a file in the checkpoint being written right after the backend's save_model returns."""

    def install(file_name: str, damage: Callable[[str], None]) -> None:
        original = nb.NumpyBackend.save_model

        def save_then_damage(self, model, save_dir, save_optimizer):
            files = original(self, model, save_dir, save_optimizer)
            if model.model_name == "m2":  # both models' files are written by now
                damage(os.path.join(save_dir, file_name))
            return files

        monkeypatch.setattr(nb.NumpyBackend, "save_model", save_then_damage)

    return install


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_model_file_damaged_after_its_write_is_refused_on_load_naming_it(damage, damage_after_save_model,
                                                                        tmp_path):
    directory = str(tmp_path / "ckpt")
    damage_after_save_model("m2.npz", DAMAGE[damage])
    make_system(nb.NumpyBackend(), step=3).save_state(directory)
    fresh = make_system(nb.NumpyBackend(), step=0)
    before = [model.W.copy() for model in fresh.network.models]
    damaged = "m[12]" if damage.startswith("swapped") else "m2"  # a swap damages both files
    with pytest.raises(ValueError, match=rf"Checkpoint file '[^']*{damaged}\.npz' is corrupt: expected"):
        fresh.load_state(directory)
    assert fresh.global_step == 0
    assert all(np.array_equal(model.W, w) for model, w in zip(fresh.network.models, before))


def test_flipped_bytes_are_reported_by_their_sha256(damage_after_save_model, tmp_path):
    directory = str(tmp_path / "ckpt")
    damage_after_save_model("m1.npz", flip_byte)
    make_system(nb.NumpyBackend(), step=1).save_state(directory)
    with open(os.path.join(directory, "system.json"), encoding="utf-8") as file:
        expected = json.load(file)["files"]["m1.npz"]["sha256"]
    with pytest.raises(ValueError, match=rf"m1\.npz' is corrupt: expected sha256 {expected}, found [0-9a-f]{{64}}"):
        read_checkpoint(directory)


@pytest.mark.parametrize("file_name", ["state.json", "arrays.npz"])
def test_state_files_damaged_before_the_manifest_are_refused(file_name, damage_after_save_model, tmp_path):
    directory = str(tmp_path / "ckpt")
    damage_after_save_model(file_name, flip_byte)
    make_system(nb.NumpyBackend(), step=1).save_state(directory)
    with pytest.raises(ValueError, match=rf"'[^']*{file_name.replace('.', '[.]')}' is corrupt: expected sha256"):
        make_system(nb.NumpyBackend(), step=0).load_state(directory)


def test_an_undamaged_checkpoint_loads_bitwise_without_reading_files_back_at_save(tmp_path, monkeypatch):
    directory = str(tmp_path / "ckpt")
    saved = make_system(nb.NumpyBackend(), step=5)
    saved.network.models[0].W = saved.network.models[0].W / 3  # values without a short binary form
    read_back = []
    monkeypatch.setattr("fe_core.checkpoint.checkpoint_dir.file_sha256", lambda path: read_back.append(path))
    saved.save_state(directory)
    assert read_back == []  # every digest came from a writer
    monkeypatch.undo()
    loaded = make_system(nb.NumpyBackend(), step=0)
    loaded.load_state(directory)
    assert loaded.global_step == 5
    for model, original in zip(loaded.network.models, saved.network.models):
        assert model.W.dtype == original.W.dtype and model.W.tobytes() == original.W.tobytes()
        assert model.b.tobytes() == original.b.tobytes()
    with open(os.path.join(directory, "system.json"), encoding="utf-8") as file:
        manifest = json.load(file)["files"]
    for name, entry in manifest.items():  # the writers' digests are those of the files as written
        data = (tmp_path / "ckpt" / name).read_bytes()
        assert entry == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


class PlainNameBackend(nb.NumpyBackend):
    """A third-party backend written before digests existed: it returns plain names (one of them absolute)."""

    def save_model(self, model, save_dir, save_optimizer):
        path = os.path.join(save_dir, f"{model.model_name}.npz")
        with open(path, "wb") as file:
            np.savez(file, W=model.W, b=model.b)
        return [path if model.model_name == "m1" else os.path.basename(path)]


def test_backends_returning_plain_names_still_work_and_are_hashed_by_reading_back(tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(PlainNameBackend(), step=2).save_state(directory)
    checkpoint = read_checkpoint(directory)
    assert [model.files for model in checkpoint.models] == [["m1.npz"], ["m2.npz"]]
    loaded = make_system(PlainNameBackend(), step=0)
    loaded.load_state(directory)
    assert loaded.global_step == 2
    np.testing.assert_array_equal(loaded.network.models[1].W, make_system(PlainNameBackend(), 2).network.models[1].W)
    flip_byte(os.path.join(directory, "m1.npz"))  # damage after the manifest is still detected
    with pytest.raises(ValueError, match=r"m1\.npz' is corrupt: expected sha256"):
        make_system(PlainNameBackend(), step=0).load_state(directory)


class AbsoluteWrittenFileBackend(nb.NumpyBackend):
    """Reports absolute paths as WrittenFiles: the checkpoint keeps the digest under the relative name."""

    def save_model(self, model, save_dir, save_optimizer):
        path = os.path.join(save_dir, f"{model.model_name}.npz")
        return [write_hashed_file(path, lambda file: np.savez(file, W=model.W, b=model.b))]


def test_absolute_written_files_keep_their_digest_under_the_relative_name(tmp_path, monkeypatch):
    directory = str(tmp_path / "ckpt")
    backend = AbsoluteWrittenFileBackend()
    original = AbsoluteWrittenFileBackend.save_model

    def save_then_truncate(self, model, save_dir, save_optimizer):
        files = original(self, model, save_dir, save_optimizer)
        os.truncate(files[0], 5)
        return files

    monkeypatch.setattr(AbsoluteWrittenFileBackend, "save_model", save_then_truncate)
    make_system(backend, step=1).save_state(directory)
    with open(os.path.join(directory, "system.json"), encoding="utf-8") as file:
        meta = json.load(file)
    assert [model["files"] for model in meta["models"]] == [["m1.npz"], ["m2.npz"]]
    assert meta["files"]["m1.npz"]["size"] > 5  # what was meant to be written, not what was left
    with pytest.raises(ValueError, match=r"m1\.npz' is corrupt: expected \d+ bytes, found 5"):
        read_checkpoint(directory)


# ------------------------------------------------------------------------------------------- the writing pieces
def test_hashing_writer_streams_zip_archives_and_hashes_exactly_the_file(tmp_path):
    path = str(tmp_path / "a.npz")
    arrays = {"x": np.arange(1000, dtype=np.float32), "y": np.array(["a", "bc"])}
    written = write_hashed_file(path, lambda file: np.savez(file, **arrays))
    data = open(path, "rb").read()
    assert written == path and written.size == len(data) and written.sha256 == hashlib.sha256(data).hexdigest()
    assert zipfile.ZipFile(path).testzip() is None
    with np.load(path, allow_pickle=False) as loaded:
        assert loaded["x"].tobytes() == arrays["x"].tobytes() and loaded["y"].tolist() == ["a", "bc"]
    writer = HashingWriter(io.BytesIO())
    assert not writer.seekable() and writer.write(memoryview(np.arange(3, dtype=np.int64))) == 24
    with pytest.raises(io.UnsupportedOperation):
        writer.seek(0)


def test_a_failing_writer_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = str(tmp_path / "w.bin")
    write_hashed_file(path, lambda file: file.write(b"old"))

    def fail(file: HashingWriter) -> None:
        file.write(b"partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_hashed_file(path, fail)
    assert os.listdir(tmp_path) == ["w.bin"] and open(path, "rb").read() == b"old"


def test_written_file_is_a_name_with_a_checked_digest():
    digest = hashlib.sha256(b"abc").hexdigest()
    written = WrittenFile("m.pt", 3, digest)
    assert written == "m.pt" and isinstance(written, str) and os.path.join("d", written) == os.path.join("d", "m.pt")
    for clone in (copy.copy(written), pickle.loads(pickle.dumps(written)), written.renamed("x/m.pt")):
        assert (clone.size, clone.sha256) == (3, digest)
    with pytest.raises(ValueError, match=r"WrittenFile 'm\.pt': sha256 should be 64 lowercase hex digits"):
        WrittenFile("m.pt", 3, "abc")
    with pytest.raises(ValueError, match=r"WrittenFile 'm\.pt': size should be a non-negative integer"):
        WrittenFile("m.pt", -1, digest)
