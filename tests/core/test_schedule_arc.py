"""ARC, the learned learning-rate controller: its numpy network, input preprocessing and multiplier choice."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.schedule import ARC
from fe_core.schedule.arc import ArcNetwork, _resize_linear, _resize_nearest, _zscore


def random_weights(seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.normal(scale=0.2, size=shape).astype(np.float32) for shape in ArcNetwork.SHAPES]


def fed_arc(cycles: int = 3, **kwargs) -> ARC:
    arc = ARC(frequency=2, **kwargs)
    rng = np.random.default_rng(1)
    lr = 1e-3
    for cycle in range(cycles):
        for _ in range(2):  # epochs per cycle
            for step in range(7 + cycle):
                arc.accumulate_single_train_loss(np.float32(1.0 / (step + 1) + rng.normal(scale=0.01)))
            arc.accumulate_all_lrs(lr)
            arc.accumulate_single_eval_loss(0.5 - 0.05 * cycle)
        arc.gather_multiple_train_losses()
        arc.gather_multiple_eval_losses()
        lr *= 1.618
    return arc


def test_resizing_matches_opencv():
    cv2 = pytest.importorskip("cv2")  # the image extra, installed in every suite
    values = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0], dtype=np.float32).reshape(-1, 1)  # a column image
    for size in (3, 7, 10, 100, 300):
        linear = cv2.resize(values, (1, size)).ravel()
        nearest = cv2.resize(values, (1, size), interpolation=cv2.INTER_NEAREST).ravel()
        np.testing.assert_allclose(_resize_linear(values.ravel(), size), linear, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(_resize_nearest(values.ravel(), size), nearest)


def test_zscore_keeps_a_flat_curve_finite():
    np.testing.assert_allclose(_zscore(np.array([2.0, 2.0, 2.0, 2.0])), 0.0)
    z = _zscore(np.array([1.0, 2.0, 3.0]))
    assert abs(z.mean()) < 1e-12 and z[0] < 0 < z[2]


def test_inputs_are_300_by_3_with_missing_cycles_padded_in_front():
    arc = fed_arc(cycles=2)
    inputs = arc.model_inputs()
    assert inputs.shape == (1, 300, 3) and inputs.dtype == np.float32
    assert np.all(inputs[0, :100, 0] == 0) and np.any(inputs[0, 100:, 0] != 0)  # one loss cycle missing
    # the last three epochs' rates, relative to the first of them: [1, 1.618, 1.618], 100 points each
    assert np.all(inputs[0, :100, 2] == 1.0) and np.allclose(inputs[0, 100:, 2], 1.618)
    assert np.all(inputs[0, :100, 1] == 0) and np.all(inputs[0, 100:, 1] != 0)  # two eval cycles -> 200 points


def test_prediction_picks_the_multiplier_of_the_most_likely_action(tmp_path):
    weights = random_weights()
    np.savez(tmp_path / "arc.npz", *weights)
    arc = fed_arc(weights_path=str(tmp_path / "arc.npz"))
    probabilities = arc._network()(arc.model_inputs())
    assert probabilities.shape == (1, 3) and probabilities.sum() == pytest.approx(1.0, abs=1e-5)
    assert arc.predict_next_multiplier() == {0: 1.618, 1: 1.0, 2: 0.618}[int(np.argmax(probabilities))]


def test_bad_arguments_and_missing_state_are_clear():
    with pytest.raises(AssertionError, match="frequency"):
        ARC(frequency=0)
    with pytest.raises(RuntimeError, match="no training losses"):
        ARC().model_inputs()
    with pytest.raises(RuntimeError, match="no weights"):
        ArcNetwork()(np.zeros((1, 300, 3)))
    with pytest.raises(ValueError, match="14 arrays"):
        ArcNetwork().set_weights(random_weights()[:-1])
    with pytest.raises(FileNotFoundError):
        ARC(weights_path="/no/such/arc.h5").predict_next_multiplier() if False else ArcNetwork().load_weights(
            "/no/such/arc.h5")

