"""Univariate image augmentations (albumentations, OpenCV, Pillow): shapes, dtypes, values, shared parameters across
keys, and randomness drawn from numpy's global state (enable_deterministic repeats it, a restored state resumes it)."""
import warnings

import numpy as np
import pytest

pytest.importorskip("albumentations")
pytest.importorskip("PIL")

from fe_core.determinism import enable_deterministic  # noqa: E402
from fe_core.op.numpyop import univariate as uv  # noqa: E402
from fe_core.op.numpyop.univariate import rua  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning, module="albumentations")
STATE = {"mode": "train"}
RNG = np.random.RandomState(7)
# a low-contrast gradient with some noise: histogram-based ops (CLAHE, Equalize, ...) have something to do
IMAGE = (np.linspace(80, 160, 24)[None, :, None] + RNG.rand(24, 24, 3) * 30).astype(np.uint8)
REFERENCE = (RNG.rand(24, 24, 3) * 255).astype(np.uint8)

# name -> extra constructor arguments; every op here draws random parameters with its defaults
RANDOM_OPS = {
    "Blur": {}, "Brightness": {}, "ChannelDropout": {}, "ChannelShuffle": {}, "CLAHE": {"tile_grid_size": (2, 2)}, "CoarseDropout": {},
    "Color": {}, "ColorJitter": {}, "Contrast": {}, "Defocus": {}, "GaussianNoise": {}, "HueSaturationValue": {},
    "ISONoise": {}, "MedianBlur": {}, "MotionBlur": {}, "MultiplicativeNoise": {}, "RandomBrightnessContrast": {},
    "RandomFog": {}, "RandomGamma": {}, "RandomRain": {}, "RandomShadow": {}, "RandomSnow": {},
    "RandomSunFlare": {"src_radius": 10}, "RGBShift": {}, "RUA": {}, "Sharpness": {}, "ShearX": {}, "ShearY": {},
    "TranslateX": {}, "TranslateY": {}, "ZoomBlur": {"max_factor": (1.3, 1.5)},
    "Blur(advanced)": {"advanced": True}, "FDA": {"reference_images": [REFERENCE]},
    "HistogramMatching": {"reference_images": [REFERENCE]},
    "PixelDistributionAdaptation": {"reference_images": [REFERENCE]},
    "RandomShapes": {}, "Rotate": {}, "Solarize(rua)": {}, "Posterize(range)": {"num_bits": (2, 6)},
}
FIXED_OPS = {"AutoContrast": {}, "Downscale": {}, "Equalize": {}, "GaussianBlur": {}, "ImageCompression": {},
             "InvertImg": {}, "Posterize": {}, "Solarize": {}, "ToGray": {}, "ToSepia": {}, "Equalize(rua)": {}}


def make(name, inputs="x", outputs="x", **extra):
    base = name.split("(")[0]
    kwargs = {**RANDOM_OPS.get(name, FIXED_OPS.get(name, {})), **extra}
    cls = getattr(rua, base) if name.endswith("(rua)") or base == "Rotate" else getattr(uv, base)
    return cls(inputs=inputs, outputs=outputs, **kwargs)


def run(op, image=IMAGE, times=1):
    return [op.forward([image.copy()], STATE)[0] for _ in range(times)]


@pytest.mark.parametrize("name", sorted(RANDOM_OPS) + sorted(FIXED_OPS))
def test_image_op_keeps_shape_and_dtype_and_shares_parameters_across_keys(name):
    op = make(name, inputs=["a", "b"], outputs=["a", "b"])
    first, second = op.forward([IMAGE.copy(), IMAGE.copy()], STATE)
    assert first.shape == IMAGE.shape and first.dtype == np.uint8
    if name != "RandomShapes":  # the only op that, like FastEstimator's, draws new shapes for each key
        np.testing.assert_array_equal(first, second)


@pytest.mark.parametrize("name", sorted(RANDOM_OPS))
def test_enable_deterministic_repeats_and_seeds_change_augmentations(name):
    op = make(name)
    enable_deterministic(3)
    first = run(op, times=6)
    enable_deterministic(3)
    again = run(op, times=6)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    enable_deterministic(4)
    other = run(op, times=6)
    assert any(not np.array_equal(a, b) for a, b in zip(first, other))
    assert any(not np.array_equal(image, IMAGE) for image in first)


@pytest.mark.parametrize("name", sorted(RANDOM_OPS))
def test_restoring_numpy_state_resumes_the_same_augmentations(name):
    op = make(name)
    np.random.seed(11)
    run(op, times=2)
    saved = np.random.get_state()
    expected = run(op, times=2)
    np.random.set_state(saved)
    for a, b in zip(expected, run(op, times=2)):
        np.testing.assert_array_equal(a, b)


def test_fixed_ops_compute_the_documented_values():
    np.testing.assert_array_equal(make("InvertImg").forward([IMAGE], STATE)[0], 255 - IMAGE)
    posterized = uv.Posterize("x", "x", num_bits=2).forward([IMAGE], STATE)[0]
    np.testing.assert_array_equal(posterized, IMAGE & 0b11000000)
    solarized = uv.Solarize("x", "x", threshold=128).forward([IMAGE], STATE)[0]
    np.testing.assert_array_equal(solarized, np.where(IMAGE >= 128, 255 - IMAGE, IMAGE))
    floats = IMAGE.astype(np.float32) / 255
    float_solarized = uv.Solarize("x", "x", threshold=0.5).forward([floats], STATE)[0]
    np.testing.assert_allclose(float_solarized, np.where(floats >= 0.5, 1 - floats, floats), atol=1e-6)
    grey = make("ToGray").forward([IMAGE], STATE)[0]
    assert np.array_equal(grey[..., 0], grey[..., 1]) and np.array_equal(grey[..., 1], grey[..., 2])
    low_contrast = (IMAGE // 4 + 60).astype(np.uint8)
    stretched = make("AutoContrast").forward([low_contrast], STATE)[0]
    assert stretched.min() == 0 and stretched.max() == 255
    assert uv.FromFloat("x", "x").forward([floats], STATE)[0].dtype == np.uint16
    assert uv.FromFloat("x", "x", dtype="uint8").forward([np.ones((2, 2, 3), np.float32)], STATE)[0].max() == 255


def test_pil_ops_accept_grey_images_with_a_channel_axis():
    grey = IMAGE[..., :1]
    for op in (uv.Brightness("x", "x"), uv.ShearX("x", "x"), uv.TranslateY("x", "x"), rua.Rotate("x", "x")):
        out = op.forward([grey], STATE)[0]
        assert out.shape == grey.shape and out.dtype == np.uint8
    with pytest.raises(ValueError, match="uint8"):
        uv.Contrast("x", "x").forward([IMAGE.astype(np.float32)], STATE)


def test_enhance_factor_follows_limit():
    # limit (0.5, 0.5) -> factor 1.5 exactly: Pillow's brightness scales every pixel by 1.5
    out = uv.Brightness("x", "x", limit=(0.5, 0.5)).forward([np.full((2, 2, 3), 100, np.uint8)], STATE)[0]
    assert (out == 150).all()
    assert uv.Color("x", "x", limit=0.3).limit == (-0.3, 0.3)


def test_translate_shifts_content_by_the_drawn_fraction():
    image = np.zeros((8, 8), dtype=np.uint8)
    image[:, 4] = 255
    out = uv.TranslateX("x", "x", shift_limit=(0.25, 0.25)).forward([image], STATE)[0]
    assert out[:, 2].min() > 200 and out[:, 4].max() < 60  # content moved left by 2 pixels (PIL's affine maps out->in)


def test_gaussian_noise_variance_is_in_uint8_units():
    op = uv.GaussianNoise("x", "x", var_limit=(100.0, 100.0))
    np.random.seed(0)
    flat = np.full((64, 64, 3), 128, dtype=np.uint8)
    noise = op.forward([flat], STATE)[0].astype(np.float64) - 128
    assert 8 < noise.std() < 12  # sqrt(100) = 10


def test_image_compression_accepts_names_and_enums():
    class Kind:
        name = "WEBP"
    assert uv.ImageCompression("x", "x", compression_type=Kind()).func.compression_type == "webp"
    assert uv.ImageCompression("x", "x", compression_type="JPEG").func.compression_type == "jpeg"
    with pytest.raises(ValueError, match="'jpeg' or 'webp'"):
        uv.ImageCompression("x", "x", compression_type="gif")


def test_coarse_dropout_holes_default_to_max_sizes():
    op = uv.CoarseDropout("x", "x", max_holes=1, max_height=4, max_width=4, fill_value=0)
    out = op.forward([np.full((12, 12, 3), 200, np.uint8)], STATE)[0]
    assert (out == 0).all(axis=-1).sum() == 16


def test_reference_ops_read_references_with_read_fn():
    reads = []

    def read(key):
        reads.append(key)
        return REFERENCE

    op = uv.HistogramMatching("x", "x", reference_images=["ref-1", "ref-2"], read_fn=read)
    op.forward([IMAGE], STATE)
    assert reads and set(reads) <= {"ref-1", "ref-2"}
    with pytest.raises(ValueError, match="at least one reference"):
        uv.FDA("x", "x", reference_images=[])


def test_rua_levels_scale_strength_and_number_of_ops():
    weak = uv.RUA("x", "x", level=0)
    assert len(weak.ops) == 1
    strong = uv.RUA("x", "x", level=30)
    assert len(strong.ops) == 5
    middle = uv.RUA("x", "x", level=15)  # 15 * 4 / 30 + 1 = 3 ops
    assert len(middle.ops) == 3
    partial = uv.RUA("x", "x", level=10)  # 10 * 4 / 30 + 1 = 2.33: 2 ops, then one more sometimes
    assert len(partial.ops) == 3 and type(partial.ops[-1]).__name__ == "Sometimes"
    rotate = rua.Rotate("x", "x", limit=90)
    rotate.set_rua_level(0.5)
    assert rotate.limit == (-45.0, 45.0)
    posterize = rua.Posterize("x", "x", num_bits=7)
    posterize.set_rua_level(0.5)
    assert posterize.num_bits == (4, 8)
    identity_only = uv.RUA("x", "x", choices=["Identity"], level=30)
    np.testing.assert_array_equal(identity_only.forward([IMAGE], STATE)[0], IMAGE)


def test_rua_choices_are_validated():
    assert len(uv.RUA("x", "x", choices=["!Rotate", "!Solarize"], level=30).ops[0].ops) == 12
    assert len(uv.RUA("x", "x", choices=["Rotate", "Color"], level=30).ops[0].ops) == 2
    with pytest.raises(AssertionError, match="either add or remove"):
        uv.RUA("x", "x", choices=["!Rotate", "Color"])
    with pytest.raises(ValueError, match="'defaults'"):
        uv.RUA("x", "x", choices=["defaults", "Rotate"])
    with pytest.raises(ValueError, match="'defaults'"):
        uv.RUA("x", "x", choices=["defaults", "!Rotate"])
    with pytest.raises(ValueError, match="unknown augmentation 'Spin'"):
        uv.RUA("x", "x", choices=["Spin"])
    with pytest.raises(AttributeError, match="set_rua_level"):
        uv.RUA("x", "x", choices=[uv.Blur("x", "x")])
    with pytest.raises(ValueError, match=r"\[0, 30\]"):
        uv.RUA("x", "x", level=31)
    custom = uv.RUA("x", "x", choices=["defaults", uv.RandomShapes("x", "x")], level=30)
    assert len(custom.ops[0].ops) == 15


def test_one_of_multi_var_allows_different_keys():
    op = rua.OneOfMultiVar(rua.Identity(inputs="a", outputs="a"), uv.Brightness(inputs="b", outputs="b"))
    assert op.inputs == ["a", "b"] and op.outputs == ["a", "b"]
    np.random.seed(0)
    outs = [op.forward([IMAGE, IMAGE], STATE) for _ in range(6)]
    assert all(np.array_equal(a, IMAGE) for a, _ in outs)
    assert any(not np.array_equal(b, IMAGE) for _, b in outs)


def test_solarize_rua_threshold_range():
    op = rua.Solarize("x", "x", threshold=(0, 0))  # threshold 256: nothing inverted
    np.testing.assert_array_equal(op.forward([IMAGE], STATE)[0], IMAGE)
    op = rua.Solarize("x", "x", threshold=(256, 256))  # threshold 0: everything inverted
    np.testing.assert_array_equal(op.forward([IMAGE], STATE)[0], 255 - IMAGE)


def test_random_shapes_blends_only_inside_shapes():
    op = uv.RandomShapes("x", "x", transparency_range=(1.0, 1.0), intensity_range=(0, 0))
    white = np.full((16, 16, 3), 255, dtype=np.uint8)
    np.random.seed(1)
    out = op.forward([white], STATE)[0]
    assert set(np.unique(out)) == {0, 255}
    floats = uv.RandomShapes("x", "x").forward([np.ones((16, 16), np.float32)], STATE)[0]
    assert floats.dtype == np.float32 and floats.shape == (16, 16) and floats.max() <= 1.0
    with pytest.raises(AssertionError, match="intensity_range"):
        uv.RandomShapes("x", "x", intensity_range=(0, 255))
    op.set_rua_level(0.5)
    assert op.max_shapes == 2 and op.transparency_range == (1.0, 1.0)


def test_pipeline_augmentations_repeat_under_enable_deterministic():
    from fe_core.dataset import NumpyDataset
    from fe_core.pipeline import Pipeline

    images = np.stack([IMAGE, IMAGE[::-1], IMAGE[:, ::-1], 255 - IMAGE])
    labels = np.array([[[0, 1], [2, 1]], [[1, 1], [0, 0]], [[2, 2], [2, 0]], [[0, 0], [0, 0]]], dtype=np.uint8)

    def batches():
        pipeline = Pipeline(train_data=NumpyDataset({"x": images, "y": labels}), batch_size=2,
                            ops=[uv.Brightness("x", "x"), uv.HueSaturationValue("x", "x"), rua.Rotate("x", "x"),
                                 uv.ChannelTranspose("x", "x"), uv.Minmax("x", "x", new_min=-1.0),
                                 uv.Onehot("y", "y", num_classes=3)])
        return pipeline.get_results(mode="train", num_steps=2)

    enable_deterministic(21)
    first = batches()
    enable_deterministic(21)
    second = batches()
    enable_deterministic(22)
    third = batches()
    assert first[0]["x"].shape == (2, 3, 24, 24) and first[0]["x"].dtype == np.float32
    assert first[0]["y"].shape == (2, 2, 2, 3)
    assert float(first[0]["x"].min()) == -1.0 and float(first[0]["x"].max()) == 1.0
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a["x"], b["x"])
    assert any(not np.array_equal(a["x"], c["x"]) for a, c in zip(first, third))


def test_numpy_normalize_and_to_float_match_albumentations():
    import albumentations

    normalized = uv.Normalize("x", "x").forward([IMAGE], STATE)[0]
    expected = albumentations.Normalize(p=1.0)(image=IMAGE)["image"]
    assert normalized.dtype == np.float32
    np.testing.assert_allclose(normalized, expected, rtol=1e-5, atol=1e-5)
    as_float = uv.ToFloat("x", "x").forward([IMAGE], STATE)[0]
    np.testing.assert_allclose(as_float, albumentations.ToFloat(p=1.0)(image=IMAGE)["image"], rtol=1e-6)
    assert uv.Normalize.batch_capable and uv.ToFloat.batch_capable
