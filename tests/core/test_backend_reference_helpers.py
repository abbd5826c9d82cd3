"""FastEstimator's small backend helpers on numpy: get_framework, get_scaled_data."""
import numpy as np
import pytest

from fe_core.backend import get_framework, get_scaled_data


def test_get_framework_names_numpy():
    assert get_framework(np.zeros(3)) == ("np", None)
    assert get_framework(np.float32(1)) == ("np", None)
    with pytest.raises(ValueError, match="unrecognized data type"):
        get_framework([1, 2])


def test_get_scaled_data_scales_into_float32():
    scaled = get_scaled_data()
    assert scaled.dtype == np.float32
    np.testing.assert_allclose(scaled, np.array([0.485, 0.456, 0.406]) * 255, rtol=1e-6)
    assert get_scaled_data(0.5, 2.0).item() == 1.0
    with pytest.raises(ValueError, match="framework"):
        get_scaled_data(framework="jax")
