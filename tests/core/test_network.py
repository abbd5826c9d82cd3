"""BaseNetwork: key resolution, op execution, lazy predictions, updates, slicers with pops, transform."""
from __future__ import annotations

import warnings
from typing import Any, List

import numpy as np
import pytest

import numpy_backend as nb
from fe_core.framework import register_backend, unregister_backend
from fe_core.dataset import NumpyDataset
from fe_core.network import PredictionBatch, make_network
from fe_core.op.numpyop import LambdaOp as NumpyLambda
from fe_core.op.tensorop import Average, CrossEntropy, Delete, LambdaOp, MeanSquaredError, ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from fe_core.slicer import AxisSlicer, MeanUnslicer


@pytest.fixture(autouse=True)
def numpy_backend():
    backend = nb.install()
    yield backend
    nb.uninstall()


def batch(n: int = 6) -> dict:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    return {"x": x, "y": x.sum(axis=1, keepdims=True)}


def test_keys_resolved_for_mode_epoch_and_ds_id():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse", ds_id="!ds2"),
                            UpdateOp(model=model, loss_name="mse")])
    needed, device, outputs, produced = network.get_keys("train", 1, "ds1", desired_keys={"mse"})
    assert needed == {"x", "y"} and device == ["x", "y"] and outputs == {"mse"} and produced == {"y_pred", "mse"}
    needed, device, outputs, _ = network.get_keys("train", 1, "ds2", desired_keys={"y_pred"})
    assert needed == {"x", "mse"} and outputs == {"y_pred"}  # the UpdateOp still needs a loss nobody makes on ds2
    needed, device, outputs, _ = network.get_keys("eval", 1, "ds2", desired_keys={"y_pred"})
    assert needed == {"x"} and device == ["x"] and outputs == {"y_pred"}
    assert network.get_loss_keys() == {"mse"}


def test_predictions_are_converted_only_when_read(numpy_backend):
    conversions: List[Any] = []
    original = numpy_backend.to_numpy
    numpy_backend.to_numpy = lambda value: conversions.append(value) or original(value)
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse")])
    with network(mode="eval", epoch=1, ds_id=""):
        result = network.run_step(batch())
    assert isinstance(result, PredictionBatch)
    assert conversions == []
    assert np.ndim(result["mse"]) == 0 and len(conversions) == 1
    result["mse"]
    assert len(conversions) == 1  # cached after the first read
    assert set(result) == {"x", "y", "y_pred", "mse"}
    assert set(dict(result)) == {"x", "y", "y_pred", "mse"}  # reading while iterating converts safely
    assert len(conversions) == 2 and list(result).count("y_pred") == 1


def test_update_changes_weights_in_train_not_in_eval_or_warmup():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    w0 = model.W.copy()
    for mode, warmup in (("eval", False), ("train", True)):
        with network(mode=mode, epoch=1, ds_id="", warmup=warmup):
            network.run_step(batch())
        np.testing.assert_array_equal(model.W, w0)
    with network(mode="train", epoch=1, ds_id=""):
        network.run_step(batch())
    assert not np.array_equal(model.W, w0)


def test_merge_grad_applies_the_mean_gradient_every_n_steps():
    model = nb.build(2, 1, lr=0.5)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse", merge_grad=2)])
    w0 = model.W.copy()
    b1, b2 = batch(4), batch(6)
    grads = []
    for b in (b1, b2):
        pred = b["x"] @ w0 + model.b
        grads.append(b["x"].T @ (2 * (pred - b["y"]) / pred.size))
    with network(mode="train", epoch=1, ds_id=""):
        network.run_step(b1)
        np.testing.assert_array_equal(model.W, w0)
        network.run_step(b2)
    np.testing.assert_allclose(model.W, w0 - 0.5 * (grads[0] + grads[1]) / 2, rtol=1e-6)


def test_deferred_update_runs_after_every_op():
    model = nb.build(2, 1)
    seen = []
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse", defer=True),
                            LambdaOp(fn=lambda x: seen.append(model.W.copy()) or x, inputs="x", outputs="x")])
    w0 = model.W.copy()
    with network(mode="train", epoch=1, ds_id=""):
        network.run_step(batch())
    np.testing.assert_array_equal(seen[0], w0)
    assert not np.array_equal(model.W, w0)


def test_generic_tensor_ops_average_delete_and_lambda():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            LambdaOp(fn=lambda a: a * 3, inputs="y", outputs="y3"),
                            Average(inputs=("y", "y3"), outputs="avg"),
                            Delete(keys="y3")])
    with network(mode="infer", epoch=1, ds_id=""):
        result = network.run_step(batch())
    np.testing.assert_allclose(result["avg"], batch()["y"] * 2)
    assert "y3" not in result


def test_network_refuses_reentry_and_run_step_outside_context():
    network = make_network([ModelOp(model=nb.build(2, 1), inputs="x", outputs="y_pred")])
    with pytest.raises(ValueError, match="inside"):
        network.run_step(batch())
    with network(mode="eval", epoch=1, ds_id=""):
        with pytest.raises(ValueError, match="in use"):
            network(mode="eval", epoch=1, ds_id="")


def test_slicers_with_pops_round_trip_and_pop_outputs_need_no_unslicing():
    model = nb.build(2, 1)
    ops = [ModelOp(model=model, inputs="x", outputs="y_pred"), MeanSquaredError(inputs=("y_pred", "y"), outputs="mse")]
    pops = [NumpyLambda(fn=lambda p: p * 10, inputs="y_pred", outputs="scaled")]
    plain = make_network(ops, pops=pops)
    sliced = make_network(ops, pops=pops, slicers=[AxisSlicer(slice=("x", "y"), unslice="y_pred", minibatch_size=2),
                                                  MeanUnslicer(unslice="mse")])
    with plain(mode="eval", epoch=1, ds_id="", desired_output_keys={"y_pred", "mse", "scaled"}):
        expected = dict(plain.run_step(batch()))
    with sliced(mode="eval", epoch=1, ds_id="", desired_output_keys={"y_pred", "mse", "scaled"}):
        result = sliced.run_step(batch())
    for key in ("y_pred", "scaled", "x", "y"):
        np.testing.assert_allclose(result[key], expected[key], rtol=1e-6)
    np.testing.assert_allclose(result["mse"], expected["mse"], rtol=1e-6)


def test_slicers_drop_wanted_op_outputs_nobody_unslices_with_one_warning():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred")],
                           slicers=AxisSlicer(slice="x", unslice=None, minibatch_size=2))
    with pytest.warns(UserWarning, match=r"un-slices.*\['x', 'y_pred'\].*'eval'.*whole.*dropped"):
        with network(mode="eval", epoch=1, ds_id="", desired_output_keys={"y_pred", "x"}):
            result = network.run_step(batch())
    assert "y_pred" not in result  # a prediction nobody un-slices is dropped
    np.testing.assert_array_equal(result["x"], batch()["x"])  # a sliced input comes back whole
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per network and key
        with network(mode="eval", epoch=1, ds_id="", desired_output_keys={"y_pred"}):
            network.run_step(batch())
    network(mode="eval", epoch=1, ds_id="", desired_output_keys={"x2"})  # nothing wanted: fine


def test_slicers_refuse_pops_reading_a_prediction_nobody_unslices():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred")],
                           pops=NumpyLambda(fn=lambda y: y * 2, inputs="y_pred", outputs="z"),
                           slicers=AxisSlicer(slice="x", minibatch_size=2))
    with pytest.raises(ValueError, match=r"postprocessing.*\['y_pred'\]"):
        network(mode="eval", epoch=1, ds_id="")


def test_transform_on_a_dict_a_list_and_a_pipeline():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred"),
                            MeanSquaredError(inputs=("y_pred", "y"), outputs="mse"),
                            UpdateOp(model=model, loss_name="mse")])
    w0 = model.W.copy()
    many = network.transform([batch(2), batch(3)], mode="eval")
    assert [r["y_pred"].shape for r in many] == [(2, 1), (3, 1)]
    pipeline = Pipeline(test_data=NumpyDataset(batch(5)), batch_size=2)
    results = network.transform(pipeline, mode="test")
    assert [r["y_pred"].shape[0] for r in results] == [2, 2, 1]
    np.testing.assert_array_equal(model.W, w0)  # no weights change outside 'train'
    single = network.transform(batch(), mode="train")
    assert isinstance(single, dict) and single["y_pred"].shape == (6, 1)
    assert not np.array_equal(model.W, w0)  # as in FastEstimator, a 'train' transform runs the UpdateOps


def test_make_network_refuses_mixed_frameworks_and_duplicate_names():
    class Other(nb.NumpyBackend):
        name = "other"

        def owns_model(self, obj):
            return getattr(obj, "framework", None) == "other"

    register_backend("other", Other())
    try:
        a, b = nb.build(2, 1, name="A"), nb.build(2, 1, name="B")
        b.framework = "other"
        with pytest.raises(ValueError, match="cannot mix frameworks.*numpy.*other"):
            make_network([ModelOp(model=a, inputs="x", outputs="p"), ModelOp(model=b, inputs="x", outputs="q")])
    finally:
        unregister_backend("other")
    with pytest.raises(ValueError, match="unique.*'Net'.*'net'"):
        make_network([ModelOp(model=nb.build(2, 1, name="Net"), inputs="x", outputs="p"),
                      ModelOp(model=nb.build(2, 1, name="net"), inputs="x", outputs="q")])


def test_cross_entropy_form_is_inferred_from_shapes():
    ce = CrossEntropy(inputs=("p", "y"), outputs="ce")
    assert ce.infer_form((4, 3), (4,)) == "sparse"
    assert ce.infer_form((4, 3), (4, 1)) == "sparse"
    assert ce.infer_form((4, 3), (4, 3)) == "categorical"
    assert ce.infer_form((4, 1), (4, 1)) == "binary"
    with pytest.raises(ValueError, match="cannot match"):
        ce.infer_form((4, 3), (4, 5))


def test_an_input_the_batch_lacks_is_reported_with_its_readers_and_context():
    model = nb.build(2, 1)
    network = make_network([ModelOp(model=model, inputs="x", outputs="y_pred")])
    data = batch()
    del data["x"]
    with network(mode="eval", epoch=3, ds_id="ds1"):
        with pytest.raises(KeyError, match=r"ModelOp read\(s\) key 'x', which the batch does not have in mode 'eval', "
                                           r"epoch 3, ds_id 'ds1'; batch keys: \['y'\]"):
            network.run_step(data)
