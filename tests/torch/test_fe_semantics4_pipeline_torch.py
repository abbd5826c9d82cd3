"""FastEstimator semantics, part 4 (issue 43) on torch: the pipeline and dataset behaviours whose data reaches the
network (the YOLOv5 scripts' `image_id` deletion, ...)."""
from __future__ import annotations

import pytest
import torch

from fe_core.build import build
from fe_core.estimator import Estimator
from fe_core.network import make_network
from fe_core.op.tensorop import Delete, LambdaOp
from fe_core.op.tensorop.loss import CrossEntropy
from fe_core.op.tensorop.model import ModelOp, UpdateOp
from fe_core.pipeline import Pipeline
from semantics4_pipeline_helpers import EvalKeys, check_public_batches, check_yolo_run, yolo_style_pipeline

TENSOR = torch.Tensor


@pytest.mark.parametrize("delete_in_pipeline", [True, False])
def test_yolov5_deletes_image_id_in_eval(tmp_path, delete_in_pipeline):
    model = build(lambda: torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.Softmax(dim=-1)), "adam")
    ops = [ModelOp(model=model, inputs="image", outputs="pred"), CrossEntropy(inputs=("pred", "y"), outputs="ce"),
           UpdateOp(model=model, loss_name="ce")]
    if not delete_in_pipeline:
        ops += [LambdaOp(fn=lambda pred: pred * 2, inputs="pred", outputs="scratch", mode="eval"),
                Delete(keys=["image_id", "scratch"], mode="eval")]
        with pytest.raises(KeyError, match="'scratch'"):  # a trace reading a key the network deleted finds none
            Estimator(pipeline=yolo_style_pipeline(str(tmp_path), False), network=make_network(ops), epochs=1,
                      traces=[EvalKeys("scratch")], log_steps=None).fit()
    trace = EvalKeys() if delete_in_pipeline else EvalKeys("image_id")
    Estimator(pipeline=yolo_style_pipeline(str(tmp_path), delete_in_pipeline), network=make_network(ops), epochs=1,
              traces=[trace], log_steps=None).fit()
    check_yolo_run(trace, delete_in_pipeline)


def test_get_results_string_columns_and_interleaved_tags_as_user_code_sees_them():
    check_public_batches(TENSOR)


def test_benchmark_of_a_torch_dataloader_given_as_data(capsys):
    data = torch.utils.data.TensorDataset(torch.arange(12, dtype=torch.float32).reshape(6, 2))
    loader = torch.utils.data.DataLoader([{"x": row[0]} for row in data], batch_size=2)
    speeds = Pipeline(train_data=loader).benchmark(num_steps=5, log_interval=2)
    assert speeds[""]["samples_per_sec"] == pytest.approx(2 * speeds[""]["steps_per_sec"])
    assert "5 steps, 10 samples" in capsys.readouterr().out
