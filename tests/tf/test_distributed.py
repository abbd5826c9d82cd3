"""Data-parallel training on 2 TensorFlow workers (MultiWorkerMirroredStrategy from TF_CONFIG, 127.0.0.1 ports).

`distributed_script.py` is an ordinary fe script; each worker writes what it ended with. Checked: the strategy and
communicator fe chose, equal weights on both workers, every training sample once per epoch, eval values equal to
those computed from the final weights on all the eval data, num_devices = 2, only worker 0 prints.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from fe_tf.distribute import tf_config_workers
from process_helpers import launch, run_processes

SCRIPT = Path(__file__).with_name("distributed_script.py")


def run_workers(out: Path, timeout: float = 300, script: Optional[Path] = None, **extra: str
                ) -> Tuple[List[int], List[str]]:
    """Start 2 workers of `script` (this module's SCRIPT when None, read at the call); kill both (their process
    groups) if they overrun; once more on new ports when a port was taken between picking and binding it."""
    out.mkdir(parents=True, exist_ok=True)

    def start(ports: List[int]) -> Tuple[List[int], List[str]]:
        hosts = [f"127.0.0.1:{port}" for port in ports]
        envs = [dict(os.environ, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2", FE_T_OUT=str(out),
                     FE_HISTORY_DB=str(out / "history.db"), **extra,
                     TF_CONFIG=json.dumps({"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}}))
                for index in range(2)]
        return run_processes([[sys.executable, str(script or SCRIPT)]] * 2, envs, timeout,
                             what="the TensorFlow workers")

    return launch(start, ports=2)


def test_tf_config_names_the_workers_and_this_rank():
    config = {"cluster": {"chief": ["a:1"], "worker": ["b:2", "c:3"]}, "task": {"type": "worker", "index": 1}}
    assert tf_config_workers({"TF_CONFIG": json.dumps(config)}) == (3, 2)
    assert tf_config_workers({"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1"]}})}) is None
    assert tf_config_workers({}) is None
    with pytest.raises(ValueError, match="this task is 'ps'"):
        tf_config_workers({"TF_CONFIG": json.dumps({"cluster": {"worker": ["a:1", "b:2"]},
                                                     "task": {"type": "ps", "index": 0}})})


@pytest.mark.slow
def test_two_workers_train_one_model_on_all_samples_once(tmp_path):
    codes, outputs = run_workers(tmp_path)
    assert codes == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    ranks: List[Dict] = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(2)]
    assert [r["strategy"] for r in ranks] == ["CollectiveAllReduceStrategy"] * 2  # MultiWorkerMirroredStrategy
    assert [r["communicator"] for r in ranks] == ["tf", "tf"]
    assert ranks[0]["weights"] == ranks[1]["weights"]
    for epoch in ("1", "2"):
        assert sorted(ranks[0]["seen"][epoch] + ranks[1]["seen"][epoch]) == list(range(13))
    for rank in ranks:
        assert rank["num_devices"] == 2
        assert rank["history"]["ce"]["6"] == pytest.approx(rank["truth_ce"], rel=1e-5)
        assert rank["history"]["accuracy"]["6"] == pytest.approx(rank["truth_acc"], abs=1e-12)
    assert sum(output.count("FastEstimator-Finish:") for output in outputs) == 1


@pytest.mark.slow
def test_two_workers_killed_mid_epoch_resume_bitwise(tmp_path):
    codes, outputs = run_workers(tmp_path / "clean", FE_T_CKPT=str(tmp_path / "ckpt_clean"))
    assert codes == [0, 0], outputs[0][-3000:]
    codes, outputs = run_workers(tmp_path / "resumed", FE_T_CKPT=str(tmp_path / "ckpt"), FE_T_CRASH_AT="5")
    assert codes == [3, 3]
    assert sorted(os.listdir(tmp_path / "ckpt")) == ["key.txt", "step-2", "step-4"]  # written once, by worker 0
    codes, outputs = run_workers(tmp_path / "resumed", FE_T_CKPT=str(tmp_path / "ckpt"))
    assert codes == [0, 0], outputs[0][-3000:]
    assert "restored" in outputs[0] and "step-4 (epoch 2, step 4)" in outputs[0]
    for rank in range(2):
        clean = json.loads((tmp_path / "clean" / f"rank{rank}.json").read_text())
        resumed = json.loads((tmp_path / "resumed" / f"rank{rank}.json").read_text())
        assert resumed["weights"] == clean["weights"]  # bitwise
        assert resumed["history"] == clean["history"] and resumed["seen"] == clean["seen"]
