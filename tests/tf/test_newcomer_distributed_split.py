"""Issue 30 item 2 on 2 TensorFlow workers (MultiWorkerMirroredStrategy from TF_CONFIG, 127.0.0.1): an unseeded
`eval_data.split(0.5)` gives every worker the same eval and test sets, and datasets that differ between workers stop
`fit` on every worker with one message naming the dataset."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import test_distributed

SCRIPT = Path(__file__).with_name("newcomer_split_script.py")


@pytest.mark.slow
def test_workers_split_alike_and_refuse_datasets_that_differ(tmp_path, monkeypatch):
    monkeypatch.setattr(test_distributed, "SCRIPT", SCRIPT)
    codes, outputs = test_distributed.run_workers(tmp_path / "same")
    assert codes == [0, 0], outputs[0][-3000:] + outputs[1][-3000:]
    ranks = [json.loads((tmp_path / "same" / f"rank{rank}.json").read_text()) for rank in range(2)]
    assert ranks[0] == ranks[1] and len(ranks[0]["test"]) == 8
    assert not set(ranks[0]["test"]) & set(ranks[0]["eval"])

    codes, outputs = test_distributed.run_workers(tmp_path / "differ", FE_T_SHUFFLE="1")
    assert codes[0] != 0 and codes[1] != 0
    for output in outputs:
        assert "DatasetMismatchError: fit refuses to start: the Pipeline's eval_data (rank 0: 8 samples" in output
    assert not list((tmp_path / "differ").glob("rank*.json"))
