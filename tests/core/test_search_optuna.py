"""OptunaSearch and the search options that need no Ray: spaces, pruning of a real Estimator fit, resume of an
interrupted study, per-trial seeds, failures recorded serially, the history tag, and the extras' missing-library
line."""
from __future__ import annotations

import sys

import numpy as np
import optuna  # fe-core[search]: the core suite has it through fe-core[all]
import pytest

import search_trials
from fe_core.optional import MissingExtraError
from fe_core.search import (Choice, GoldenSection, GridSearch, LogRange, OptunaSearch, Range, Ray, SearchError,
                            Serial, current_trial, trial_seed)


def pruning_search(name="optuna_search", **kwargs):
    return OptunaSearch(search_trials.regression_fit, params={"lr": Choice([0.0, 0.1])}, n_trials=2,
                        best_mode="min", optimize_field="mse", seed=0, name=name,
                        sampler=lambda seed: optuna.samplers.GridSampler({"lr": [0.0, 0.1]}, seed=0),
                        pruner=optuna.pruners.ThresholdPruner(upper=0.5, n_warmup_steps=2), **kwargs)


def test_optuna_pruning_stops_a_real_fit_and_the_trial_is_tagged_in_the_history_db(tmp_path, monkeypatch):
    from fe_core.summary.history import connect  # pylint: disable=import-outside-toplevel
    db = tmp_path / "history.db"
    monkeypatch.setenv("FE_HISTORY_DB", str(db))
    search = pruning_search()
    search.fit(str(tmp_path))
    (completed,), (pruned,) = search.get_search_summary(), search.get_pruned_trials()
    assert completed["param"]["lr"] == 0.1 and completed["result"]["epochs"] == 6
    assert pruned["param"]["lr"] == 0.0 and pruned["epochs"] == 2 and pruned["result"]["epochs"] == 2
    assert search.get_failed_trials() == [] and search.get_best_results()["param"]["lr"] == 0.1
    with connect(str(db)) as connection:
        rows = connection.execute("SELECT h.status, f.feature FROM features f JOIN history h ON h.pk = f.fk "
                                  "WHERE f.feature LIKE 'SearchTrial:%' ORDER BY f.feature").fetchall()
    assert [tuple(row) for row in rows] == [("Completed", "SearchTrial:optuna_search:1"),
                                            ("Completed", "SearchTrial:optuna_search:2")]  # pruned: not failed


def quadratic(search_idx, x, lr, k):
    if current_trial().params.get("x") != x:
        raise AssertionError("current_trial() does not describe this trial")
    return (x - 0.3)**2 + lr + k


SPACE = {"x": Range(0.0, 1.0), "lr": LogRange(1e-4, 1e-1), "k": Choice([0, 1])}


def test_optuna_search_is_repeatable_and_a_resumed_study_equals_an_uninterrupted_one(tmp_path):
    uninterrupted = OptunaSearch(quadratic, params=SPACE, n_trials=6, best_mode="min", seed=3)
    uninterrupted.fit()
    summary = uninterrupted.get_search_summary()
    assert [entry["param"]["search_idx"] for entry in summary] == [1, 2, 3, 4, 5, 6]
    assert all(0 <= entry["param"]["x"] <= 1 and 1e-4 <= entry["param"]["lr"] <= 0.1 and entry["param"]["k"] in (0, 1)
               for entry in summary)

    calls = []

    def interrupted(search_idx, x, lr, k):
        calls.append(search_idx)
        if search_idx == 4 and calls.count(4) == 1:
            raise KeyboardInterrupt  # the driver dies while trial 4 runs
        return quadratic(search_idx, x, lr, k)

    search = OptunaSearch(interrupted, params=SPACE, n_trials=6, best_mode="min", seed=3)
    with pytest.raises(KeyboardInterrupt):
        search.fit(str(tmp_path))
    again = OptunaSearch(interrupted, params=SPACE, n_trials=6, best_mode="min", seed=3)
    again.fit(str(tmp_path))
    assert calls == [1, 2, 3, 4, 4, 5, 6]  # trials 1-3 not run again; 4 (running) is
    assert again.get_search_summary() == summary
    assert (tmp_path / "optuna_search.db").exists()


def test_optuna_search_checks_its_arguments():
    with pytest.raises(SearchError, match="not a parameter of eval_fn"):
        OptunaSearch(quadratic, params={"y": Range(0, 1)}, n_trials=2, best_mode="min")
    with pytest.raises(SearchError, match="n_trials"):
        OptunaSearch(quadratic, params=SPACE, n_trials=0, best_mode="min")
    with pytest.raises(SearchError, match="log-uniform Range needs low > 0"):
        LogRange(0.0, 1.0)
    with pytest.raises(SearchError, match="Range, LogRange or Choice"):
        OptunaSearch(quadratic, params={**SPACE, "x": "0..1"}, n_trials=1, best_mode="min").fit()
    assert Range(1, 8).integer and not Range(1.0, 8.0).integer
    with pytest.raises(SearchError, match="on Ray needs a study"):
        OptunaSearch(quadratic, params=SPACE, n_trials=1, best_mode="min").fit(executor=_NoStartRay())


class _NoStartRay(Ray):
    """A Ray executor that does not start Ray (the check runs before any trial)."""

    def start(self) -> None:
        self._ray = None

    def concurrency(self) -> int:
        return 2


def test_trial_seeds_depend_only_on_the_search_seed_and_search_idx():
    def draw(search_idx, a):
        return {"draw": float(np.random.rand()), "seed": current_trial().seed}

    first = GridSearch(draw, params={"a": [1, 2, 3]}, seed=9)
    first.fit()
    second = GridSearch(draw, params={"a": [1, 2, 3]}, seed=9)
    second.fit()
    assert first.get_search_summary() == second.get_search_summary()
    assert [entry["result"]["seed"] for entry in first.get_search_summary()] == [trial_seed(9, i) for i in (1, 2, 3)]
    assert len({entry["result"]["draw"] for entry in first.get_search_summary()}) == 3
    assert trial_seed(9, 1) != trial_seed(10, 1)


def test_a_serial_search_can_record_failures_instead_of_stopping(tmp_path):
    with pytest.raises(ValueError, match="b=2 is not allowed"):  # FastEstimator's behaviour by default
        GridSearch(search_trials.fails_on_b2, params={"a": [1], "b": [1, 2, 3]}).fit()
    search = GridSearch(search_trials.fails_on_b2, params={"a": [1], "b": [1, 2, 3]})
    search.fit(str(tmp_path), executor=Serial(stop_on_error=False))
    assert [entry["param"]["b"] for entry in search.get_search_summary()] == [1, 3]
    assert search.get_failed_trials() == [{"param": {"a": 1, "b": 2, "search_idx": 2},
                                           "error": "ValueError: b=2 is not allowed (trial 2)", "log": None}]
    golden = GoldenSection(lambda search_idx, n: 1 / (n - 2), x_min=0, x_max=6, max_iter=5, best_mode="min")
    with pytest.raises(SearchError, match="the trial at n=2 failed"):
        golden.fit(executor=Serial(stop_on_error=False))


@pytest.mark.parametrize("module, make", [
    ("ray", lambda: GridSearch(lambda search_idx, a: a, params={"a": [1]}).fit(executor=Ray())),
    ("optuna", lambda: OptunaSearch(quadratic, params=SPACE, n_trials=1, best_mode="min").fit()),
])
def test_without_the_search_extra_one_line_names_it(monkeypatch, module, make):
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(MissingExtraError) as error:
        make()
    message = str(error.value)
    assert "\n" not in message and "fe-core[search]" in message and module in message
