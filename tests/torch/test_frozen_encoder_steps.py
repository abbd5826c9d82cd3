"""fe runs as many forward and backward passes per training step as the hand-written loop: one forward and one
backward of a frozen encoder with LoRA adapters per step (FastEstimator's LoRA app), and, in warmup, a forward and no
backward (the UpdateOp's warmup check finds the trainable weights in the recorded graph). The same for the step
shapes of other apps: two models updated in one step (cycleGAN: the generator's loss flows through the
discriminator) and one model applied to two inputs (siamese).

Passes are counted by the models themselves: each counts its forward calls, and an identity autograd function on
its output counts the backward passes that go through it.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from fe_core.build import build
from fe_core.dataset import NumpyDataset
from fe_core.estimator import Estimator
from fe_core.op.tensorop import CrossEntropy, LambdaOp
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.trace import Trace
from fe_torch.network import TorchNetwork

DIM, TOKENS, CLASSES = 8, 4, 3
STEPS = 3


class _CountBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, counts, key):  # type: ignore[override]
        ctx.counts, ctx.key = counts, key
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        ctx.counts[ctx.key] += 1
        return grad, None, None


class Counted(nn.Module):
    """`inner`, counting its forward calls (`<name> forward`) and the backward passes through its output."""

    def __init__(self, inner: nn.Module, counts: Dict[str, int], name: str) -> None:
        super().__init__()
        self.inner, self.counts, self.name = inner, counts, name
        counts.setdefault(f"{name} forward", 0)
        counts.setdefault(f"{name} backward", 0)

    def forward(self, x: Any) -> Any:
        self.counts[f"{self.name} forward"] += 1
        out = self.inner(x)
        return _CountBackward.apply(out, self.counts, f"{self.name} backward") if out.requires_grad else out


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int = 2) -> None:
        super().__init__()
        self.base, self.down, self.up = base, nn.Linear(base.in_features, rank, bias=False), nn.Linear(
            rank, base.out_features, bias=False)

    def forward(self, x: Any) -> Any:
        return self.base(x) + self.up(self.down(x))


class Block(nn.Module):
    def __init__(self, activation_checkpoint: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.attn = nn.MultiheadAttention(DIM, 2, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))
        self.activation_checkpoint = activation_checkpoint

    def _forward(self, x: Any) -> Any:
        h = self.norm(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(x)

    def forward(self, x: Any) -> Any:
        if self.activation_checkpoint and self.training:  # recomputed in the backward pass (large encoders)
            return checkpoint(self._forward, x, use_reentrant=False)
        return self._forward(x)


def lora_encoder(activation_checkpoint: bool = False) -> nn.Module:
    """A frozen 2-block transformer encoder with LoRA adapters on its MLPs and a trainable head."""
    torch.manual_seed(0)
    blocks = nn.Sequential(*[Block(activation_checkpoint) for _ in range(2)])
    blocks.requires_grad_(False)
    for block in blocks:
        block.mlp[0], block.mlp[2] = LoRALinear(block.mlp[0]), LoRALinear(block.mlp[2])
    return nn.Sequential(blocks, nn.Flatten(), nn.Linear(DIM * TOKENS, CLASSES))


class CountsAfterWarmup(Trace):
    def __init__(self, counts: Dict[str, int]) -> None:
        super().__init__(mode="train")
        self.counts, self.after_warmup = counts, {}

    def on_begin(self, data: Any) -> None:
        self.after_warmup = dict(self.counts)


def _fit(ops: List[Any], counts: Dict[str, int], data: Dict[str, np.ndarray],
         eval_data: Any = None) -> Tuple[Dict[str, int], Dict[str, int]]:
    """Counts after fe's warmup, and those of the training (and eval) steps alone."""
    marker = CountsAfterWarmup(counts)
    pipeline = Pipeline(train_data=NumpyDataset(data), eval_data=eval_data, batch_size=1)
    Estimator(pipeline=pipeline, network=TorchNetwork(ops=ops), epochs=1, traces=[marker], log_steps=None).fit()
    return marker.after_warmup, {key: counts[key] - marker.after_warmup[key] for key in counts}


def _hand_written(step: Callable[[int], None], counts: Dict[str, int]) -> Dict[str, int]:
    for index in range(STEPS):
        step(index)
    return dict(counts)


def _optimizer_step(optimizer: torch.optim.Optimizer, params: List[torch.Tensor], grads: Any) -> None:
    for param, grad in zip(params, grads):
        param.grad = grad
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def _data(seed: int = 0, samples: int = STEPS) -> Dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((samples, TOKENS, DIM)).astype(np.float32),
            "y": rng.integers(0, CLASSES, samples).astype(np.int64)}


def _lora_hand_written(activation_checkpoint: bool) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    model = Counted(lora_encoder(activation_checkpoint), counts, "encoder")
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = _data()

    def step(index: int) -> None:
        model.train()
        loss = F.cross_entropy(model(torch.from_numpy(data["x"][index:index + 1])),
                               torch.from_numpy(data["y"][index:index + 1]))
        _optimizer_step(optimizer, params, torch.autograd.grad(loss, params))

    return _hand_written(step, counts)


@pytest.mark.parametrize("activation_checkpoint", [False, True], ids=["plain", "activation-checkpoint"])
def test_lora_on_a_frozen_encoder_runs_one_forward_and_one_backward_per_step_like_the_hand_written_loop(
        activation_checkpoint):
    counts: Dict[str, int] = {}
    model = build(lambda: Counted(lora_encoder(activation_checkpoint), counts, "encoder"),
                  lambda params: torch.optim.Adam(params, lr=1e-3))
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred"),
           CrossEntropy(inputs=("y_pred", "y"), outputs="ce", from_logits=True),
           UpdateOp(model=model, loss_name="ce")]
    warmup, steps = _fit(ops, counts, _data(), eval_data=NumpyDataset(_data(seed=1, samples=2)))
    hand = _lora_hand_written(activation_checkpoint)
    # training: exactly the hand-written loop's passes; evaluation (2 batches): forwards only
    assert steps["encoder backward"] == hand["encoder backward"] == STEPS
    assert steps["encoder forward"] == hand["encoder forward"] + 2 == STEPS + 2
    # warmup: one forward per mode, no backward (the warmup check reads the recorded graph)
    assert warmup == {"encoder forward": 2, "encoder backward": 0}


def _small(out: int) -> Callable[[], nn.Module]:
    return lambda: nn.Sequential(nn.Flatten(), nn.Linear(TOKENS * DIM, out))


def test_two_models_updated_in_one_step_run_the_hand_written_passes():
    """cycleGAN's step: the generator's loss goes through the discriminator; each update touches its own model."""
    generator_fn = lambda: nn.Sequential(nn.Linear(DIM, DIM), nn.Tanh())  # noqa: E731
    counts: Dict[str, int] = {}
    gen = build(lambda: Counted(generator_fn(), counts, "gen"), "adam", model_name="count_gen")
    disc = build(lambda: Counted(_small(1)(), counts, "disc"), "adam", model_name="count_disc")
    ops = [ModelOp(model=gen, inputs="x", outputs="fake"),
           ModelOp(model=disc, inputs="fake", outputs="fake_score"),
           ModelOp(model=disc, inputs="x", outputs="real_score"),
           LambdaOp(fn=lambda fake: -fake.mean(), inputs="fake_score", outputs="gen_loss"),
           LambdaOp(fn=lambda fake, real: fake.mean() - real.mean(), inputs=("fake_score", "real_score"),
                    outputs="disc_loss"),
           UpdateOp(model=gen, loss_name="gen_loss"),
           UpdateOp(model=disc, loss_name="disc_loss")]
    warmup, steps = _fit(ops, counts, _data())

    hand_counts: Dict[str, int] = {}
    hand_gen, hand_disc = Counted(generator_fn(), hand_counts, "gen"), Counted(_small(1)(), hand_counts, "disc")
    gen_opt, disc_opt = torch.optim.Adam(hand_gen.parameters()), torch.optim.Adam(hand_disc.parameters())
    data = _data()

    def step(index: int) -> None:
        x = torch.from_numpy(data["x"][index:index + 1])
        fake = hand_gen(x)
        fake_score, real_score = hand_disc(fake), hand_disc(x)
        gen_grads = torch.autograd.grad(-fake_score.mean(), list(hand_gen.parameters()), retain_graph=True)
        disc_grads = torch.autograd.grad(fake_score.mean() - real_score.mean(), list(hand_disc.parameters()))
        _optimizer_step(gen_opt, list(hand_gen.parameters()), gen_grads)
        _optimizer_step(disc_opt, list(hand_disc.parameters()), disc_grads)

    assert steps == _hand_written(step, hand_counts)
    assert warmup == {"gen forward": 1, "gen backward": 0, "disc forward": 2, "disc backward": 0}


def test_one_model_on_two_inputs_runs_the_hand_written_passes():
    """The siamese step: one model applied to both images of a pair, a loss from both embeddings."""
    counts: Dict[str, int] = {}
    model = build(lambda: Counted(_small(4)(), counts, "embed"), "adam")
    ops = [ModelOp(model=model, inputs="x", outputs="e1"),
           ModelOp(model=model, inputs="x2", outputs="e2"),
           LambdaOp(fn=lambda a, b: ((a - b) ** 2).mean(), inputs=("e1", "e2"), outputs="distance"),
           UpdateOp(model=model, loss_name="distance")]
    data = dict(_data(), x2=_data(seed=2)["x"])
    warmup, steps = _fit(ops, counts, data)

    hand_counts: Dict[str, int] = {}
    hand_model = Counted(_small(4)(), hand_counts, "embed")
    optimizer = torch.optim.Adam(hand_model.parameters())

    def step(index: int) -> None:
        e1 = hand_model(torch.from_numpy(data["x"][index:index + 1]))
        e2 = hand_model(torch.from_numpy(data["x2"][index:index + 1]))
        params = list(hand_model.parameters())
        _optimizer_step(optimizer, params, torch.autograd.grad(((e1 - e2) ** 2).mean(), params))

    assert steps == _hand_written(step, hand_counts)
    assert warmup == {"embed forward": 2, "embed backward": 0}
