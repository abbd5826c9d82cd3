"""The checkpoint format: what the codec stores, what it refuses, integrity checks and atomic writes."""
from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict, defaultdict
from typing import Any, Dict, List

import numpy as np
import pytest

from fe_core.framework import Backend, StateReducer, register_backend, unregister_backend
from fe_core.checkpoint import (CheckpointDecodeError, CheckpointEncodeError, StateCodec, atomic_directory,
                                backup_path, get_object_state, read_checkpoint, set_object_state, write_checkpoint)
from fe_core.summary import Summary, System, ValWithError

MARKER_NAME = "pwned"


def round_trip(value: Any, codec: StateCodec = None) -> Any:
    codec = codec or StateCodec(reducers=[])
    data, arrays = codec.encode(value)
    text = json.dumps(data, allow_nan=False)  # really JSON, no NaN literals
    return codec.decode(json.loads(text), arrays)


# ---------------------------------------------------------------------------------------------------- codec
def test_plain_values_and_containers_round_trip_exactly():
    value = {
        "int": 3, "big": 2**80, "float": 0.1, "neg_zero": -0.0, "str": "x", "bool": True, "none": None,
        "list": [1, [2, 3]], "tuple": (1, ("a", None)), "set": {1, 2}, "frozen": frozenset({"a"}),
        "complex": 1 + 2j, "bytes": b"\x00\xff", "__fe__": "a user key that looks like a tag",
    }
    assert round_trip(value) == value
    restored = round_trip(value)
    assert type(restored["tuple"]) is tuple and type(restored["tuple"][1]) is tuple
    assert type(restored["set"]) is set and type(restored["frozen"]) is frozenset


def test_non_finite_floats_round_trip():
    restored = round_trip([float("nan"), float("inf"), float("-inf")])
    assert np.isnan(restored[0]) and restored[1:] == [float("inf"), float("-inf")]


def test_non_string_dict_keys_come_back_with_their_types():
    value = {1: "step one", 20: "step twenty", (1, 2): "pair", None: "none", 2.5: "float", False: "bool"}
    restored = round_trip(value)
    assert restored == value and list(restored) == list(value)
    assert all(type(a) is type(b) for a, b in zip(restored, value))


def test_numpy_scalars_keep_their_dtype_and_value():
    values = [np.float32(0.1), np.float16(1.5), np.float64(np.nan), np.int8(-3), np.uint64(2**64 - 1),
              np.bool_(True), np.complex64(1 - 2j), np.longdouble(1) / 3, np.str_("hi"), np.datetime64("2020-01-02")]
    restored = round_trip(values)
    for before, after in zip(values, restored):
        assert type(after) is type(before) and after.dtype == before.dtype
        assert after == before or (np.isnan(before) and np.isnan(after))


def test_arrays_are_stored_beside_the_json_and_round_trip():
    codec = StateCodec(reducers=[])
    value = {"w": np.arange(6, dtype=np.int16).reshape(2, 3), "s": np.array(["a", "bc"]),
             "objects": np.array([1, "two", None], dtype=object)}
    data, arrays = codec.encode(value)
    assert all(type(array) is np.ndarray for array in arrays.values()) and len(arrays) == 2
    restored = codec.decode(data, arrays)
    np.testing.assert_array_equal(restored["w"], value["w"])
    assert restored["w"].dtype == np.int16
    np.testing.assert_array_equal(restored["s"], value["s"])
    assert restored["objects"].dtype == object and restored["objects"].tolist() == [1, "two", None]


def test_summary_val_with_error_and_defaultdict_round_trip():
    summary = Summary("exp")
    summary.history["train"]["loss"][10] = np.float32(0.5)
    summary.history["eval"]["ci"][10] = ValWithError(0.1, 0.2, 0.3)
    counts = defaultdict(int, {"a": 2})
    restored = round_trip({"summary": summary, "counts": counts, "ordered": OrderedDict(b=1)})
    assert restored["summary"].name == "exp"
    assert restored["summary"].history["train"]["loss"] == {10: 0.5}
    assert type(restored["summary"].history["eval"]["ci"][10]) is ValWithError
    assert restored["counts"] == {"a": 2} and type(restored["counts"]) is dict  # defaultdicts come back as dicts
    assert restored["ordered"] == {"b": 1}


def test_numpy_generators_resume_their_streams():
    generator = np.random.default_rng(3)
    legacy = np.random.RandomState(4)
    restored = round_trip({"g": generator, "r": legacy})
    np.testing.assert_array_equal(restored["g"].random(3), generator.random(3))
    np.testing.assert_array_equal(restored["r"].rand(3), legacy.rand(3))


def test_unstorable_objects_are_refused_naming_their_path():

    class Foo:
        pass

    codec = StateCodec(reducers=[])
    with pytest.raises(CheckpointEncodeError, match=r"^traces\[2\]\.history: cannot store object of type .*Foo"):
        codec.encode([1, 2, {"history": Foo()}], path="traces")
    with pytest.raises(CheckpointEncodeError, match=r"scores\[3\]: cannot store object of type .*function"):
        codec.encode({"scores": {3: len}}, path="")
    assert not codec.can_encode([Foo()]) and codec.can_encode([1, np.zeros(2)])


def test_circular_references_are_refused():
    loop: List[Any] = []
    loop.append(loop)
    with pytest.raises(CheckpointEncodeError, match="circular reference"):
        StateCodec(reducers=[]).encode(loop)


class Device:

    def __init__(self, index: int) -> None:
        self.index = index


DEVICE_REDUCER = StateReducer(name="test.Device", matches=lambda obj: isinstance(obj, Device),
                              reduce=lambda device: {"index": device.index}, restore=lambda data: Device(data["index"]))


def test_backend_reducers_store_backend_objects():
    codec = StateCodec(reducers=[DEVICE_REDUCER])
    data, arrays = codec.encode({"device": Device(3)})
    assert data["device"] == {"__fe__": "reduced", "reducer": "test.Device", "data": {"index": 3}}
    restored = codec.decode(data, arrays)
    assert type(restored["device"]) is Device and restored["device"].index == 3


def test_reducers_of_loaded_backends_are_used_by_default():

    class ReducingBackend(Backend):
        name = "reducing_backend"

        def state_reducers(self) -> List[StateReducer]:
            return [DEVICE_REDUCER]

    register_backend("reducing_backend", ReducingBackend())
    try:
        assert round_trip({"d": Device(5)}, StateCodec())["d"].index == 5
    finally:
        unregister_backend("reducing_backend")
    with pytest.raises(CheckpointEncodeError, match="cannot store object of type .*Device"):
        StateCodec().encode(Device(5))


def test_unknown_reducer_name_is_refused_naming_it():
    data, arrays = StateCodec(reducers=[DEVICE_REDUCER]).encode([Device(1)])
    with pytest.raises(CheckpointDecodeError, match=r"unknown state reducer 'test\.Device'"):
        StateCodec(reducers=[]).decode(data, arrays)


def _marker_maker(path: str) -> None:
    with open(path, "w", encoding="utf-8") as file:
        file.write("code from a checkpoint ran")


@pytest.mark.parametrize("payload", [
    {"__fe__": "object", "class": "os.system", "args": ["touch MARKER"]},
    {"__fe__": "test_checkpoint._marker_maker", "args": ["MARKER"]},
    {"__fe__": "reduced", "reducer": "test_checkpoint._marker_maker", "data": "MARKER"},
    {"__fe__": "numpy.scalar", "dtype": "O", "value": "MARKER"},
    {"__fe__": "numpy.Generator", "bit_generator": "test_checkpoint._marker_maker", "state": {}},
    {"__fe__": "pickle", "data": "gASVAAAAAAAAAAA="},
    {"__fe__": ["list", "as", "tag"]},
])
def test_tampered_data_naming_code_is_refused_and_nothing_runs(payload, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / MARKER_NAME
    text = json.dumps({"x": [payload]}).replace("MARKER", str(marker))
    with pytest.raises(CheckpointDecodeError, match=r"^x\[0\]: refusing"):
        StateCodec(reducers=[]).decode(json.loads(text), {}, path="")
    assert not marker.exists()


def test_malformed_tagged_entries_are_refused():
    codec = StateCodec(reducers=[])
    with pytest.raises(CheckpointDecodeError, match="array 'a7' is missing"):
        codec.decode({"__fe__": "ndarray", "key": "a7"}, {})
    with pytest.raises(CheckpointDecodeError, match="'tuple' entry, it has no 'items' field"):
        codec.decode({"__fe__": "tuple"}, {})
    with pytest.raises(CheckpointDecodeError, match="malformed 'float' entry"):
        codec.decode({"__fe__": "float", "value": "__import__('os')"}, {})


# ---------------------------------------------------------------------------------------------------- object state
def test_object_state_defaults_to_storable_attributes():

    class Op:

        def __init__(self) -> None:
            self.system = "system"
            self.fn = print
            self.module = np
            self.model = object()
            self.steps = 3
            self.weights = np.ones(2)

    assert set(get_object_state(Op())) == {"steps", "weights"}


def test_set_object_state_prefers_set_state_and_updates_dicts_in_place():
    calls = []

    class Custom:

        def get_state(self) -> Dict[str, Any]:
            return {"x": 1}

        def set_state(self, state: Dict[str, Any]) -> None:
            calls.append(state)

    set_object_state(Custom(), {"x": 1})
    assert calls == [{"x": 1}]

    class Plain:

        def __init__(self) -> None:
            self.counts = defaultdict(int, {"stale": 1})

    plain = Plain()
    counts = plain.counts
    set_object_state(plain, {"counts": {"a": 2}})
    assert plain.counts is counts and counts == {"a": 2}
    counts["b"] += 1
    assert counts["b"] == 1


# ---------------------------------------------------------------------------------------------------- files
class FakeModel:

    def __init__(self, name: str) -> None:
        self.model_name = name
        self.weights = np.arange(3.0)
        self.optimizer = None


class FileBackend(Backend):
    name = "file_backend"

    def save_model(self, model: FakeModel, save_dir: str, save_optimizer: bool) -> List[str]:
        np.save(os.path.join(save_dir, f"{model.model_name}.npy"), model.weights)
        return [f"{model.model_name}.npy"]

    def load_model(self, model: FakeModel, load_dir: str, load_optimizer: bool) -> None:
        model.weights = np.load(os.path.join(load_dir, f"{model.model_name}.npy"), allow_pickle=False)


class Network:

    def __init__(self, backend: Backend, models: List[Any]) -> None:
        self.backend, self.models, self.ops, self.slicers, self.postprocessing = backend, models, [], [], []


@pytest.fixture
def backend():
    instance = FileBackend()
    register_backend(FileBackend.name, instance)
    yield instance
    unregister_backend(FileBackend.name)


class Trace:

    def __init__(self) -> None:
        self.count = 0


def make_system(backend: Backend, step: int = 1) -> System:
    models = [FakeModel("m1"), FakeModel("m2")]
    for model in models:
        model.weights = model.weights + step
    system = System(network=Network(backend, models), pipeline=None, traces=[Trace()])
    system.global_step = step
    system.traces[0].count = step
    return system


def loaded_step(backend: Backend, directory: str) -> int:
    system = make_system(backend, step=0)
    system.load_state(directory)
    assert system.traces[0].count == system.global_step
    np.testing.assert_array_equal(system.network.models[1].weights, np.arange(3.0) + system.global_step)
    return system.global_step


def siblings(path: str) -> List[str]:
    return sorted(os.listdir(os.path.dirname(path)))


def rewrite_state_json(directory: str, edit) -> None:
    """Tamper with state.json and re-sign the manifest, as an attacker could."""
    state_path = os.path.join(directory, "state.json")
    with open(state_path, encoding="utf-8") as file:
        state = json.load(file)
    edit(state)
    text = json.dumps(state)
    with open(state_path, "w", encoding="utf-8") as file:
        file.write(text)
    system_path = os.path.join(directory, "system.json")
    with open(system_path, encoding="utf-8") as file:
        meta = json.load(file)
    meta["files"]["state.json"] = {"size": len(text.encode()), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    resign_system_json(meta)
    with open(system_path, "w", encoding="utf-8") as file:
        json.dump(meta, file)


def resign_system_json(meta) -> None:
    """Recompute system.json's own digest (canonical JSON of everything else), as an attacker could."""
    covered = {key: value for key, value in meta.items() if key != "system_sha256"}
    meta["system_sha256"] = hashlib.sha256(json.dumps(covered, sort_keys=True, separators=(",", ":")).encode()
                                           ).hexdigest()


def test_tampered_checkpoint_with_a_valid_manifest_still_runs_no_code(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=2).save_state(directory)
    marker = tmp_path / MARKER_NAME
    rewrite_state_json(directory, lambda state: state["traces"][0].update(
        count={"__fe__": "object", "class": "builtins.exec", "args": [f"open({str(marker)!r}, 'w')"]}))
    system = make_system(backend, step=0)
    with pytest.raises(CheckpointDecodeError, match=r"state\.json'?: traces\[0\]\.count: refusing .*'object'"):
        system.load_state(directory)
    assert not marker.exists()
    assert system.global_step == 0 and system.traces[0].count == 0


def test_corrupted_file_is_refused_naming_it(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend).save_state(directory)
    path = os.path.join(directory, "m2.npy")
    with open(path, "r+b") as file:
        file.seek(-1, os.SEEK_END)
        last = file.read(1)
        file.seek(-1, os.SEEK_END)
        file.write(bytes([last[0] ^ 0xFF]))
    with pytest.raises(ValueError, match=r"m2\.npy' is corrupt: expected sha256"):
        loaded_step(backend, directory)


def test_truncated_file_is_refused_naming_it(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend).save_state(directory)
    path = os.path.join(directory, "arrays.npz")
    size = os.path.getsize(path)
    os.truncate(path, size - 10)
    with pytest.raises(ValueError, match=rf"arrays\.npz' is corrupt: expected {size} bytes, found {size - 10}"):
        loaded_step(backend, directory)


def test_missing_file_is_refused_naming_it(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend).save_state(directory)
    os.remove(os.path.join(directory, "m1.npy"))
    with pytest.raises(FileNotFoundError, match=r"m1\.npy' is missing"):
        loaded_step(backend, directory)
    os.remove(os.path.join(directory, "system.json"))
    with pytest.raises(FileNotFoundError, match=r"system\.json' is missing"):
        loaded_step(backend, directory)
    with pytest.raises(FileNotFoundError, match="No checkpoint directory"):
        loaded_step(backend, str(tmp_path / "nowhere"))


@pytest.mark.parametrize("field, value, message", [
    ("format", "something-else", "expected format 'fe-checkpoint', found 'something-else'"),
    ("version", 99, "format version 99; this fe-core reads versions"),
])
def test_wrong_format_or_version_is_refused(backend, tmp_path, field, value, message):
    directory = str(tmp_path / "ckpt")
    make_system(backend).save_state(directory)
    system_path = os.path.join(directory, "system.json")
    with open(system_path, encoding="utf-8") as file:
        meta = json.load(file)
    meta[field] = value
    with open(system_path, "w", encoding="utf-8") as file:
        json.dump(meta, file)
    with pytest.raises(ValueError, match=message):
        loaded_step(backend, directory)


def test_unlisted_extra_files_are_ignored(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=4).save_state(directory)
    with open(os.path.join(directory, "notes.txt"), "w", encoding="utf-8") as file:
        file.write("user notes")
    assert loaded_step(backend, directory) == 4


def test_saving_again_replaces_the_checkpoint_and_leaves_no_temporaries(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=1).save_state(directory)
    make_system(backend, step=2).save_state(directory)
    assert loaded_step(backend, directory) == 2
    assert siblings(directory) == ["ckpt"]


def test_backend_failing_half_way_keeps_the_previous_checkpoint(backend, tmp_path, monkeypatch):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=1).save_state(directory)
    original = FileBackend.save_model
    calls = []

    def failing_save(self, model, save_dir, save_optimizer):
        calls.append(model.model_name)
        if len(calls) == 2:  # the first model's file is already written
            raise OSError("disk full")
        return original(self, model, save_dir, save_optimizer)

    monkeypatch.setattr(FileBackend, "save_model", failing_save)
    with pytest.raises(OSError, match="disk full"):
        make_system(backend, step=2).save_state(directory)
    assert calls == ["m1", "m2"]
    assert siblings(directory) == ["ckpt"]  # no temporary directory left behind
    assert loaded_step(backend, directory) == 1


def test_encoding_failure_writes_nothing(backend, tmp_path, monkeypatch):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=1).save_state(directory)
    system = make_system(backend, step=2)
    system.traces[0].get_state = lambda: {"count": 2, "handle": object()}
    with pytest.raises(CheckpointEncodeError, match=r"traces\[0\]\.handle"):
        system.save_state(directory)
    assert siblings(directory) == ["ckpt"] and loaded_step(backend, directory) == 1


def test_failure_while_writing_arrays_keeps_the_previous_checkpoint(backend, tmp_path, monkeypatch):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=1).save_state(directory)

    def failing_savez(file, **arrays):
        file.write(b"PK partial")
        raise RuntimeError("interrupted")

    monkeypatch.setattr("fe_core.checkpoint.checkpoint_dir.np.savez", failing_savez)
    with pytest.raises(RuntimeError, match="interrupted"):
        make_system(backend, step=2).save_state(directory)
    monkeypatch.undo()
    assert siblings(directory) == ["ckpt"] and loaded_step(backend, directory) == 1


def test_crash_between_the_two_renames_loads_the_backup(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=3).save_state(directory)
    os.rename(directory, backup_path(directory))  # the old checkpoint was moved aside, the new one never arrived
    with pytest.warns(RuntimeWarning, match="reading the backup"):
        assert loaded_step(backend, directory) == 3
    make_system(backend, step=4).save_state(directory)  # the next save completes the swap and drops the backup
    assert siblings(directory) == ["ckpt"] and loaded_step(backend, directory) == 4


def test_crash_after_the_swap_prefers_the_new_checkpoint(backend, tmp_path):
    directory = str(tmp_path / "ckpt")
    make_system(backend, step=1).save_state(directory)
    os.rename(directory, backup_path(directory))
    make_system(backend, step=2).save_state(directory)
    make_system(backend, step=1).save_state(backup_path(directory))  # a stale backup that was never deleted
    assert loaded_step(backend, directory) == 2
    make_system(backend, step=5).save_state(directory)
    assert loaded_step(backend, directory) == 5 and not os.path.exists(backup_path(directory))


def test_stale_temporaries_from_a_crashed_save_are_cleaned_up(tmp_path):
    stale = tmp_path / ".out.tmp-deadbeef"
    stale.mkdir()
    (stale / "half.bin").write_bytes(b"x")
    with atomic_directory(str(tmp_path / "out")) as tmp:
        open(os.path.join(tmp, "full.bin"), "wb").close()
    assert sorted(os.listdir(tmp_path)) == ["out"] and os.listdir(tmp_path / "out") == ["full.bin"]


def test_a_non_checkpoint_directory_is_never_replaced(tmp_path):
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    with pytest.raises(ValueError, match="not an fe checkpoint"):
        System(None, None, []).save_state(str(precious))
    assert (precious / "thesis.tex").read_text() == "years of work"


def test_write_and_read_checkpoint_directly(tmp_path):
    directory = str(tmp_path / "plain")
    write_checkpoint(directory, system={"step": np.int64(3)}, state={"x": {1: np.arange(2)}},
                     codec=StateCodec(reducers=[]))
    checkpoint = read_checkpoint(directory, codec=StateCodec(reducers=[]))
    assert checkpoint.system == {"step": 3} and checkpoint.models == []
    np.testing.assert_array_equal(checkpoint.state["x"][1], [0, 1])

