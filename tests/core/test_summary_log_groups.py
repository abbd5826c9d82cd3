"""FastEstimator's log tools: parse_log_iter, average_summaries, and parse_log_files / parse_log_dir with group_by."""
from __future__ import annotations

import pytest

from fe_core.summary.log_parse import group_summaries, parse_log_dir, parse_log_files
from fe_core.summary.logs import parse_log_iter, parse_log_text
from fe_core.summary.summary import Summary, ValWithError, average_summaries

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def log(ce_train: float, acc: float) -> str:
    return (f"FastEstimator-Train: step: 10; ce: {ce_train};\n"
            f"FastEstimator-Eval: step: 10; epoch: 1; accuracy: {acc};\n")


def test_parse_log_iter_adds_into_the_given_summary():
    summary = Summary("run")
    summary.history["train"]["ce"][1] = 3.0
    assert parse_log_iter(log(1.0, 0.5).splitlines(), summary) is summary
    assert summary.history["train"]["ce"] == {1: 3.0, 10: 1.0}
    assert summary.history["eval"]["accuracy"] == {10: 0.5}


def test_average_summaries_reports_mean_and_std_where_several_runs_recorded():
    first, second = parse_log_text(log(1.0, 0.5), "a"), parse_log_text(log(3.0, 0.7), "b")
    second.history["eval"]["only_b"][10] = 4
    averaged = average_summaries("ab", [first, second])
    assert averaged.name == "ab"
    ce = averaged.history["train"]["ce"][10]  # mean +- the sample standard deviation, as FastEstimator
    assert isinstance(ce, ValWithError) and ce.as_tuple() == pytest.approx((2.0 - 2 ** 0.5, 2.0, 2.0 + 2 ** 0.5))
    assert averaged.history["eval"]["accuracy"][10].y == pytest.approx(0.6)
    assert averaged.history["eval"]["only_b"][10] == 4  # one datapoint: kept as is
    empty = average_summaries("none", [])
    assert empty.name == "none" and not empty.history


def test_group_by_averages_files_per_group(tmp_path):
    paths = []
    for name, ce in (("a_1.txt", 1.0), ("a_2.txt", 3.0), ("b_1.txt", 5.0)):
        (tmp_path / name).write_text(log(ce, 0.5))
        paths.append(str(tmp_path / name))
    summaries = parse_log_files(paths, save=True, save_path=str(tmp_path / "plot.png"), group_by=r"(.*)_[\d]+\.txt")
    assert [summary.name for summary in summaries] == ["a", "b"]
    assert summaries[0].history["train"]["ce"][10].as_tuple() == pytest.approx((2 - 2 ** 0.5, 2.0, 2 + 2 ** 0.5))
    assert summaries[1].history["train"]["ce"][10] == 5.0
    assert (tmp_path / "plot.png").read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(ValueError, match="'b_1.txt' does not match the group_by pattern"):
        parse_log_files(paths, save=True, save_path=str(tmp_path / "x.png"), group_by=r"^a_")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        group_summaries(paths, summaries, "(")


def test_no_log_files_is_an_assertion_error_and_a_value_error(tmp_path):
    with pytest.raises(AssertionError):
        parse_log_files([])
    with pytest.raises(ValueError, match="No log files"):
        parse_log_dir(str(tmp_path), save=True)


def test_parse_log_dir_takes_a_single_file_and_saves_next_to_it(tmp_path, capsys):
    (tmp_path / "only.txt").write_text(log(1.0, 0.5))
    summaries = parse_log_dir(str(tmp_path / "only.txt"), save=True)
    assert [summary.name for summary in summaries] == ["only"]
    assert (tmp_path / "parse_logs.png").read_bytes()[:8] == PNG_MAGIC
    assert "Saving to" in capsys.readouterr().out
