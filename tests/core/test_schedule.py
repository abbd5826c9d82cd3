"""Schedulers, selecting the items in force for a mode/epoch/ds_id, signature epochs and cosine_decay."""
from __future__ import annotations

import math
import random
from typing import List, Optional

import pytest

from fe_core.modes import check_ds_id, parse_modes
from fe_core.schedule import (EpochScheduler, RepeatScheduler, Scheduler, cosine_decay, get_current_items,
                              get_signature_epochs)


class Item:
    """Something with a mode and ds_id restriction, like an op or a trace."""

    def __init__(self, name: str, mode=None, ds_id=None) -> None:
        self.name = name
        self.mode = parse_modes(set([mode] if isinstance(mode, str) else mode or []))
        self.ds_id = check_ds_id(set([ds_id] if isinstance(ds_id, str) else ds_id or []))

    def __repr__(self) -> str:
        return self.name


def names(items) -> List[str]:
    return [item.name if isinstance(item, Item) else item for item in items]


# ----- EpochScheduler -----
def test_epoch_scheduler_value_holds_until_the_next_key():
    scheduler = EpochScheduler({1: "adam", 3: "sgd", 10: "rms"})
    assert [scheduler.get_current_value(e) for e in range(1, 12)] == ["adam"] * 2 + ["sgd"] * 7 + ["rms"] * 2


def test_epoch_scheduler_is_none_before_its_first_key_and_after_a_none_value():
    scheduler = EpochScheduler({3: "a", 5: None, 8: "b"})
    assert [scheduler.get_current_value(e) for e in range(1, 10)] == [None, None, "a", "a", None, None, None, "b", "b"]


def test_epoch_scheduler_accepts_unsorted_keys():
    scheduler = EpochScheduler({5: "late", 1: "early"})
    assert scheduler.get_current_value(4) == "early" and scheduler.get_current_value(5) == "late"
    assert scheduler.get_all_values() == ["early", "late"]


def test_epoch_scheduler_all_values_include_none():
    assert EpochScheduler({1: "a", 2: None}).get_all_values() == ["a", None]


@pytest.mark.parametrize("epoch_dict", [{0: "a"}, {-1: "a"}, {1.5: "a"}, {"1": "a"}, {True: "a"}])
def test_epoch_scheduler_rejects_keys_that_are_not_positive_ints(epoch_dict):
    with pytest.raises(ValueError, match="positive integers"):
        EpochScheduler(epoch_dict)


@pytest.mark.parametrize("epoch_dict", [{}, [(1, "a")], None])
def test_epoch_scheduler_needs_a_non_empty_dict(epoch_dict):
    with pytest.raises(ValueError, match="non-empty dict"):
        EpochScheduler(epoch_dict)


# ----- RepeatScheduler -----
def test_repeat_scheduler_cycles_one_value_per_epoch():
    scheduler = RepeatScheduler(["a", "b", None])
    assert [scheduler.get_current_value(e) for e in range(1, 8)] == ["a", "b", None, "a", "b", None, "a"]
    assert scheduler.get_all_values() == ["a", "b", None]


def test_repeat_scheduler_accepts_a_tuple():
    assert RepeatScheduler((1, 2)).get_current_value(4) == 2


@pytest.mark.parametrize("repeat_list", [[], (), "ab", None])
def test_repeat_scheduler_needs_a_non_empty_list(repeat_list):
    with pytest.raises(ValueError, match="non-empty list"):
        RepeatScheduler(repeat_list)


# ----- get_current_items -----
def test_plain_items_are_all_selected_in_order_and_nones_dropped():
    assert get_current_items(["a", None, "b"]) == ["a", "b"]


def test_mode_restricted_items_run_only_in_their_modes():
    train, not_train, anywhere = Item("train", "train"), Item("not_train", "!train"), Item("anywhere")
    items = [train, not_train, anywhere]
    assert names(get_current_items(items, run_modes="train")) == ["train", "anywhere"]
    assert names(get_current_items(items, run_modes="eval")) == ["not_train", "anywhere"]
    assert names(get_current_items(items, run_modes={"infer", "train"})) == ["train", "not_train", "anywhere"]
    assert names(get_current_items(items)) == ["train", "not_train", "anywhere"]


def test_ds_id_whitelist_and_blacklist():
    only1, not1, anywhere = Item("only1", ds_id="ds1"), Item("not1", ds_id="!ds1"), Item("anywhere")
    both = Item("both", ds_id={"ds1", "ds2"})
    items = [only1, not1, anywhere, both]
    assert names(get_current_items(items, ds_id="ds1")) == ["only1", "anywhere", "both"]
    assert names(get_current_items(items, ds_id="ds2")) == ["not1", "anywhere", "both"]
    assert names(get_current_items(items, ds_id="ds3")) == ["not1", "anywhere"]
    assert names(get_current_items(items, ds_id=None)) == ["only1", "not1", "anywhere", "both"]
    # '' is the unnamed dataset of a single-dataset mode: it runs blacklisted and unrestricted items only
    assert names(get_current_items(items, ds_id="")) == ["not1", "anywhere"]


def test_mode_and_ds_id_restrictions_combine():
    item = Item("x", mode="eval", ds_id="!ds1")
    assert get_current_items([item], run_modes="eval", ds_id="ds2") == [item]
    assert get_current_items([item], run_modes="eval", ds_id="ds1") == []
    assert get_current_items([item], run_modes="train", ds_id="ds2") == []


def test_schedulers_are_resolved_at_the_epoch():
    a, b = Item("a"), Item("b")
    items = [EpochScheduler({1: a, 3: None}), RepeatScheduler([None, b]), "plain"]
    assert names(get_current_items(items, epoch=1)) == ["a", "plain"]
    assert names(get_current_items(items, epoch=2)) == ["a", "b", "plain"]
    assert names(get_current_items(items, epoch=3)) == ["plain"]
    assert names(get_current_items(items, epoch=4)) == ["b", "plain"]


def test_schedulers_expand_to_all_their_values_when_epoch_is_none():
    a, b, c = Item("a"), Item("b", mode="eval"), Item("c")
    items = [EpochScheduler({1: a, 3: None, 5: b}), "plain", RepeatScheduler([c, None, a])]
    assert names(get_current_items(items)) == ["a", "b", "plain", "c", "a"]
    assert names(get_current_items(items, run_modes="train")) == ["a", "plain", "c", "a"]


def test_scheduled_items_are_filtered_by_mode_and_ds_id():
    train_item, ds2_item = Item("t", mode="train"), Item("d", ds_id="ds2")
    items = [EpochScheduler({1: train_item}), RepeatScheduler([ds2_item])]
    assert names(get_current_items(items, run_modes="eval", epoch=1, ds_id="ds2")) == ["d"]
    assert names(get_current_items(items, run_modes="train", epoch=1, ds_id="ds1")) == ["t"]


# ----- get_signature_epochs -----
def test_signature_epochs_reference_example():
    items = [RepeatScheduler(["a", "b", "c", "c"]), EpochScheduler({1: "a", 2: "b", 30: None})]
    assert get_signature_epochs(items, 50) == [1, 2, 3, 5, 30, 31, 33]


def test_signature_epochs_stop_at_total_epochs():
    items = [RepeatScheduler(["a", "b", "c", "c"]), EpochScheduler({1: "a", 2: "b", 30: None})]
    assert get_signature_epochs(items, 29) == [1, 2, 3, 5]
    assert get_signature_epochs(items, 4) == [1, 2, 3]


def test_without_schedulers_only_epoch_one_is_a_signature_epoch():
    assert get_signature_epochs(["a", "b"], 10) == [1]
    assert get_signature_epochs([], 10) == [1]
    assert get_signature_epochs(["a"], 0) == []


def test_signature_epochs_only_count_changes_visible_in_the_mode():
    eval_a, eval_b, train_c = Item("ea", mode="eval"), Item("eb", mode="eval"), Item("tc", mode="train")
    items = [EpochScheduler({1: eval_a, 4: eval_b}), train_c]
    assert get_signature_epochs(items, 10, mode="train") == [1]
    assert get_signature_epochs(items, 10, mode="eval") == [1, 4]
    assert get_signature_epochs(items, 10) == [1, 4]


def test_signature_epochs_only_count_changes_visible_for_the_ds_id():
    ds1_a, ds1_b = Item("a", ds_id="ds1"), Item("b", ds_id="ds1")
    items = [RepeatScheduler([ds1_a, ds1_b])]
    assert get_signature_epochs(items, 10, ds_id="ds2") == [1]
    assert get_signature_epochs(items, 10, ds_id="ds1") == [1, 2]


class EveryThirdEpoch(Scheduler):
    """A user-written scheduler the signature search knows nothing about."""

    def __init__(self, on, off) -> None:
        self.on, self.off = on, off

    def get_current_value(self, epoch: int):
        return self.on if epoch % 3 == 0 else self.off

    def get_all_values(self):
        return [self.on, self.off]


def test_signature_epochs_with_a_custom_scheduler():
    items = [EveryThirdEpoch("on", "off"), EpochScheduler({1: "x", 7: "y"})]
    assert get_signature_epochs(items, 20) == [1, 3, 7, 9]


def brute_force_signature_epochs(items, total_epochs: int, mode: Optional[str], ds_id: Optional[str]) -> List[int]:
    """The definition: the first epoch of each configuration (the selected items, in order) not seen before."""
    seen, epochs = set(), []
    for epoch in range(1, total_epochs + 1):
        config = tuple(id(item) for item in get_current_items(items, run_modes=mode, epoch=epoch, ds_id=ds_id))
        if config not in seen:
            seen.add(config)
            epochs.append(epoch)
    return epochs


def random_items(rng: random.Random, total_epochs: int) -> list:
    pool = [Item(f"i{n}", mode=rng.choice([None, "train", "eval", "!train"]),
                 ds_id=rng.choice([None, "ds1", "!ds1", {"ds1", "ds2"}])) for n in range(rng.randint(1, 5))]
    pool.append(None)
    items: list = []
    for _ in range(rng.randint(0, 4)):
        kind = rng.choice(["plain", "repeat", "epoch"])
        if kind == "plain":
            items.append(rng.choice(pool[:-1]))
        elif kind == "repeat":
            items.append(RepeatScheduler([rng.choice(pool) for _ in range(rng.randint(1, 5))]))
        else:
            keys = rng.sample(range(1, total_epochs + 6), rng.randint(1, 4))
            items.append(EpochScheduler({key: rng.choice(pool) for key in keys}))
    return items


def test_signature_epochs_match_brute_force_on_random_schedules():
    rng = random.Random(1234)
    checked_non_trivial = 0
    for _ in range(400):
        total_epochs = rng.randint(1, 45)
        items = random_items(rng, total_epochs)
        mode = rng.choice([None, "train", "eval"])
        ds_id = rng.choice([None, "ds1", "ds2"])
        expected = brute_force_signature_epochs(items, total_epochs, mode, ds_id)
        assert get_signature_epochs(items, total_epochs, mode=mode, ds_id=ds_id) == expected, (items, total_epochs,
                                                                                               mode, ds_id)
        checked_non_trivial += len(expected) > 2
    assert checked_non_trivial > 50  # the random cases really exercise schedule changes


# ----- cosine_decay -----
def reference_curve(cycle_lengths: List[int], init_lr: float, min_lr: float) -> List[float]:
    """The rate at times start, start+1, ...: each cycle runs half a cosine, ending exactly at min_lr."""
    curve = []
    for length in cycle_lengths:
        for position in range(1, length + 1):
            curve.append(min_lr + (init_lr - min_lr) * (1 + math.cos(math.pi * position / length)) / 2)
    return curve


def test_cosine_decay_first_cycle_starts_near_init_and_ends_at_min():
    values = [cosine_decay(t, cycle_length=10, init_lr=0.1, min_lr=0.001) for t in range(1, 11)]
    assert values == pytest.approx(reference_curve([10], 0.1, 0.001))
    assert 0.09 < values[0] < 0.1
    assert values[-1] == pytest.approx(0.001)
    assert all(later < earlier for earlier, later in zip(values, values[1:]))


def test_cosine_decay_long_cycle_starts_at_init():
    assert cosine_decay(1, cycle_length=3750, init_lr=1e-3) == pytest.approx(1e-3, rel=1e-6)


def test_cosine_decay_default_min_lr():
    assert cosine_decay(100, cycle_length=100, init_lr=0.5) == pytest.approx(1e-6)


def test_cosine_decay_restarts_every_cycle():
    values = [cosine_decay(t, cycle_length=4, init_lr=1.0, min_lr=0.0) for t in range(1, 13)]
    assert values == pytest.approx(reference_curve([4, 4, 4], 1.0, 0.0))
    assert values[0:4] == values[4:8] == values[8:12]


def test_cosine_decay_cycle_multiplier_grows_each_cycle():
    values = [cosine_decay(t, cycle_length=3, init_lr=1.0, min_lr=0.1, cycle_multiplier=2) for t in range(1, 46)]
    assert values == pytest.approx(reference_curve([3, 6, 12, 24], 1.0, 0.1))
    minima = [t for t, value in enumerate(values, start=1) if value == pytest.approx(0.1)]
    assert minima == [3, 9, 21, 45]


def test_cosine_decay_cycle_multiplier_three():
    values = [cosine_decay(t, cycle_length=2, init_lr=1.0, min_lr=0.0, cycle_multiplier=3) for t in range(1, 27)]
    assert values == pytest.approx(reference_curve([2, 6, 18], 1.0, 0.0))


def test_cosine_decay_is_exact_far_into_geometric_cycles():
    # end of the 30th cycle: 1 * (2**30 - 1) steps; float rounding must not shift the cycle boundary
    end = 2**30 - 1
    assert cosine_decay(end, cycle_length=1, init_lr=1.0, min_lr=0.0, cycle_multiplier=2) == pytest.approx(0.0)
    assert cosine_decay(end + 1, cycle_length=1, init_lr=1.0, min_lr=0.0,
                        cycle_multiplier=2) == pytest.approx((1 + math.cos(math.pi / 2**30)) / 2)


def test_cosine_decay_start_shifts_the_curve():
    for offset in range(12):
        assert cosine_decay(5 + offset, cycle_length=4, init_lr=1.0, start=5, cycle_multiplier=2) == \
            cosine_decay(1 + offset, cycle_length=4, init_lr=1.0, start=1, cycle_multiplier=2)


def test_cosine_decay_before_start_is_init_lr():
    assert [cosine_decay(t, cycle_length=5, init_lr=0.3, start=4) for t in (0, 1, 2, 3)] == [0.3] * 4


def test_cosine_decay_warmup_ramps_linearly_to_start():
    assert [cosine_decay(t, cycle_length=5, init_lr=0.4, start=4, warmup=True) for t in (1, 2, 3)] == \
        pytest.approx([0.1, 0.2, 0.3])
    assert cosine_decay(4, cycle_length=5, init_lr=0.4, start=4, warmup=True) == \
        cosine_decay(4, cycle_length=5, init_lr=0.4, start=4)


@pytest.mark.parametrize("kwargs, message", [({"cycle_length": 0}, "cycle_length"), ({"cycle_length": -3}, "cycle_length"),
                                             ({"cycle_multiplier": 0}, "cycle_multiplier"),
                                             ({"cycle_multiplier": 0.5}, "cycle_multiplier")])
def test_cosine_decay_rejects_bad_arguments(kwargs, message):
    arguments = {"time": 1, "cycle_length": 10, "init_lr": 0.1, **kwargs}
    with pytest.raises(ValueError, match=message):
        cosine_decay(**arguments)
