"""Two models trained in one step (a GAN's shape: the generator's loss flows through the discriminator), run by
tests/torch/test_distributed.py under torchrun; writes every parameter's values to `<FE_T_OUT>/rank<R>.json`.
FE_T_GIVEN_GRADS=1 updates the discriminator from gradients a GradientOp computed (`UpdateOp(gradients=...)`)."""
import json
import os

import numpy as np
import torch

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.distributed import get_communicator
from fe_core.estimator import Estimator
from fe_core.op.tensorop import GradientOp, LambdaOp
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_torch.network import TorchNetwork


def main():
    x = np.random.RandomState(0).normal(size=(16, 4)).astype(np.float32)
    gen = build(lambda: torch.nn.Linear(4, 4), "sgd", model_name="gen")
    disc = build(lambda: torch.nn.Linear(4, 1), "sgd", model_name="disc")
    network = TorchNetwork(ops=[
        ModelOp(model=gen, inputs="x", outputs="fake"),
        ModelOp(model=disc, inputs="fake", outputs="fake_score"),
        ModelOp(model=disc, inputs="x", outputs="true_score"),
        LambdaOp(fn=lambda fake: -fake.mean(), inputs="fake_score", outputs="gen_loss"),
        LambdaOp(fn=lambda fake, true: fake.mean() - true.mean(), inputs=("fake_score", "true_score"),
                 outputs="disc_loss"),
        UpdateOp(model=gen, loss_name="gen_loss")]
        + ([GradientOp(finals="disc_loss", outputs="disc_grads", model=disc),  # given gradients, outside DDP's hooks
            UpdateOp(model=disc, gradients="disc_grads")] if os.environ.get("FE_T_GIVEN_GRADS")
           else [UpdateOp(model=disc, loss_name="disc_loss")]))
    Estimator(pipeline=Pipeline(train_data=NumpyDataset({"x": x}), batch_size=4), network=network, epochs=2,
              log_steps=None).fit()
    values = [p.detach().numpy().ravel().tolist() for p in list(gen.parameters()) + list(disc.parameters())]
    with open(os.path.join(os.environ["FE_T_OUT"], f"rank{get_communicator().rank}.json"), "w") as file:
        json.dump({"weights": values, "ddp": ["fe_ddp" in m.__dict__ for m in (gen, disc)]}, file)


if __name__ == "__main__":
    main()
