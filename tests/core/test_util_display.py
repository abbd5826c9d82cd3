"""fe.util ImageDisplay / BatchDisplay / GridDisplay: figures of known images saved as PNG, checked pixel by pixel."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest

pytest.importorskip("plotly", reason="the displays need the plot extra")  # installed in every suite (fe-core[all])
plt_image = pytest.importorskip("matplotlib.image")

from fe_core.util.display import BatchDisplay, GridDisplay, ImageDisplay  # noqa: E402
from fe_core.util.figure import FigureFE  # noqa: E402
from fe_core.util.figure_static import parse_color  # noqa: E402

RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)


def _read_rgb(path) -> np.ndarray:
    return np.round(plt_image.imread(str(path))[..., :3] * 255).astype(np.int32)


def _where(pixels: np.ndarray, color) -> np.ndarray:
    """(rows, cols) of the pixels within 30 of `color` on every channel."""
    return np.nonzero(np.all(np.abs(pixels - np.array(color)) < 30, axis=-1))


@pytest.fixture(autouse=True)
def matplotlib_export(monkeypatch):
    monkeypatch.setenv("FE_FIGURE_EXPORT", "matplotlib")  # the same pixels whether or not kaleido is installed


def test_image_display_png_shows_the_image_where_it_belongs(tmp_path):
    image = np.zeros((32, 32, 3), dtype=np.uint8)
    image[:, :16] = RED
    image[:, 16:] = BLUE
    out = io.StringIO()
    with redirect_stdout(out):
        ImageDisplay(image=image, title="halves").show(save_path=str(tmp_path / "halves.png"))
    assert out.getvalue().strip() == f"Saving to {tmp_path / 'halves.png'}"
    pixels = _read_rgb(tmp_path / "halves.png")
    assert pixels.shape[1] == 280  # the default col_width
    red_rows, red_cols = _where(pixels, RED)
    blue_rows, blue_cols = _where(pixels, BLUE)
    assert red_cols.size > 10000 and abs(red_cols.size - blue_cols.size) < 0.05 * red_cols.size
    assert red_cols.max() < blue_cols.min()  # red strictly left of blue
    assert abs(red_rows.min() - blue_rows.min()) <= 1 and abs(red_rows.max() - blue_rows.max()) <= 1
    assert red_rows.min() > 30  # below the title


def test_image_display_draws_boxes_masks_keypoints_and_text(tmp_path):
    image = np.zeros((40, 40), dtype=np.float32)  # one channel, shown in grey: black
    mask = np.zeros((40, 40))
    mask[30:40, 0:10] = 1
    display = ImageDisplay(image=image, masks=(mask, "blob"), bboxes=[(10, 10, 20, 20, "box")],
                           keypoints=np.array([[35.0, 5.0], [-1, -1]]), text="hi", color_map="gray")
    path = tmp_path / "parts.png"
    display.show(save_path=str(path), verbose=False)
    pixels = _read_rgb(path)
    black_rows, black_cols = _where(pixels, (0, 0, 0))
    assert black_cols.size > 10000
    box_rows, box_cols = _where(pixels, (31, 119, 180))  # the first color of get_colors: box edge and keypoint
    assert box_cols.size > 200
    # the mask tints the bottom left corner of the image with the first color at 45% opacity over black
    top, left, size = black_rows.min(), black_cols.min(), black_cols.max() - black_cols.min()
    corner = pixels[top + int(0.8 * size), left + int(0.1 * size)]
    assert np.allclose(corner, np.array([31, 119, 180]) * 0.45, atol=25)
    centre = pixels[top + size // 2 - 10:top + size // 2 + 10, left + size // 2 - 10:left + size // 2 + 10]
    assert (centre.min(axis=-1) > 150).sum() > 40  # the text's light background box sits in the middle
    assert (pixels[top + 5:top + 20, left + 5:left + 20].max(axis=-1) < 30).all()  # the rest stays black


def test_batch_and_grid_display_place_each_image_in_its_cell(tmp_path):
    batch = np.zeros((2, 16, 16, 3), dtype=np.float32)
    batch[0, ..., 0] = 1.0  # red, floats in [0, 1]
    batch[1, ..., 2] = 1.0  # blue
    green = np.zeros((16, 16, 3), dtype=np.uint8)
    green[...] = GREEN
    grid = GridDisplay([ImageDisplay(image=green, title="single"), BatchDisplay(image=batch, title="batch")])
    path = tmp_path / "grid.png"
    grid.show(save_path=str(path), verbose=False)
    pixels = _read_rgb(path)
    height, width = pixels.shape[:2]
    green_rows, green_cols = _where(pixels, GREEN)
    red_rows, red_cols = _where(pixels, RED)
    blue_rows, blue_cols = _where(pixels, BLUE)
    assert min(green_cols.size, red_cols.size, blue_cols.size) > 5000
    assert green_cols.max() < width / 2 < red_cols.min() and blue_cols.min() > width / 2  # two columns
    assert red_rows.max() < blue_rows.min()  # the batch runs down its column
    assert green_rows.max() < blue_rows.min()  # the single image sits in the first row
    assert abs((blue_rows.max() - blue_rows.min()) - (red_rows.max() - red_rows.min())) <= 2  # equal cells
    assert abs(green_rows.min() - red_rows.min()) <= 1


def test_batch_display_alone_and_torch_style_layouts(tmp_path):
    batch = np.zeros((3, 8, 8), dtype=np.uint8)  # 3 grey images, 8x8
    batch[1] = 255
    fig = BatchDisplay(image=batch, text=["a", "b", "c"], title="column").prepare()
    assert isinstance(fig, FigureFE) and len(fig.data) == 3
    assert [note.text for note in fig.layout.annotations] == ["a", "b", "c"]
    fig.show(save_path=str(tmp_path / "column.png"), verbose=False)
    fig.show(save_path=str(tmp_path / "stem"), verbose=False)  # no extension: a file stem, saved as HTML
    assert "<html>" in (tmp_path / "stem.html").read_text(encoding="utf-8")[:200].lower()
    pixels = _read_rgb(tmp_path / "column.png")
    white_rows, _ = _where(pixels, (255, 255, 255))
    black_rows, _ = _where(pixels, (0, 0, 0))
    rows = pixels.shape[0]
    middle = (white_rows > rows / 3) & (white_rows < 2 * rows / 3)
    assert black_rows.size > 1000 and middle.sum() > 1000  # the white image is the middle one


def test_html_and_json_exports_are_self_contained(tmp_path):
    display = ImageDisplay(image=np.zeros((4, 4, 3), dtype=np.uint8), title="t")
    display.show(save_path=str(tmp_path / "f.html"), verbose=False)
    html = (tmp_path / "f.html").read_text()
    assert "plotly" in html and len(html) > 1_000_000  # plotly.js embedded: opens offline
    display.show(save_path=str(tmp_path / "f.json"), verbose=False)
    assert json.loads((tmp_path / "f.json").read_text())["data"][0]["type"] == "image"
    display.show(save_path=str(tmp_path) + "/", verbose=False)
    assert (tmp_path / "t.png").exists()
    with pytest.raises(ValueError, match="cannot save a figure as 'gif'"):
        display.show(save_path=str(tmp_path / "f.gif"), verbose=False)


def test_bad_inputs_raise_assertion_errors():
    with pytest.raises(AssertionError, match="1 or 3 channels"):
        ImageDisplay(image=np.zeros((4, 4, 2)))
    with pytest.raises(AssertionError, match="do not match"):
        ImageDisplay(image=np.zeros((4, 4)), masks=np.zeros((5, 5)))
    with pytest.raises(AssertionError, match="label"):
        ImageDisplay(masks=(np.zeros((4, 4, 2)), ["one"]))
    with pytest.raises(AssertionError, match="bounding box"):
        ImageDisplay(bboxes=[(1, 2, 3)])
    with pytest.raises(AssertionError, match="keypoints"):
        ImageDisplay(keypoints=np.zeros((2, 3)))
    with pytest.raises(AssertionError, match="elements but the batch has"):
        BatchDisplay(image=np.zeros((2, 4, 4)), text=["a"])
    with pytest.raises(AssertionError, match="same batch size"):
        GridDisplay([BatchDisplay(image=np.zeros((2, 4, 4))), BatchDisplay(image=np.zeros((3, 4, 4)))])
    with pytest.raises(AssertionError, match="BatchDisplay or ImageDisplay"):
        GridDisplay(["x"])


def test_mask_threshold_and_keypoint_labels_in_the_figure():
    mask = np.array([[0.2, 0.8], [0.6, 0.1]])
    display = ImageDisplay(masks=mask, mask_threshold=0.5, keypoints=(np.array([[0, 0], [1, 1]]), ["p", "q"]))
    assert display.masks[..., 0].tolist() == [[0, 1], [1, 0]]
    fig = display.prepare()
    scatter = [trace for trace in fig.data if trace.type == "scatter"][0]
    assert list(scatter.text) == ["p", "q"] and list(scatter.x) == [0, 1]


def test_parse_color():
    assert parse_color("rgba(255,0,0,0.5)") == (1.0, 0.0, 0.0, 0.5)
    assert parse_color("rgb(0, 0, 255)") == (0.0, 0.0, 1.0, 1.0)
    assert parse_color("#00ff00") == (0.0, 1.0, 0.0, 1.0)
    assert parse_color(None, (1, 1, 1, 1)) == (1, 1, 1, 1)


def test_static_export_engine_choice(tmp_path, monkeypatch):
    from fe_core.util import figure

    fig = ImageDisplay(image=np.zeros((4, 4, 3), dtype=np.uint8)).prepare()
    monkeypatch.setattr(figure, "_kaleido_state", {"usable": None})
    written = []

    def fake_kaleido(fig_, path, scale):
        written.append((path, scale))
        open(path, "wb").close()
        return True

    monkeypatch.setenv("FE_FIGURE_EXPORT", "auto")
    monkeypatch.setattr(figure, "_kaleido_export", fake_kaleido)
    assert figure.save_static(fig, str(tmp_path / "k.png"), scale=2) == "kaleido"
    assert written == [(str(tmp_path / "k.png"), 2)]
    monkeypatch.setattr(figure, "_kaleido_export", lambda *args: False)  # no Chrome here: matplotlib takes over
    assert figure.save_static(fig, str(tmp_path / "m.png")) == "matplotlib"
    assert _read_rgb(tmp_path / "m.png").shape[1] == 280
    assert figure.save_static(fig, str(tmp_path / "m2.png"), scale=2) == "matplotlib"
    assert _read_rgb(tmp_path / "m2.png").shape[1] == 560  # scale multiplies the resolution
    monkeypatch.setenv("FE_FIGURE_EXPORT", "kaleido")
    with pytest.raises(ValueError, match="kaleido could not write"):
        figure.save_static(fig, str(tmp_path / "x.png"))
    monkeypatch.setenv("FE_FIGURE_EXPORT", "svgwriter")
    with pytest.raises(ValueError, match="FE_FIGURE_EXPORT must be"):
        figure.save_static(fig, str(tmp_path / "y.png"))


def test_a_failed_kaleido_is_not_retried(tmp_path, monkeypatch):
    from fe_core.util import figure

    monkeypatch.setattr(figure, "_kaleido_state", {"usable": None})
    calls = []

    class Broken(FigureFE):
        def write_image(self, *args, **kwargs):
            calls.append(args)
            raise RuntimeError("Kaleido requires Google Chrome to be installed.")

    monkeypatch.setitem(__import__("sys").modules, "kaleido", type(__import__("sys"))("kaleido"))
    fig = Broken(ImageDisplay(image=np.zeros((4, 4, 3), dtype=np.uint8)).prepare())
    monkeypatch.setenv("FE_FIGURE_EXPORT", "auto")
    assert figure.save_static(fig, str(tmp_path / "a.png")) == "matplotlib"
    assert figure.save_static(fig, str(tmp_path / "b.png")) == "matplotlib"
    assert len(calls) == 1 and (tmp_path / "b.png").exists()
