"""fe.types: the annotation names, the MapDataset protocol and FilteredData, importable without a framework."""
from __future__ import annotations

import subprocess
import sys
import typing

import numpy as np

from fe_core.op.numpyop.remove_if import FilteredData as PipelineFilteredData
from fe_core.types import Array, BoundingBox, FilteredData, MapDataset, Model, Number, Tensor


def lambda_annotated(x: typing.Optional[Tensor] = None) -> None:
    return x


def test_type_names_work_in_annotations():
    def scale(x: Tensor, factor: Number = 2) -> typing.List[Array]:
        return [x * factor]

    hints = typing.get_type_hints(scale)
    assert hints["x"] is Tensor and hints["return"] == typing.List[Array]
    assert scale(3) == [6]
    # FastEstimator's Unions of real classes: usable in isinstance, here with numpy only (no framework installed)
    assert isinstance(np.zeros(2), Array) and not isinstance(np.zeros(2), Tensor) and not isinstance([1], Model)
    assert typing.get_type_hints(lambda_annotated)["x"] == typing.Optional[Tensor]
    assert typing.get_origin(BoundingBox) is tuple


def test_map_dataset_protocol():
    class Squares:
        def __len__(self):
            return 3

        def __getitem__(self, index):
            return {"x": index * index}

    assert isinstance(Squares(), MapDataset) and isinstance([1, 2], MapDataset)
    assert not isinstance(5, MapDataset) and not isinstance({1, 2}, MapDataset)


def test_filtered_data_is_the_pipeline_one():
    assert FilteredData is PipelineFilteredData
    assert FilteredData().replacement is True and FilteredData(replacement=False).replacement is False


def test_importing_types_and_util_imports_no_framework_or_figure_library():
    code = ("import sys, fe_core.types, fe_core.util; "
            "print(sorted(m for m in ('torch', 'tensorflow', 'plotly', 'matplotlib') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"
