"""fe.util's base helpers (FastEstimator's base_util, cli_util and the numpy parts of util), without a framework."""
from __future__ import annotations

import argparse
import os

import numpy as np
import pytest

from fe_core.containers import filter_nones, to_list, to_set
from fe_core.data import Data
from fe_core.modes import check_ds_id, check_io_names, parse_modes
from fe_core.util import (FEID, DefaultKeyDict, Flag, IfElse, NonContext, SaveAction, count_params, get_batch_size,
                          get_colors, get_shape, get_type, is_number, is_valid_file, list_files, pad_batch, pad_data,
                          param_to_range, parse_cli_to_dictionary, parse_string_to_python, prettify_metric_name,
                          strip_prefix, strip_suffix, to_number)


def test_to_list_to_set_and_filter_nones_follow_the_reference_examples():
    assert to_list(None) == [] and to_list([None]) == [None] and to_list(7) == [7] and to_list([7, 8]) == [7, 8]
    assert to_list({7}) == [7] and to_list((7)) == [7] and to_list({"a": 7}) == [{"a": 7}]
    assert to_set(None) == set() and to_set([None]) == {None} and to_set(7) == {7} and to_set([7, 8]) == {7, 8}
    assert filter_nones([1, None, 0]) == [1, 0]
    assert filter_nones((None, 2, None)) == (2,)
    assert filter_nones({None, 3}) == {3}
    assert filter_nones({"a": None, "b": 0}) == {"b": 0}


def test_modes_and_ids_raise_assertion_errors_as_documented():
    assert parse_modes({"!train", "!infer"}) == {"eval", "test"}
    assert check_ds_id({"!ds1", "!ds2"}) == {"!ds1", "!ds2"}
    for call in (lambda: parse_modes({"!train", "eval"}), lambda: check_ds_id({"!ds1", "ds2"}),
                 lambda: check_io_names(["a:b"])):
        with pytest.raises(AssertionError):
            call()
        with pytest.raises(ValueError):  # and still a ValueError, as fe's own code catches
            call()


def test_data_reference_example():
    data = Data({"a": 0, "b": 1, "c": 2})
    data.write_with_log("d", 3)
    data.write_without_log("e", 5)
    data.write_with_log("a", 4)
    assert data["a"] == 4 and data["e"] == 5 and dict(data.read_logs()) == {"d": 3, "a": 4}
    assert data.read_logs(extra_keys={"c", "missing"}) == {"c": 2, "d": 3, "a": 4}
    assert data.read_logs() == {"d": 3, "a": 4}  # the extra keys were not written into the logs


def test_if_else_and_param_to_range():
    assert IfElse(True, "y", "n") == "y" and IfElse(False, "y", "n") == "n" and IfElse(False, "y") is None
    assert IfElse(True, lambda: 1, lambda: 2)() == 1
    assert param_to_range(7) == (-7, 7) and param_to_range(-3.2) == (-3.2, 3.2)
    assert param_to_range([7, 8]) == (7, 8) and param_to_range((3.1, 4.3)) == (3.1, 4.3)
    with pytest.raises(ValueError, match="param_to_range"):
        param_to_range("x")


def test_wrappers():
    value = 5
    with NonContext():
        value += 37
    assert value == 42
    store = DefaultKeyDict(default=lambda key: key + key, a=4, b=6)
    assert store["a"] == 4 and store["c"] == "cc" and "c" in store
    fid = FEID(7)
    assert str(fid) == "@FE7" and fid == FEID(7) and fid == 7 and hash(fid) == hash(7) and FEID(1) < fid
    FEID.set_translation_dict({7: "seven"})
    try:
        assert str(fid) == "@FEseven" and repr(FEID(8)) == "@FE8"
    finally:
        FEID.set_translation_dict({})
    with pytest.raises(TypeError, match="FEID wraps an int"):
        FEID("7")
    flag = Flag()
    assert not flag
    flag.set_true()
    assert flag
    flag.set_false()
    assert not flag and Flag(True)


def test_strings():
    assert prettify_metric_name("myUgly_loss") == "My Ugly Loss"
    assert prettify_metric_name("f1_score") == "F1 Score"
    assert strip_suffix("astring.json", ".json") == "astring"
    assert strip_suffix("astring.json", ".yson") == "astring.json"
    assert strip_prefix("astring.json", "ast") == "ring.json" and strip_prefix("astring.json", "asa") == "astring.json"
    assert strip_suffix(None, ".x") is None and strip_prefix("abc", None) == "abc" and strip_suffix("abc", "") == "abc"
    assert is_number("13.7") and is_number("-1e-3") and not is_number("ae13.7") and not is_number(None)


def test_get_type():
    assert get_type(np.ones((10, 10), dtype="int32")) == "int32"
    assert get_type([np.ones((10, 10)) for _ in range(4)]) == "List[float64]"
    assert get_type(27) == "int" and get_type({"a": 1, "b": 2}) == "dict"
    assert get_type([1, "a"]) == "List[int]" and get_type([[[1]]]) == "List[List[List[int]]]"
    assert get_type([]) == "list" and get_type("s") == "str"


def test_get_shape():
    assert get_shape(np.ones((12, 22, 11))) == [12, 22, 11]
    assert get_shape([np.ones((12, 22, 11)), np.ones((18, 5))]) == [None]
    assert get_shape([np.ones((12, 22, 11)), np.ones((18, 5, 4))]) == [None, None, None, None]
    assert get_shape([np.ones((12, 22, 11)), np.ones((12, 22, 4))]) == [None, 12, 22, None]
    assert get_shape({"a": np.ones((12, 22, 11))}) == [] and get_shape(3) == [] and get_shape([]) == [None]
    assert get_shape([[1, 2], [3, 4]]) == [None, None]


def test_get_batch_size():
    assert get_batch_size({"x": np.ones((4, 3)), "y": np.ones(4), "s": np.float32(1), "name": "a"}) == 4
    with pytest.raises(AssertionError, match="invalid batch size"):
        get_batch_size({"x": np.ones((4, 3)), "y": np.ones(5)})
    with pytest.raises(AssertionError, match="invalid batch size"):
        get_batch_size({"name": "a"})


def test_to_number_on_python_and_numpy():
    assert isinstance(to_number(5), np.ndarray) and to_number(5) == 5 and to_number(4.0).dtype == np.float64
    array = np.array([1, 2, 3])
    assert to_number(array) is array
    assert to_number([1, 2]).tolist() == [1, 2] and to_number("a") == np.array("a")


def test_pad_data_and_pad_batch():
    padded = pad_data(np.ones((1, 2)), target_shape=(3, 3), pad_value=-2)
    assert padded.tolist() == [[1, 1, -2], [-2, -2, -2], [-2, -2, -2]]
    with pytest.raises(ValueError, match="rank"):
        pad_data(np.ones((1, 2)), (3, 3, 3), -2)
    with pytest.raises(ValueError, match="smaller"):
        pad_data(np.ones((1, 2)), (4, 1), -2)
    batch = [{"x": np.ones((2, 2)), "y": 8}, {"x": np.ones((3, 1)), "y": 4}]
    pad_batch(batch, pad_value=0)
    assert batch[0]["x"].tolist() == [[1, 1], [1, 1], [0, 0]] and batch[1]["x"].tolist() == [[1, 0], [1, 0], [1, 0]]
    assert batch[0]["y"] == 8 and batch[1]["y"] == 4
    with pytest.raises(AssertionError, match="same rank"):
        pad_batch([{"x": np.ones((2, 2))}, {"x": np.ones(3)}], 0)
    with pytest.raises(AssertionError, match="same keys"):
        pad_batch([{"x": np.ones(2)}, {"z": np.ones(3)}], 0)


def test_list_files_and_is_valid_file(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden_dir").mkdir()
    for name in ("a.png", "c.txt", ".DS_Store", "b/d.png", ".hidden_dir/e.png"):
        (tmp_path / name).write_text("x")
    assert list_files(str(tmp_path)) == [str(tmp_path / "a.png"), str(tmp_path / "c.txt"), str(tmp_path / "b/d.png")]
    assert list_files(str(tmp_path), ".png") == [str(tmp_path / "a.png"), str(tmp_path / "b/d.png")]
    assert list_files(str(tmp_path), recursive_search=False) == [str(tmp_path / "a.png"), str(tmp_path / "c.txt")]
    with pytest.raises(AssertionError, match="not a directory"):
        list_files(str(tmp_path / "a.png"))
    assert is_valid_file(str(tmp_path / "a.png")) and not is_valid_file(str(tmp_path / ".DS_Store"))
    assert not is_valid_file(str(tmp_path / "b")) and not is_valid_file(str(tmp_path / "missing.png"))


def test_get_colors():
    assert get_colors(2) == ["rgba(31,119,180,1.0)", "rgba(255,127,14,1.0)"]
    many = get_colors(30, alpha=0.5)
    assert len(set(many)) == 30 and all(color.startswith("rgba(") and color.endswith(",0.5)") for color in many)
    numbers = get_colors(12, as_numbers=True)
    assert len(numbers) == 12 and all(len(c) == 4 and all(0 <= v <= 255 for v in c[:3]) for c in numbers)
    with pytest.raises(ValueError, match="alpha"):
        get_colors(3, alpha=2)


def test_cli_parsing():
    assert parse_string_to_python("5") == 5 and parse_string_to_python("[5, 4, 0.3]") == [5, 4, 0.3]
    assert parse_string_to_python("{'a':5, 'b':7}") == {"a": 5, "b": 7}
    assert parse_string_to_python("hello") == "hello" and parse_string_to_python("(1, 2)") == (1, 2)
    assert parse_cli_to_dictionary(["--epochs", "5", "--test", "this", "--lr", "0.74"]) == \
        {"epochs": 5, "test": "this", "lr": 0.74}
    assert parse_cli_to_dictionary(["--shape", "[28,", "28]", "--flag"]) == {"shape": [28, 28], "flag": ""}
    assert parse_cli_to_dictionary(None) == {}
    # a value before any key belongs to no key: FastEstimator leaves it out
    assert parse_cli_to_dictionary(["5"]) == {}
    assert parse_cli_to_dictionary(["stray", "--epochs", "2"]) == {"epochs": 2}


def test_save_action():
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--save", action=SaveAction, default=False, dest="save")
    group.add_argument("--no-save", dest="save", action="store_false")
    args = parser.parse_args(["--save", os.path.join("out", "dir")])
    assert args.save is True and args.save_dir == os.path.join("out", "dir", "")
    args = parser.parse_args(["--save"])
    assert args.save is True and args.save_dir is None
    assert parser.parse_args([]).save is False
    with pytest.raises(ValueError, match="nargs"):
        SaveAction(["--x"], "x", nargs=2)


def test_count_params_of_numpy_weights():
    assert count_params([np.zeros((3, 4)), np.zeros(4)]) == 16 and count_params([]) == 0


@pytest.mark.parametrize("module", ["strings", "config_helpers", "wrappers", "console", "timing", "suppress", "files",
                                    "colors", "padding", "cli_parsing", "inspection", "devices", "models",
                                    "download_progress", "downloads", "google_drive", "display", "figure_static"])
def test_docstring_examples_hold(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"fe_core.util.{module}"), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
