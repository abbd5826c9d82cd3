"""Slicers: cutting a numpy batch into minibatches and fusing the results back."""
from __future__ import annotations

import numpy as np
import pytest

from fe_core.schedule import EpochScheduler, get_current_items
from fe_core.slicer import (AxisSlicer, MeanUnslicer, Slicer, SlidingSlicer, forward_slicers, reverse_slicers,
                            sanity_assert_slicers)


def _round_trip(slicer: Slicer, array: np.ndarray, key: str = "x") -> tuple:
    pieces = [piece[0] for piece in slicer.slice_batches((array,))]
    return pieces, slicer.unslice_batches(tuple(pieces), key=key)


class _Halves(Slicer):
    """A user-written slicer: two halves along the batch axis."""

    def _slice_batch(self, batch):
        return np.array_split(batch, 2)

    def _unslice_batch(self, slices, key):
        return np.concatenate(slices)


# ---------------------------------------------------------------------------------------------------- Slicer base
class TestSlicerBase:
    def test_unslice_defaults_to_the_sliced_keys(self):
        assert _Halves(slice=["x", "y"]).unslice_inputs == ["x", "y"]

    def test_unslice_none_unslices_nothing(self):
        slicer = _Halves(slice="x", unslice=None)
        assert slicer.slice_inputs == ["x"] and slicer.unslice_inputs == []

    def test_explicit_unslice_keys(self):
        assert _Halves(slice="x", unslice=["pred"]).unslice_inputs == ["pred"]

    def test_needs_a_key(self):
        with pytest.raises(ValueError, match="at least one key"):
            _Halves()

    def test_missing_implementation_is_reported(self):
        with pytest.raises(NotImplementedError, match="does not implement _slice_batch"):
            Slicer(slice="x", unslice=None)
        with pytest.raises(NotImplementedError, match="does not implement _unslice_batch"):
            Slicer(unslice="x")

    def test_bad_key_mode_and_ds_id(self):
        with pytest.raises(ValueError, match="'a;b'"):
            _Halves(slice="a;b")
        with pytest.raises(ValueError, match="Unknown mode"):
            _Halves(slice="x", mode="training")
        with pytest.raises(ValueError, match="forbidden"):
            _Halves(slice="x", ds_id="a:b")

    def test_duplicate_key_is_rejected(self):
        with pytest.raises(ValueError, match=r"\['x'\] more than once in `slice`"):
            _Halves(slice=["x", "x"])

    def test_user_slicer_slices_and_records_minibatch_count(self):
        slicer = _Halves(slice=["x", "y"])
        pieces = slicer.slice_batches((np.arange(5), np.arange(5) * 10))
        assert slicer.num_minibatches == 2
        assert [p[0].tolist() for p in pieces] == [[0, 1, 2], [3, 4]]
        assert [p[1].tolist() for p in pieces] == [[0, 10, 20], [30, 40]]

    def test_keys_cut_into_different_counts_are_an_error(self):
        class Uneven(_Halves):
            def _slice_batch(self, batch):
                return list(batch)

        with pytest.raises(ValueError, match=r"different numbers of slices \('x': 2, 'y': 3\)"):
            Uneven(slice=["x", "y"]).slice_batches((np.zeros(2), np.zeros(3)))


# ---------------------------------------------------------------------------------------------------- AxisSlicer
class TestAxisSlicer:
    def test_round_trip_along_the_batch_axis_with_an_odd_batch(self):
        batch = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
        pieces, restored = _round_trip(AxisSlicer(axis=0, slice="x"), batch)
        assert len(pieces) == 5 and all(piece.shape == (3,) for piece in pieces)
        assert restored.dtype == np.float32
        np.testing.assert_array_equal(restored, batch)

    def test_volume_cut_along_the_last_axis_feeds_a_2d_model(self):
        volume = np.arange(2 * 1 * 4 * 4 * 3).reshape(2, 1, 4, 4, 3)
        pieces, restored = _round_trip(AxisSlicer(axis=-1, slice="image"), volume, key="image")
        assert len(pieces) == 3 and pieces[0].shape == (2, 1, 4, 4)
        np.testing.assert_array_equal(pieces[1], volume[..., 1])
        np.testing.assert_array_equal(restored, volume)

    def test_middle_negative_axis(self):
        data = np.arange(2 * 3 * 5).reshape(2, 3, 5)
        pieces, restored = _round_trip(AxisSlicer(axis=-2, slice="x"), data)
        assert len(pieces) == 3 and pieces[0].shape == (2, 5)
        np.testing.assert_array_equal(restored, data)

    def test_predictions_are_stacked_back_along_the_axis(self):
        slicer = AxisSlicer(axis=-1, slice="image", unslice="mask")
        preds = tuple(np.full((2, 4), i) for i in range(3))
        mask = slicer.unslice_batches(preds, key="mask")
        assert mask.shape == (2, 4, 3) and mask[0, 0].tolist() == [0, 1, 2]

    @pytest.mark.parametrize("size, expected", [(7, [3, 3, 1]), (5, [3, 2]), (3, [3]), (2, [2])])
    def test_minibatch_size_chunks_odd_batches_with_an_uneven_last_slice(self, size, expected):
        batch = np.arange(size * 2, dtype=np.float32).reshape(size, 2)
        pieces, restored = _round_trip(AxisSlicer(slice="x", minibatch_size=3), batch)
        assert [piece.shape[0] for piece in pieces] == expected
        assert all(piece.shape[1:] == (2,) for piece in pieces)
        np.testing.assert_array_equal(restored, batch)

    def test_minibatch_size_along_another_axis(self):
        data = np.arange(2 * 5).reshape(2, 5)
        pieces, restored = _round_trip(AxisSlicer(axis=-1, slice="x", minibatch_size=2), data)
        assert [piece.shape for piece in pieces] == [(2, 2), (2, 2), (2, 1)]
        np.testing.assert_array_equal(restored, data)

    def test_minibatch_size_concatenates_predictions_of_another_shape(self):
        slicer = AxisSlicer(slice="x", unslice="scores", minibatch_size=4)
        pieces = [piece[0] for piece in slicer.slice_batches((np.zeros((10, 3)),))]
        scores = tuple(np.full((len(piece), 5), float(i)) for i, piece in enumerate(pieces))
        merged = slicer.unslice_batches(scores, key="scores")
        assert merged.shape == (10, 5) and merged[:, 0].tolist() == [0] * 4 + [1] * 4 + [2] * 2

    def test_minibatch_size_cannot_concatenate_scalars(self):
        with pytest.raises(ValueError, match="could not un-slice key 'loss'.*use a MeanUnslicer"):
            AxisSlicer(slice="x", unslice="loss", minibatch_size=2).unslice_batches((np.float32(1),) * 2, key="loss")

    @pytest.mark.parametrize("bad", [0, -2, 1.5, True])
    def test_minibatch_size_must_be_a_positive_integer(self, bad):
        with pytest.raises(ValueError, match="minibatch_size must be a positive integer"):
            AxisSlicer(slice="x", minibatch_size=bad)

    def test_axis_out_of_range_names_the_key(self):
        with pytest.raises(ValueError, match=r"could not slice key 'x' of shape \(2, 3\).*axis 2 is out of range"):
            AxisSlicer(axis=2, slice="x").slice_batches((np.zeros((2, 3)),))

    def test_axis_must_be_an_integer(self):
        with pytest.raises(TypeError, match="axis must be an integer"):
            AxisSlicer(axis=1.0, slice="x")  # type: ignore[arg-type]

    def test_pieces_of_different_shapes_cannot_be_stacked(self):
        with pytest.raises(ValueError, match="could not un-slice key 'p'"):
            AxisSlicer(axis=0, unslice="p", slice="x").unslice_batches((np.zeros(2), np.zeros(3)), key="p")


# ---------------------------------------------------------------------------------------------------- MeanUnslicer
class TestMeanUnslicer:
    def test_only_unslices(self):
        slicer = MeanUnslicer(["ce", "mse"])
        assert slicer.slice_inputs == [] and slicer.unslice_inputs == ["ce", "mse"]

    def test_averages_scalar_losses(self):
        mean = MeanUnslicer("ce").unslice_batches((np.float32(1.0), np.float32(2.0), np.float32(6.0)), key="ce")
        assert mean.dtype == np.float32
        assert float(mean) == pytest.approx(3.0)

    def test_averages_arrays_element_wise_and_ints_become_float(self):
        mean = MeanUnslicer("m").unslice_batches((np.array([1, 2]), np.array([2, 5])), key="m")
        assert np.issubdtype(mean.dtype, np.floating)
        assert mean.tolist() == [1.5, 3.5]

    def test_does_not_modify_the_first_slice(self):
        first = np.array([1.0, 1.0])
        MeanUnslicer("m").unslice_batches((first, np.array([3.0, 3.0])), key="m")
        assert first.tolist() == [1.0, 1.0]

    def test_shape_mismatch_names_the_key(self):
        with pytest.raises(ValueError, match="could not un-slice key 'loss'.*one shape"):
            MeanUnslicer("loss").unslice_batches((np.zeros(3), np.zeros(2)), key="loss")


# ---------------------------------------------------------------------------------------------------- SlidingSlicer
class TestSlidingSlicer:
    def test_minibatches_along_the_batch_axis_with_an_uneven_last_slice(self):
        batch = np.arange(7 * 2).reshape(7, 2)
        pieces, restored = _round_trip(SlidingSlicer([3, -1], pad_mode="partial", slice="x"), batch)
        assert [piece.shape for piece in pieces] == [(3, 2), (3, 2), (1, 2)]
        np.testing.assert_array_equal(pieces[2], batch[6:])
        np.testing.assert_array_equal(restored, batch)

    def test_drop_leaves_out_the_last_window_and_fills_it_with_pad_val(self):
        batch = np.arange(7.0 * 2).reshape(7, 2)
        pieces, restored = _round_trip(SlidingSlicer([3, -1], pad_mode="drop", pad_val=-1.0, slice="x"), batch)
        assert [piece.shape for piece in pieces] == [(3, 2), (3, 2)]
        np.testing.assert_array_equal(restored[:6], batch[:6])
        assert restored.shape == (7, 2) and (restored[6] == -1.0).all()

    def test_drop_with_a_window_bigger_than_the_axis_is_an_error(self):
        with pytest.raises(ValueError, match="could not slice key 'x'.*no window along axis 1"):
            SlidingSlicer([-1, 5], slice="x").slice_batches((np.zeros((2, 3)),))

    def test_constant_pads_the_last_window_and_crops_it_away(self):
        image = np.arange(1 * 5 * 5, dtype=np.float32).reshape(1, 5, 5)
        slicer = SlidingSlicer([-1, 3, 3], pad_mode="constant", pad_val=-7.0, slice="x")
        pieces, restored = _round_trip(slicer, image)
        assert len(pieces) == 4 and all(piece.shape == (1, 3, 3) for piece in pieces)
        last = pieces[3]
        np.testing.assert_array_equal(last[0, :2, :2], image[0, 3:, 3:])
        assert (last[0, 2, :] == -7.0).all() and (last[0, :, 2] == -7.0).all()
        np.testing.assert_array_equal(restored, image)

    def test_mirror_pads_with_the_reflection(self):
        row = np.array([[0.0, 1.0, 2.0, 3.0, 4.0]])
        pieces, restored = _round_trip(SlidingSlicer([-1, 3], pad_mode="mirror", slice="x"), row)
        assert [piece.tolist() for piece in pieces] == [[[0.0, 1.0, 2.0]], [[3.0, 4.0, 3.0]]]
        np.testing.assert_array_equal(restored, row)

    def test_nopad_moves_the_last_window_back_and_averages_the_overlap(self):
        row = np.arange(10.0).reshape(1, 10)
        pieces, restored = _round_trip(SlidingSlicer([-1, 4], pad_mode="nopad", slice="x"), row)
        assert [piece[0].tolist() for piece in pieces] == [[0, 1, 2, 3], [4, 5, 6, 7], [6, 7, 8, 9]]
        np.testing.assert_array_equal(restored, row)

    def test_nopad_needs_the_axis_to_hold_a_window(self):
        with pytest.raises(ValueError, match="'nopad' needs every windowed axis"):
            SlidingSlicer([-1, 4], pad_mode="nopad", slice="x").slice_batches((np.zeros((1, 3)),))

    def test_overlapping_windows_are_averaged_back_to_the_original(self):
        image = np.random.default_rng(1).normal(size=(2, 3, 9, 7)).astype(np.float32)
        slicer = SlidingSlicer([-1, -1, 4, 4], strides=2, pad_mode="partial", slice="x")
        pieces, restored = _round_trip(slicer, image)
        # Along H (9): starts 0, 2, 4, 6 (6 + 4 > 9 is cut short, and reaches the end). Along W (7): 0, 2, 4.
        assert len(pieces) == 4 * 3
        assert pieces[0].shape == (2, 3, 4, 4) and pieces[3 * 3 + 2].shape == (2, 3, 3, 3)
        assert restored.dtype == np.float32
        np.testing.assert_allclose(restored, image, rtol=1e-6)

    def test_sum_mode_adds_overlaps(self):
        row = np.ones((1, 6))
        _, summed = _round_trip(SlidingSlicer([-1, 4], strides=2, pad_mode="partial", unslice_mode="sum",
                                              slice="x"), row)
        # Windows [0:4], [2:6]: positions 2 and 3 are covered twice.
        assert summed.tolist() == [[1, 1, 2, 2, 1, 1]]

    def test_gaps_between_windows_get_pad_val(self):
        row = np.arange(1.0, 8.0).reshape(1, 7)
        pieces, restored = _round_trip(SlidingSlicer([-1, 2], strides=3, pad_mode="partial", pad_val=0.5,
                                                     slice="x"), row)
        assert [piece[0].tolist() for piece in pieces] == [[1, 2], [4, 5], [7]]
        assert restored.tolist() == [[1, 2, 0.5, 4, 5, 0.5, 7]]

    def test_integer_inputs_average_to_float(self):
        data = np.arange(8).reshape(2, 4)
        _, restored = _round_trip(SlidingSlicer([-1, 2], strides=1, slice="x"), data)
        assert np.issubdtype(restored.dtype, np.floating)
        np.testing.assert_array_equal(restored, data)

    def test_squeeze_window_removes_size_one_axes_and_restores_them(self):
        volume = np.arange(2 * 4 * 3).reshape(2, 4, 3)
        pieces, restored = _round_trip(SlidingSlicer([-1, -1, 1], squeeze_window=True, slice="x"), volume)
        assert len(pieces) == 3 and pieces[0].shape == (2, 4)
        np.testing.assert_array_equal(pieces[2], volume[:, :, 2])
        np.testing.assert_array_equal(restored, volume)

    def test_predictions_may_differ_from_the_input_along_unwindowed_axes(self):
        slicer = SlidingSlicer([-1, -1, 2], slice="image", unslice="pred")
        image = np.zeros((3, 1, 4))
        pieces = [piece[0] for piece in slicer.slice_batches((image,))]
        preds = tuple(np.full((3, 5, 2), float(i)) for i in range(len(pieces)))  # 5 classes instead of 1 channel
        merged = slicer.unslice_batches(preds, key="pred")
        assert merged.shape == (3, 5, 4)
        assert merged[0, 0].tolist() == [0.0, 0.0, 1.0, 1.0]

    def test_class_scores_are_stitched_back_along_the_batch_axis(self):
        slicer = SlidingSlicer([3, -1, -1], pad_mode="partial", slice="image", unslice="scores")
        pieces = [piece[0] for piece in slicer.slice_batches((np.zeros((7, 4, 4)),))]
        scores = tuple(np.full((len(piece), 10), float(i)) for i, piece in enumerate(pieces))  # rank 2, not 3
        merged = slicer.unslice_batches(scores, key="scores")
        assert merged.shape == (7, 10)
        assert merged[:, 0].tolist() == [0, 0, 0, 1, 1, 1, 2]

    def test_a_scalar_cannot_be_stitched_along_a_windowed_axis(self):
        slicer = SlidingSlicer([3, -1], pad_mode="partial", slice="x", unslice=["x", "loss"])
        slicer.slice_batches((np.zeros((4, 2)),))
        with pytest.raises(ValueError, match="could not un-slice key 'loss'.*lack windowed axes"):
            slicer.unslice_batches((np.float32(1.0), np.float32(2.0)), key="loss")

    def test_unslice_only_needs_a_shape(self):
        with pytest.raises(ValueError, match="needs the unslice_shape"):
            SlidingSlicer([-1, 2], unslice="pred")
        slicer = SlidingSlicer([-1, 2], unslice="pred", unslice_shape=(1, 4))
        merged = slicer.unslice_batches((np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]])), key="pred")
        assert merged.tolist() == [[1.0, 2.0, 3.0, 4.0]]

    def test_wrong_number_of_slices_names_the_key(self):
        slicer = SlidingSlicer([-1, 2], slice="x")
        slicer.slice_batches((np.zeros((1, 4)),))
        with pytest.raises(ValueError, match="could not un-slice key 'x'.*gives 2 window"):
            slicer.unslice_batches((np.zeros((1, 2)),) * 3, key="x")

    def test_rank_mismatch_names_the_key(self):
        with pytest.raises(ValueError, match="key 'x'|window_size \\[-1, 2\\] has rank 2"):
            SlidingSlicer([-1, 2], slice="x").slice_batches((np.zeros((1, 2, 2)),))

    def test_sliced_keys_must_agree_on_windowed_axes(self):
        slicer = SlidingSlicer([-1, 2], slice=["x", "y"])
        with pytest.raises(ValueError, match="'x' has shape \\(1, 4\\) and 'y' has shape \\(1, 6\\)"):
            slicer.slice_batches((np.zeros((1, 4)), np.zeros((1, 6))))
        pieces = slicer.slice_batches((np.zeros((1, 4)), np.ones((3, 4))))  # other axes may differ
        assert pieces[1][1].shape == (3, 2)

    @pytest.mark.parametrize("kwargs, message", [
        ({"window_size": []}, "needs a window_size"),
        ({"window_size": [0, 2]}, "positive integers or -1"),
        ({"window_size": [-1, 2], "strides": [1]}, "same number of axes"),
        ({"window_size": [-1, 2], "strides": [0, -1]}, "non-negative"),
        ({"window_size": [-1, 2], "pad_mode": "reflect"}, "pad_mode must be one of"),
        ({"window_size": [-1, 2], "unslice_mode": "max"}, "unslice_mode must be one of"),
    ])
    def test_invalid_arguments(self, kwargs, message):
        with pytest.raises(ValueError, match=message):
            SlidingSlicer(slice="x", **kwargs)

    def test_default_strides_equal_the_window(self):
        slicer = SlidingSlicer([-1, 3, 2], slice="x")
        assert slicer.strides == [0, 3, 2]
        assert SlidingSlicer([-1, 3, 2], strides=1, slice="x").strides == [0, 1, 1]


# ---------------------------------------------------------------------------------------------------- running slicers
class TestForwardAndReverse:
    def test_several_slicers_cut_and_fuse_a_batch(self):
        batch = {"x": np.arange(10.0).reshape(5, 2), "y": np.arange(5), "w": np.ones(3), "lr": 0.1}
        slicers = [SlidingSlicer([2, -1], pad_mode="partial", slice="x", unslice=["x", "pred"]),
                   SlidingSlicer([2], pad_mode="partial", slice="y", unslice=None),
                   MeanUnslicer("loss")]
        sanity_assert_slicers(slicers)
        minibatches = forward_slicers(slicers, batch)
        assert len(minibatches) == 3
        assert [m["x"].shape for m in minibatches] == [(2, 2), (2, 2), (1, 2)]
        assert minibatches[2]["y"].tolist() == [4]
        assert all(m["w"] is batch["w"] and m["lr"] == 0.1 for m in minibatches)
        # What the network does: run the ops on each minibatch and merge the predictions in.
        results = [dict(m, pred=m["x"].sum(axis=1), loss=np.float32(i), extra=np.float32(10 + i))
                   for i, m in enumerate(minibatches)]
        fused = reverse_slicers(slicers, results, batch)
        np.testing.assert_array_equal(fused["x"], batch["x"])
        assert fused["pred"].tolist() == [1.0, 5.0, 9.0, 13.0, 17.0]
        assert float(fused["loss"]) == pytest.approx(1.0)
        assert fused["y"] is batch["y"]  # sliced but not un-sliced: comes back whole from the original batch
        assert fused["w"] is batch["w"] and fused["lr"] == 0.1
        assert float(fused["extra"]) == 10.0  # produced but un-sliced by nobody: first minibatch's value

    def test_declared_unslice_keys_nobody_produced_are_skipped(self):
        slicers = [AxisSlicer(axis=0, slice="x"), MeanUnslicer("loss")]
        batch = {"x": np.arange(3)}
        fused = reverse_slicers(slicers, forward_slicers(slicers, batch), batch)
        assert set(fused) == {"x"} and fused["x"].tolist() == [0, 1, 2]

    def test_slicers_must_agree_on_the_number_of_minibatches(self):
        slicers = [AxisSlicer(axis=0, slice="x"), AxisSlicer(axis=0, slice="y")]
        with pytest.raises(ValueError, match=r"AxisSlicer\(axis=0, slice=\['x'\].* made 3 and "
                                             r"AxisSlicer\(axis=0, slice=\['y'\].* made 4"):
            forward_slicers(slicers, {"x": np.zeros(3), "y": np.zeros(4)})

    def test_missing_key_names_the_slicer(self):
        with pytest.raises(KeyError, match=r"AxisSlicer.*slices key\(s\) \['image'\].*batch keys: \['x'\]"):
            forward_slicers([AxisSlicer(axis=0, slice="image")], {"x": np.zeros(3)})

    def test_without_slicing_the_batch_is_one_minibatch(self):
        batch = {"x": np.zeros(3)}
        minibatches = forward_slicers([MeanUnslicer("loss")], batch)
        assert len(minibatches) == 1 and minibatches[0]["x"] is batch["x"]

    def test_no_minibatches_fuse_to_nothing(self):
        assert reverse_slicers([AxisSlicer(axis=0, slice="x")], [], {"x": np.zeros(2)}) == {}

    def test_user_written_slicer_runs_through_the_network_path(self):
        batch = {"x": np.arange(5)}
        slicers = [_Halves(slice="x")]
        minibatches = forward_slicers(slicers, batch)
        assert [m["x"].tolist() for m in minibatches] == [[0, 1, 2], [3, 4]]
        assert reverse_slicers(slicers, minibatches, batch)["x"].tolist() == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------------------------------- sanity checks
class TestSanityAssert:
    def test_two_slicers_slicing_one_key(self):
        first, second = AxisSlicer(axis=0, slice="x"), SlidingSlicer([2], slice=["y", "x"])
        with pytest.raises(ValueError) as error:
            sanity_assert_slicers([first, second])
        assert "slice key 'x'" in str(error.value)
        assert repr(first) in str(error.value) and repr(second) in str(error.value)

    def test_two_slicers_unslicing_one_key(self):
        first, second = AxisSlicer(axis=0, slice="x", unslice=["x", "loss"]), MeanUnslicer("loss")
        with pytest.raises(ValueError) as error:
            sanity_assert_slicers([first, second])
        assert "un-slice key 'loss'" in str(error.value)
        assert repr(first) in str(error.value) and repr(second) in str(error.value)

    def test_unslicing_without_slicing(self):
        with pytest.raises(ValueError, match=r"un-slice keys \['loss'\], but no slicer slices anything"):
            sanity_assert_slicers([MeanUnslicer("loss")])

    def test_one_slicer_may_slice_what_another_unslices(self):
        sanity_assert_slicers([AxisSlicer(axis=0, slice="x", unslice=None), MeanUnslicer("x")])
        sanity_assert_slicers([])


# ---------------------------------------------------------------------------------------------------- mode / ds_id
class TestModeAndDsId:
    def test_get_current_items_filters_by_mode_and_ds_id(self):
        train_only = AxisSlicer(axis=0, slice="x", mode="train")
        not_train = SlidingSlicer([2], slice="x", mode="!train", ds_id="ds1")
        not_ds2 = MeanUnslicer("loss", ds_id="!ds2")
        slicers = [train_only, not_train, not_ds2]
        assert get_current_items(slicers, "train", 1, ds_id="ds1") == [train_only, not_ds2]
        assert get_current_items(slicers, "eval", 1, ds_id="ds1") == [not_train, not_ds2]
        assert get_current_items(slicers, "eval", 1, ds_id="ds2") == []
        assert get_current_items(slicers, "test", 1, ds_id="ds3") == [not_ds2]

    def test_scheduled_slicers(self):
        early, late = AxisSlicer(axis=0, slice="x"), SlidingSlicer([4], slice="x")
        scheduled = [EpochScheduler({1: early, 3: late}), EpochScheduler({1: None, 2: MeanUnslicer("loss")})]
        assert get_current_items(scheduled, "train", 1) == [early]
        assert [type(s).__name__ for s in get_current_items(scheduled, "train", 3)] == ["SlidingSlicer",
                                                                                       "MeanUnslicer"]
