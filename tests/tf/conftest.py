"""Shared setup for fe-tf's tests: quiet TensorFlow, fresh model names and seeds for every test."""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TensorFlow is imported anywhere

from typing import Iterator  # noqa: E402

import pytest  # noqa: E402

LEGACY_KERAS = os.environ.get("TF_USE_LEGACY_KERAS", "").strip().lower() in ("1", "true")
if LEGACY_KERAS:  # the tf-keras2 suite
    import sys  # noqa: E402

    import tf_keras  # noqa: E402

    sys.modules["keras"] = tf_keras  # the tests' `import keras` is then tf.keras (Keras 2), as fe_tf's; never mixed

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from fe_core.build import reset_build_count  # noqa: E402
from fe_tf._keras import dtype_policy, set_dtype_policy  # noqa: E402

tf.get_logger().setLevel("ERROR")


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """Deselect (not skip) what the active Keras cannot run: tests marked keras2 (Keras 2 model code) under Keras 3,
    tests marked keras3 (Keras 3's own names) under tf-keras, whichever way pytest was started."""
    unwanted = "keras3" if LEGACY_KERAS else "keras2"
    deselected = [item for item in items if item.get_closest_marker(unwanted) is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item.get_closest_marker(unwanted) is None]


@pytest.fixture(autouse=True)
def fresh_names_and_seed() -> Iterator[None]:
    """Every test starts with model names from 'model', seed 0, the float32 policy and no strategy."""
    reset_build_count()
    keras.utils.set_random_seed(0)
    policy = dtype_policy()
    yield
    set_dtype_policy(policy)
