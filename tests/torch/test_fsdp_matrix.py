"""Every FSDP option trains as one process does: `fsdp_matrix_script.py` runs all its configurations in one process
(unsharded) and in one torchrun launch of 2 gloo processes (sharded), then a second launch resumes a BatchNorm run the
first one killed with SIGKILL. Each configuration starts from its own seed, so initial and final weights compare
configuration by configuration.

Configurations: reshard_after_forward True / False, bf16 mixed precision (against a bf16 one-process run), a class
policy with activation checkpointing, a callable policy, a GAN whose generator loss flows through the sharded
discriminator, gradient accumulation with an LR schedule, an EpochScheduler of optimizers, UpdateOp(gradients=...)
fed by a GradientOp whose gradients an op edits, a model initialised after construction, also through `.data` and
orthogonal_ (replayed from model_fn's own calls), one whose weights are copied from another tensor (built whole on
rank 0), a model_fn that cannot run on the meta device (built whole everywhere), a BatchNorm model (against the same
run under DDP, and resumed after kill -9).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Dict

import numpy as np
import pytest

from test_fsdp import one_process
from torch_helpers import HAS_FSDP2, NO_FSDP2, torchrun

if not HAS_FSDP2:
    pytest.skip(NO_FSDP2, allow_module_level=True)

SCRIPT = Path(__file__).with_name("fsdp_matrix_script.py")
CONFIGS = ["reshard_true", "reshard_false", "bf16", "class_policy", "callable_policy", "gan", "accumulate_lr",
           "epoch_optimizers", "gradient_op", "custom_init", "copied_init", "not_meta"]


def ranks(out: Path, count: int = 2):
    return [json.loads((out / f"rank{index}.json").read_text()) for index in range(count)]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> Dict[str, object]:
    root = tmp_path_factory.mktemp("fsdp_matrix")
    done = one_process(root / "one", args=[sys.executable, str(SCRIPT)])
    assert done.returncode == 0, done.stdout[-3000:]
    code, output = torchrun(root / "two", script=SCRIPT, FE_T_CKPT=str(root / "ckpt"))
    assert code != 0, output[-3000:]  # the last configuration kills itself (SIGKILL at step 5)
    two = ranks(root / "two")
    assert "bn_ddp" in two[0] and "bn_crash" not in two[0], output[-3000:]
    code, output = torchrun(root / "resumed", script=SCRIPT, FE_T_CKPT=str(root / "ckpt"), FE_T_PHASE="resume")
    assert code == 0, output[-3000:]
    assert "restored" in output
    return {"one": ranks(root / "one", 1)[0], "two": two, "resumed": ranks(root / "resumed")}


def largest_difference(a: Dict[str, list], b: Dict[str, list]) -> float:
    assert a.keys() == b.keys()
    return max(float(np.max(np.abs(np.asarray(a[key]) - np.asarray(b[key])))) for key in a if a[key])


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_sharded_training_equals_one_process(matrix, config):
    one, two = matrix["one"][config], matrix["two"]
    for model in one["begin"]:
        # built on the meta device and initialised slice by slice: the one-process initial weights, bit for bit
        assert two[0][config]["begin"][model] == two[1][config]["begin"][model] == one["begin"][model]
        assert two[0][config]["end"][model] == two[1][config]["end"][model]  # one model, gathered on both ranks
        assert one["end"][model] != one["begin"][model]  # it trained
        tolerance = 3e-3 if config == "bf16" else 2e-6
        assert largest_difference(two[0][config]["end"][model], one["end"][model]) < tolerance, model


@pytest.mark.slow
def test_bf16_is_compared_with_a_bf16_run(matrix):
    # the same model, data and seed as reshard_true: bf16 compute moves the weights away from the float32 run more
    # than the sharded bf16 run differs from the one-process bf16 run
    one, two = matrix["one"], matrix["two"][0]
    to_bf16 = largest_difference(two["bf16"]["end"]["bf16"], one["bf16"]["end"]["bf16"])
    to_fp32 = largest_difference(two["bf16"]["end"]["bf16"], one["reshard_true"]["end"]["reshard_true"])
    assert to_bf16 < to_fp32 / 3


@pytest.mark.slow
def test_models_are_built_without_existing_whole(matrix):
    two = matrix["two"]
    for config in CONFIGS:
        expected = 1 if config in ("copied_init", "not_meta") else 0
        assert len(two[0][config]["warnings"]) == expected, (config, two[0][config]["warnings"])
        if config != "not_meta":
            assert two[1][config]["warnings"] == []  # rank 1 never builds the model whole
    assert "could not run on the meta device" in two[1]["not_meta"]["warnings"][0]  # every process builds it
    message = two[0]["copied_init"]["warnings"][0]
    assert "'0.weight' from another tensor" in message and "rank 0 builds it whole" in message
    # 128 MiB of weights over 2 processes: each holds its half and, while initialising, one 2 MiB layer whole
    for result in two:
        memory = result["memory"]
        assert memory["local_mib"] == pytest.approx(64.0)
        assert memory["added_mib"] < 0.6 * memory["model_mib"], memory


@pytest.mark.slow
def test_batchnorm_buffers_follow_rank_0_as_under_ddp_and_resume_bitwise(matrix):
    two, resumed = matrix["two"], matrix["resumed"]
    for index in (0, 1):
        sharded, ddp = two[index]["bn"]["end"]["bn"], two[index]["bn_ddp"]["end"]["bn"]
        assert any("running_mean" in key for key in sharded)
        assert largest_difference(sharded, ddp) < 1e-6  # running statistics and weights: the DDP run's
        assert resumed[index]["bn_resumed"]["end"]["bn"] == sharded  # kill -9 at step 5, resumed from step 4
