"""Data-parallel training under torchrun: 2 processes on gloo (127.0.0.1, a free port), bounded in time.

The script (`distributed_script.py`) is an ordinary fe script; these tests check what a user sees: every rank ends
with the same weights, each training sample is used exactly once per epoch across the ranks, evaluation and test
metrics and losses equal the values computed directly from the final weights on all the data (no padding
duplicates, means over samples), `num_devices` is the world size, only rank 0 prints, and a run killed mid-epoch
resumes bitwise-exactly.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
import torch

from process_helpers import launch, run_processes
from torch_helpers import torchrun

SCRIPT = Path(__file__).with_name("distributed_script.py")


def results(out: Path, nproc: int = 2) -> List[Dict]:
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(nproc)]


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory) -> Tuple[List[Dict], str]:
    """One uninterrupted 2-rank run, with a RestoreWizard (its checkpoints change nothing in the run), that the tests
    below read; the resume test compares a killed and resumed run with it (one launch fewer: CI time)."""
    out = tmp_path_factory.mktemp("ddp")
    code, output = torchrun(out, SCRIPT, FE_T_CKPT=str(out / "ckpt"))
    assert code == 0, output[-3000:]
    return results(out), output


@pytest.mark.slow
def test_ranks_end_with_the_same_weights_through_ddp(two_ranks):
    ranks, _ = two_ranks
    assert [r["world_size"] for r in ranks] == [2, 2]
    assert ranks[0]["weights"] == ranks[1]["weights"]
    assert ranks[0]["ddp"] and ranks[1]["ddp"]  # trained through the internal wrapper ...
    assert ranks[0]["state_keys"] == ["0.bias", "0.weight", "2.bias", "2.weight"]  # ... the model is the user's


@pytest.mark.slow
def test_every_training_sample_once_per_epoch_with_equal_steps(two_ranks):
    ranks, _ = two_ranks
    for epoch in ("1", "2"):
        parts = [r["seen"][epoch] for r in ranks]
        assert sorted(parts[0] + parts[1]) == list(range(13))  # 13 samples: none dropped, none repeated
        assert abs(len(parts[0]) - len(parts[1])) <= 1
    assert ranks[0]["seen"]["1"] != ranks[0]["seen"]["2"]  # re-shuffled each epoch
    # enable_deterministic seeded both processes alike, yet their random ops draw different numbers
    assert ranks[0]["numpy_draw"] != ranks[1]["numpy_draw"]


@pytest.mark.slow
def test_eval_and_test_values_are_over_all_samples_once(two_ranks):
    ranks, _ = two_ranks
    for rank in ranks:
        last = max(rank["history"]["eval"]["ce"], key=int)
        assert rank["history"]["eval"]["ce"][last] == pytest.approx(rank["truth_ce"], rel=1e-6)
        assert rank["history"]["eval"]["accuracy"][last] == pytest.approx(rank["truth_acc"], abs=1e-12)
        test = rank["history"]["test"]
        assert list(test["ce"].values())[0] == pytest.approx(rank["truth_ce"], rel=1e-6)
        assert list(test["accuracy"].values())[0] == pytest.approx(rank["truth_acc"], abs=1e-12)
    assert ranks[0]["history"]["eval"] == ranks[1]["history"]["eval"]


@pytest.mark.slow
def test_num_devices_is_the_world_size_and_only_rank_0_prints(two_ranks):
    ranks, output = two_ranks
    assert [r["num_devices"] for r in ranks] == [2, 2]
    assert output.count("FastEstimator-Start:") == 1
    assert output.count("FastEstimator-Finish:") == 1
    assert "num_device: 2;" in output


@pytest.mark.slow
def test_a_run_killed_mid_epoch_resumes_bitwise(two_ranks, tmp_path):
    clean, _ = two_ranks  # the same script, uninterrupted, with a RestoreWizard too
    code, output = torchrun(tmp_path / "crashed", SCRIPT, FE_T_CKPT=str(tmp_path / "ckpt"), FE_T_CRASH_AT="5")
    assert code != 0
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["key.txt", "step-2", "step-4"]  # written once, by rank 0
    code, output = torchrun(tmp_path / "crashed", SCRIPT, FE_T_CKPT=str(tmp_path / "ckpt"))
    assert code == 0, output[-3000:]
    assert "restored" in output and "step-4 (epoch 2, step 4)" in output  # mid-epoch: epoch 2 has 3 steps
    resumed = results(tmp_path / "crashed")
    for before, after in zip(clean, resumed):
        assert after["weights"] == before["weights"]  # bitwise
        assert after["history"]["eval"] == before["history"]["eval"]
        assert after["seen"] == before["seen"]  # each rank's own samples, its trace state restored per rank


def plain_processes(out: Path, timeout: float = 240, **env: str) -> Tuple[List[int], str]:
    """Start 2 ordinary python processes with the variables a cluster manager sets (Slurm/Kubernetes/Ray Train
    export RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), no torchrun."""
    out.mkdir(parents=True, exist_ok=True)

    def start(ports: List[int]) -> Tuple[List[int], List[str]]:
        environs = [dict(os.environ, OMP_NUM_THREADS="1", FE_T_OUT=str(out), FE_HISTORY_DB=str(out / "history.db"),
                         RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank), MASTER_ADDR="127.0.0.1",
                         MASTER_PORT=str(ports[0]), **env) for rank in range(2)]
        return run_processes([[sys.executable, str(SCRIPT)]] * 2, environs, timeout)

    codes, outputs = launch(start)
    return codes, "".join(outputs)


@pytest.mark.slow
@pytest.mark.parametrize("self_init", ["", "1"], ids=["fe-initialises", "script-initialised-the-group"])
def test_processes_started_by_a_cluster_manager(tmp_path, self_init):
    codes, output = plain_processes(tmp_path, FE_T_SELF_INIT=self_init)
    assert codes == [0, 0], output[-3000:]
    ranks = results(tmp_path)
    assert [r["world_size"] for r in ranks] == [2, 2] and ranks[0]["weights"] == ranks[1]["weights"]
    assert sorted(ranks[0]["seen"]["1"] + ranks[1]["seen"]["1"]) == list(range(13))


@pytest.mark.slow
@pytest.mark.parametrize("given", ["", "1"], ids=["from-losses", "from-given-gradients"])
def test_two_models_updated_in_one_step_stay_in_sync(tmp_path, given):
    code, output = torchrun(tmp_path, script=SCRIPT.with_name("distributed_gan_script.py"), FE_T_GIVEN_GRADS=given)
    assert code == 0, output[-3000:]
    ranks = results(tmp_path)
    assert ranks[0]["ddp"] == [True, True]
    assert ranks[0]["weights"] == ranks[1]["weights"]


@pytest.mark.slow
def test_special_datasets_are_split_from_one_shared_order(tmp_path):
    code, output = torchrun(tmp_path, script=SCRIPT.with_name("distributed_datasets_script.py"))
    assert code == 0, output[-3000:]
    first, second = results(tmp_path)
    for kind in first:
        for epoch in ("1", "2"):
            mine, theirs = first[kind][epoch], second[kind][epoch]
            assert mine["len"] == theirs["len"] == len(mine["batches"]) == len(theirs["batches"])
            assert all(len(a) == len(b) == 2 for a, b in zip(mine["batches"], theirs["batches"]))

    def union(kind, epoch):
        return sorted(sum(first[kind][epoch]["batches"] + second[kind][epoch]["batches"], []))
    for epoch in ("1", "2"):
        # ExtendDataset: one index map for all processes, so the 16 draws cover each of the 10 samples
        assert set(union("extend", epoch)) == set(range(10)) and len(union("extend", epoch)) == 16
        # BatchDataset (2 + 2 per global batch): every sample of both datasets exactly once per epoch
        assert union("batch", epoch) == list(range(12)) + list(range(100, 112))
        # InterleaveDataset: 2 repetitions of [0, 1]: all 8 of the first dataset, 8 distinct of the second
        got = union("interleave", epoch)
        assert [i for i in got if i < 100] == list(range(8)) and len(set(i for i in got if i >= 100)) == 8
    # GeneratorDataset: the ranks' generators give the same stream; it is split by rank (one line says so), not
    # repeated: 8 different samples per epoch, new ones in epoch 2
    generated = [union("generator", epoch) for epoch in ("1", "2")]
    assert len(set(generated[0])) == len(set(generated[1])) == 8 and not set(generated[0]) & set(generated[1])
    assert output.count("a GeneratorDataset in a run of 2 processes is split by rank") == 1


def test_a_single_process_checkpoint_is_refused_by_two_processes(tmp_path):
    from fe_core.distributed.rank_state import rank_entry
    from fe_core.distributed.threads import ThreadGroup
    errors = ThreadGroup(2).run(lambda: _error_of(rank_entry, None, "ckpt"))
    assert all("written by a single process" in error for error in errors)


def _error_of(function, *args) -> Optional[str]:
    try:
        function(*args)
    except ValueError as error:
        return str(error)
    return None


@pytest.mark.gpu
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="NCCL data-parallel needs 2 GPUs (one per process)")
def test_nccl_on_two_gpus(tmp_path):
    code, output = torchrun(tmp_path, SCRIPT, nproc=2)
    assert code == 0, output[-3000:]
    ranks = results(tmp_path)
    assert ranks[0]["weights"] == ranks[1]["weights"]
    assert ranks[0]["history"]["eval"]["ce"] == ranks[1]["history"]["eval"]["ce"]
