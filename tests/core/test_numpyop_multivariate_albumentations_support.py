"""The albumentations glue: transforms draw from numpy's global random state; the image-only base."""
from __future__ import annotations

import random

import numpy as np
import pytest

albumentations = pytest.importorskip("albumentations")

from fe_core.op.numpyop.albumentations_support import (ImageOnlyAlbumentation, NumpyGlobalRandom,  # noqa: E402
                                                       bind_to_numpy_global_rng, import_albumentations,
                                                       numpy_global_generators, run_transform)
from fe_core.optional import MissingExtraError  # noqa: E402


def test_python_random_methods_follow_numpys_seed():
    _, python_random = numpy_global_generators()
    assert isinstance(python_random, random.Random)

    def draws():
        return (python_random.random(), python_random.uniform(2, 3), python_random.randint(0, 10 ** 12),
                python_random.choice("abcdef"), python_random.sample(range(100), 3), python_random.gauss(0, 1),
                python_random.getrandbits(70))

    np.random.seed(5)
    first = draws()
    np.random.seed(5)
    assert draws() == first
    np.random.seed(6)
    assert draws() != first
    assert 0 <= python_random.getrandbits(3) < 8 and python_random.getrandbits(0) == 0


def test_draws_advance_numpys_global_state():
    generator, python_random = numpy_global_generators()
    np.random.seed(1)
    state = np.random.get_state()
    generator.integers(0, 10)
    python_random.random()
    assert not np.array_equal(np.random.get_state()[1], state[1])
    np.random.set_state(state)
    with pytest.raises(NotImplementedError):
        python_random.getstate()
    assert isinstance(NumpyGlobalRandom(generator).random(), float)


def test_a_transform_rebinds_when_numpys_bit_generator_is_replaced():
    transform = albumentations.RandomCrop(2, 2, p=1.0)
    bind_to_numpy_global_rng(transform)
    image = np.arange(64, dtype=np.uint8).reshape(8, 8)
    original = np.random.get_bit_generator()
    try:
        np.random.set_bit_generator(np.random.MT19937(3))
        first = run_transform(transform, image=image)["image"]
        np.random.set_bit_generator(np.random.MT19937(3))
        np.testing.assert_array_equal(run_transform(transform, image=image)["image"], first)
        assert transform.random_generator.bit_generator is np.random.get_bit_generator()
    finally:
        np.random.set_bit_generator(original)


def test_image_only_base_gives_every_key_the_same_random_parameters():
    op = ImageOnlyAlbumentation(albumentations.RandomBrightnessContrast(p=1.0), inputs=["a", "b"], outputs=["c", "d"])
    image = np.full((4, 4, 3), 100, dtype=np.uint8)
    np.random.seed(0)
    first, second = op.forward([image, image.copy()], {})
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, image)
    np.random.seed(0)
    again, _ = op.forward([image, image], {})
    np.testing.assert_array_equal(again, first)


def test_image_only_base_leaves_all_keys_alone_when_the_transform_skips():
    op = ImageOnlyAlbumentation(albumentations.InvertImg(p=0.5), inputs=["a", "b"], outputs=["a", "b"])
    image = np.zeros((2, 2), np.uint8)
    np.random.seed(0)
    results = [op.forward([image, image], {}) for _ in range(20)]
    assert all(np.array_equal(a, b) for a, b in results)
    assert {int(a[0, 0]) for a, _ in results} == {0, 255}


def test_image_only_base_checks_keys():
    with pytest.raises(ValueError, match="as many outputs as inputs"):
        ImageOnlyAlbumentation(albumentations.InvertImg(p=1.0), inputs=["a", "b"], outputs="a")


def test_missing_library_names_the_extra(monkeypatch):
    import importlib
    real = importlib.import_module

    def fake(name, *args, **kwargs):
        if name == "albumentations":
            raise ImportError("no albumentations")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(MissingExtraError, match=r"RandomCrop needs albumentations.*fe-core\[image\]"):
        import_albumentations("RandomCrop")
