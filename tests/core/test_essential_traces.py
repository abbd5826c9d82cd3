"""The Essential traces: what TrainEssential, EvalEssential and TestEssential log, and when."""
from types import SimpleNamespace

import numpy as np
import pytest

import fe_core.trace.essential as essential_module
from fe_core.data import Data
from fe_core.summary.system import System
from fe_core.trace import EvalEssential, TestEssential, TrainEssential


class FakeClock:
    """Stands in for time.perf_counter so speeds and times are exact."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(essential_module, "perf_counter", fake)
    return fake


class FakeBackend:
    def get_lr(self, model):
        return model.current_optimizer * 10


def make_system(mode="train", log_steps=10, ds_id="", network=None, eval_log_steps=([], 0)):
    system = System(network=network, pipeline=None, traces=[], mode=mode, ds_id=ds_id, num_devices=2,
                    log_steps=log_steps, total_epochs=3)
    system.eval_log_steps = eval_log_steps
    return system


def attach(trace, system):
    trace.system = system
    return trace


def batch_end(trace, system, step, **batch):
    system.global_step = step
    data = Data(dict(batch))
    trace.on_batch_end(data)
    return data.read_logs()


# ---------------------------------------------------------------- TrainEssential
def test_train_essential_declares_its_keys():
    trace = TrainEssential({"loss", "ce"})
    assert trace.inputs == ["ce", "loss"]
    assert trace.mode == {"train"}
    assert set(trace.outputs) == {"num_device", "logging_interval", "steps/sec", "epoch_time(sec)",
                                  "total_time(sec)"}


def test_train_essential_logs_devices_and_interval_on_begin(clock):
    system = make_system(log_steps=25)
    trace = attach(TrainEssential({"ce"}), system)
    data = Data()
    trace.on_begin(data)
    assert data.read_logs() == {"num_device": 2, "logging_interval": 25}


def test_train_essential_logs_monitored_keys_at_log_steps_and_speed_from_step_two(clock):
    system = make_system(log_steps=10)
    trace = attach(TrainEssential({"ce", "absent"}), system)
    trace.on_begin(Data())
    trace.on_epoch_begin(Data())
    clock.now = 1.0
    assert batch_end(trace, system, 1, ce=np.float32(0.9), x=1) == {"ce": np.float32(0.9)}
    clock.now = 2.0
    assert batch_end(trace, system, 2, ce=np.float32(0.8)) == {}
    clock.now = 4.0
    assert batch_end(trace, system, 10, ce=np.float32(0.5)) == {"ce": np.float32(0.5), "steps/sec": 3.0}  # 9 steps/3s


def test_train_essential_speed_excludes_time_between_epochs(clock):
    system = make_system(log_steps=10)
    trace = attach(TrainEssential({"ce"}), system)
    trace.on_begin(Data())
    trace.on_epoch_begin(Data())
    clock.now = 1.0
    batch_end(trace, system, 10, ce=1.0)
    clock.now = 2.0
    end = Data()
    trace.on_epoch_end(end)
    assert end.read_logs() == {"epoch_time(sec)": 2.0}
    clock.now = 100.0  # evaluation time, not counted
    trace.on_epoch_begin(Data())
    clock.now = 103.0
    assert batch_end(trace, system, 20, ce=1.0)["steps/sec"] == 2.5  # 10 steps in 1 s + 3 s


def test_train_essential_logs_per_dataset_keys(clock):
    system = make_system(log_steps=2, ds_id="ds1")
    trace = attach(TrainEssential({"ce"}), system)
    trace.on_begin(Data())
    trace.on_epoch_begin(Data())
    clock.now = 1.0
    assert batch_end(trace, system, 1, ce=0.9) == {"ce|ds1": 0.9}
    clock.now = 2.0
    assert batch_end(trace, system, 2, ce=0.7) == {"ce|ds1": 0.7, "steps/sec|ds1": 1.0}


@pytest.mark.parametrize("log_steps", [0, None])
def test_train_essential_is_silent_per_step_and_epoch_without_log_steps(clock, log_steps):
    system = make_system(log_steps=log_steps)
    trace = attach(TrainEssential({"ce"}), system)
    trace.on_begin(Data())
    trace.on_epoch_begin(Data())
    for step in (1, 2, 10, 20):
        assert batch_end(trace, system, step, ce=0.5) == {}
    end = Data()
    trace.on_epoch_end(end)
    assert end.read_logs() == {}


def test_train_essential_on_end_logs_total_time_and_learning_rates(clock):
    network = SimpleNamespace(
        backend=FakeBackend(),
        models=[SimpleNamespace(model_name="encoder", current_optimizer=0.01),
                SimpleNamespace(model_name="frozen", current_optimizer=None),
                SimpleNamespace(model_name="plain")])
    system = make_system(network=network)
    trace = attach(TrainEssential({"ce"}), system)
    trace.on_begin(Data())
    clock.now = 12.345
    system.mode = "eval"
    end = Data()
    trace.on_end(end)
    assert end.read_logs() == {"total_time(sec)": 12.35, "encoder_lr": 0.1}
    assert system.mode == "train"


def test_train_essential_on_end_without_a_network(clock):
    system = make_system(network=None)
    trace = attach(TrainEssential({"ce"}), system)
    trace.on_begin(Data())
    clock.now = 1.0
    end = Data()
    trace.on_end(end)
    assert end.read_logs() == {"total_time(sec)": 1.0}


# ---------------------------------------------------------------- EvalEssential
def run_eval_epoch(trace, system, batches_per_ds):
    """Run one eval epoch; batches_per_ds maps ds_id -> list of batches. Returns the epoch-end logs."""
    trace.on_epoch_begin(Data())
    for ds_id, batches in batches_per_ds.items():
        system.ds_id = ds_id
        for batch in batches:
            trace.on_batch_end(Data(dict(batch)))
    system.ds_id = ""
    end = Data()
    trace.on_epoch_end(end)
    return end.read_logs()


def test_eval_essential_declares_its_keys():
    trace = EvalEssential(["ce", "acc"])
    assert (trace.inputs, trace.outputs, trace.mode) == (["acc", "ce"], ["steps/sec"], {"eval"})


def test_eval_essential_logs_the_epoch_mean():
    system = make_system(mode="eval")
    trace = attach(EvalEssential({"ce"}), system)
    logs = run_eval_epoch(trace, system, {"": [{"ce": np.float32(10)}, {"ce": np.float32(20)}]})
    assert logs == {"ce": 15}
    assert float(logs["ce"]) == 15.0


def test_eval_essential_logs_per_dataset_means_and_the_combined_mean():
    system = make_system(mode="eval")
    trace = attach(EvalEssential({"ce", "acc"}), system)
    logs = run_eval_epoch(trace, system, {
        "ds1": [{"ce": np.array(10.0), "acc": 1.0}, {"ce": np.array(20.0), "acc": 0.0}],
        "ds2": [{"ce": np.array(40.0)}],
    })
    assert set(logs) == {"ce|ds1", "ce|ds2", "ce", "acc|ds1", "acc"}
    assert logs["ce|ds1"] == 15.0
    assert logs["ce|ds2"] == 40.0
    assert logs["ce"] == pytest.approx(70 / 3)
    assert logs["acc|ds1"] == logs["acc"] == 0.5


def test_eval_essential_averages_arrays_element_wise():
    system = make_system(mode="eval")
    trace = attach(EvalEssential({"per_class"}), system)
    logs = run_eval_epoch(trace, system, {"": [{"per_class": np.array([1.0, 2.0])},
                                                {"per_class": np.array([3.0, 6.0])}]})
    np.testing.assert_array_equal(logs["per_class"], [2.0, 4.0])


def test_eval_essential_starts_afresh_each_epoch():
    system = make_system(mode="eval")
    trace = attach(EvalEssential({"ce"}), system)
    run_eval_epoch(trace, system, {"": [{"ce": 100.0}]})
    assert run_eval_epoch(trace, system, {"": [{"ce": 1.0}, {"ce": 3.0}]}) == {"ce": 2.0}
    assert run_eval_epoch(trace, system, {"": [{"other": 1.0}]}) == {}


def test_eval_essential_names_the_key_when_values_cannot_be_averaged():
    system = make_system(mode="eval")
    trace = attach(EvalEssential({"ragged"}), system)
    with pytest.raises(ValueError, match=r"EvalEssential cannot average monitored key 'ragged'.*\(2,\).*\(3,\)"):
        run_eval_epoch(trace, system, {"": [{"ragged": np.zeros(2)}, {"ragged": np.zeros(3)}]})


def test_eval_essential_logs_speed_at_eval_log_steps_after_the_first(clock):
    system = make_system(mode="eval", eval_log_steps=([1, 3, 5], 5))
    trace = attach(EvalEssential({"ce"}), system)
    trace.on_epoch_begin(Data())
    logs = []
    for step in range(1, 6):
        clock.now = float(step * 2)  # one step every 2 s
        data = Data({"ce": 1.0})
        trace.on_batch_end(data)
        logs.append(data.read_logs())
    assert logs == [{}, {}, {"steps/sec": 0.5}, {}, {"steps/sec": 0.5}]


def test_eval_essential_times_each_dataset_separately(clock):
    system = make_system(mode="eval", eval_log_steps=([1, 2], 2))
    trace = attach(EvalEssential(set()), system)
    trace.on_epoch_begin(Data())
    logs = []
    for ds_id, times in (("ds1", (1.0, 2.0)), ("ds2", (10.0, 10.25))):
        system.ds_id = ds_id
        for now in times:
            clock.now = now
            data = Data()
            trace.on_batch_end(data)
            logs.append(data.read_logs())
    assert logs == [{}, {"steps/sec": 1.0}, {}, {"steps/sec": 4.0}]


# ---------------------------------------------------------------- TestEssential
def test_test_essential_logs_means_like_eval_without_speed():
    system = make_system(mode="test", eval_log_steps=([1, 2], 2))
    trace = attach(TestEssential({"acc"}), system)
    assert (trace.mode, trace.outputs) == ({"test"}, [])
    logs = run_eval_epoch(trace, system, {"": [{"acc": 10}, {"acc": 20}]})
    assert logs == {"acc": 15}


def test_test_essential_per_dataset_keys():
    system = make_system(mode="test")
    trace = attach(TestEssential({"acc"}), system)
    logs = run_eval_epoch(trace, system, {"a": [{"acc": 1.0}], "b": [{"acc": 0.0}, {"acc": 0.0}, {"acc": 1.0}]})
    assert logs["acc|a"] == 1.0
    assert logs["acc|b"] == pytest.approx(1 / 3)
    assert logs["acc"] == 0.5
