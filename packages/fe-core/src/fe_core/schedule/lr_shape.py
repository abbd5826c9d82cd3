"""Learning-rate shapes to use with the LRScheduler trace."""
from __future__ import annotations

import math
from fe_core.export import fe_export

__all__ = ["cosine_decay"]


@fe_export("fe.schedule.lr_schedule.cosine_decay", "fe.schedule.lr_shedule.cosine_decay", "fe.schedule.cosine_decay")
def cosine_decay(time: int,
                 cycle_length: int,
                 init_lr: float,
                 min_lr: float = 1e-6,
                 start: int = 1,
                 cycle_multiplier: int = 1,
                 warmup: bool = False) -> float:
    """A cosine learning-rate decay (half a cosine curve) with optional warm restarts, as in FastEstimator 1.x.

    From `start` on, each cycle covers `cycle_length` times (steps or epochs): the rate falls along half a cosine from
    just below `init_lr` at the cycle's first time to exactly `min_lr` at its last, then restarts. Each cycle is
    `cycle_multiplier` times longer than the previous one (SGDR, https://arxiv.org/abs/1608.03983). Before `start` the
    rate is `init_lr`, or rises linearly from 0 to it when `warmup` is set.

    Args:
        time: The current step or epoch (counting from 1).
        cycle_length: The length of the first cycle.
        init_lr: The rate the decay starts from.
        min_lr: The rate at the end of each cycle.
        start: The time at which decay begins.
        cycle_multiplier: The growth factor of the cycle length (>= 1).
        warmup: Whether to ramp linearly from 0 to `init_lr` before `start` (`init_lr * time / start`).

    Returns:
        The learning rate at `time`.

    Raises:
        ValueError: If `cycle_length` is not positive or `cycle_multiplier` is below 1.

    Example:
        >>> round(cosine_decay(10, cycle_length=10, init_lr=0.1, min_lr=0.0), 6)  # end of the first cycle
        0.0
        >>> cosine_decay(11, cycle_length=10, init_lr=0.1) == cosine_decay(1, cycle_length=10, init_lr=0.1)
        True
        >>> [round(cosine_decay(t, cycle_length=2, init_lr=1.0, min_lr=0.0, cycle_multiplier=2), 3) for t in range(1, 7)]
        [0.5, 0.0, 0.854, 0.5, 0.146, 0.0]
    """
    if cycle_length < 1:
        raise ValueError(f"cosine_decay: cycle_length must be a positive integer, got {cycle_length}")
    if cycle_multiplier < 1:
        raise ValueError(f"cosine_decay: cycle_multiplier must be at least 1, got {cycle_multiplier}")
    if time < start:
        return init_lr * time / start if warmup else init_lr
    position = time - start + 1  # 1-based position since decay began
    if cycle_multiplier == 1:
        cycle_begin = (position - 1) // cycle_length * cycle_length
        current_length = cycle_length
    else:  # walk the geometrically growing cycles: O(log(position)) iterations, exact at boundaries
        cycle_begin, current_length = 0, cycle_length
        while position > cycle_begin + current_length:
            cycle_begin += current_length
            current_length *= cycle_multiplier
    progress = (position - cycle_begin) / current_length  # in (0, 1]
    return (init_lr - min_lr) / 2 * math.cos(progress * math.pi) + (init_lr + min_lr) / 2
