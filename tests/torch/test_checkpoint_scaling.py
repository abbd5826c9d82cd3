"""Checkpoints that never change training and that scale: one 2-process launch (`checkpoint_scaling_script.py`,
sharded and replicated models in the same processes), then checks in this process on what it wrote.

- A checkpoint taken before an optimizer's first step (the second optimizer of an EpochScheduler, a model first
  updated in epoch 2) changes nothing: the run that saved it and the run resumed from it end bitwise equal to the run
  without checkpoints (torch's `get_optimizer_state_dict` would have stepped those optimizers with lr 0).
- Each process hashes the files it writes as it writes them (nobody reads a slice file back after a save), and on
  resume hashes only the slice files its own read plan touches; a restore copies no model aside.
- A damaged slice file is refused by the process that reads it; the consolidation command writes the gathered
  weights; DCP metadata written by Python 3.13 (`pathlib._local`) is read; an old torch imports fe's checkpoint code.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path, PosixPath
from typing import Dict

import numpy as np
import pytest
import torch

from fe_core.checkpoint.checkpoint_dir import read_manifest, verify_file
from fe_torch import consolidate
from fe_torch.dcp_storage import MetadataUnpickler
from torch_helpers import torchrun

SCRIPT = Path(__file__).with_name("checkpoint_scaling_script.py")


@pytest.fixture(scope="module")
def launched(tmp_path_factory) -> Dict:
    out = tmp_path_factory.mktemp("scaling")
    code, output = torchrun(out, script=SCRIPT)
    assert code == 0, output[-3000:]
    ranks = [json.loads((out / f"rank{index}.json").read_text()) for index in (0, 1)]
    return {"out": out, "ranks": ranks, "output": output}


@pytest.mark.parametrize("kind", ["fsdp", "ddp"])
def test_a_checkpoint_before_an_optimizers_first_step_changes_nothing(launched, kind):
    for result in launched["ranks"]:
        runs = result[kind]
        assert runs["saved"] == runs["clean"]  # bitwise: the same floats
        assert runs["resumed"] == runs["clean"]
    assert f"restored {launched['out'] / (kind + '-resumed') / 'step-4'}" in launched["output"]
    # the checkpoint of epoch 1 holds `late`'s optimizer and `net`'s second one as they were: without state
    checkpoint = launched["out"] / f"{kind}-saved" / "step-4"
    if kind == "fsdp":
        late = json.loads((checkpoint / "late.dcp" / "fe_sharded.json").read_text())["optimizers"]
        net = json.loads((checkpoint / "net.dcp" / "fe_sharded.json").read_text())["optimizers"]
    else:
        late = torch.load(checkpoint / "late_opt.pt", weights_only=True)["optimizers"]
        net = torch.load(checkpoint / "net_opt.pt", weights_only=True)["optimizers"]
    assert [bool(saved["state"]) for saved in late] == [False] and [bool(saved["state"]) for saved in net] == [True, False]


def test_each_process_hashes_only_its_own_slice_files(launched):
    for rank, result in enumerate(launched["ranks"]):
        # saving read no file back (every writer reported the digest of what it wrote: slices, .metadata, JSON)
        assert [name for phase, name in result["hashed"] if phase.endswith("-saved")] == []
        # resuming: its own slices of each of the two sharded models, no other process's
        slices = [(phase, name) for phase, name in result["hashed"] if name.endswith(".distcp")]
        assert [name for phase, name in slices if phase != "fsdp-resumed"] == []
        assert [name for phase, name in slices if phase == "fsdp-resumed"] == [f"__{rank}_0.distcp"] * 2
        assert result["copies"] == []  # no restore copied a model aside
    # and the digests each process reported while writing are those of the files
    checkpoint = launched["out"] / "fsdp-saved" / "step-8"
    files = read_manifest(str(checkpoint))["files"]
    assert {"net.dcp/__0_0.distcp", "net.dcp/__1_0.distcp", "net.dcp/.metadata", "net.dcp/fe_sharded.json"} <= set(files)
    for name, entry in files.items():
        verify_file(str(checkpoint), name, entry)


def test_a_damaged_slice_file_is_refused_by_the_process_reading_it(launched, tmp_path, capsys):
    sys.path.insert(0, str(SCRIPT.parent))
    from checkpoint_scaling_script import estimator  # pylint: disable=import-outside-toplevel
    target = tmp_path / "run"
    shutil.copytree(launched["out"] / "fsdp-resumed" / "step-4", target / "step-4")
    victim = target / "step-4" / "late.dcp" / "__1_0.distcp"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    estimator(None, 1, str(target)).fit()  # one process reads both processes' slices (2 -> 1): it verifies both
    out = capsys.readouterr().out
    assert "refusing checkpoint" in out and "__1_0.distcp" in out and "is corrupt" in out


def test_consolidate_writes_the_gathered_weights(launched, tmp_path, capsys):
    gathered = launched["ranks"][0]["fsdp"]["saved"]["net"]  # the whole weights at the end, when step-8 was saved
    out = tmp_path / "net.pt"
    assert consolidate.main([str(launched["out"] / "fsdp-saved" / "step-8"), "net", str(out)]) == 0
    assert "Wrote" in capsys.readouterr().out
    state = torch.load(out, weights_only=True)
    assert sorted(state) == sorted(gathered)
    for key, value in gathered.items():
        assert np.array_equal(state[key].numpy().ravel(), np.array(value, dtype=np.float32))
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    model.load_state_dict(state)  # an ordinary state_dict
    # a RestoreWizard directory: its newest checkpoint; a model that was not sharded there: one line
    assert consolidate.main([str(launched["out"] / "fsdp-resumed"), "late", str(tmp_path / "late.pt")]) == 0
    assert consolidate.main([str(launched["out"] / "ddp-resumed"), "net", str(tmp_path / "x.pt")]) == 1
    assert "holds no distributed checkpoint of a model 'net'" in capsys.readouterr().err


def test_fe_checkpoint_consolidate(launched, tmp_path, monkeypatch):
    # the `fe` CLI (its source tree is importable where only fe-core and fe-torch are installed)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "packages" / "fe" / "src"))
    from fe.cli.main import main  # pylint: disable=import-outside-toplevel
    out = tmp_path / "net.pt"
    assert main(["checkpoint", "consolidate", str(launched["out"] / "fsdp-saved"), "net", str(out)]) == 0
    state = torch.load(out, weights_only=True)
    gathered = launched["ranks"][1]["fsdp"]["saved"]["net"]
    assert all(np.array_equal(state[key].numpy().ravel(), np.array(value, dtype=np.float32))
               for key, value in gathered.items())


def test_dcp_metadata_written_by_python_3_13_names_pathlib_local():
    data = pickle.dumps(PosixPath("/ckpt/net.dcp"), protocol=2)
    assert b"cpathlib\nPosixPath\n" in data
    moved = data.replace(b"cpathlib\nPosixPath\n", b"cpathlib._local\nPosixPath\n")  # how 3.13 pickles it
    import io  # pylint: disable=import-outside-toplevel
    assert MetadataUnpickler(io.BytesIO(moved)).load() == PosixPath("/ckpt/net.dcp")
    other = data.replace(b"cpathlib\nPosixPath\n", b"cpathlib._local\nPath\n")  # not one of DCP's path classes
    with pytest.raises(pickle.UnpicklingError, match="pathlib._local.Path"):
        MetadataUnpickler(io.BytesIO(other)).load()


OLD_TORCH = """
import sys
for name in ("torch.distributed.checkpoint", "torch.distributed.tensor", "torch.distributed.fsdp"):
    sys.modules[name] = None  # a torch without them (fully_shard came in 2.6)
import torch
import fe_torch.framework, fe_torch.checkpoint, fe_torch.sharded_checkpoint, fe_torch.consolidate
from fe_core.build import build
from fe_torch import checkpoint
model = build(model_fn=lambda: torch.nn.Linear(2, 1), optimizer_fn="adam", model_name="m")
checkpoint.save_checkpoint_files(model, sys.argv[1], True)
checkpoint.check_checkpoint_files(model, sys.argv[1], True)
checkpoint.load_checkpoint_files(model, sys.argv[1], True)
import os
os.makedirs(os.path.join(sys.argv[1], "m.dcp"))
try:
    checkpoint.load_checkpoint_files(model, sys.argv[1], False)
except RuntimeError as error:
    print("REFUSED", error)
"""


def test_an_old_torch_imports_the_checkpoint_code_and_names_the_version(tmp_path):
    done = subprocess.run([sys.executable, "-c", OLD_TORCH, str(tmp_path)], capture_output=True, text=True,
                          timeout=120, check=False, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.returncode == 0, done.stderr[-2000:]
    line = done.stdout.strip().splitlines()[-1]
    assert line.startswith("REFUSED Sharded checkpoints need torch's distributed checkpoint (torch >= 2.6)")
    assert torch.__version__ in line
