"""Issue 45's newcomer script: a 64-32-10 MLP on scikit-learn's digits (test set of 270 samples, batch size 32: the
last batch is short), run by tests/fe/test_newcomer_round5_distributed.py under torchrun (2 gloo processes) and in
one process.

`python newcomer_round5_script.py SCENARIO SAVE_DIR`:
- `test`: `fe test` of this script with the weights in SAVE_DIR, replicated (DDP), then sharded (`--sharding fsdp`);
- `fail`: training in which rank 1's trace raises a ValueError at step 3 (rank 0 goes on);
- `kill`: training in which rank 1 kills itself with SIGKILL at step 3;
a third argument `fsdp` shards the model in `fail` and `kill`.
"""
import os
import signal
import sys

import torch

import fe
from fe.examples.digits import load_digits_datasets
from fe.op.numpyop.univariate import Minmax
from fe.op.tensorop.loss import CrossEntropy
from fe.op.tensorop.model import ModelOp, UpdateOp
from fe.trace import Trace
from fe.trace.io import CSVLogger, ModelSaver
from fe.trace.metric import Accuracy


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10),
                               torch.nn.Softmax(dim=-1))


class RankOneBreaks(Trace):
    """At training step 3, on rank 1 only: raise (`fail`) or die of SIGKILL (`kill`)."""

    def __init__(self, how):
        super().__init__(mode="train")
        self.how = how

    def on_batch_end(self, data):
        if self.how and self.system.global_step == 3 and int(os.environ.get("RANK", "0")) == 1:
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise ValueError("rank 1's trace broke at step 3")


def get_estimator(save_dir: str, sharding: str = "", breaks: str = "", epochs: int = 1):
    train_data, eval_data, test_data = load_digits_datasets(flatten=True)
    pipeline = fe.Pipeline(train_data=train_data, eval_data=eval_data, test_data=test_data, batch_size=32,
                           ops=Minmax(inputs="x", outputs="x"))
    model = fe.build(model_fn=mlp, optimizer_fn="adam", model_name="mlp", sharding=sharding or None)
    network = fe.Network(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                              CrossEntropy(inputs=("y_pred", "y"), outputs="ce"),
                              UpdateOp(model=model, loss_name="ce")])
    traces = [Accuracy(true_key="y", pred_key="y_pred"), ModelSaver(model=model, save_dir=save_dir),
              CSVLogger(filename=os.path.join(save_dir, "log.csv")), RankOneBreaks(breaks)]
    return fe.Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=2,
                        train_steps_per_epoch=None if not breaks else 20)


if __name__ == "__main__":
    from fe.cli.main import main
    scenario, save_dir = sys.argv[1], sys.argv[2]
    if scenario == "test":
        for extra in ([], ["--sharding", "fsdp"]):
            code = main(["test", __file__, "--save_dir", save_dir] + extra)
            assert code == 0, code
    else:
        get_estimator(save_dir, breaks=scenario, sharding=sys.argv[3] if len(sys.argv) > 3 else "").fit()
