"""FastEstimator semantics, part 4 (issue 43), numpy: key pruning after the ops that read a key, filters with
replacement, InterleaveDataset, get_results/benchmark, ExtendDataset and loader batches' string columns."""
from __future__ import annotations

import numpy as np

from semantics4_pipeline_helpers import make_coco, yolo_style_pipeline


# ------------------------------------------------------------------------------------- item 1: YOLOv5's image_id
def test_mscoco_samples_carry_their_image_id_as_fastestimators_do(tmp_path):
    ds = make_coco(str(tmp_path), image_ids=(7, 42))
    assert [ds[0]["image_id"], ds[1]["image_id"]] == [7, 42] and "image_id" in ds.keys()


def test_an_op_reads_image_id_before_delete_drops_it(tmp_path):
    results = yolo_style_pipeline(str(tmp_path)).get_results(mode="eval")
    assert "image_id" not in results
    assert np.asarray(results["image"])[:, 0].tolist() == [1.0, 2.0]  # made from image_id by the op before Delete
    assert np.asarray(results["y"]).tolist() == [1, 0]
