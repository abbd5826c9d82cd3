"""A data-parallel fit with Pipeline worker processes, run by tests/torch/test_pipeline_workers_distributed.py.

Writes `<FE_T_OUT>/rank<R>.json`: digests of every training batch this rank received (a random augmentation
included), its sample ids, the final weights, and the worker pids and shared-memory prefix its pool used; the pids
also go to `pids<R>.json` as soon as the workers run (a rank killed later leaves them behind for the test). Before
fit, two epochs of a BatchDataset Pipeline iterated by hand ("items": this rank's part of each global batch).
Environment: FE_T_OUT, FE_T_NP (Pipeline num_process), FE_T_CKPT (RestoreWizard directory, optional),
FE_T_KILL_AT (rank 1 kills itself with SIGKILL at this global step, optional).
"""
import hashlib
import json
import os
import signal

import numpy as np
import torch

from fe_core.build import build
from fe_core.dataset import BatchDataset, NumpyDataset
from fe_core.distributed import get_communicator
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.io.restore_wizard import RestoreWizard
from fe_core.trace.trace import Trace
from fe_torch.network import TorchNetwork


class Noise(NumpyOp):
    """A random augmentation drawing from numpy's global random state."""

    def forward(self, data, state):
        return data + np.random.uniform(-0.1, 0.1, size=data.shape).astype(np.float32)


class Record(Trace):
    """Digests of the batches this rank trains on, and the worker processes that made them."""

    def __init__(self, pipeline, out, rank, kill_at):
        super().__init__(inputs=("x", "idx"), mode="train")
        self.pipeline, self.out, self.rank, self.kill_at = pipeline, out, rank, kill_at
        self.batches = {}
        self.pids = set()
        self.prefix = None

    def get_state(self):  # the harness's record is not training state
        return {}

    def set_state(self, state):
        pass

    def on_batch_end(self, data):
        x = np.ascontiguousarray(np.asarray(data["x"].detach().cpu()))
        self.batches.setdefault(str(self.system.epoch_idx), []).append(
            [hashlib.sha256(x.tobytes()).hexdigest(), np.asarray(data["idx"].cpu()).tolist()])
        pool = self.pipeline._worker_pool
        if pool is not None and pool.pids() and not self.pids.issuperset(pool.pids()):
            self.pids.update(pool.pids())
            self.prefix = pool.prefix
            with open(os.path.join(self.out, f"pids{self.rank}.json"), "w") as file:
                json.dump({"pids": sorted(self.pids), "prefix": self.prefix}, file)
        if self.rank == 1 and self.system.global_step == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def batch_dataset_epochs(x, rank):
    """Two epochs of a BatchDataset (each item a global batch of 3 + 3 samples) iterated by hand, before fit: this
    rank's part of each, digested, and the worker processes that made them."""
    first = NumpyDataset({"x": x[:20], "idx": np.arange(20)})
    second = NumpyDataset({"x": x[20:], "idx": np.arange(20, 48)})
    pipeline = Pipeline(train_data=BatchDataset([first, second], num_samples=[3, 3]),
                        ops=[Noise(inputs="x", outputs="x")], num_process=int(os.environ["FE_T_NP"]))
    seen, pids = {}, set()
    with pipeline.workers():
        for epoch in (1, 2):
            with pipeline(mode="train", epoch=epoch) as loader:
                for batch in loader:
                    value = np.ascontiguousarray(np.asarray(batch["x"]))
                    seen.setdefault(str(epoch), []).append(
                        [hashlib.sha256(value.tobytes()).hexdigest(), np.asarray(batch["idx"]).tolist()])
                    pids.update(pipeline._worker_pool.pids() if pipeline._worker_pool is not None else ())
    if pids:
        with open(os.path.join(os.environ["FE_T_OUT"], f"pids{rank}-items.json"), "w") as file:
            json.dump({"pids": sorted(pids), "prefix": pipeline._worker_pool.prefix if pipeline._worker_pool else
                       "fe-pipeline-none"}, file)
    return {"batches": seen, "pids": sorted(pids)}


def main():
    out = os.environ["FE_T_OUT"]
    enable_deterministic(3)
    rng = np.random.RandomState(0)
    x = rng.normal(size=(48, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    pipeline = Pipeline(train_data=NumpyDataset({"x": x, "y": y, "idx": np.arange(48)}), batch_size=8,
                        ops=[Noise(inputs="x", outputs="x")], num_process=int(os.environ["FE_T_NP"]))
    model = build(model_fn=lambda: torch.nn.Linear(6, 2),
                  optimizer_fn=lambda params: torch.optim.SGD(params, lr=0.1), model_name="net")
    network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])
    rank = get_communicator().rank if torch.distributed.is_initialized() else int(os.environ.get("RANK", "0"))
    items = batch_dataset_epochs(x, rank)  # in every run: it draws from the run's random state before fit
    record = Record(pipeline, out, rank, int(os.environ.get("FE_T_KILL_AT", "0")))
    traces = [record]
    if os.environ.get("FE_T_CKPT"):
        traces.append(RestoreWizard(directory=os.environ["FE_T_CKPT"], frequency="2s"))
    estimator = Estimator(pipeline=pipeline, network=network, epochs=2, traces=traces, log_steps=0)
    estimator.fit("ddp")
    rank = get_communicator().rank
    result = {"rank": rank, "batches": record.batches, "pids": sorted(record.pids), "prefix": record.prefix,
              "items": items,
              "weights": [p.detach().cpu().numpy().ravel().tolist() for p in model.parameters()]}
    with open(os.path.join(out, f"rank{rank}.json"), "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main()
