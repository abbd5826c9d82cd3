"""Pipeline layering: the default worker count per process, and results that carry their epoch."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.pipeline import sizing
from fe_core.pipeline._sample_epoch import check_epoch
from fe_core.pipeline.messages import BatchResult, Task


@pytest.mark.parametrize("local_world, expected", [(None, 16), ("1", 16), ("2", 8), ("4", 4), ("32", 1)])
def test_num_process_none_takes_this_process_share_of_the_node(monkeypatch, local_world, expected):
    import fe_core.util.devices as devices
    monkeypatch.setattr(devices, "cpu_count", lambda limit=None: 16)
    monkeypatch.setattr(devices, "get_num_gpus", lambda: 0)
    monkeypatch.delenv("TF_CONFIG", raising=False)
    if local_world is None:
        monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    else:
        monkeypatch.setenv("LOCAL_WORLD_SIZE", local_world)  # torchrun: the processes on this node
    assert sizing.resolve_num_process(None) == expected
    assert sizing.resolve_num_process(3) == 3  # an explicit count is per process, as asked


def test_tf_multiworker_processes_on_one_host_share_its_cpus(monkeypatch):
    import json
    import fe_core.util.devices as devices
    monkeypatch.setattr(devices, "cpu_count", lambda limit=None: 16)
    monkeypatch.setattr(devices, "get_num_gpus", lambda: 0)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    cluster = {"chief": ["hostb:1"], "worker": ["hosta:1", "hosta:2", "hostc:3"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    assert sizing.processes_on_this_node() == 2 and sizing.resolve_num_process(None) == 8
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}}))
    assert sizing.resolve_num_process(None) == 16
    monkeypatch.setenv("TF_CONFIG", "not json")
    assert sizing.processes_on_this_node() == 1


class _Plan:
    def where(self) -> str:
        return "mode 'train' epoch 2 ds_id ''"


def test_a_result_of_another_epoch_is_refused():
    results = iter([(Task(0, np.arange(2)), BatchResult(2, {"x": 1}, 7)),
                    (Task(2, np.arange(2)), BatchResult(2, {"x": 2}, 5))])
    checked = check_epoch(results, 7, _Plan())
    assert next(checked)[1].batch == {"x": 1}
    with pytest.raises(RuntimeError, match="another epoch reached mode 'train' epoch 2"):
        next(checked)
