"""Data (what traces read and write) and DSData (its per-dataset view)."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core import Data, DSData


def test_reads_see_the_batch():
    data = Data({"x": 1, "y": 2})
    assert data["x"] == 1 and data["y"] == 2
    assert "x" in data and "z" not in data


def test_missing_key_raises_key_error():
    with pytest.raises(KeyError):
        Data({"x": 1})["nope"]


def test_logged_values_shadow_batch_values():
    data = Data({"a": 0})
    data.write_with_log("a", 4)
    assert data["a"] == 4
    assert data.batch["a"] == 0


def test_write_with_log_is_logged_and_readable():
    data = Data({"x": 1})
    data.write_with_log("loss", 0.5)
    assert data["loss"] == 0.5
    assert data.read_logs() == {"loss": 0.5}


def test_item_assignment_is_write_with_log():
    data = Data()
    data["acc"] = 0.9
    assert data.read_logs() == {"acc": 0.9}


def test_write_without_log_is_readable_but_not_logged():
    batch = {"x": 1}
    data = Data(batch)
    data.write_without_log("cm", np.eye(2))
    assert np.array_equal(data["cm"], np.eye(2))
    assert data.read_logs() == {}
    assert "cm" in batch  # it lives with the batch


def test_per_instance_logs_are_kept_apart():
    data = Data({"x": 1})
    data.write_per_instance_log("ce", np.array([0.1, 0.2]))
    assert list(data.read_per_instance_logs()) == ["ce"]
    assert data.read_logs() == {}
    assert "ce" not in data


def test_iteration_and_len_cover_logs_and_batch_once():
    data = Data({"x": 1, "y": 2})
    data.write_with_log("loss", 0.5)
    data.write_with_log("x", 10)  # shadows the batch key, still counted once
    data.write_per_instance_log("ce", [1])  # per-instance values are not keys of data
    assert sorted(data) == ["loss", "x", "y"]
    assert len(data) == 3
    assert dict(data) == {"loss": 0.5, "x": 10, "y": 2}


def test_empty_data():
    data = Data()
    assert len(data) == 0 and list(data) == [] and data.read_logs() == {}


def test_delete_removes_the_key():
    data = Data({"x": 1})
    data.write_with_log("x", 2)
    del data["x"]
    assert "x" not in data
    with pytest.raises(KeyError):
        del data["x"]


def test_ds_data_logs_under_key_pipe_ds_id():
    data = Data({"x": 1})
    view = DSData("ds1", data)
    view.write_with_log("acc", 0.9)
    view["mse"] = 0.2
    assert data.read_logs() == {"acc|ds1": 0.9, "mse|ds1": 0.2}


def test_ds_data_reads_are_unchanged():
    data = Data({"x": 1})
    data.write_with_log("acc", 0.5)
    view = DSData("ds1", data)
    view.write_with_log("acc", 0.9)
    assert view["x"] == 1
    assert view["acc"] == 0.5  # the plain key, not the per-dataset one
    assert view["acc|ds1"] == 0.9


def test_ds_data_per_instance_logs_are_suffixed():
    data = Data()
    DSData("ds2", data).write_per_instance_log("ce", [0.3])
    assert data.read_per_instance_logs() == {"ce|ds2": [0.3]}


def test_ds_data_write_without_log_reaches_the_shared_batch():
    data = Data({"x": 1})
    DSData("ds1", data).write_without_log("tmp", 7)
    assert data["tmp"] == 7
    assert data.read_logs() == {}
