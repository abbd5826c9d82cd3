"""System: the run state traces share, and its save_state/load_state checkpoints."""
from __future__ import annotations

import os
import random
import re
from collections import defaultdict
from typing import Any, Dict, List

import numpy as np
import pytest

from fe_core.framework import Backend, register_backend, unregister_backend
from fe_core.schedule import EpochScheduler
from fe_core.summary import Summary, System, ValWithError


# ---------------------------------------------------------------------------------------------------- test doubles
class FakeModel:

    def __init__(self, name: str, with_optimizer: bool = True) -> None:
        self.model_name = name
        self.weights = np.arange(4, dtype=np.float32)
        self.optimizer = {"lr": 0.1} if with_optimizer else None


class FakeBackend(Backend):
    """Saves a model's weights (and its optimizer's learning rate) as .npy files."""

    name = "fake_system_backend"

    def __init__(self) -> None:
        self.counter = 0  # stands in for the framework's random state
        self.load_calls: List[tuple] = []

    def save_model(self, model: FakeModel, save_dir: str, save_optimizer: bool) -> List[str]:
        files = [f"{model.model_name}.npy"]
        np.save(os.path.join(save_dir, files[0]), model.weights)
        if save_optimizer:
            files.append(f"{model.model_name}_opt.npy")
            np.save(os.path.join(save_dir, files[1]), np.array([model.optimizer["lr"]]))
        return files

    def load_model(self, model: FakeModel, load_dir: str, load_optimizer: bool) -> None:
        self.load_calls.append((model.model_name, load_optimizer))
        model.weights = np.load(os.path.join(load_dir, f"{model.model_name}.npy"), allow_pickle=False)
        if load_optimizer:
            model.optimizer["lr"] = float(np.load(os.path.join(load_dir, f"{model.model_name}_opt.npy"))[0])

    def get_rng_state(self) -> Any:
        return {"counter": self.counter}

    def set_rng_state(self, state: Any) -> None:
        self.counter = state["counter"]


class FakeNetwork:

    def __init__(self, backend: Backend, models: List[Any], ops: List[Any] = ()) -> None:
        self.backend = backend
        self.models = models
        self.ops = list(ops)
        self.slicers: List[Any] = []
        self.postprocessing: List[Any] = []


class FakePipeline:

    def __init__(self, ops: List[Any] = (), data: Dict[str, Dict[str, Any]] = None) -> None:
        self.ops = list(ops)
        self.data = data or {}


class CountingTrace:
    """A Trace-like object whose state lives in plain attributes (no get_state/set_state)."""

    def __init__(self) -> None:
        self.system = None  # back reference, never saved
        self.fn = len  # configuration, never saved
        self.model = FakeModel("held_by_trace")  # not storable, so configuration too
        self.count = 0
        self.best = float("inf")
        self.history = np.zeros(3)
        self.per_class: Dict[str, List[int]] = defaultdict(list)
        self.nested = defaultdict(lambda: defaultdict(int))


class StatefulOp:
    """An op choosing its own state."""

    def __init__(self) -> None:
        self.seen = 0
        self.cache = object()

    def get_state(self) -> Dict[str, Any]:
        return {"seen": self.seen}

    def set_state(self, state: Dict[str, Any]) -> None:
        self.seen = state["seen"]


@pytest.fixture
def backend():
    instance = FakeBackend()
    register_backend(FakeBackend.name, instance)
    yield instance
    unregister_backend(FakeBackend.name)


def make_system(backend: Backend, traces: List[Any] = None, models: List[Any] = None, **kwargs: Any) -> System:
    network = FakeNetwork(backend, models if models is not None else [FakeModel("net")], ops=[StatefulOp()])
    pipeline = FakePipeline(ops=[StatefulOp()], data={"train": {"": StatefulOp()}})
    return System(network=network, pipeline=pipeline, traces=traces if traces is not None else [CountingTrace()],
                  **kwargs)


# ---------------------------------------------------------------------------------------------------- plain System
def test_defaults_match_fastestimator():
    system = System(network=None, pipeline=None, traces=[])
    assert system.mode is None and system.ds_id == "" and system.num_devices == 0
    assert system.global_step is None and system.epoch_idx == 0 and system.batch_idx is None
    assert system.log_steps is None and system.total_epochs == 0 and system.stop_training is False
    assert system.train_steps_per_epoch is None and system.eval_steps_per_epoch is None
    assert system.eval_log_steps_request == [] and system.eval_log_steps == ([], 0)
    assert isinstance(system.summary, Summary) and not system.summary and system.summary.name is None
    assert system.experiment_time == "" and system.custom_graphs == {}
    assert isinstance(system.exp_id, int) and -2**63 <= system.exp_id < 2**63


def test_constructor_arguments_are_kept():
    traces = [CountingTrace()]
    system = System(network="net", pipeline="pipe", traces=traces, mode="eval", ds_id="ds1", num_devices=2,
                    log_steps=10, total_epochs=3, train_steps_per_epoch=5, eval_steps_per_epoch=7,
                    eval_log_steps=(1, 100), system_config=["config"])
    assert (system.network, system.pipeline, system.traces) == ("net", "pipe", traces)
    assert (system.mode, system.ds_id, system.num_devices, system.log_steps, system.total_epochs) == \
        ("eval", "ds1", 2, 10, 3)
    assert system.eval_log_steps_request == [1, 100]
    assert system.summary.system_config == ["config"]


def test_each_system_gets_its_own_experiment_id():
    assert System(None, None, []).exp_id != System(None, None, []).exp_id


@pytest.mark.parametrize("mode, expected", [("train", 5), ("eval", 7), ("test", None), (None, None)])
def test_steps_per_epoch_follows_the_mode(mode, expected):
    system = System(None, None, [], mode=mode, train_steps_per_epoch=5, eval_steps_per_epoch=7)
    assert system.steps_per_epoch == expected


def test_global_step_and_batch_idx_count_from_none():
    system = System(None, None, [])
    system.update_global_step()
    system.update_batch_idx()
    assert (system.global_step, system.batch_idx) == (1, 1)
    system.update_global_step()
    system.update_batch_idx()
    system.update_batch_idx()
    assert (system.global_step, system.batch_idx) == (2, 3)


def test_reset_starts_a_new_named_experiment():
    system = System(None, None, [], mode="eval", ds_id="ds1", total_epochs=4)
    old_id = system.exp_id
    system.global_step, system.epoch_idx, system.batch_idx, system.stop_training = 9, 3, 4, True
    system.add_graph("g", Summary("g"))
    system.reset(summary_name="exp", system_config="cfg")
    assert (system.mode, system.ds_id, system.global_step, system.epoch_idx, system.batch_idx) == \
        ("train", "", None, 0, None)
    assert system.stop_training is False and system.custom_graphs == {}
    assert system.summary.name == "exp" and system.summary.system_config == "cfg" and not system.summary.history
    assert re.fullmatch(r"\d{8}-\d{6}", system.experiment_time)
    assert system.exp_id != old_id and system.total_epochs == 4


def test_reset_without_name_gives_a_non_recording_summary():
    system = System(None, None, [])
    system.reset()
    system.update_global_step()
    system.write_summary("loss", 1.0)
    assert not system.summary and not system.summary.history


def test_reset_for_test_moves_to_the_last_epoch_and_clears_old_test_results():
    system = System(None, None, [], total_epochs=5)
    system.reset(summary_name="exp")
    system.experiment_time = "20200101-000000"
    system.epoch_idx = 2
    system.summary.history["train"]["loss"][1] = 0.5
    system.summary.history["test"]["acc"][1] = 0.1
    graph = Summary("graph")
    graph.history["test"]["x"][1] = 1
    graph.history["eval"]["x"][1] = 2
    system.add_graph("g", graph)
    system.reset_for_test()
    assert (system.mode, system.ds_id, system.epoch_idx) == ("test", "", 5)
    assert "test" not in system.summary.history and system.summary.history["train"]["loss"] == {1: 0.5}
    assert "test" not in graph.history and graph.history["eval"]["x"] == {1: 2}
    assert system.summary.name == "exp"  # kept when no new name is given
    assert system.experiment_time == "20200101-000000"


def test_reset_for_test_keeps_the_epoch_when_training_stopped_early():
    system = System(None, None, [], total_epochs=5)
    system.reset(summary_name="exp")
    system.epoch_idx, system.stop_training = 2, True
    system.reset_for_test(summary_name="renamed")
    assert system.epoch_idx == 2 and system.stop_training is False
    assert system.summary.name == "renamed"


def test_reset_for_test_before_fit_sets_an_experiment_time():
    system = System(None, None, [])
    system.reset_for_test()
    assert re.fullmatch(r"\d{8}-\d{6}", system.experiment_time)


def test_write_summary_records_at_global_step_or_zero_for_named_experiments():
    system = System(None, None, [])
    system.write_summary("ignored", 1)
    assert not system.summary.history
    system.reset(summary_name="exp")
    system.write_summary("lr", 0.1)  # before the first step
    system.update_global_step()
    system.update_global_step()
    system.write_summary("loss", 0.5)
    system.mode = "eval"
    system.write_summary("acc", 0.9)
    assert system.summary.history["train"] == {"lr": {0: 0.1}, "loss": {2: 0.5}}
    assert system.summary.history["eval"]["acc"] == {2: 0.9}


def test_add_graph_stores_lists_of_summaries_by_name():
    system = System(None, None, [])
    first, second, third = Summary("a"), Summary("b"), Summary("c")
    system.add_graph("single", first)
    pair = [first, second]
    system.add_graph("pair", pair)
    pair.append(third)  # the System keeps its own list
    assert system.custom_graphs == {"single": [first], "pair": [first, second]}
    system.add_graph("single", third)
    assert system.custom_graphs["single"] == [third]


# ---------------------------------------------------------------------------------------------------- checkpoints
def test_save_and_load_restore_progress_summary_and_graphs(backend, tmp_path):
    system = make_system(backend, total_epochs=4, eval_log_steps=(1, 50))
    system.reset(summary_name="exp")
    system.global_step, system.epoch_idx, system.batch_idx = 120, 3, 7
    system.eval_log_steps = ([1, 50], 80)
    system.write_summary("loss", np.float32(0.25))
    system.summary.history["eval"]["acc"][120] = ValWithError(0.1, 0.2, 0.3)
    system.summary.history["eval"]["confusion"][120] = np.eye(3)
    graph = Summary("graph")
    graph.history["train"]["lr"][5] = 0.01
    system.add_graph("lrs", graph)
    saved_id, saved_time = system.exp_id, system.experiment_time
    system.save_state(str(tmp_path / "ckpt"))

    restored = make_system(backend, total_epochs=4)
    restored.reset(summary_name="other")
    restored.load_state(str(tmp_path / "ckpt"))
    assert (restored.global_step, restored.epoch_idx, restored.batch_idx, restored.mode) == (120, 3, 7, "train")
    assert (restored.exp_id, restored.experiment_time) == (saved_id, saved_time)
    assert restored.eval_log_steps == ([1, 50], 80)
    assert restored.eval_log_steps_request == []  # the script's configuration, never the checkpoint's
    assert restored.summary.name == "exp"
    loss = restored.summary.history["train"]["loss"]
    assert loss == {120: 0.25} and type(loss[120]) is np.float32 and list(loss) == [120]
    assert restored.summary.history["eval"]["acc"][120] == ValWithError(0.1, 0.2, 0.3)
    np.testing.assert_array_equal(restored.summary.history["eval"]["confusion"][120], np.eye(3))
    restored.write_summary("loss", 0.2)  # the restored history still grows like a fresh one
    assert restored.summary.history["train"]["new_key"] == {}
    assert restored.custom_graphs["lrs"][0].name == "graph"
    assert restored.custom_graphs["lrs"][0].history["train"]["lr"] == {5: 0.01}


def test_trace_state_is_restored_and_configuration_is_untouched(backend, tmp_path):
    trace = CountingTrace()
    trace.count, trace.best = 7, 0.125
    trace.history[:] = [1.0, 2.0, 3.0]
    trace.per_class["cat"].extend([1, 2])
    trace.nested["a"]["b"] += 3
    system = make_system(backend, traces=[trace])
    system.network.ops[0].seen = 11
    system.pipeline.ops[0].seen = 12
    system.pipeline.data["train"][""].seen = 13
    system.save_state(str(tmp_path / "ckpt"))

    fresh = CountingTrace()
    fresh.system = "the new system"
    own_model = fresh.model
    restored = make_system(backend, traces=[fresh])
    restored.load_state(str(tmp_path / "ckpt"))
    assert (fresh.count, fresh.best) == (7, 0.125)
    np.testing.assert_array_equal(fresh.history, [1.0, 2.0, 3.0])
    assert fresh.per_class == {"cat": [1, 2]}
    assert fresh.system == "the new system" and fresh.fn is len and fresh.model is own_model
    # defaultdict factories survive, at every level
    fresh.per_class["dog"].append(3)
    fresh.nested["a"]["c"] += 1
    fresh.nested["z"]["y"] += 1
    assert fresh.per_class["dog"] == [3] and fresh.nested["a"] == {"b": 3, "c": 1} and fresh.nested["z"] == {"y": 1}
    assert restored.network.ops[0].seen == 11
    assert restored.pipeline.ops[0].seen == 12
    assert restored.pipeline.data["train"][""].seen == 13


def test_models_and_optimizers_are_saved_by_the_backend_and_loaded_back(backend, tmp_path):
    with_opt, without_opt = FakeModel("a"), FakeModel("b", with_optimizer=False)
    with_opt.weights[:] = [9, 8, 7, 6]
    with_opt.optimizer["lr"] = 0.5
    system = make_system(backend, models=[with_opt, without_opt])
    system.save_state(str(tmp_path / "ckpt"))
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["a.npy", "a_opt.npy", "arrays.npz", "b.npy", "state.json",
                                                     "system.json"]

    new_a, new_b = FakeModel("a"), FakeModel("b", with_optimizer=False)
    make_system(backend, models=[new_a, new_b]).load_state(str(tmp_path / "ckpt"))
    np.testing.assert_array_equal(new_a.weights, [9, 8, 7, 6])
    assert new_a.optimizer["lr"] == 0.5
    assert backend.load_calls == [("a", True), ("b", False)]


def test_random_streams_continue_after_load(backend, tmp_path):
    system = make_system(backend)
    random.seed(1)
    np.random.seed(2)
    backend.counter = 42
    system.save_state(str(tmp_path / "ckpt"))
    expected = ([random.random() for _ in range(3)], np.random.rand(3))
    backend.counter = 0
    random.seed(99)
    np.random.seed(99)

    make_system(backend).load_state(str(tmp_path / "ckpt"))
    assert [random.random() for _ in range(3)] == expected[0]
    np.testing.assert_array_equal(np.random.rand(3), expected[1])
    assert backend.counter == 42


def test_schedulers_save_each_distinct_trace_once(backend, tmp_path):
    first, second = CountingTrace(), CountingTrace()
    first.count, second.count = 1, 2
    traces = [first, EpochScheduler({1: second, 3: None, 5: first})]
    make_system(backend, traces=traces).save_state(str(tmp_path / "ckpt"))

    new_first, new_second = CountingTrace(), CountingTrace()
    make_system(backend, traces=[new_first, EpochScheduler({1: new_second, 3: None, 5: new_first})]).load_state(
        str(tmp_path / "ckpt"))
    assert (new_first.count, new_second.count) == (1, 2)


def test_loading_into_a_different_number_of_traces_is_refused(backend, tmp_path):
    make_system(backend, traces=[CountingTrace(), CountingTrace()]).save_state(str(tmp_path / "ckpt"))
    trace = CountingTrace()
    restored = make_system(backend, traces=[trace])
    restored.global_step = 5
    with pytest.raises(ValueError, match=r"'traces' holds 2 saved states, but 1 traces are in memory"):
        restored.load_state(str(tmp_path / "ckpt"))
    assert restored.global_step == 5  # nothing was changed


def test_loading_into_different_models_is_refused(backend, tmp_path):
    make_system(backend, models=[FakeModel("a")]).save_state(str(tmp_path / "ckpt"))
    with pytest.raises(ValueError, match=r"holds the models \['a'\], but the network has \['b'\]"):
        make_system(backend, models=[FakeModel("b")]).load_state(str(tmp_path / "ckpt"))


def test_unstorable_state_returned_by_get_state_fails_the_save_naming_it(backend, tmp_path):

    class Handle:
        pass

    class BadTrace:

        def get_state(self) -> Dict[str, Any]:
            return {"ok": 1, "history": Handle()}

    system = make_system(backend, traces=[CountingTrace(), BadTrace()])
    with pytest.raises(TypeError, match=r"traces\[1\]\.history: cannot store object of type .*Handle"):
        system.save_state(str(tmp_path / "ckpt"))
    assert not os.path.exists(tmp_path / "ckpt")


def test_system_without_network_or_pipeline_round_trips(tmp_path):
    system = System(network=None, pipeline=None, traces=[CountingTrace()])
    system.reset(summary_name="exp")
    system.global_step = 3
    system.traces[0].count = 4
    system.save_state(str(tmp_path / "ckpt"))
    restored = System(network=None, pipeline=None, traces=[CountingTrace()])
    restored.load_state(str(tmp_path / "ckpt"))
    assert restored.global_step == 3 and restored.traces[0].count == 4 and restored.summary.name == "exp"


def test_system_json_is_human_readable(backend, tmp_path):
    import json
    system = make_system(backend, total_epochs=2)
    system.global_step = 17
    system.save_state(str(tmp_path / "ckpt"))
    with open(tmp_path / "ckpt" / "system.json", encoding="utf-8") as file:
        meta = json.load(file)
    assert meta["system"]["global_step"] == 17 and meta["system"]["total_epochs"] == 2
    assert meta["models"] == [{"name": "net", "files": ["net.npy", "net_opt.npy"], "optimizer": True,
                               "auto_name": False}]
    assert set(meta["files"]) == {"state.json", "arrays.npz", "net.npy", "net_opt.npy"}
