"""PBMCalibrator: calibrated outputs, the saved calibration function (read back by Calibrate), save gating, state."""
from __future__ import annotations

import os

import numpy as np
import pytest

from trace_helpers import make_system, run_epoch
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.op.numpyop.univariate.calibate import Calibrate
from fe_core.trace.adapt import PBMCalibrator
from fe_core.trace.metric._calibration import calibration_error


def _overconfident(n=400, seed=0):
    rng = np.random.default_rng(seed)
    true_p = rng.uniform(0.05, 0.95, n)
    labels = (rng.random(n) < true_p).astype(np.int64)
    squashed = 1 / (1 + np.exp(-4 * np.log(true_p / (1 - true_p))))  # far too confident
    return np.stack([1 - squashed, squashed], axis=1), labels


def test_calibrated_predictions_are_written_and_better_calibrated(tmp_path):
    probs, labels = _overconfident()
    trace = PBMCalibrator("y", "p", save_path=str(tmp_path / "cal.pkl"))
    data = run_epoch(trace, [{"y": labels[:200], "p": probs[:200]}, {"y": labels[200:], "p": probs[200:]}])
    calibrated = data["p_calibrated"]
    assert "p_calibrated" not in data.read_logs()
    assert calibrated.shape == probs.shape
    assert len(np.unique(calibrated[:, 1])) <= 10
    assert calibration_error(calibrated, labels) < calibration_error(probs, labels) / 2
    op = Calibrate("p", "p", calibration_fn=str(tmp_path / "cal.pkl"))
    out = op.forward_batch([probs], {"mode": "test"})[0]
    np.testing.assert_allclose(out, calibrated)


def test_save_if_key_gates_saving_and_needs_save_path(tmp_path):
    probs, labels = _overconfident(100)
    path = tmp_path / "cal.pkl"
    trace = PBMCalibrator("y", "p", save_path=str(path), save_if_key="since_best")
    system = make_system(trace)
    batch = {"y": labels, "p": probs}
    from fe_core.data import Data
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data(dict(batch)))
    trace.on_epoch_end(Data({"since_best": 2}))
    assert not path.exists()
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data(dict(batch)))
    trace.on_epoch_end(Data({"since_best": 0}))
    assert path.exists() and not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    assert system is trace.system
    with pytest.raises(ValueError, match="save_path"):
        PBMCalibrator("y", "p", save_if_key="since_best")
    assert PBMCalibrator("y", "p", output_name="cal").outputs == ["cal"]


def test_state_keeps_collected_predictions_and_the_fitted_calibrator():
    probs, labels = _overconfident(100)
    trace = PBMCalibrator("y", "p")
    run_epoch(trace, [{"y": labels, "p": probs}])
    state = get_object_state(trace)
    fresh = PBMCalibrator("y", "p")
    set_object_state(fresh, state)
    np.testing.assert_allclose(fresh.calibrator(probs), trace.calibrator(probs))
    np.testing.assert_array_equal(np.asarray(fresh.y_true), labels)  # one entry per sample, as FastEstimator
