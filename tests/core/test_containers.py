"""to_list, to_set, filter_nones: how user arguments (None, one value, several values) are normalised."""
from __future__ import annotations

import pytest

from fe_core import filter_nones, to_list, to_set


def test_to_list_none_is_empty():
    assert to_list(None) == []


@pytest.mark.parametrize("value", ["x", 3, 0, {"a": 1}, b"bytes"])
def test_to_list_wraps_single_values_including_strings_and_dicts(value):
    assert to_list(value) == [value]


def test_to_list_returns_the_same_list_object():
    data = [1, 2]
    assert to_list(data) is data


def test_to_list_converts_tuples_and_sets():
    assert to_list(("a", "b")) == ["a", "b"]
    assert sorted(to_list({"b", "a"})) == ["a", "b"]
    assert sorted(to_list(frozenset({1, 2}))) == [1, 2]


def test_to_set_none_is_empty():
    assert to_set(None) == set()


def test_to_set_wraps_a_string_instead_of_splitting_it():
    assert to_set("train") == {"train"}


def test_to_set_converts_lists_and_tuples_and_dedupes():
    assert to_set(["b", "a", "b"]) == {"a", "b"}
    assert to_set(("x",)) == {"x"}
    assert to_set(frozenset({1})) == {1}


def test_to_set_returns_the_same_set_object():
    data = {"a"}
    assert to_set(data) is data


def test_filter_nones_keeps_other_falsy_values_and_order():
    assert filter_nones([None, 0, "", None, 3, [], False]) == [0, "", 3, [], False]


def test_filter_nones_returns_a_copy():
    items = [1, None]
    result = filter_nones(items)
    assert result == [1] and items == [1, None]
