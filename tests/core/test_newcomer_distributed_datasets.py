"""Issue 30 item 2: every process of a data-parallel run builds the same datasets, or fit/test refuse to start.

FastEstimator's idiom `test_data = eval_data.split(0.5)` (no seed) runs in every process of a torchrun or multi-worker
TF launch; an unseeded split draws from a stream all the launch's processes share, and a dataset that still differs
between processes (a per-process shuffle or seed) stops `fit`/`test` with a message naming it.
"""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.dataset import NumpyDataset
from fe_core.distributed.communicator import get_communicator
from fe_core.distributed.dataset_check import DatasetMismatchError, check_datasets_agree, dataset_fingerprint
from fe_core.distributed import launch
from fe_core.distributed.launch import launch_key
from fe_core.distributed.threads import ThreadGroup
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline

@pytest.fixture(autouse=True)
def _no_deterministic_seed(monkeypatch):
    """These tests are about unseeded launches: a seed another test gave `enable_deterministic` must not leak in."""
    from fe_core import determinism
    monkeypatch.setattr(determinism, "_seed", None)


TORCHRUN_ENV = {"WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29512", "TORCHELASTIC_RUN_ID": "abc"}
TF_CONFIG = {"cluster": {"worker": ["127.0.0.1:1001", "127.0.0.1:1002"]}}


def test_the_launch_key_is_the_same_on_every_rank_and_absent_in_one_process():
    keys = {launch_key(dict(TORCHRUN_ENV, RANK=str(rank), LOCAL_RANK=str(rank))) for rank in range(2)}
    assert len(keys) == 1 and None not in keys
    tf_keys = {launch_key({"TF_CONFIG": json.dumps(dict(TF_CONFIG, task={"type": "worker", "index": index}))})
               for index in range(2)}
    assert len(tf_keys) == 1 and None not in tf_keys
    assert launch_key({}) is None
    assert launch_key({"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1"]}})}) is None
    assert launch_key(dict(TORCHRUN_ENV, MASTER_PORT="29513", RANK="0")) not in keys  # another launch


def _split_in_a_process(monkeypatch, rank: int, env: dict) -> list:
    """What one process of the launch does: its own numpy seed, a fresh count of unseeded draws, the launcher's env."""
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TF_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(launch, "_counter", itertools.count())  # a new process has made no draws yet
    np.random.seed(rank + 7)  # each process's global generator differs
    eval_data = NumpyDataset({"x": np.arange(40)})
    test_data = eval_data.split(0.5)
    second = eval_data.split(3)
    return [list(test_data["x"]), list(second["x"])]


def test_an_unseeded_split_is_the_same_in_every_process_of_a_torchrun_launch(monkeypatch):
    ranks = [_split_in_a_process(monkeypatch, rank, dict(TORCHRUN_ENV, RANK=str(rank), LOCAL_RANK=str(rank)))
             for rank in range(2)]
    assert ranks[0] == ranks[1]
    assert len(ranks[0][0]) == 20 and len(ranks[0][1]) == 3


def test_an_unseeded_split_is_the_same_in_every_tf_worker(monkeypatch):
    ranks = [_split_in_a_process(monkeypatch, index, {"TF_CONFIG": json.dumps(dict(TF_CONFIG, task={
        "type": "worker", "index": index}))}) for index in range(2)]
    assert ranks[0] == ranks[1]


def test_single_processes_still_split_from_numpy_s_global_generator(monkeypatch):
    ranks = [_split_in_a_process(monkeypatch, rank, {}) for rank in range(2)]
    assert ranks[0] != ranks[1]  # seeds 7 and 8: FastEstimator's behaviour


def test_fingerprints_tell_equal_and_different_data_apart():
    same = dataset_fingerprint(NumpyDataset({"x": np.arange(10), "y": np.ones(10)}))
    assert same == dataset_fingerprint(NumpyDataset({"x": np.arange(10), "y": np.ones(10)}))
    assert same != dataset_fingerprint(NumpyDataset({"x": np.arange(10)[::-1].copy(), "y": np.ones(10)}))
    assert same["length"] == 10 and same["hash"]


def _rank_dependent_pipeline(shuffled_by_rank: bool) -> Pipeline:
    x = np.arange(24, dtype=np.float32)[:, None].repeat(2, axis=1)
    train = NumpyDataset({"x": x, "y": x[:, :1]})
    eval_x = x.copy()
    if shuffled_by_rank:
        np.random.default_rng(get_communicator().rank).shuffle(eval_x)
    return Pipeline(train_data=train, eval_data=NumpyDataset({"x": eval_x, "y": eval_x[:, :1]}), batch_size=4)


def test_equal_datasets_pass_the_check():
    ThreadGroup(2).run(lambda: check_datasets_agree(_rank_dependent_pipeline(False), {"train", "eval"}))


def test_fit_refuses_to_start_naming_the_dataset_that_differs():
    nb.install()
    try:
        def work():
            model = nb.build(2, 1, name=f"m{get_communicator().rank}")
            network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                                    MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                                    UpdateOp(model=model, loss_name="mse")])
            Estimator(pipeline=_rank_dependent_pipeline(True), network=network, epochs=1, log_steps=None).fit()

        with pytest.raises(DatasetMismatchError) as info:
            ThreadGroup(2).run(work)
    finally:
        nb.uninstall()
    message = str(info.value)
    assert message.startswith("fit refuses to start: the Pipeline's eval_data (rank 0: 24 samples")
    assert "differs between the 2 processes" in message
    assert "rank 0: 24 samples" in message and "rank 1: 24 samples" in message and "seed" in message


def test_test_refuses_too():
    def work():
        pipeline = Pipeline(test_data=NumpyDataset({"x": np.arange(6 + get_communicator().rank)}), batch_size=2)
        check_datasets_agree(pipeline, {"test"}, "test")

    with pytest.raises(DatasetMismatchError, match=r"^test refuses to start: the Pipeline's test_data \(rank 0: "
                                                   r"6 samples.*rank 1: 7 samples.*\) differs"):
        ThreadGroup(2).run(work)
