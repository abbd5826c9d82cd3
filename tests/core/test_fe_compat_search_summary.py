"""Search and summary behaviour as FastEstimator documents it (issue 28, item 8): figure save paths without an
extension are file stems, and `average_summaries` averages per step as FastEstimator does."""
from __future__ import annotations

from pathlib import Path

import pytest

from fe_core.search import GridSearch
from fe_core.search.visualize import visualize_search
from fe_core.summary.summary import Summary, ValWithError, average_summaries


def test_visualize_search_treats_a_path_without_extension_as_a_file_stem(tmp_path: Path) -> None:
    search = GridSearch(eval_fn=lambda search_idx, a, b: {"sum": a + b}, params={"a": [1, 2], "b": [3, 4]})
    search.fit()
    visualize_search(search, save_path=str(tmp_path / "figures" / "my_search"), verbose=False)
    assert (tmp_path / "figures" / "my_search.html").is_file()
    assert not (tmp_path / "figures" / "my_search").exists()


def test_average_summaries_follows_fastestimator() -> None:
    empty = average_summaries("none", [])
    assert isinstance(empty, Summary) and empty.name == "none" and not empty.history
    only = Summary("x")
    only.history["eval"]["acc"][5] = 0.5
    assert average_summaries("renamed", [only]) is only and only.name == "renamed"
    runs = [Summary("a"), Summary("b"), Summary("c")]
    for run, acc, early_stop_step in zip(runs, (0.5, 0.7, 0.9), (30, 20, 30)):
        run.history["eval"]["acc"][10] = acc
        run.history["eval"]["epoch"][10] = 1
        run.history["eval"]["same"][10] = 2.0
        run.history["train"]["lr"][10] = "0.001"  # FastEstimator reads the one number a string holds
        run.history["train"]["ce"][10] = ValWithError(0.0, acc, 1.0)  # its middle value counts
        run.history["test"]["acc"][early_stop_step] = acc
    averaged = average_summaries("abc", runs)
    acc = averaged.history["eval"]["acc"][10]
    assert acc.as_tuple() == pytest.approx((0.5, 0.7, 0.9))  # mean +- the sample standard deviation (0.2)
    assert "epoch" not in averaged.history["eval"]  # epochs are not averaged
    assert averaged.history["eval"]["same"][10] == 2.0  # equal values stay one value
    assert averaged.history["train"]["lr"][10] == pytest.approx(0.001)
    assert averaged.history["train"]["ce"][10].y == pytest.approx(0.7)
    assert list(averaged.history["test"]["acc"]) == [30]  # test values pooled at the largest step
    assert averaged.history["test"]["acc"][30].y == pytest.approx(0.7)
