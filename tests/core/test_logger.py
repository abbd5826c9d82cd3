"""The Logger trace: the exact FastEstimator log lines it prints, and what it records in the Summary."""
import numpy as np
import pytest
from natsort import humansorted

from fe_core.data import Data
from fe_core.summary.summary import Summary, ValWithError
from fe_core.summary.system import System
from fe_core.trace import Logger


def make_logger(mode="train", log_steps=20, global_step=None, epoch_idx=0, ds_id="", eval_log_steps=([], 0),
                summary_name="exp"):
    system = System(network=None, pipeline=None, traces=[], mode=mode, ds_id=ds_id, num_devices=0,
                    log_steps=log_steps, total_epochs=2)
    system.summary = Summary(summary_name)
    system.global_step = global_step
    system.epoch_idx = epoch_idx
    system.eval_log_steps = eval_log_steps
    logger = Logger()
    logger.system = system
    return logger, system


def logged(**values):
    data = Data()
    for key, value in values.items():
        data.write_with_log(key.replace("__", "/"), value)
    return data


def lines(capsys):
    return capsys.readouterr().out.splitlines()


def test_logger_reads_everything_so_it_runs_last():
    assert Logger().inputs == ["*"]
    assert Logger().outputs == []


# ---------------------------------------------------------------- start / finish
def test_start_line_shows_step_one_and_the_logged_values(capsys):
    logger, _ = make_logger()
    logger.on_begin(logged(num_device=0, logging_interval=20))
    assert capsys.readouterr().out == "FastEstimator-Start: step: 1; logging_interval: 20; num_device: 0;\n"


def test_start_line_without_values(capsys):
    logger, _ = make_logger()
    logger.on_begin(Data())
    assert capsys.readouterr().out == "FastEstimator-Start: step: 1;\n"


def test_a_none_value_prints_as_none(capsys):
    logger, _ = make_logger(log_steps=None)
    logger.on_begin(logged(logging_interval=None))
    assert lines(capsys) == ["FastEstimator-Start: step: 1; logging_interval: None;"]


def test_start_line_after_a_restore_shows_the_current_step(capsys):
    logger, _ = make_logger(global_step=120)
    logger.on_begin(Data())
    assert lines(capsys) == ["FastEstimator-Start: step: 120;"]


def test_finish_line(capsys):
    logger, _ = make_logger(global_step=40)
    logger.on_end(logged(model_lr=np.float32(0.001), **{"total_time(sec)": 3.21}))
    assert lines(capsys) == ["FastEstimator-Finish: step: 40; model_lr: 0.001; total_time(sec): 3.21;"]


def test_no_start_or_finish_line_when_testing(capsys):
    logger, _ = make_logger(mode="test", global_step=40)
    logger.on_begin(logged(x=1))
    logger.on_end(logged(x=1))
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------- train steps
def test_train_line_at_a_log_step(capsys):
    logger, _ = make_logger(global_step=20)
    logger.on_batch_end(logged(ce=np.float32(0.73), steps__sec=7.1))
    assert lines(capsys) == ["FastEstimator-Train: step: 20; ce: 0.73; steps/sec: 7.1;"]


def test_train_lines_at_step_one_and_multiples_of_log_steps_only(capsys):
    logger, system = make_logger(log_steps=3)
    for step in range(1, 8):
        system.global_step = step
        logger.on_batch_end(logged(ce=np.array(0.5)))
    assert lines(capsys) == ["FastEstimator-Train: step: 1; ce: 0.5;", "FastEstimator-Train: step: 3; ce: 0.5;",
                             "FastEstimator-Train: step: 6; ce: 0.5;"]


@pytest.mark.parametrize("log_steps", [0, None])
def test_no_train_step_lines_without_log_steps(capsys, log_steps):
    logger, system = make_logger(log_steps=log_steps)
    for step in (1, 20, 40):
        system.global_step = step
        logger.on_batch_end(logged(ce=0.5))
    assert capsys.readouterr().out == ""


def test_keys_are_sorted_the_human_way(capsys):
    logger, _ = make_logger(global_step=1)
    logger.on_batch_end(logged(acc10=1, Beta=2, acc2=3, alpha=4))
    assert lines(capsys) == ["FastEstimator-Train: step: 1; acc2: 3; acc10: 1; alpha: 4; Beta: 2;"]


def test_every_line_is_sorted_for_its_own_keys_when_the_keys_change_and_repeat(capsys):
    logger, system = make_logger(global_step=1)
    logger.on_batch_end(logged(acc10=1, acc2=2))
    system.global_step = 20
    logger.on_batch_end(logged(acc2=3, acc10=4, Beta=5))  # a new key, and the same keys in another order
    system.global_step = 40
    logger.on_batch_end(logged(acc10=6, acc2=7))
    assert lines(capsys) == ["FastEstimator-Train: step: 1; acc2: 2; acc10: 1;",
                             "FastEstimator-Train: step: 20; acc2: 3; acc10: 4; Beta: 5;",
                             "FastEstimator-Train: step: 40; acc2: 7; acc10: 6;"]


def test_keys_that_change_on_every_line_are_still_sorted(capsys):
    logger, system = make_logger(global_step=20)
    for step in range(1, 101):  # more distinct key sets than the Logger remembers orders for
        system.global_step = 20 * step
        logger.on_batch_end(logged(**{f"k{step + 1}": 1, f"k{step}": 2, f"K{step}x": 3}))
    out = lines(capsys)
    assert len(out) == 100
    for step, line in enumerate(out, start=1):
        keys = [part.split(":")[0] for part in line.split("; ")[1:]]
        assert keys == humansorted([f"k{step + 1}", f"k{step}", f"K{step}x"])


def test_multi_element_arrays_are_printed_after_the_line(capsys):
    logger, _ = make_logger(global_step=20)
    logger.on_batch_end(logged(ce=np.float64(0.5), confusion=np.array([[3, 0], [1, 2]]), hist=[1, 2]))
    assert capsys.readouterr().out == ("FastEstimator-Train: step: 20; ce: 0.5;\n"
                                       "confusion:\n[[3,0],\n [1,2]];\n"
                                       "hist:\n[1,2];\n")


def test_val_with_error_prints_as_a_triple(capsys):
    logger, _ = make_logger(mode="eval", global_step=20, epoch_idx=1)
    logger.on_epoch_end(logged(auc=ValWithError(0.1, 0.2, 0.3)))
    assert lines(capsys) == ["FastEstimator-Eval: step: 20; epoch: 1; auc: (0.1, 0.2, 0.3);"]


# ---------------------------------------------------------------- eval progress
def test_eval_progress_at_the_eval_log_steps(capsys):
    logger, _ = make_logger(mode="eval", global_step=20, eval_log_steps=([1, 3], 3))
    logger.on_epoch_begin(Data())
    logger.on_batch_end(Data())
    logger.on_batch_end(Data())
    logger.on_batch_end(logged(steps__sec=12.5))
    assert lines(capsys) == ["Eval Progress: 1/3;", "Eval Progress: 3/3; steps/sec: 12.5;"]


def test_eval_progress_names_the_dataset_and_counts_per_dataset(capsys):
    logger, system = make_logger(mode="eval", global_step=20, ds_id="ds1", eval_log_steps=([1, 2], 2))
    logger.on_epoch_begin(Data())
    logger.on_batch_end(Data())
    logger.on_batch_end(Data())
    system.ds_id = "ds2"
    system.eval_log_steps = ([1], 4)
    logger.on_batch_end(Data())
    assert lines(capsys) == ["Eval Progress (ds1): 1/2;", "Eval Progress (ds1): 2/2;", "Eval Progress (ds2): 1/4;"]


def test_eval_progress_restarts_every_epoch(capsys):
    logger, _ = make_logger(mode="eval", global_step=20, eval_log_steps=([1], 2))
    for _ in range(2):
        logger.on_epoch_begin(Data())
        logger.on_batch_end(Data())
        logger.on_batch_end(Data())
    assert lines(capsys) == ["Eval Progress: 1/2;", "Eval Progress: 1/2;"]


def test_no_step_lines_while_testing(capsys):
    logger, system = make_logger(mode="test", global_step=20, eval_log_steps=([1], 2))
    logger.on_epoch_begin(Data())
    logger.on_batch_end(logged(acc=1.0))
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------- epoch ends
def test_epoch_end_lines_for_each_mode(capsys):
    logger, system = make_logger(global_step=40, epoch_idx=2)
    logger.on_epoch_end(logged(**{"epoch_time(sec)": 1.5}))
    system.mode = "eval"
    logger.on_epoch_end(logged(ce=np.float32(0.25), **{"ce|ds1": np.float32(0.5)}))
    system.mode = "test"
    logger.on_epoch_end(logged(accuracy=np.float64(0.98)))
    assert lines(capsys) == ["FastEstimator-Train: step: 40; epoch: 2; epoch_time(sec): 1.5;",
                             "FastEstimator-Eval: step: 40; epoch: 2; ce: 0.25; ce|ds1: 0.5;",
                             "FastEstimator-Test: step: 40; epoch: 2; accuracy: 0.98;"]


def test_train_epoch_line_prints_even_with_log_steps_zero(capsys):
    logger, _ = make_logger(log_steps=0, global_step=4, epoch_idx=1)
    logger.on_epoch_end(Data())
    assert lines(capsys) == ["FastEstimator-Train: step: 4; epoch: 1;"]


def test_a_test_without_training_claims_no_step_or_epoch(capsys):
    logger, system = make_logger(mode="test", global_step=None, epoch_idx=8)
    logger.on_epoch_end(logged(acc=1))
    assert lines(capsys) == ["FastEstimator-Test: step: 0; acc: 1;"]  # not 'step: None; epoch: 8'
    assert "epoch" not in system.summary.history["test"]


def test_logged_scalars_enter_the_history_as_plain_python_numbers_not_0d_arrays(capsys):
    """Plain Python numbers (issue 30 item 12): a printed history reads {45: 0.5}, not {45: np.float32(0.5)}."""
    logger, system = make_logger(mode="eval", global_step=45, epoch_idx=1)
    logger.on_epoch_end(logged(accuracy=np.array(0.69637883), ce=np.float32(0.5), lr=0.001, count=np.array([3])))
    history = system.summary.history["eval"]
    for key in ("accuracy", "ce", "lr", "count"):
        value = history[key][45]
        assert not isinstance(value, np.ndarray), (key, type(value))
    assert [type(history[key][45]) for key in ("accuracy", "ce", "lr", "count")] == [float, float, float, int]
    assert history["ce"][45] == 0.5 and history["accuracy"][45] == 0.69637883
    (line,) = lines(capsys)
    assert "lr: 0.001;" in line and "ce: 0.5;" in line


# ---------------------------------------------------------------- summary
def test_every_logged_value_and_the_epoch_go_into_the_summary(capsys):
    logger, system = make_logger(global_step=20, epoch_idx=1)
    logger.on_batch_end(logged(ce=np.float32(0.73)))
    logger.on_epoch_end(logged(auc=ValWithError(0.1, 0.2, 0.3), confusion=np.eye(2)))
    history = system.summary.history["train"]
    assert history["ce"][20] == pytest.approx(0.73)
    assert history["epoch"] == {20: 1}
    assert history["auc"][20] == ValWithError(0.1, 0.2, 0.3)
    np.testing.assert_array_equal(history["confusion"][20], np.eye(2))
    capsys.readouterr()


def test_eval_values_are_recorded_under_eval(capsys):
    logger, system = make_logger(mode="eval", global_step=30, epoch_idx=3)
    logger.on_epoch_end(logged(ce=0.5))
    assert system.summary.history["eval"]["ce"] == {30: 0.5}
    assert "train" not in system.summary.history
    capsys.readouterr()


def test_nothing_is_recorded_for_an_unnamed_run(capsys):
    logger, system = make_logger(global_step=20, summary_name=None)
    logger.on_batch_end(logged(ce=0.5))
    assert not system.summary.history
    assert lines(capsys) == ["FastEstimator-Train: step: 20; ce: 0.5;"]
