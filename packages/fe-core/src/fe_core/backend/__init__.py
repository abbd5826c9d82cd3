"""`fe.backend`: FastEstimator's tensor functions, for numpy arrays, torch tensors and TensorFlow tensors alike.

Each function is written once, in the group module that holds its concept; its numpy case is computed there and torch
or TensorFlow values go to the mirrored module of `fe_torch.backend` / `fe_tf.backend` (see `fe_core.backend.dispatch`).
Importing this package imports no framework.

Example:
    >>> import numpy as np
    >>> from fe_core.backend import reduce_mean
    >>> float(reduce_mean(np.array([1.0, 2.0, 6.0])))
    3.0
"""
from fe_core.backend.crossentropy import binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy
from fe_core.backend.gradients import get_gradient, watch
from fe_core.backend.losses import (dice_score, focal_loss, hinge, huber, l1_loss, mean_squared_error,
                                    smooth_l1_loss)
from fe_core.backend.models import (feed_forward, get_lr, l2_regularization, load_model, save_model, set_lr,
                                    update_model)
from fe_core.backend.reductions import (argmax, check_nan, percentile, reduce_max, reduce_mean, reduce_min,
                                        reduce_std, reduce_sum)

__all__ = [
    "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy", "get_gradient", "watch",
    "dice_score", "focal_loss", "hinge", "huber", "l1_loss", "mean_squared_error", "smooth_l1_loss", "feed_forward",
    "get_lr", "l2_regularization", "load_model", "save_model", "set_lr", "update_model", "argmax", "check_nan",
    "percentile", "reduce_max", "reduce_mean", "reduce_min", "reduce_std", "reduce_sum"
]
