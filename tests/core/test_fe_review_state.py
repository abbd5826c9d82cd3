"""Review of issue 36 items 4/10: which datasets a checkpoint restores.

fe's datasets (and subclasses) are restored, as FastEstimator restores its traceable datasets; a dataset of another
library keeps the script's values; a dataset that chooses its own state with get_state()/set_state() is restored,
at the top level and inside a dataset of datasets.
"""
import os
from types import SimpleNamespace

import numpy as np

from fe_core.dataset import BatchDataset, NumpyDataset
from fe_core.summary.system import System


class _Plain:
    def __init__(self):
        self.seen = 0

    def __len__(self):
        return 4

    def __getitem__(self, index):
        return {"x": np.int64(index)}


class _OwnState(_Plain):
    def get_state(self):
        return {"seen": self.seen}

    def set_state(self, state):
        self.seen = state["seen"]


class _Numpy(NumpyDataset):
    def __init__(self):
        super().__init__({"x": np.arange(3)})
        self.seen = 0


def _system():
    own, plain, nested_own, nested_fe = _OwnState(), _Plain(), _OwnState(), _Numpy()
    data = {"train": {"": own, "plain": plain,
                      "batch": BatchDataset([nested_own, nested_fe, _Plain()], num_samples=[1, 1, 1])}}
    system = System(network=None, pipeline=SimpleNamespace(data=data, ops=[]), traces=[])
    return system, (own, plain, nested_own, nested_fe)


def test_datasets_with_their_own_state_and_fe_datasets_are_restored_others_keep_the_script_values(tmp_path):
    system, datasets = _system()
    for dataset in datasets:
        dataset.seen = 5
    system.save_state(os.path.join(tmp_path, "ckpt"))
    fresh, (own, plain, nested_own, nested_fe) = _system()
    fresh.load_state(os.path.join(tmp_path, "ckpt"))
    assert (own.seen, plain.seen, nested_own.seen, nested_fe.seen) == (5, 0, 5, 5)
