"""Issue 30 item 2 under a real torchrun (2 processes, gloo, 127.0.0.1): an unseeded `eval_data.split(0.5)` gives
every process the same eval and test sets, and datasets that differ between processes stop `fit` with one message
naming the dataset, on every process, instead of training on wrong data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from torch_helpers import torchrun

SCRIPT = Path(__file__).with_name("newcomer_split_script.py")


@pytest.mark.slow
def test_an_unseeded_split_gives_every_rank_the_same_eval_and_test_data(tmp_path):
    code, output = torchrun(tmp_path, script=SCRIPT, timeout=240)
    assert code == 0, output[-3000:]
    ranks = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in range(2)]
    assert ranks[0] == ranks[1]
    assert len(ranks[0]["test"]) == 8 and len(ranks[0]["eval"]) == 8
    assert not set(ranks[0]["test"]) & set(ranks[0]["eval"])


@pytest.mark.slow
def test_datasets_that_differ_between_ranks_stop_fit_naming_the_dataset(tmp_path):
    code, output = torchrun(tmp_path, script=SCRIPT, timeout=240, FE_T_SHUFFLE="1")
    assert code != 0
    assert "DatasetMismatchError: fit refuses to start: the Pipeline's eval_data (rank 0: 8 samples" \
        in output
    assert "train_data (rank 0: 16 samples" in output and "differ between the 2 processes" in output
    assert not list(tmp_path.glob("rank*.json"))
