"""GradCAM, EigenCAM, InstanceTracker and LabelTracker driven with numpy data: heat maps, figures and graphs."""
from __future__ import annotations

import numpy as np
import pytest

from trace_helpers import make_system, run_epoch
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.data import Data
from fe_core.summary.summary import ValWithError
from fe_core.trace.xai import EigenCAM, GradCAM, InstanceTracker, LabelTracker
from fe_core.trace.xai.heatmap import jet, resize_bilinear

Image = pytest.importorskip("PIL.Image")


def _hot_top_left(n=3, size=4, channels=5):
    maps = np.full((n, size, size, channels), -0.2)
    maps[:, 0, 0, :] = 1.0  # the model "looks" at the top-left cell
    return maps


def _is_red(rgb):  # the hot end of the jet colour map: red clearly above blue
    return rgb[..., 0] > rgb[..., 2] + 0.2


def test_jet_and_resize():
    np.testing.assert_allclose(jet(np.array([0.5])), [[0.5, 1.0, 0.5]])
    assert resize_bilinear(np.ones((2, 3, 3)), 6, 9).shape == (2, 6, 9)


def test_grad_cam_is_hot_where_the_gradients_are_and_keeps_n_samples(tmp_path):
    images = np.full((3, 16, 16, 1), 0.5)
    trace = GradCAM(images="x", grads="g", labels="y", preds="p", n_samples=2, label_mapping={"cat": 0, "dog": 1})
    batches = [{"x": images, "g": _hot_top_left(), "y": [0, 1, 1], "p": [[.9, .1], [.2, .8], [.6, .4]]}]
    data = run_epoch(trace, batches, mode="eval")
    heat = trace.last_overlays[0]
    assert heat.shape == (2, 16, 16, 3)
    assert _is_red(heat[:, :3, :3]).all()
    assert not _is_red(heat[:, 8:, 8:]).any() and (heat[:, 12:, 12:, 2] > heat[:, 12:, 12:, 0]).all()
    grid = data["gradcam"]
    assert "gradcam" not in data.read_logs()
    assert [column.title for column in grid.columns] == ["y", "p", "x", "gradcam"]
    assert [item.text for item in grid.columns[0].items] == ["cat", "dog"]
    assert [item.text for item in grid.columns[1].items] == ["cat", "dog"]
    path = tmp_path / "gradcam.png"
    grid.show(save_path=str(path), verbose=False)
    pixels = np.asarray(Image.open(path).convert("RGB")).astype(int)
    reddish = pixels[..., 0] - pixels[..., 2] > 60
    rows, cols = np.nonzero(reddish)
    assert rows.size > 50  # the hot spot is drawn ...
    assert cols.min() > 0.75 * pixels.shape[1]  # ... only in the heat map column (the last of 4) ...
    for top in (0.0, 0.5):  # ... in the top-left part of each of its 2 panels
        panel = (rows > top * pixels.shape[0]) & (rows < (top + 0.5) * pixels.shape[0])
        assert panel.any() and rows[panel].max() < (top + 0.25) * pixels.shape[0]
    assert trace.mode == {"!train"} or "train" not in trace.mode


def test_grad_cam_channels_first_under_torch():
    trace = GradCAM(images="x", grads="g", n_samples=None)
    system = make_system(trace)
    system.network = type("Net", (), {"backend": type("B", (), {"name": "torch"})()})()
    images = np.zeros((2, 3, 16, 16))
    run_epoch(trace, [{"x": images, "g": np.moveaxis(_hot_top_left(2), -1, 1)}], system=system)
    assert trace.last_overlays[0].shape == (2, 16, 16, 3)
    assert _is_red(trace.last_overlays[0][:, :3, :3]).all()


def test_eigen_cam_first_component_follows_the_dominant_pattern():
    rng = np.random.default_rng(0)
    pattern = np.zeros((8, 8))
    pattern[5:, 5:] = 1.0  # bottom-right region active
    direction = rng.normal(size=6)
    acts = pattern[None, :, :, None] * direction * 3 + rng.normal(scale=0.05, size=(2, 8, 8, 6))
    trace = EigenCAM(images="x", activations="a", n_components=2, n_samples=2)
    data = run_epoch(trace, [{"x": np.zeros((2, 32, 32, 3)), "a": acts}])
    first = trace.last_overlays[0]
    assert len(trace.last_overlays) == 2
    assert _is_red(first[:, 26:, 26:]).all() and not _is_red(first[:, :10, :10]).any()
    assert [column.title for column in data["eigencam"].columns] == ["x", "eigencam component 1",
                                                                      "eigencam component 2"]
    variance = EigenCAM(images="x", activations="a", n_components=0.5, downsize=4)
    run_epoch(variance, [{"x": np.zeros((2, 32, 32, 3)), "a": acts}])
    assert len(variance.last_overlays) == 1
    with pytest.raises(ValueError, match="n_components"):
        EigenCAM(images="x", activations="a", n_components=1.5)


def test_cam_samples_survive_a_checkpoint():
    trace = GradCAM(images="x", grads="g", n_samples=4)
    make_system(trace)
    trace.on_epoch_begin(Data())
    trace.on_batch_end(Data({"x": np.zeros((2, 8, 8, 1)), "g": _hot_top_left(2)}))
    fresh = GradCAM(images="x", grads="g", n_samples=4)
    make_system(fresh)
    set_object_state(fresh, get_object_state(trace))
    fresh.on_batch_end(Data({"x": np.zeros((3, 8, 8, 1)), "g": _hot_top_left(3)}))
    fresh.on_epoch_end(Data())
    assert fresh.last_overlays[0].shape[0] == 4


def test_instance_tracker_keeps_highest_lowest_and_listed_indices():
    trace = InstanceTracker(index="idx", metric="ce", n_max_to_keep=1, n_min_to_keep=1, list_to_keep=[2])
    system = make_system(trace)
    for epoch, offset in ((1, 0.0), (2, 1.0)):
        system.global_step = epoch * 10
        run_epoch(trace, [{"idx": [0, 1, 2], "ce": np.array([0.5, 0.9, 0.1]) + offset},
                          {"idx": [3, 4], "ce": np.array([0.3, 2.0]) + offset}], epoch=epoch, system=system)
    end = Data()
    trace.on_end(end)
    graphs = end["ce_by_idx"]
    # named by the raw index, as FastEstimator does (ints stay ints): 4 is highest, 2 lowest (and listed)
    assert sorted(summary.name for summary in graphs) == [2, 4]
    four = next(summary for summary in graphs if summary.name == 4)
    assert dict(four.history["eval"]["ce"]) == {10: pytest.approx(2.0), 20: pytest.approx(3.0)}
    assert system.custom_graphs["ce_by_idx"] == graphs
    with pytest.raises(ValueError, match="n_max_to_keep"):
        InstanceTracker("i", "m", n_max_to_keep=-1)


def test_label_tracker_reports_mean_with_std_and_range():
    trace = LabelTracker(label="y", metric="ce", label_mapping={"cat": 0, "dog": 1}, bounds=["std", "range", None])
    system = make_system(trace)
    system.global_step = 7
    run_epoch(trace, [{"y": [0, 0, 1], "ce": [1.0, 3.0, 5.0]}, {"y": [[0, 1], [1, 0]], "ce": [7.0, 2.0]}],
              system=system)
    end = Data()
    trace.on_end(end)
    # one Summary per label, holding every bound under FastEstimator's keys
    graphs = end["ce_by_y"]
    assert sorted(summary.name for summary in graphs) == ["cat", "dog"]
    cat = next(summary for summary in graphs if summary.name == "cat")
    value = cat.history["eval"]["ce ($\\mu \\pm \\sigma$)"][7]
    assert isinstance(value, ValWithError)
    expected = np.array([1.0, 3.0, 2.0])
    assert value.y == pytest.approx(expected.mean()) and value.y_max - value.y == pytest.approx(expected.std(ddof=1))
    dog = next(summary for summary in graphs if summary.name == "dog")
    dog_range = dog.history["eval"]["ce ($min, \\mu, max$)"][7]
    assert (dog_range.y_min, dog_range.y, dog_range.y_max) == (5.0, 6.0, 7.0)
    assert dog.history["eval"]["ce"][7] == 6.0
    assert set(trace.label_summaries) == {"cat", "dog"}
    with pytest.raises(ValueError, match="bounds"):
        LabelTracker("y", "ce", bounds="var")


def test_trackers_history_survives_a_checkpoint():
    trace = LabelTracker(label="y", metric="ce", bounds=None)
    system = make_system(trace)
    run_epoch(trace, [{"y": [0, 1], "ce": [1.0, 2.0]}], system=system)
    fresh = LabelTracker(label="y", metric="ce", bounds=None)
    fresh_system = make_system(fresh)
    set_object_state(fresh, get_object_state(trace))
    end = Data()
    fresh.on_end(end)
    assert {s.name: s.history["eval"]["ce"][1] for s in end["ce_by_y"]} == {0: 1.0, 1: 2.0}
    assert fresh_system.custom_graphs
