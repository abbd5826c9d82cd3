"""FastEstimator's TensorFlow-only backend helpers and get_framework / get_scaled_data on tf."""
import pickle

import numpy as np
import tensorflow as tf

from fe_core.backend import get_framework, get_scaled_data
from fe_tf.backend.reference_helpers import pickle_mirroredstrategy, resize_tensorflow_tensor, tf_focal_loss


def test_get_framework_and_scaled_data_on_tf():
    assert get_framework(tf.zeros(2)) == ("tf", None)
    scaled = get_scaled_data((0.5, 1.0), 2.0, framework="tf")
    assert tf.is_tensor(scaled) and scaled.dtype == tf.float32 and scaled.numpy().tolist() == [1.0, 2.0]


def test_tf_focal_loss_is_class_balanced_focal_cross_entropy():
    y_true = tf.constant([[1.0, 0.0]])
    y_pred = tf.constant([[0.9, 0.2]])
    p_t = np.array([0.9, 0.8])
    alpha_t = np.array([0.25, 0.75])
    expected = np.mean(-alpha_t * (1 - p_t) ** 2 * np.log(p_t))
    np.testing.assert_allclose(tf_focal_loss(y_true, y_pred).numpy(), [expected], rtol=1e-4)


def test_resize_tensorflow_tensor_resizes_volumes():
    volume = tf.reshape(tf.range(8, dtype=tf.float32), (1, 2, 2, 2, 1))
    assert tuple(resize_tensorflow_tensor(volume, (4, 4, 4), "nearest").shape) == (1, 4, 4, 4, 1)


def test_pickle_mirroredstrategy_rebuilds_the_active_strategy():
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    function, args = pickle_mirroredstrategy(strategy)
    with strategy.scope():
        assert function(*args) is strategy
    assert pickle.loads(pickle.dumps((function, args)))[0] is tf.distribute.get_strategy
