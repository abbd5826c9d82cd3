"""Summary (the recorded history of a run) and ValWithError."""
from __future__ import annotations

import json

from fe_core import Summary, ValWithError


def test_summary_is_truthy_only_when_named():
    assert Summary("exp")
    assert not Summary(None)
    assert not Summary("")


def test_history_creates_modes_and_keys_on_first_write():
    summary = Summary("exp")
    summary.history["train"]["loss"][1] = 0.7
    summary.history["train"]["loss"][2] = 0.5
    summary.history["eval"]["acc"][2] = 0.9
    assert summary.history["train"]["loss"] == {1: 0.7, 2: 0.5}
    assert summary.history["eval"]["acc"] == {2: 0.9}
    assert summary.history["test"]["missing"] == {}  # reading an unknown mode/key gives an empty record


def test_name_and_system_config_are_kept():
    summary = Summary("exp", system_config={"epochs": 2})
    assert summary.name == "exp" and summary.system_config == {"epochs": 2}


def test_merge_adds_the_other_history_and_other_wins_on_conflicts():
    mine, other = Summary("a"), Summary("b")
    mine.history["train"]["loss"].update({1: 0.9, 2: 0.8})
    mine.history["eval"]["acc"][2] = 0.5
    other.history["train"]["loss"].update({2: 0.7, 3: 0.6})
    other.history["test"]["acc"][3] = 0.95
    mine.merge(other)
    assert mine.history["train"]["loss"] == {1: 0.9, 2: 0.7, 3: 0.6}
    assert mine.history["eval"]["acc"] == {2: 0.5}
    assert mine.history["test"]["acc"] == {3: 0.95}
    assert mine.name == "a"
    assert other.history["train"]["loss"] == {2: 0.7, 3: 0.6}  # the other summary is not changed


def test_state_round_trips_through_json_with_int_steps():
    summary = Summary("exp")
    summary.history["train"]["loss"].update({1: 0.7, 20: 0.5})
    summary.history["eval"]["acc"][20] = 0.9
    state = json.loads(json.dumps(summary.get_state()))  # JSON turns the int steps into strings
    restored = Summary(None)
    restored.set_state(state)
    assert restored.name == "exp" and bool(restored)
    assert restored.history["train"]["loss"] == {1: 0.7, 20: 0.5}
    assert all(isinstance(step, int) for step in restored.history["train"]["loss"])
    assert restored.history["eval"]["acc"] == {20: 0.9}
    restored.history["test"]["new"][1] = 1.0  # the restored history is still auto-creating
    assert restored.history["test"]["new"] == {1: 1.0}


def test_set_state_replaces_the_previous_history():
    summary = Summary("old")
    summary.history["train"]["stale"][1] = 1
    summary.set_state({"name": "new", "history": {"eval": {"acc": {"3": 0.8}}}})
    assert summary.name == "new"
    assert "stale" not in summary.history["train"]
    assert summary.history["eval"]["acc"] == {3: 0.8}


def test_get_state_is_plain_data_detached_from_the_summary():
    summary = Summary("exp")
    summary.history["train"]["loss"][1] = 0.7
    state = summary.get_state()
    assert type(state["history"]) is dict and type(state["history"]["train"]) is dict
    state["history"]["train"]["loss"][2] = 0.1
    assert summary.history["train"]["loss"] == {1: 0.7}


def test_val_with_error_str_and_fields():
    value = ValWithError(0.1, 0.2, 0.3)
    assert str(value) == "(0.1, 0.2, 0.3)"
    assert (value.y_min, value.y, value.y_max) == (0.1, 0.2, 0.3)
    assert tuple(value) == (0.1, 0.2, 0.3)
