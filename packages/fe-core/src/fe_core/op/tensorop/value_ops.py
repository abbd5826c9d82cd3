"""TensorOps that compute values from tensors: `Gather`, `Normalize`, `UnHadamard` (torch and tf kernels)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from fe_core.backend.normalization import normalize
from fe_core.backend.reductions import reduce_max
from fe_core.backend.shapes import gather_from_batch
from fe_core.containers import to_list
from fe_core.export import fe_export
from fe_core.op.tensorop.hadamard import check_code_length, distance_offset
from fe_core.op.tensorop.tensorop import StatelessOp, TensorOp

__all__ = ["Gather", "Normalize", "UnHadamard"]


@fe_export("fe.op.tensorop.gather.Gather", "fe.op.tensorop.Gather")
class Gather(TensorOp):
    """Gather one entry per sample from each input tensor.

    With `indices`, sample i of an input gives `tensor[i, indices[i]]` (one index key per input, or a single one for
    all inputs). Without indices, each sample's maximum over axis 1 is collected.

    Args:
        inputs: The tensor(s) to gather values from.
        outputs: The key(s) of the results (one per input).
        indices: Key(s) of integer tensors of shape (batch,) or (batch, 1) with the positions to gather.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Raises:
        ValueError: If the numbers of inputs, indices and outputs do not match.
    """

    def __init__(self,
                 inputs: Union[str, List[str]],
                 outputs: Union[str, List[str]],
                 indices: Union[None, str, List[str]] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        index_keys = to_list(indices)
        value_keys = to_list(inputs)
        super().__init__(inputs=index_keys + value_keys, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(self.outputs) != len(value_keys):
            raise ValueError(f"Gather needs one output per input, got inputs {value_keys} and outputs {self.outputs}")
        if len(index_keys) not in (0, 1, len(value_keys)):
            raise ValueError(f"Gather needs no indices, one index key, or one per input; got {index_keys} for "
                             f"inputs {value_keys}")
        self.num_indices = len(index_keys)
        self.in_list, self.out_list = True, True

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        indices, values = data[:self.num_indices], data[self.num_indices:]
        if not indices:
            return [reduce_max(tensor, axis=1) for tensor in values]
        return [gather_from_batch(tensor, indices[position if len(indices) > 1 else 0])
                for position, tensor in enumerate(values)]


@fe_export("fe.op.tensorop.normalize.Normalize", "fe.op.tensorop.Normalize")
class Normalize(TensorOp):
    """(x - mean * max_pixel_value) / (std * max_pixel_value + 1e-7), per channel, computed by `fe.backend.normalize`:
    channels on the last axis for TensorFlow (and numpy), on axis -3 (channels, height, width) for torch.

    Args:
        inputs: Key(s) of the tensor(s) to normalize.
        outputs: Key(s) of the results.
        mean: A mean, or one per channel.
        std: A standard deviation, or one per channel.
        max_pixel_value: The input's maximum value, multiplying mean and std (1 to use them as they are).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    EPSILON = 1e-7

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 mean: Union[float, Sequence[float]] = (0.485, 0.456, 0.406),
                 std: Union[float, Sequence[float]] = (0.229, 0.224, 0.225),
                 max_pixel_value: float = 255.0,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"Normalize needs one output per input, got {self.inputs} -> {self.outputs}")
        self.mean = mean
        self.std = std
        self.max_pixel_value = max_pixel_value
        self.in_list, self.out_list = True, True

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        return [normalize(tensor, self.mean, self.std, self.max_pixel_value, epsilon=self.EPSILON) for tensor in data]


@fe_export("fe.op.tensorop.un_hadamard.UnHadamard", "fe.op.tensorop.UnHadamard")
class UnHadamard(StatelessOp, TensorOp):
    """Turn Hadamard-coded predictions (batch, code_length) into class probabilities (batch, n_classes).

    Class i's code word is row i of the Sylvester Hadamard matrix (`fe_core.op.tensorop.hadamard`); the L1 distance of
    a prediction to each code word becomes a probability by inverse distance weighting, a prediction on a code word
    getting almost all (0.99999) of the probability.

    Args:
        inputs: Key(s) of the coded predictions.
        outputs: Key(s) of the class probabilities.
        n_classes: How many classes there are.
        code_length: The code length (a power of 2 >= n_classes); default the smallest such power.
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Raises:
        ValueError: If `code_length` is not a power of 2 at least `n_classes`.
    """

    kernel_name = "un_hadamard"
    MAX_PROB = 0.99999

    def __init__(self,
                 inputs: Union[str, List[str]],
                 outputs: Union[str, List[str]],
                 n_classes: int,
                 code_length: Optional[int] = None,
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if code_length is None:
            code_length = max(2, 1 << max(0, int(n_classes) - 1).bit_length())
        self.code_length = check_code_length(n_classes, code_length, "UnHadamard")
        self.n_classes = int(n_classes)
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"UnHadamard needs one output per input, got {self.inputs} -> {self.outputs}")
        # distances here are full L1 (twice the half distance of the HadamardCode layers)
        self.offset = 2.0 * distance_offset(self.n_classes, self.code_length, self.MAX_PROB, 1.0)
        self.in_list, self.out_list = True, True
