"""An ordinary fe script, run by tests/torch/test_distributed.py under torchrun (and alone, for comparison).

Writes `<out>/rank<R>.json`: final weights, the eval/test history, the sample ids each rank trained on per epoch,
`num_devices`, and the eval data's accuracy / loss computed directly from the final weights (the single-process
truth). Arguments (environment): FE_T_OUT (output directory), FE_T_CKPT (RestoreWizard directory, optional),
FE_T_CRASH_AT (exit at this global step, optional), FE_T_BATCH (global batch size), FE_T_EPOCHS, FE_T_SELF_INIT
(initialise the process group in the script, before fe, as Ray Train does).
"""
import json
import os
import sys

import numpy as np
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.distributed import get_communicator, global_batches
from fe_core.determinism import enable_deterministic
from fe_core.estimator import Estimator
from fe_core.op.numpyop.numpyop import NumpyOp
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace.io.restore_wizard import RestoreWizard
from fe_core.trace.metric import Accuracy
from fe_core.trace.trace import Trace
from fe_torch.network import TorchNetwork


class Noise(NumpyOp):
    """Per-sample random noise from numpy's global generator (each rank draws its own)."""

    def forward(self, data, state):
        return data + np.random.uniform(-0.01, 0.01, size=data.shape).astype(np.float32)


class Seen(Trace):
    """Records the sample ids each training batch held, per epoch."""

    def __init__(self):
        super().__init__(inputs="idx", mode="train")
        self.seen = {}

    def on_batch_end(self, data):
        self.seen.setdefault(str(self.system.epoch_idx), []).extend(np.asarray(data["idx"]).tolist())


class Crash(Trace):
    def __init__(self, step):
        super().__init__(mode="train")
        self.step = step

    # The crash step is this harness's setting, not training state: a resumed run must not take it back from the
    # checkpoint (fe restores a trace's numeric attributes, constructor-named ones too, as FastEstimator does).
    def get_state(self):
        return {}

    def set_state(self, state):
        pass

    def on_batch_end(self, data):
        if self.system.global_step == self.step:
            sys.stdout.flush()
            os._exit(3)


def main():
    if os.environ.get("FE_T_SELF_INIT"):  # as Ray Train's TorchTrainer does: the group exists before fe runs
        torch.distributed.init_process_group("gloo", init_method="env://")
    out = os.environ["FE_T_OUT"]
    batch = int(os.environ.get("FE_T_BATCH", "4"))
    epochs = int(os.environ.get("FE_T_EPOCHS", "2"))
    enable_deterministic(7)
    rng = np.random.RandomState(0)
    x = rng.normal(size=(22, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    train = NumpyDataset({"x": x[:13], "y": y[:13], "idx": np.arange(13)})
    evaluation = NumpyDataset({"x": x[13:], "y": y[13:], "idx": np.arange(9)})
    pipeline = Pipeline(train_data=train, eval_data=evaluation, test_data=evaluation, batch_size=batch,
                        ops=[Noise(inputs="x", outputs="x", mode="train")])
    model = build(model_fn=lambda: torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Dropout(0.3),
                                                       torch.nn.Linear(8, 2)),
                  optimizer_fn=lambda params: torch.optim.SGD(params, lr=0.1), model_name="net")
    network = TorchNetwork(ops=[ModelOp(model=model, inputs="x", outputs="y_pred"),
                                CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
                                UpdateOp(model=model, loss_name="ce")])
    seen = Seen()
    traces = [Accuracy(true_key="y", pred_key="y_pred"), seen]
    if os.environ.get("FE_T_CKPT"):
        traces.append(RestoreWizard(directory=os.environ["FE_T_CKPT"], frequency=os.environ.get("FE_T_FREQ", "2s")))
    traces.append(Crash(int(os.environ.get("FE_T_CRASH_AT", "0"))))  # always there: checkpoints list the traces
    estimator = Estimator(pipeline=pipeline, network=network, epochs=epochs, traces=traces, log_steps=2)
    summary = estimator.fit("ddp")
    estimator.test()
    with torch.no_grad():
        device = next(model.parameters()).device
        logits = model(torch.from_numpy(x[13:]).to(device)).cpu()
        # the loss one process logs for these global batches: the mean of the batches' means (issue 45)
        truth_ce = float(np.mean([torch.nn.functional.cross_entropy(logits[part], torch.from_numpy(y[13:][part]))
                                  for part in global_batches(np.arange(9), batch, False,
                                                             get_communicator().world_size)]))
        truth_acc = float((logits.argmax(dim=1).numpy() == y[13:]).mean())
    history = {mode: {key: {str(step): float(np.asarray(value).ravel()[0]) for step, value in values.items()}
                      for key, values in keys.items() if key in ("accuracy", "ce", "num_device")}
               for mode, keys in summary.history.items()}
    result = {"rank": get_communicator().rank, "world_size": get_communicator().world_size,
              "weights": [p.detach().cpu().numpy().ravel().tolist() for p in model.parameters()],
              "history": history, "seen": seen.seen, "num_devices": estimator.system.num_devices,
              "truth_ce": truth_ce, "truth_acc": truth_acc, "ddp": "fe_ddp" in model.__dict__,
              "state_keys": sorted(model.state_dict()), "numpy_draw": float(np.random.rand())}
    with open(os.path.join(out, f"rank{result['rank']}.json"), "w") as file:
        json.dump(result, file)


if __name__ == "__main__":
    main()
