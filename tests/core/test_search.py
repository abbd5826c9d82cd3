"""Hyperparameter searches: GridSearch, GoldenSection, caching, best results, JSON save/resume, and the plots."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from fe_core.search import GoldenSection, GridSearch, Search, SearchError
from fe_core.search.visualize import (plot_cartesian, plot_heatmap, plot_parallel_coordinates, visualize_cartesian,
                                      visualize_search)
from fe_core.search.visualize.vis_util import SearchData
from fe_core.search.visualize.visualize import choose_visualization


def test_grid_search_evaluates_every_combination_in_order_and_finds_the_best(capsys):
    calls = []

    def eval_fn(search_idx, a, b):
        calls.append((search_idx, a, b))
        return a + b

    search = GridSearch(eval_fn=eval_fn, params={"a": [1, 2, 3], "b": [4, 5, 6]})
    search.fit()
    assert calls[:3] == [(1, 1, 4), (2, 1, 5), (3, 1, 6)] and len(calls) == 9
    assert search.get_best_results() == {"param": {"a": 3, "b": 6, "search_idx": 9}, "result": {"value": 9}}
    assert search.get_best_results(best_mode="min") == {"param": {"a": 1, "b": 4, "search_idx": 1},
                                                        "result": {"value": 5}}
    assert "FastEstimator-Search: Evaluated {'a': 1, 'b': 4}, result: {'value': 5}" in capsys.readouterr().out


def test_dict_results_need_an_optimize_field_when_ambiguous():
    search = GridSearch(eval_fn=lambda search_idx, a: {"loss": -a, "acc": np.float32(a / 10)},
                        params={"a": [1, 2]}, best_mode="max")
    search.fit()
    with pytest.raises(AssertionError, match="optimize_field"):
        search.get_best_results()
    best = search.get_best_results(optimize_field="acc")
    assert best["param"]["a"] == 2 and isinstance(best["result"]["acc"], float)  # numpy scalar made plain
    assert search.get_best_results(optimize_field="loss")["param"]["a"] == 1


def test_numpy_results_are_stored_as_lists():
    search = GridSearch(eval_fn=lambda search_idx, a: {"curve": np.arange(a)}, params={"a": [3]})
    search.fit()
    assert search.get_search_summary()[0]["result"] == {"curve": [0, 1, 2]}


@pytest.mark.parametrize("kwargs, message", [
    ({"eval_fn": lambda a: a, "params": {"a": [1]}}, "search_idx"),
    ({"eval_fn": lambda search_idx, a: a, "params": [1, 2]}, "dict"),
    ({"eval_fn": lambda search_idx, a: a, "params": {"c": [1]}}, "not an argument"),
    ({"eval_fn": lambda search_idx, a: a, "params": {"a": []}}, "non-empty list"),
    ({"eval_fn": lambda search_idx, a: a, "params": {"a": [1]}, "best_mode": "best"}, "best_mode"),
])
def test_grid_search_rejects_bad_arguments(kwargs, message):
    with pytest.raises(AssertionError, match=message):
        GridSearch(**kwargs)
    with pytest.raises(ValueError, match=message):  # SearchError is both
        GridSearch(**kwargs)


def test_evaluate_reuses_known_results_and_refuses_search_idx():
    calls = []
    search = GridSearch(eval_fn=lambda search_idx, a: calls.append(a) or a, params={"a": [1]})
    assert search.evaluate(a=5) == {"value": 5}
    assert search.evaluate(a=5) == {"value": 5}
    assert calls == [5]
    with pytest.raises(SearchError, match="search_idx"):
        search.evaluate(a=1, search_idx=3)


def test_golden_section_finds_the_integer_minimum_with_few_evaluations():
    search = GoldenSection(eval_fn=lambda search_idx, n: (n - 3)**2, x_min=0, x_max=6, max_iter=10, best_mode="min")
    search.fit()
    best = search.get_best_results()
    assert best["param"]["n"] == 3 and best["result"] == {"value": 0}
    evaluated = [entry["param"]["n"] for entry in search.get_search_summary()]
    assert len(evaluated) == len(set(evaluated)) <= 6  # never the same point twice
    assert all(isinstance(n, int) and 0 <= n <= 6 for n in evaluated)


def test_golden_section_finds_a_real_maximum_and_shrinks_the_range():
    search = GoldenSection(eval_fn=lambda search_idx, x: {"score": -(x - 1.7)**2}, x_min=-5.0, x_max=5.0,
                           max_iter=25, best_mode="max", integer=False)
    search.fit()
    assert len(search.search_summary) == 27  # two points, then one per iteration
    assert abs(search.get_best_results()["param"]["x"] - 1.7) < 1e-3


@pytest.mark.parametrize("kwargs, message", [
    ({"eval_fn": lambda search_idx, a, b: a}, "exactly one other argument"),
    ({"x_min": 5, "x_max": 1}, "x_min < x_max"),
    ({"max_iter": -1}, "max_iter"),
    ({"best_mode": "up"}, "best_mode"),
    ({"x_min": 0.5}, "integer limits"),
])
def test_golden_section_rejects_bad_arguments(kwargs, message):
    arguments = {"eval_fn": lambda search_idx, n: n, "x_min": 0, "x_max": 6, "max_iter": 3, "best_mode": "min"}
    arguments.update(kwargs)
    with pytest.raises(AssertionError, match=message):
        GoldenSection(**arguments)


def test_save_load_and_resume_an_interrupted_search(tmp_path):
    calls = []

    def eval_fn(search_idx, a):
        if a == 3 and not calls.count("resumed"):
            raise KeyboardInterrupt
        calls.append(a)
        return a * 10

    search = GridSearch(eval_fn=eval_fn, params={"a": [1, 2, 3, 4]}, name="resume_me")
    with pytest.raises(KeyboardInterrupt):
        search.fit(save_dir=str(tmp_path))
    saved = json.loads((tmp_path / "resume_me.json").read_text())
    assert [entry["param"]["a"] for entry in saved["search_summary"]] == [1, 2]
    calls.append("resumed")
    fresh = GridSearch(eval_fn=eval_fn, params={"a": [1, 2, 3, 4]}, name="resume_me")
    fresh.fit(save_dir=str(tmp_path))
    assert calls == [1, 2, "resumed", 3, 4]  # 1 and 2 came from the file
    assert [entry["param"]["search_idx"] for entry in fresh.get_search_summary()] == [1, 2, 3, 4]
    loaded = GridSearch(eval_fn=eval_fn, params={"a": [1]}, name="resume_me")
    loaded.load(str(tmp_path))
    assert loaded.get_best_results()["result"] == {"value": 40}
    with pytest.raises(FileNotFoundError, match="missing"):
        GridSearch(eval_fn=eval_fn, params={"a": [1]}, name="missing").load(str(tmp_path))
    GridSearch(eval_fn=eval_fn, params={"a": [1]}, name="missing").load(str(tmp_path), not_exist_ok=True)
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_get_best_results_before_fit_says_so():
    with pytest.raises(AssertionError, match="fit"):
        GridSearch(eval_fn=lambda search_idx, a: a, params={"a": [1]}).get_best_results()


def test_search_base_needs_a_strategy():
    with pytest.raises(NotImplementedError):
        Search(eval_fn=lambda search_idx: 1).fit()


# ---------------------------------------------------------------------------------------------------- visualisation
# (plotly comes with the `plot` extra, which every test suite installs)


def grid_search():
    search = GridSearch(eval_fn=lambda search_idx, lr, opt: {"acc": lr * (2 if opt == "adam" else 1), "loss": -lr},
                        params={"lr": [0.1, 0.2, 0.3], "opt": ["adam", "sgd"]}, name="grid")
    search.fit()
    return search


def test_search_data_columns_and_categories():
    data = SearchData(grid_search(), ignore_keys="loss")
    assert data.params == ["lr", "opt"] and data.results == ["acc"]
    assert data.categories == {"opt": ["adam", "sgd"]}
    assert data.to_category("opt", "sgd") == "sgd" and data.to_category("lr", 0.1) is None
    assert data.numeric("opt") == [0.0, 1.0] * 3


def test_heatmap_cells_hold_the_results():
    figure = plot_heatmap(grid_search(), ignore_keys=["loss"], title="T")
    heatmap = figure.data[0]
    assert list(heatmap.x) == ["0.1", "0.2", "0.3"] and list(heatmap.y) == ["adam", "sgd"]
    assert [list(row) for row in heatmap.z] == [[0.2, 0.4, 0.6], [0.1, 0.2, 0.3]]
    assert figure.layout.title.text == "T"
    with pytest.raises(ValueError, match="exactly 2 parameters and 1 result"):
        plot_heatmap(grid_search())


def test_cartesian_plots_each_result_against_the_parameter_with_groups():
    search = GridSearch(eval_fn=lambda search_idx, x: {"a": x * 2, "b": x * 3, "c": -x}, params={"x": [3, 1, 2]})
    search.fit()
    figure = plot_cartesian(search, groups=[["a", "b"]])
    assert [trace.name for trace in figure.data] == ["a", "b", "c"]
    assert list(figure.data[0].x) == [1, 2, 3] and list(figure.data[0].y) == [2, 4, 6]  # sorted by x
    assert figure.data[0].xaxis == figure.data[1].xaxis != figure.data[2].xaxis
    with pytest.raises(ValueError, match="exactly 1 parameter"):
        plot_cartesian(grid_search())


def test_parallel_coordinates_axes_and_colors():
    figure = plot_parallel_coordinates(grid_search(), color_by="acc")
    dimensions = figure.data[0].dimensions
    assert [d.label for d in dimensions] == ["lr", "opt", "acc", "loss"]
    assert list(dimensions[1].ticktext) == ["adam", "sgd"]
    assert list(figure.data[0].line.color) == [0.2, 0.1, 0.4, 0.2, 0.6, 0.3]
    with pytest.raises(ValueError, match="color_by"):
        plot_parallel_coordinates(grid_search(), color_by="nope")


def test_visualize_saves_html_from_a_saved_search_file(tmp_path, capsys):
    search = grid_search()
    search.save(str(tmp_path))
    path = str(tmp_path / "grid.json")
    assert choose_visualization(path) == "parallel"
    assert choose_visualization(path, ignore_keys=["loss"]) == "heatmap"
    assert choose_visualization(path, ignore_keys=["opt"]) == "cartesian"
    visualize_search(path, save_path=str(tmp_path / "out"), ignore_keys=["loss"])  # a file stem, as FastEstimator
    assert (tmp_path / "out.html").read_text().count("heatmap") >= 1
    (tmp_path / "plots").mkdir()
    visualize_search(path, save_path=str(tmp_path / "plots"), ignore_keys=["loss"])  # a directory
    assert (tmp_path / "plots" / "grid.html").is_file()
    visualize_cartesian(search, ignore_keys="opt", save_path=str(tmp_path / "c.html"), title="my plot")
    assert (tmp_path / "c.html").exists()
    assert f"Saving to {tmp_path / 'c.html'}" in capsys.readouterr().out


def test_plots_are_figure_fe_and_heatmaps_save_as_png(tmp_path):
    from fe_core.search.visualize import visualize_heatmap
    from fe_core.util.figure import FigureFE
    assert isinstance(plot_heatmap(grid_search(), ignore_keys="loss"), FigureFE)
    visualize_heatmap(grid_search(), ignore_keys="loss", save_path=str(tmp_path / "heat.png"), verbose=False)
    assert (tmp_path / "heat.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
