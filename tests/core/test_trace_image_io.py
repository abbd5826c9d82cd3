"""ImageSaver, ImageViewer, BatchDisplay and GridDisplay traces: files written, their names and their pixels."""
from __future__ import annotations

import numpy as np
import pytest

from trace_helpers import make_system, run_epoch
from fe_core.data import Data
from fe_core.summary.summary import Summary
from fe_core.trace.io import BatchDisplay, GridDisplay, ImageSaver, ImageViewer

Image = pytest.importorskip("PIL.Image")


def _read(path):
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def test_image_saver_writes_each_array_element_pixel_for_pixel(tmp_path):
    images = np.zeros((2, 4, 5, 3), dtype=np.uint8)
    images[0, :, :, 0] = 255
    images[1, :2] = 7
    saver = ImageSaver("img", save_dir=str(tmp_path))
    run_epoch(saver, [], mode="eval", epoch=3, end_logs={"img": images})
    first, second = tmp_path / "img_eval_epoch_3_elem_0.png", tmp_path / "img_eval_epoch_3_elem_1.png"
    np.testing.assert_array_equal(_read(first), images[0])
    np.testing.assert_array_equal(_read(second), images[1])


def test_image_saver_scales_float_images_and_plots_summaries(tmp_path):
    saver = ImageSaver(["grey", "curves"], save_dir=str(tmp_path))
    make_system(saver, mode="test", epoch=2)
    summary = Summary("run")
    for step, value in ((1, 0.9), (2, 0.5), (3, 0.2)):
        summary.history["train"]["loss"][step] = value
    saver.on_end(Data({"grey": np.array([[0.0, 0.5], [1.0, 0.25]]), "curves": summary}))
    np.testing.assert_array_equal(_read(tmp_path / "grey_test_epoch_2.png")[..., 0], [[0, 128], [255, 64]])
    plot = _read(tmp_path / "curves_test_epoch_2.png")
    assert plot.shape[0] > 100 and (plot != 255).any()


def test_batch_display_saves_html_on_its_training_steps_and_first_eval_batch(tmp_path):
    trace = BatchDisplay(image="x", text="y", frequency=2, save_dir=str(tmp_path), batch_limit=2)
    system = make_system(trace, mode="train")
    trace.on_begin(Data())
    images = np.random.default_rng(0).random((3, 8, 8, 1))
    for step in range(1, 5):
        system.global_step, system.batch_idx = step, step
        trace.on_batch_end(Data({"x": images, "y": np.array([1, 2, 3])}))
    trace.on_epoch_end(Data())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x_train_1_2.html", "x_train_1_4.html"]
    run_epoch(trace, [{"x": images, "y": [1, 2, 3]}, {"x": images, "y": [4, 5, 6]}], mode="eval", epoch=1,
              system=system)
    assert (tmp_path / "x_eval_1_1.html").exists()
    with pytest.raises(ValueError, match="at least one"):
        BatchDisplay()


def test_grid_display_trace_draws_its_columns_side_by_side(tmp_path):
    red = np.zeros((2, 16, 16, 3), dtype=np.uint8)
    red[..., 0] = 255
    blue = np.zeros((2, 16, 16, 3), dtype=np.uint8)
    blue[..., 2] = 255
    grid = GridDisplay([BatchDisplay(image="a", title="a"), BatchDisplay(image="b", title="b")], batch_limit=1)
    make_system(grid)
    figure = grid.make_image(Data({"a": red, "b": blue}), batch_limit=1)
    path = tmp_path / "grid.png"
    figure.show(save_path=str(path), verbose=False)
    pixels = _read(path)
    height, width = pixels.shape[:2]
    band = pixels[height // 2]
    left, right = band[: width // 2], band[width // 2:]
    is_red = (left[:, 0] > 200) & (left[:, 2] < 60)
    is_blue = (right[:, 2] > 200) & (right[:, 0] < 60)
    assert is_red.sum() > width // 6 and is_blue.sum() > width // 6
    assert not ((right[:, 0] > 200) & (right[:, 2] < 60)).any()  # no red in the right column
    assert grid.inputs == ["a", "b"]
    with pytest.raises(ValueError, match="BatchDisplay"):
        GridDisplay([ImageSaver("a")])


def test_grid_display_channels_first_images_under_torch(tmp_path):
    red = np.zeros((1, 3, 16, 16), dtype=np.float32)
    red[:, 0] = 1.0
    grid = GridDisplay([BatchDisplay(image="a")], save_dir=str(tmp_path), frequency="1e")
    system = make_system(grid, mode="eval")
    system.network = type("Net", (), {"backend": type("B", (), {"name": "torch"})()})()
    grid.on_begin(Data())
    figure = grid.make_image(Data({"a": red}))
    figure.show(save_path=str(tmp_path / "g.png"), verbose=False)
    pixels = _read(tmp_path / "g.png")
    assert ((pixels[..., 0] > 200) & (pixels[..., 1] < 60)).sum() > 100


def test_image_viewer_shows_each_present_key(monkeypatch):
    shown = []
    from fe_core.trace.io import image_viewer
    monkeypatch.setattr(image_viewer, "show_value", lambda value, title, interactive: shown.append(title))
    viewer = ImageViewer(["a", "missing"], interactive=True)
    make_system(viewer)
    viewer.on_epoch_end(Data({"a": np.zeros((2, 4, 4))}))
    assert shown == ["a"] and viewer.mode == {"eval", "test"}
