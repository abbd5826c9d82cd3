"""Issue 30 item 12: numbers print alike in data-parallel and single-process runs (`ce: 1.7793143`, not
`ce: 1.849661149308833` in one and the other format in the other), and a printed history holds plain Python numbers
(`{45: 0.79...}`, not `{45: np.float64(0.79...)}`)."""
from __future__ import annotations

import numpy as np

from fe_core.data import Data
from fe_core.distributed import get_communicator
from fe_core.distributed.threads import ThreadGroup
from fe_core.summary.summary import Summary
from fe_core.trace import EvalEssential
from fe_core.trace.logger import Logger
from trace_helpers import make_system

LOSSES = [(3, 1.1), (1, 5.3), (4, 2.7)]  # (samples, mean loss) of three batches


def _eval_mean(batches):
    trace = EvalEssential(monitor_names="ce")
    system = make_system(trace, mode="eval")
    trace.on_epoch_begin(Data())
    for samples, loss in batches:
        system.batch_samples = samples
        trace.on_batch_end(Data({"ce": np.float32(loss)}))
    end = Data()
    trace.on_epoch_end(end)
    return end.read_logs()["ce"]


def test_a_data_parallel_eval_loss_keeps_the_float32_of_one_process():
    single = _eval_mean(LOSSES)
    ranks = ThreadGroup(2).run(lambda: _eval_mean(LOSSES[get_communicator().rank::2]))
    assert np.asarray(single).dtype == np.float32
    for value in ranks:
        assert np.asarray(value).dtype == np.float32
        assert len(str(np.asarray(value)[()])) <= len(str(np.float32(1 / 3)))  # float32's digits, not float64's


def test_the_history_holds_plain_python_numbers(capsys):
    logger = Logger()
    system = make_system(logger, mode="eval")
    system.summary = Summary("run")
    system.global_step, system.epoch_idx = 45, 1
    data = Data()
    data.write_with_log("accuracy", np.float64(0.7944444444444444))
    data.write_with_log("ce", np.float32(0.5123))
    logger.on_epoch_end(data)
    history = system.summary.history["eval"]
    assert repr(history["accuracy"]) == "{45: 0.7944444444444444}"
    assert type(history["ce"][45]) is float
    assert "ce: 0.5123;" in capsys.readouterr().out
