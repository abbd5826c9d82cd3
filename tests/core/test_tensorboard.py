"""The TensorBoard trace: real event files (TFRecord framing, CRC-32C, protobuf) that read back to the logged values.

The reader below is written independently of fe_core's writer (bitwise CRC-32C, a generic protobuf wire-format
decoder), so the two check each other.
"""
from __future__ import annotations

import os
import re
import struct
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.data import Data
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import CrossEntropy, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.summary.system import System
from fe_core.trace.io import TensorBoard
from fe_core.trace.io._event_file import EventFileWriter, crc32c, encode_scalar_event
from fe_core.trace.metric import Accuracy, ConfusionMatrix


# ---------------------------------------------------------------- an independent event-file reader
def bitwise_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(crc: int) -> int:
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(path: str) -> List[bytes]:
    """Split a TFRecord file into its records, checking both CRCs of each."""
    with open(path, "rb") as file:
        blob = file.read()
    records, offset = [], 0
    while offset < len(blob):
        header = blob[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", blob[offset + 8:offset + 12])
        assert header_crc == masked(bitwise_crc32c(header)), f"bad length CRC at byte {offset} of {path}"
        data = blob[offset + 12:offset + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[offset + 12 + length:offset + 16 + length])
        assert data_crc == masked(bitwise_crc32c(data)), f"bad data CRC at byte {offset} of {path}"
        records.append(data)
        offset += 16 + length
    assert offset == len(blob)
    return records


def read_varint(buf: bytes, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def decode_fields(buf: bytes) -> Dict[int, List[Any]]:
    """Protobuf wire format -> {field number: [raw values]} (varints as ints, fixed as bytes, strings as bytes)."""
    fields: Dict[int, List[Any]] = {}
    pos = 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = read_varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = read_varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        fields.setdefault(field, []).append((wire, value))
    return fields


def decode_event(buf: bytes) -> Dict[str, Any]:
    fields = decode_fields(buf)
    event: Dict[str, Any] = {"step": 0, "scalars": {}}
    for field, values in fields.items():
        for wire, value in values:
            if field == 1:
                assert wire == 1
                event["wall_time"] = struct.unpack("<d", value)[0]
            elif field == 2:
                assert wire == 0
                event["step"] = value - (1 << 64) if value >= 1 << 63 else value
            elif field == 3:
                assert wire == 2
                event["file_version"] = value.decode()
            elif field == 5:
                assert wire == 2
                for _, raw_value in decode_fields(value).get(1, []):  # Summary.value
                    parts = decode_fields(raw_value)
                    tag = parts[1][0][1].decode()
                    wire_type, simple = parts[2][0]
                    assert wire_type == 5
                    event["scalars"][tag] = struct.unpack("<f", simple)[0]
            else:
                raise AssertionError(f"unexpected Event field {field}")
    return event


def read_events(path: str) -> List[Dict[str, Any]]:
    return [decode_event(record) for record in read_records(path)]


def scalars_by_tag(directory: str) -> Dict[str, Dict[int, float]]:
    """{tag: {step: value}} over every event file in a directory."""
    out: Dict[str, Dict[int, float]] = {}
    for name in sorted(os.listdir(directory)):
        events = read_events(os.path.join(directory, name))
        assert events[0]["file_version"] == "brain.Event:2" and not events[0]["scalars"]
        for event in events[1:]:
            for tag, value in event["scalars"].items():
                out.setdefault(tag, {})[event["step"]] = value
    return out


# ---------------------------------------------------------------- the writer
def test_crc32c_matches_the_standard_check_value_and_a_bitwise_implementation():
    assert crc32c(b"123456789") == 0xE3069283
    for data in (b"", b"a", bytes(range(256)), b"brain.Event:2" * 7):
        assert crc32c(data) == bitwise_crc32c(data)


def test_event_file_writer_writes_a_version_record_then_scalar_events(tmp_path):
    with EventFileWriter(str(tmp_path / "run")) as writer:
        writer.add_scalars({"loss": 0.25, "acc|ds1": 0.75}, step=7, wall_time=123.5)
        writer.add_scalar("big_step", -1.5, step=2**40)
        path = writer.path
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\..+", os.path.basename(path))
    events = read_events(path)
    assert events[0]["file_version"] == "brain.Event:2"
    assert events[1] == {"wall_time": 123.5, "step": 7, "scalars": {"loss": 0.25, "acc|ds1": 0.75}}
    assert events[2]["step"] == 2**40 and events[2]["scalars"] == {"big_step": -1.5}


def test_scalar_events_store_float32_and_any_int64_step():
    event = decode_event(encode_scalar_event(1.0, -3, [("x", 0.1)]))
    assert event["step"] == -3 and event["scalars"]["x"] == pytest.approx(np.float32(0.1))


def test_writer_refuses_writes_after_close(tmp_path):
    writer = EventFileWriter(str(tmp_path))
    writer.close()
    writer.close()  # harmless
    with pytest.raises(ValueError, match="is closed"):
        writer.add_scalar("x", 1.0, step=1)


# ---------------------------------------------------------------- the trace, hook by hook
def run_hooks(trace: TensorBoard, epochs: int = 2, steps: int = 4) -> System:
    system = System(network=None, pipeline=None, traces=[trace], log_steps=2)
    system.reset(summary_name=None)
    trace.system = system
    trace.on_begin(Data())
    for epoch in range(1, epochs + 1):
        system.epoch_idx = epoch
        system.mode = "train"
        for _ in range(steps):
            system.update_global_step()
            data = Data({"loss": np.float32(system.global_step / 10), "x": np.ones((1,)), "name": "text"})
            trace.on_batch_end(data)
        end = Data()
        end.write_with_log("epoch_time(sec)", 0.5)
        trace.on_epoch_end(end)
        system.mode = "eval"
        end = Data()
        end.write_with_log("accuracy", epoch / 10)
        end.write_with_log("confusion", np.eye(2))
        end.write_with_log("note", "not a number")
        trace.on_epoch_end(end)
    trace.on_end(Data())
    return system


def test_train_scalars_every_update_freq_steps_and_epoch_scalars_per_mode(tmp_path, capsys):
    system = run_hooks(TensorBoard(log_dir=str(tmp_path), update_freq=2))
    root = tmp_path / system.experiment_time
    assert sorted(os.listdir(root)) == ["eval", "train"]
    assert f"FastEstimator-Tensorboard: writing logs to {root}" in capsys.readouterr().out
    train = scalars_by_tag(str(root / "train"))
    assert train["loss"] == {2: pytest.approx(0.2), 4: pytest.approx(0.4), 6: pytest.approx(0.6),
                             8: pytest.approx(0.8)}
    assert "x" not in train and "name" not in train  # a batch of one sample is not a scalar; strings are skipped
    assert train["epoch_time(sec)"] == {4: 0.5, 8: 0.5}
    eval_ = scalars_by_tag(str(root / "eval"))
    assert eval_ == {"accuracy": {4: pytest.approx(0.1), 8: pytest.approx(0.2)}}  # arrays and strings skipped


def test_update_freq_in_epochs_writes_only_every_nth_epoch_end(tmp_path):
    system = run_hooks(TensorBoard(log_dir=str(tmp_path), update_freq="2e"), epochs=4)
    root = tmp_path / system.experiment_time
    assert scalars_by_tag(str(root / "train")) == {"epoch_time(sec)": {8: 0.5, 16: 0.5}}
    assert sorted(scalars_by_tag(str(root / "eval"))["accuracy"]) == [8, 16]


def test_update_freq_none_writes_no_event_file(tmp_path):
    system = run_hooks(TensorBoard(log_dir=str(tmp_path), update_freq=None))
    assert not os.path.exists(tmp_path / system.experiment_time)


@pytest.mark.parametrize("kwargs", [{"write_images": "x"}, {"weight_histogram_freq": 1}, {"paint_weights": True},
                                    {"write_embeddings": "emb"}, {"embedding_labels": "y"},
                                    {"embedding_images": "x"}])
def test_unsupported_features_raise_not_implemented(kwargs):
    with pytest.raises(NotImplementedError, match=f"writes scalars only; {next(iter(kwargs))}"):
        TensorBoard(**kwargs)


def test_defaults_follow_fastestimator_and_write_graph_is_accepted():
    trace = TensorBoard()
    assert trace.root_log_dir == "logs" and trace.write_graph is True
    assert (trace.update_freq.is_step, trace.update_freq.freq) == (True, 100)
    assert trace.inputs == ["*"] and trace.mode == set()
    with pytest.raises(ValueError, match="Frequency"):
        TensorBoard(update_freq="often")


# ---------------------------------------------------------------- in a real run
@pytest.fixture
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def classification_data(n: int, seed: int) -> NumpyDataset:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return NumpyDataset({"x": x, "y": np.argmax(x[:, :3], axis=1).astype(np.int64)})


def test_estimator_run_writes_event_files_that_read_back_to_the_summary(numpy_backend, tmp_path):
    model = nb.build(4, 3, lr=0.5, name="clf")
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                            UpdateOp(model=model, loss_name="ce")])
    pipeline = Pipeline(train_data=classification_data(64, 0),
                        eval_data={"a": classification_data(16, 1), "b": classification_data(16, 2)},
                        test_data=classification_data(16, 3), batch_size=8)
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, log_steps=4,
                          traces=[Accuracy("y", "y_pred"), ConfusionMatrix("y", "y_pred", 3),
                                  TensorBoard(log_dir=str(tmp_path), update_freq=4)])
    summary = estimator.fit("tb")
    root = tmp_path / estimator.system.experiment_time
    train = scalars_by_tag(str(root / "train"))
    assert sorted(train["ce"]) == [4, 8, 12, 16]
    for step in (4, 8, 12, 16):
        assert train["ce"][step] == pytest.approx(float(summary.history["train"]["ce"][step]), rel=1e-6)
    eval_ = scalars_by_tag(str(root / "eval"))
    expected = {key: {step: float(value) for step, value in steps.items()}
                for key, steps in summary.history["eval"].items()
                if key != "epoch" and np.size(next(iter(steps.values()))) == 1}
    assert set(expected) >= {"accuracy", "accuracy|a", "accuracy|b", "ce", "ce|a", "ce|b"}
    assert set(eval_) == set(expected)  # every logged scalar, no confusion matrices
    for key, steps in expected.items():
        assert eval_[key] == pytest.approx(steps, rel=1e-6), key

    estimator.test("tb")
    test = scalars_by_tag(str(root / "test"))
    assert test["accuracy"] == pytest.approx({16: float(summary.history["test"]["accuracy"][16])}, rel=1e-6)
