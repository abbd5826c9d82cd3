"""Sharded data parallel (FSDP2) under torchrun: 2 processes on gloo (127.0.0.1, a free port), bounded in time.

One module-scoped fixture runs every launch once (each costs seconds), and the tests read what the runs wrote
(`fsdp_script.py`, an ordinary fe script whose two models are sharded when it runs on several processes):

- A: 2 processes, uninterrupted, RestoreWizard + BestModelSaver (which reloads the best weights at the end).
- B: the same, killed with SIGKILL at step 5 (its checkpoint: step 3, in the middle of epoch 1); C resumes B.
- E: one process resumes a copy of B's checkpoint (2 -> 1: DCP reshards into unsharded models), then builds `net`
  with `weights_path=` A's best weights and tests it (`fe test` does the same, where the `fe` CLI is installed).
- F: one process, the same seed and global batch of 4 (12 steps; fe draws the shuffled order alike in one process
  and in N), uninterrupted: A's last weights equal F's (float tolerance). G: 2 processes resume F's step-5 checkpoint (1 -> 2, mid-epoch, an accumulated gradient
  pending) and must also end as F does.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import numpy as np
import pytest

from torch_helpers import HAS_FSDP2, NO_FSDP2, torchrun

if not HAS_FSDP2:
    pytest.skip(NO_FSDP2, allow_module_level=True)

SCRIPT = Path(__file__).with_name("fsdp_script.py")


def one_process(out: Path, timeout: float = 120, args=(), **env: str) -> subprocess.CompletedProcess:
    out.mkdir(parents=True, exist_ok=True)
    environ = dict(os.environ, OMP_NUM_THREADS="1", FE_T_OUT=str(out), FE_HISTORY_DB=str(out / "history.db"), **env)
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "FE_T_SAVE", "FE_T_CKPT"):
        environ.pop(name, None)
    environ.update(env)
    command = list(args) or [sys.executable, str(SCRIPT)]
    return subprocess.run(command, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout, check=False)


def rank(out: Path, index: int = 0) -> Dict:
    return json.loads((out / f"rank{index}.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Dict[str, Dict]:
    root = tmp_path_factory.mktemp("fsdp")
    found: Dict[str, Dict] = {}
    code, output = torchrun(root / "A", script=SCRIPT, FE_T_CKPT=str(root / "ckpt_A"), FE_T_SAVE=str(root / "best"))
    assert code == 0, output[-3000:]
    found["A"] = {"ranks": [rank(root / "A", 0), rank(root / "A", 1)], "output": output, "best": root / "best"}
    code, output = torchrun(root / "B", script=SCRIPT, FE_T_CKPT=str(root / "ckpt_B"), FE_T_CRASH_AT="5")
    assert code != 0 and not (root / "B" / "rank0.json").exists(), output[-3000:]
    found["B"] = {"checkpoints": sorted(name for name in os.listdir(root / "ckpt_B") if not name.endswith(".txt"))}
    shutil.copytree(root / "ckpt_B", root / "ckpt_E")
    code, output = torchrun(root / "C", script=SCRIPT, FE_T_CKPT=str(root / "ckpt_B"))
    assert code == 0, output[-3000:]
    found["C"] = {"ranks": [rank(root / "C", 0), rank(root / "C", 1)], "output": output}
    best = root / "best" / "net_best_ce.pt"
    done = one_process(root / "E", FE_T_CKPT=str(root / "ckpt_E"), FE_T_WEIGHTS=str(best))
    assert done.returncode == 0, done.stdout[-3000:]
    found["E"] = {"rank": rank(root / "E"), "output": done.stdout}
    found["T"] = json.loads((root / "E" / "tested.json").read_text())
    done = one_process(root / "F", FE_T_FREQ="5s", FE_T_CKPT=str(root / "ckpt_F"))
    assert done.returncode == 0, done.stdout[-3000:]
    found["F"] = {"rank": rank(root / "F")}
    shutil.copytree(root / "ckpt_F" / "step-5", root / "ckpt_G" / "step-5")
    code, output = torchrun(root / "G", script=SCRIPT, FE_T_FREQ="5s", FE_T_CKPT=str(root / "ckpt_G"))
    assert code == 0, output[-3000:]
    found["G"] = {"ranks": [rank(root / "G", 0), rank(root / "G", 1)], "output": output}
    # `fe test` (the `fe` package's CLI; its source tree is importable where only fe-core and fe-torch are installed)
    source = str(Path(__file__).resolve().parents[2] / "packages" / "fe" / "src")
    path = os.pathsep.join(part for part in (source, os.environ.get("PYTHONPATH", "")) if part)
    done = one_process(root / "cli", args=[sys.executable, "-m", "fe.cli", "test", str(SCRIPT)],
                       FE_T_SAVE=str(root / "best"), PYTHONPATH=path)
    assert done.returncode == 0, done.stdout[-3000:]
    found["cli"] = {"output": done.stdout}
    return found


def close(a: Dict[str, list], b: Dict[str, list], atol: float = 1e-6) -> bool:
    return a.keys() == b.keys() and all(np.allclose(a[key], b[key], rtol=0, atol=atol) for key in a)


@pytest.mark.slow
def test_parameters_are_dtensors_sharded_across_the_two_processes(runs):
    ranks = runs["A"]["ranks"]
    assert [r["world_size"] for r in ranks] == [2, 2]
    assert ranks[0]["dtensor"] == ["DTensor"] * 6
    # each process holds half of every layer's rows: 16 -> 8 + 8, and 2 -> 1 + 1
    assert ranks[0]["local_rows"] == ranks[1]["local_rows"] == [8, 8, 8, 8, 1, 1]
    assert ranks[0]["net"] == ranks[1]["net"] and ranks[0]["head"] == ranks[1]["head"]  # one model, gathered
    # FSDP(mixed_precision=True): the slices stay float32, the model computes in bfloat16
    assert ranks[0]["aux_dtypes"] == ["torch.float32"] * 2 and ranks[0]["aux_output"] == "torch.bfloat16"
    assert ranks[0]["aux_state_dtypes"] == ["torch.float32"]  # Adam's moments of the float32 slices


@pytest.mark.slow
def test_sharded_training_equals_one_process_with_the_same_global_batch(runs):
    # 12 steps of shuffled global batches of 4 (2 samples per process: a rank's part of each global batch is half of
    # the single process's batch), two models updated per step, one accumulating over 2
    sharded, single = runs["A"]["ranks"], runs["F"]["rank"]["last"]
    for result in sharded:
        assert close(result["last"]["net"], single["net"]) and close(result["last"]["head"], single["head"])
    assert single["net"] != runs["F"]["rank"]["begin"]["net"]  # it trained
    # aux computes in bfloat16 when sharded (FSDP(mixed_precision=True)), in float32 in one process: close, not equal
    assert close(sharded[0]["last"]["aux"], single["aux"], atol=2e-2)
    resumed = runs["G"]["ranks"][0]
    assert resumed["test"] == pytest.approx(runs["F"]["rank"]["test"], abs=1e-6)


@pytest.mark.slow
def test_kill_9_mid_epoch_and_resume_ends_bitwise_equal(runs):
    assert runs["B"]["checkpoints"] == ["step-3"]  # killed at step 5: the last checkpoint is in epoch 1 (4 steps)
    assert "restored" in runs["C"]["output"] and "step 3" in runs["C"]["output"]
    clean, resumed = runs["A"]["ranks"], runs["C"]["ranks"]
    for index in (0, 1):
        assert resumed[index]["net"] == clean[index]["net"]
        assert resumed[index]["head"] == clean[index]["head"]
        assert resumed[index]["aux"] == clean[index]["aux"]  # mixed precision too
        assert resumed[index]["test"] == clean[index]["test"]


@pytest.mark.slow
def test_resharding_two_processes_into_one(runs):
    one, two = runs["E"]["rank"], runs["C"]["ranks"][0]
    assert one["world_size"] == 1 and one["dtensor"] == ["Parameter"] * 6
    assert one["begin"]["step"] == two["begin"]["step"] == 3
    assert one["begin"] == two["begin"]  # weights and both optimizers' state: exactly what the 2 processes restored
    assert "written by 2 process(es), this run has 1" in runs["E"]["output"]
    assert "will not repeat a 2-process run bitwise" in runs["E"]["output"]


@pytest.mark.slow
def test_resharding_one_process_into_two(runs):
    assert "written by 1 process(es), this run has 2" in runs["G"]["output"]
    assert runs["G"]["ranks"][0]["begin"]["step"] == 5
    # G = one process for steps 1-5, two sharded processes for steps 6-12 (the accumulated gradient of step 5 and the
    # optimizer state carried over): it ends as the uninterrupted single-process run F does
    for result in runs["G"]["ranks"]:
        assert close(result["net"], runs["F"]["rank"]["net"]) and close(result["head"], runs["F"]["rank"]["head"])


@pytest.mark.slow
def test_best_model_loads_unsharded_and_tests_the_same(runs):
    sharded = runs["A"]["ranks"][0]
    assert (runs["A"]["best"] / "net_best_ce.pt").is_file()
    assert "Restoring model from" in runs["A"]["output"]  # BestModelSaver loaded the file back into the sharded model
    assert runs["T"]["ce"] == pytest.approx(sharded["test"]["ce"], abs=1e-6)
    assert runs["T"]["accuracy"] == sharded["test"]["accuracy"]
    line = next(line for line in runs["cli"]["output"].splitlines() if line.startswith("FastEstimator-Test"))
    assert "net_best_ce.pt" in runs["cli"]["output"]  # fe test loaded the best weights the sharded run saved
    logged = dict(part.strip().split(": ") for part in line.split(": ", 1)[1].split(";") if ": " in part)
    assert float(logged["ce"]) == pytest.approx(sharded["test"]["ce"], rel=1e-6)
    assert float(logged["accuracy"]) == sharded["test"]["accuracy"]


@pytest.mark.slow
def test_backend_functions_on_a_sharded_model(runs):
    for result in runs["A"]["ranks"]:
        assert result["lr"] == pytest.approx(0.01 / (1 + 0.1 * 12))  # the LR schedule set it on the sharded model
        assert result["set_lr"] == 0.5
        assert result["transform_equal"]  # Network.transform runs the sharded models (on every process)
        assert result["grad_norm"] > 0.01 and result["clipped_norm"] == pytest.approx(0.01, rel=1e-4)
        assert result["reloaded_equal"]  # fe.backend.save_model wrote whole weights, load_model read them back
        assert "do not fit torch model 'head'" in result["misfit_error"]  # on every process, none left waiting
        assert result["backup_restored"]  # a restore's backup (each process's slices) puts the model back
        # load_model(load_optimizer=True) of a one-process model's files into a sharded model, which then steps
        assert result["optimizer_steps"] is True and result["optimizer_loaded"]
    assert runs["A"]["ranks"][0]["feed_forward"] == runs["A"]["ranks"][1]["feed_forward"]
    assert runs["A"]["ranks"][0]["grad_norm"] == runs["A"]["ranks"][1]["grad_norm"]  # one norm over all shards
    # G ends with F's weights (test_resharding_one_process_into_two): the same forward pass, and clip_grad_norm_'s
    # total norm over both processes' slices is the single process's norm (not one slice's)
    sharded, single = runs["G"]["ranks"], runs["F"]["rank"]
    for result in sharded:
        assert np.allclose(result["feed_forward"], single["feed_forward"], rtol=0, atol=1e-5)
        assert result["grad_norm"] == pytest.approx(single["grad_norm"], rel=1e-4)
    message = runs["A"]["ranks"][0]["lbfgs_error"]
    assert "cannot shard a LBFGS optimizer" in message and "\n" not in message
    for result in runs["A"]["ranks"]:  # gradients that do not fit the sharded model: every process raises alike
        assert "model 'g': gradients 'p' hold 1 tensors" in result["gradients_error"]
