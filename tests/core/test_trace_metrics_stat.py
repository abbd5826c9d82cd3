"""Dice, AUCScore, BleuScore, CalibrationError and MeanAveragePrecision: values, per-dataset keys, saved state."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from trace_helpers import make_system, run_epoch
from fe_core.checkpoint.codec import StateCodec
from fe_core.data import Data
from fe_core.checkpoint.object_state import get_object_state, set_object_state
from fe_core.summary.summary import ValWithError
from fe_core.trace.metric import AUCScore, BleuScore, CalibrationError, Dice, MeanAveragePrecision
from fe_core.trace.metric.bleu_score import get_formated_list, get_formated_reference


def logs(trace, batches=(), **kwargs):
    return dict(run_epoch(trace, batches, **kwargs).read_logs())


# ---------------------------------------------------------------- Dice
def _masks():
    y = np.zeros((2, 4, 4, 2))
    y[0, :2, :, 0] = 1  # 8 pixels
    y[1, :, :2, 1] = 1  # 8 pixels
    p = np.zeros((2, 4, 4, 2))
    p[0, :1, :, 0] = 0.9  # 4 of the 8: dice 2*4/12
    p[1, :, :2, 1] = 0.8  # exact: 1
    return y, p


def test_dice_averages_per_sample_and_channel_scores():
    y, p = _masks()
    # sample 0: ch0 2/3, ch1 empty/empty = 1; sample 1: ch0 1, ch1 1
    values = logs(Dice("y", "p", include_std=True, channel_mapping={0: "a", 1: "b"}), [{"y": y, "p": p}])
    scores = np.array([[2 / 3, 1.0], [1.0, 1.0]])
    assert values["Dice"] == pytest.approx(scores.mean(), abs=1e-6)
    assert values["Dice_std"] == pytest.approx(scores.std(), abs=1e-6)
    assert values["Dice_a"] == pytest.approx(scores[:, 0].mean(), abs=1e-6)
    assert values["Dice_b_std"] == pytest.approx(0.0, abs=1e-6)


def test_dice_threshold_exclude_channels_and_batches_accumulate():
    y, p = _masks()
    trace = Dice("y", "p", threshold=0.85, exclude_channels=1)
    values = logs(trace, [{"y": y[:1], "p": p[:1]}, {"y": y[1:], "p": p[1:]}])
    # ch1 excluded; sample 1's channel-0 prediction (0.8) is below the threshold, as is its empty truth: 1
    assert values == {"Dice": pytest.approx((2 / 3 + 1.0) / 2, abs=1e-6)}


def test_dice_channels_first_under_torch_and_mask_overlap_false():
    y, p = _masks()
    trace = Dice("y", "p", threshold=0.0, mask_overlap=False)
    system = make_system(trace)
    system.network = type("Net", (), {"backend": type("B", (), {"name": "torch"})()})()
    values = logs(trace, [{"y": np.moveaxis(y, -1, 1), "p": np.moveaxis(p, -1, 1)}], system=system)
    # argmax picks channel 0 where both are 0 but the threshold (>0) keeps only predicted pixels
    assert values["Dice"] == pytest.approx(np.mean([2 / 3, 1.0, 1.0, 1.0]), abs=1e-6)


def test_dice_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="Dice.*differ"):
        logs(Dice("y", "p"), [{"y": np.zeros((1, 4, 4)), "p": np.zeros((1, 4, 5))}])


# ---------------------------------------------------------------- AUC
def test_auc_binary_exact_over_batches_and_per_dataset():
    batches = {"a": [{"y": [0, 0], "p": [0.1, 0.4]}, {"y": [1], "p": [0.35]}],
               "b": [{"y": [1], "p": [0.8]}, {"y": [0, 1], "p": [0.2, 0.9]}]}
    values = logs(AUCScore("y", "p"), per_ds=batches)
    # all: negatives .1 .4 .2, positives .35 .8 .9 -> 8 of 9 pairs ordered; a: 1 of 2
    assert values["auc"] == pytest.approx(8 / 9)
    assert values["auc|a"] == pytest.approx(0.5)
    assert values["auc|b"] == pytest.approx(1.0)
    assert AUCScore("y", "p").get_outputs(["a", "b"]) == ["auc", "auc|a", "auc|b"]


def test_auc_multiclass_needs_multi_class_and_ovr_matches_per_class_mean():
    y = np.array([0, 1, 2, 0, 1, 2])
    p = np.array([[.8, .1, .1], [.2, .7, .1], [.1, .2, .7], [.3, .4, .3], [.5, .4, .1], [.2, .2, .6]])
    with pytest.raises(ValueError, match="multi_class"):
        logs(AUCScore("y", "p"), [{"y": y, "p": p}])
    values = logs(AUCScore("y", "p", multi_class="ovr"), [{"y": y, "p": p}])
    # class 0: pos .8 .3 vs neg .2 .1 .5 .2 -> 7/8 ; class 1: pos .7 .4 vs .1 .2 .4 .2 -> 7.5/8 ; class 2: 8/8
    assert values["auc"] == pytest.approx((7 / 8 + 7.5 / 8 + 1.0) / 3)


def test_auc_argument_errors():
    with pytest.raises(ValueError, match="max_fpr"):
        AUCScore("y", "p", max_fpr=0)
    with pytest.raises(ValueError, match="multi_class"):
        AUCScore("y", "p", multi_class="one")
    with pytest.raises(ValueError, match="average"):
        AUCScore("y", "p", average="mean")


# ---------------------------------------------------------------- BLEU
def test_bleu_formatting_helpers_drop_padding():
    assert get_formated_list(np.array([3, 0, 5, 0])) == ["3", "5"]
    assert get_formated_reference(np.array([3, 5])) == [["3", "5"]]


def test_bleu_identical_sentences_score_one_and_one_wrong_token_is_exact():
    ref = np.array([[1, 2, 3, 4, 5, 6, 0, 0]])
    assert logs(BleuScore("y", "p"), [{"y": ref, "p": ref}])["bleu_score"] == pytest.approx(1.0)
    hyp = np.array([[1, 2, 3, 4, 5, 7, 0, 0]])
    expected = (5 / 6 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25
    assert logs(BleuScore("y", "p"), [{"y": ref, "p": hyp}])["bleu_score"] == pytest.approx(expected)


def test_bleu_is_corpus_level_with_brevity_penalty_and_smoothing():
    refs = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    hyps = np.array([[1, 2, 9, 3], [5, 6, 0, 0]])
    # unigrams 3+2 of 6; bigrams 1+1 of 4; trigrams 0 of 2 -> smoothed 1/(2*5/ln 6); c=6 < r=8
    p3 = (1 / (2 * 5 / math.log(6))) / 2
    expected = math.exp(1 - 8 / 6) * math.exp((math.log(5 / 6) + math.log(2 / 4) + math.log(p3)) / 3)
    one = logs(BleuScore("y", "p", n_gram=3), [{"y": refs, "p": hyps}])["bleu_score"]
    split = logs(BleuScore("y", "p", n_gram=3), [{"y": refs[:1], "p": hyps[:1]}, {"y": refs[1:], "p": hyps[1:]}])
    assert one == pytest.approx(expected)
    assert split["bleu_score"] == pytest.approx(expected)


def test_bleu_takes_argmax_of_token_scores_and_no_match_is_zero():
    refs = np.array([[1, 2]])
    scores = np.eye(4)[[[3, 3]]]  # (1, 2, 4) -> tokens [3, 3]
    assert logs(BleuScore("y", "p"), [{"y": refs, "p": scores}])["bleu_score"] == 0.0
    with pytest.raises(ValueError, match="n_gram"):
        BleuScore("y", "p", n_gram=0)


# ---------------------------------------------------------------- CalibrationError
def test_calibration_error_zero_for_calibrated_discrete_predictions():
    # predictions 0.25 / 0.75 with exactly those frequencies of the positive class
    p = np.array([[0.75, 0.25]] * 8 + [[0.25, 0.75]] * 8)
    y = np.array([0, 0, 0, 1, 0, 0, 0, 1] + [1, 1, 1, 0, 1, 1, 1, 0])
    values = logs(CalibrationError("y", "p"), [{"y": y, "p": p}])
    assert values["calibration_error"] == pytest.approx(0.0, abs=1e-12)


def test_calibration_error_of_overconfident_predictions_top_label_and_interval():
    p = np.array([[0.9, 0.1]] * 20)
    y = np.array([0] * 10 + [1] * 10)  # right half the time at 0.9 confidence
    values = logs(CalibrationError("y", "p", method="top-label"), [{"y": y, "p": p}])
    assert values["calibration_error"] == pytest.approx(0.4)
    np.random.seed(0)
    values = logs(CalibrationError("y", "p", confidence_interval=90), [{"y": np.eye(2)[y], "p": p}])
    value = values["calibration_error"]
    assert isinstance(value, ValWithError)
    assert value.y == pytest.approx(0.4) and value.y_min <= 0.4 <= value.y_max
    assert all(bound == round(bound, 4) for bound in (value.y_min, value.y, value.y_max))  # FastEstimator's 4 digits
    with pytest.raises(ValueError, match="method"):
        CalibrationError("y", "p", method="other")


# ---------------------------------------------------------------- MeanAveragePrecision
def _box(x, y, w, h, label, score=None):
    return [x, y, w, h, label] if score is None else [x, y, w, h, label, score, 1]


def test_map_perfect_detections_score_one_and_padding_is_ignored():
    gt = np.array([[_box(0, 0, 10, 10, 1), _box(20, 20, 10, 10, 2), [0, 0, 0, 0, 0]]], dtype=float)
    pred = np.array([[_box(0, 0, 10, 10, 1, .9), _box(20, 20, 10, 10, 2, .8), [5, 5, 5, 5, 1, .99, 0]]])
    values = logs(MeanAveragePrecision(num_classes=3, true_key="y", pred_key="p"), [{"y": gt, "p": pred}])
    assert values == {"mAP": pytest.approx(1.0), "AP50": pytest.approx(1.0), "AP75": pytest.approx(1.0)}


def test_map_iou_thresholds_and_false_positives():
    gt = np.array([[_box(0, 0, 10, 10, 1)], [_box(0, 0, 10, 10, 1)]], dtype=float)
    # image 0: shifted box, IoU = 80/120 = 0.667 (a hit at 0.5..0.65); image 1: exact, plus a high-score false positive
    pred = np.array([[_box(2, 0, 10, 10, 1, .9), [0, 0, 0, 0, 0, 0, 0]],
                     [_box(0, 0, 10, 10, 1, .5), _box(50, 50, 5, 5, 1, .95)]])
    trace = MeanAveragePrecision(num_classes=1, true_key="y", pred_key="p")
    values = logs(trace, [{"y": gt[:1], "p": pred[:1]}, {"y": gt[1:], "p": pred[1:]}])
    # at IoU <= .65: order .95 FP, .9 TP, .5 TP -> precision after right-max: 2/3 at all recalls -> AP 2/3
    # at IoU > .65: .95 FP, .9 FP, .5 TP -> recall 0.5 only, precision 1/3 up to recall .5 (51 of 101 points)
    ap_low, ap_high = 2 / 3, (1 / 3) * 51 / 101
    assert values["AP50"] == pytest.approx(ap_low)
    assert values["AP75"] == pytest.approx(ap_high)
    assert values["mAP"] == pytest.approx((4 * ap_low + 6 * ap_high) / 10)


def test_map_rejects_labels_above_num_classes():
    gt = np.array([[_box(0, 0, 10, 10, 5)]], dtype=float)
    with pytest.raises(ValueError, match="num_classes"):
        logs(MeanAveragePrecision(num_classes=3, true_key="y", pred_key="p"),
             [{"y": gt, "p": np.zeros((1, 1, 7))}])


# ---------------------------------------------------------------- state
@pytest.mark.parametrize("make", [lambda: AUCScore("y", "p"), lambda: CalibrationError("y", "p"),
                                  lambda: Dice("y", "p"), lambda: BleuScore("y", "p")])
def test_sufficient_statistics_survive_a_checkpoint_mid_epoch(make):
    batches = {AUCScore: [{"y": [0, 1, 1], "p": [.2, .7, .4]}, {"y": [0, 1], "p": [.6, .9]}],
               CalibrationError: [{"y": [0, 1, 1], "p": [[.8, .2], [.3, .7], [.5, .5]]}, {"y": [1], "p": [[.1, .9]]}],
               Dice: [{"y": np.ones((1, 2, 2)), "p": np.ones((1, 2, 2))},
                      {"y": np.ones((1, 2, 2)), "p": np.eye(2)[None]}],
               BleuScore: [{"y": [[1, 2, 3]], "p": [[1, 2, 4]]}, {"y": [[4, 5]], "p": [[4, 5]]}]}
    trace = make()
    data = batches[type(trace)]
    expected = logs(make(), data)
    first = make()
    make_system(first)
    first.on_epoch_begin(Data())
    first.on_batch_end(Data({k: np.asarray(v) for k, v in data[0].items()}))
    codec = StateCodec()
    encoded, arrays = codec.encode(get_object_state(first))
    saved = codec.decode(json.loads(json.dumps(encoded)), arrays)
    resumed = make()
    system = make_system(resumed)
    set_object_state(resumed, saved)
    resumed.on_batch_end(Data({k: np.asarray(v) for k, v in data[1].items()}))
    end = Data()
    resumed.on_epoch_end(end)
    assert dict(end.read_logs()) == pytest.approx(expected)
    assert system is resumed.system
