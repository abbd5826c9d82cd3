"""`fe.backend`: FastEstimator's tensor functions, for numpy arrays, torch tensors and TensorFlow tensors alike.

Each function is written once, in the group module that holds its concept; its numpy case is computed there and torch
or TensorFlow values go to the mirrored module of `fe_torch.backend` / `fe_tf.backend` (see `fe_core.backend.dispatch`).
Importing this package imports no framework.

| module | functions |
|---|---|
| reductions | reduce_sum, reduce_mean, reduce_min, reduce_max, reduce_std, argmax, percentile, check_nan |
| elementwise | abs, exp, sign, pow, tensor_pow, tensor_sqrt, tensor_round, clip_by_value, maximum, where, matmul, |
| | lambertw |
| normalization | zscore, normalize, iwd |
| shapes | get_shape, get_image_dims, reshape, expand_dims, squeeze, permute, transpose, flip, roll, concat, gather, |
| | gather_from_batch, resize_3d |
| creation | zeros_like, ones_like, random_normal_like, random_uniform_like |
| conversion | to_tensor, cast, to_type, to_shape, convert_tensor_precision |
| crossentropy | binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy |
| losses | mean_squared_error, l1_loss, smooth_l1_loss, huber, hinge, focal_loss, dice_score |
| gradients | watch, get_gradient |
| models | feed_forward, update_model, get_lr, set_lr, save_model, load_model, l2_regularization |

Example:
    >>> import numpy as np
    >>> from fe_core.backend import reduce_mean
    >>> float(reduce_mean(np.array([1.0, 2.0, 6.0])))
    3.0
"""
from fe_core.backend.conversion import cast, convert_tensor_precision, to_shape, to_tensor, to_type
from fe_core.backend.creation import ones_like, random_normal_like, random_uniform_like, zeros_like
from fe_core.backend.crossentropy import binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy
from fe_core.backend.elementwise import (abs, clip_by_value, exp, lambertw, matmul, maximum, pow, sign, tensor_pow,
                                         tensor_round, tensor_sqrt, where)
from fe_core.backend.gradients import get_gradient, watch
from fe_core.backend.losses import (dice_score, focal_loss, hinge, huber, l1_loss, mean_squared_error,
                                    smooth_l1_loss)
from fe_core.backend.models import (feed_forward, get_lr, l2_regularization, load_model, save_model, set_lr,
                                    update_model)
from fe_core.backend.normalization import iwd, normalize, zscore
from fe_core.backend.reductions import (argmax, check_nan, percentile, reduce_max, reduce_mean, reduce_min,
                                        reduce_std, reduce_sum)
from fe_core.backend.framework_of import get_framework, get_scaled_data
from fe_core.backend.shapes import (concat, expand_dims, flip, gather, gather_from_batch, get_image_dims, get_shape,
                                    permute, reshape, resize_3d, roll, squeeze, transpose)

__all__ = [
    "abs", "argmax", "binary_crossentropy", "cast", "categorical_crossentropy", "check_nan", "clip_by_value",
    "concat", "convert_tensor_precision", "dice_score", "exp", "expand_dims", "feed_forward", "flip", "focal_loss",
    "gather", "gather_from_batch", "get_framework", "get_gradient", "get_image_dims", "get_lr", "get_scaled_data", "get_shape", "hinge", "huber", "iwd",
    "l1_loss", "l2_regularization", "lambertw", "load_model", "matmul", "maximum", "mean_squared_error", "normalize",
    "ones_like", "percentile", "permute", "pow", "random_normal_like", "random_uniform_like", "reduce_max",
    "reduce_mean", "reduce_min", "reduce_std", "reduce_sum", "reshape", "resize_3d", "roll", "save_model", "set_lr",
    "sign", "smooth_l1_loss", "sparse_categorical_crossentropy", "squeeze", "tensor_pow", "tensor_round",
    "tensor_sqrt", "to_shape", "to_tensor", "to_type", "transpose", "update_model", "watch", "where", "zeros_like",
    "zscore"
]
