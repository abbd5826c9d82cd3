"""Per-instance output of data-parallel runs covers every process's samples: CSVLogger's instance rows and TestReport's
failure counts and ids (ranks simulated by threads, each with its own communicator; rank 0 writes the files)."""
from __future__ import annotations

import csv
import json

import numpy as np

from fe_core.data import Data
from fe_core.distributed import get_communicator
from fe_core.distributed.threads import ThreadGroup
from fe_core.trace.io import CSVLogger, TestReport
from fe_core.trace.io.test_report import TestCase
from trace_helpers import make_system

# 10 samples: ids 0..9, 'score' = id / 10; split over ranks batch by batch
BATCHES = [np.arange(0, 3), np.arange(3, 5), np.arange(5, 8), np.arange(8, 10)]


def _batches_of_this_rank():
    comm = get_communicator()
    return BATCHES[comm.rank::comm.world_size]


def _log_instances(path):
    logger = CSVLogger(str(path), monitor_names="score", instance_id_key="id", mode="test")
    system = make_system(logger, mode="test")
    system.epoch_idx = 0
    logger.on_begin(Data())
    logger.on_epoch_begin(Data())
    for ids in _batches_of_this_rank():
        logger.on_batch_end(Data({"id": ids, "score": ids / 10}))
    end = Data()
    end.write_with_log("score", 0.45)
    logger.on_epoch_end(end)
    logger.on_end(Data())
    return len(logger.rows)


def _read(path):
    with open(path, newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def test_csvlogger_writes_every_rank_s_instances(tmp_path):
    single = tmp_path / "single.csv"
    _log_instances(single)
    parallel = tmp_path / "parallel.csv"
    counts = ThreadGroup(2).run(lambda: _log_instances(parallel))
    assert counts == [11, 11]  # 10 instance rows and the epoch row, on both ranks
    rows = _read(parallel)
    assert sorted(int(row["instance_id"]) for row in rows if row["instance_id"]) == list(range(10))
    assert {row["instance_id"]: row["score"] for row in rows} == {row["instance_id"]: row["score"]
                                                                    for row in _read(single)}
    assert rows[-1]["instance_id"] == "" and rows[-1]["score"] == "0.45"


def _report(path):
    case = TestCase(description="score below 0.75", criteria=lambda score: score < 0.75, aggregate=False,
                    fail_threshold=1)
    report = TestReport(test_cases=[case], save_path=str(path), test_title="parallel", data_id="id")
    report.check_pdf_dependency = lambda: None
    system = make_system(report, mode="test")
    report.on_begin(Data())
    for ids in _batches_of_this_rank():
        report.on_batch_end(Data({"id": ids, "score": ids / 10}))
    report.on_epoch_end(Data())
    return case.fail_number, sorted(case.fail_id), case.result


def test_testreport_counts_every_rank_s_failures(tmp_path):
    assert ThreadGroup(2).run(lambda: _report(tmp_path)) == [(2, [8, 9], False)] * 2  # ids 8 and 9 fail; threshold 1
    assert _report(tmp_path / "single") == (2, [8, 9], False)
