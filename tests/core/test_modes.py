"""Modes ('train', '!train'), dataset ids ('ds1', '!ds1') and key names, as users write them on ops and traces."""
from __future__ import annotations

import pytest

from fe_core.modes import ALL_MODES, check_ds_id, check_io_names, ds_id_matches, parse_modes


# ----- parse_modes -----
def test_all_modes():
    assert ALL_MODES == {"train", "eval", "test", "infer"}


def test_negated_train_means_every_other_mode():
    assert parse_modes({"!train"}) == {"eval", "test", "infer"}


def test_several_negations_remove_each():
    assert parse_modes({"!train", "!infer"}) == {"eval", "test"}


def test_negating_every_mode_leaves_nothing():
    assert parse_modes({"!train", "!eval", "!test", "!infer"}) == set()


def test_plain_modes_are_kept():
    assert parse_modes({"train", "eval"}) == {"train", "eval"}


def test_empty_means_unrestricted():
    assert parse_modes(set()) == set()


def test_a_lone_string_is_one_mode():
    assert parse_modes("eval") == {"eval"}
    assert parse_modes("!eval") == {"train", "test", "infer"}


@pytest.mark.parametrize("modes, bad", [({"training"}, "training"), ({"!bogus"}, "!bogus"),
                                        ({"train", "Eval"}, "Eval"), ({"!"}, "!")])
def test_unknown_mode_is_named_in_the_error(modes, bad):
    with pytest.raises(ValueError, match="Unknown mode") as info:
        parse_modes(modes)
    assert repr(bad) in str(info.value)


def test_mixing_negated_and_plain_modes_is_an_error():
    with pytest.raises(ValueError, match="Cannot mix negated and plain modes"):
        parse_modes({"!train", "eval"})


# ----- check_ds_id -----
def test_plain_and_negated_ds_ids_are_accepted_unchanged():
    ids = {"ds1", "ds_2", "my-set"}
    assert check_ds_id(ids) is ids
    assert check_ds_id({"!ds1", "!ds2"}) == {"!ds1", "!ds2"}
    assert check_ds_id(set()) == set()


def test_a_lone_ds_id_string_is_one_id():
    assert check_ds_id("ds1") == {"ds1"}


@pytest.mark.parametrize("ds_id", ["a:b", "a;b", "a|b", "a!b", "!a|b", "!!a", "ds:", "|"])
def test_ds_id_with_a_forbidden_character_is_rejected(ds_id):
    with pytest.raises(ValueError, match="forbidden character") as info:
        check_ds_id({ds_id})
    assert repr(ds_id) in str(info.value)


@pytest.mark.parametrize("ds_id", ["", "!"])
def test_empty_ds_id_is_rejected(ds_id):
    with pytest.raises(ValueError, match="empty"):
        check_ds_id({ds_id})


def test_non_string_ds_id_is_rejected():
    with pytest.raises(ValueError, match="must be strings"):
        check_ds_id({1})


def test_mixing_blacklist_and_whitelist_ds_ids_is_an_error():
    with pytest.raises(ValueError, match="Cannot mix negated and plain dataset ids"):
        check_ds_id({"!ds1", "ds2"})


# ----- ds_id_matches -----
def test_whitelist_matches_only_listed_ids():
    assert ds_id_matches({"ds1", "ds2"}, "ds1")
    assert ds_id_matches({"ds1", "ds2"}, "ds2")
    assert not ds_id_matches({"ds1", "ds2"}, "ds3")


def test_blacklist_matches_everything_but_listed_ids():
    assert not ds_id_matches({"!ds1", "!ds2"}, "ds1")
    assert not ds_id_matches({"!ds1", "!ds2"}, "ds2")
    assert ds_id_matches({"!ds1", "!ds2"}, "ds3")


def test_no_restriction_matches_and_the_unnamed_dataset_matches_only_blacklists():
    assert ds_id_matches(set(), "ds1")
    assert ds_id_matches(set(), "")
    assert not ds_id_matches({"ds1"}, "")
    assert ds_id_matches({"!ds1"}, "")


# ----- check_io_names -----
def test_valid_key_names_are_returned_unchanged():
    names = ["x", "y_pred", "*", "acc|ds1"]
    assert check_io_names(names) is names


@pytest.mark.parametrize("name", ["", None, 3])
def test_empty_or_non_string_keys_are_rejected(name):
    with pytest.raises(ValueError, match="non-empty strings"):
        check_io_names(["x", name])


@pytest.mark.parametrize("name", ["a:b", "a;b"])
def test_log_separator_characters_are_rejected(name):
    with pytest.raises(ValueError, match="forbidden character") as info:
        check_io_names([name])
    assert repr(name) in str(info.value)


def test_more_than_one_pipe_is_rejected():
    with pytest.raises(ValueError, match="more than one '\\|'"):
        check_io_names(["acc|ds1|x"])
