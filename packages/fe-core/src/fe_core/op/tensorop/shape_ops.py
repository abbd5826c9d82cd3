"""TensorOps that change a tensor's shape: `Permute`, `Reshape`, `Resize3D` (torch and tf kernels)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Sequence, Tuple, Union

from fe_core.config_error import ConfigurationError
from fe_core.backend.shapes import permute, reshape
from fe_core.export import fe_export
from fe_core.op.tensorop.tensorop import TensorOp

__all__ = ["Permute", "Reshape", "Resize3D"]


@fe_export("fe.op.tensorop.permute.Permute", "fe.op.tensorop.Permute")
class Permute(TensorOp):
    """Reorder the axes of the input tensor(s) (batch axis included).

    Args:
        inputs: Key(s) of the tensor(s).
        outputs: Key(s) of the results.
        permutation: The new axis order (default: channels last to channels first for image batches).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 permutation: Sequence[int] = (0, 3, 1, 2),
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"Permute needs one output per input, got {self.inputs} -> {self.outputs}")
        if sorted(permutation) != list(range(len(permutation))):
            raise ValueError(f"Permute permutation must hold each axis 0..n-1 once, got {tuple(permutation)}")
        self.permutation = [int(axis) for axis in permutation]
        self.in_list, self.out_list = True, True

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        return [permute(tensor, self.permutation) for tensor in data]


@fe_export("fe.op.tensorop.reshape.Reshape", "fe.op.tensorop.Reshape")
class Reshape(TensorOp):
    """Reshape the input tensor(s) to `shape` (the whole shape, batch axis included; -1 infers one axis).

    Args:
        inputs: Key(s) of the tensor(s).
        outputs: Key(s) of the results.
        shape: The target shape (an int for a flat result).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.
    """

    def __init__(self,
                 inputs: Union[str, List[str]],
                 outputs: Union[str, List[str]],
                 shape: Union[int, Tuple[int, ...]],
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"Reshape needs one output per input, got {self.inputs} -> {self.outputs}")
        self.shape = [int(shape)] if isinstance(shape, int) else [int(size) for size in shape]
        self.in_list, self.out_list = True, True

    def forward(self, data: List[Any], state: Dict[str, Any]) -> List[Any]:
        return [reshape(tensor, self.shape) for tensor in data]


@fe_export("fe.op.tensorop.resize3d.Resize3D", "fe.op.tensorop.Resize3D")
class Resize3D(TensorOp):
    """Resize volumes to `output_shape` (H, W, D): torch takes (batch, channels, H, W, D), TensorFlow
    (batch, H, W, D, channels).

    Args:
        inputs: Key(s) of the volume(s).
        outputs: Key(s) of the results.
        output_shape: The new (H, W, D).
        resize_mode: 'nearest' (nearest neighbour) or 'area' (average of the covered input cells; for enlarging it
            falls back to nearest).
        mode: Mode(s) to run in.
        ds_id: Dataset id(s) to run on.

    Raises:
        ValueError: For an `output_shape` that is not three positive ints or an unknown `resize_mode`.
    """

    kernel_name = "resize3d"
    MODES = ("nearest", "area")

    def __init__(self,
                 inputs: Union[str, Iterable[str]],
                 outputs: Union[str, Iterable[str]],
                 output_shape: Sequence[int],
                 resize_mode: str = "nearest",
                 mode: Union[None, str, Iterable[str]] = None,
                 ds_id: Union[None, str, Iterable[str]] = None) -> None:
        super().__init__(inputs=inputs, outputs=outputs, mode=mode, ds_id=ds_id)
        if len(output_shape) != 3 or any(int(size) != size or size < 1 for size in output_shape):
            raise ValueError(f"Resize3D output_shape must be three positive ints (H, W, D), got {output_shape}")
        if resize_mode not in self.MODES:
            raise ConfigurationError(f"Resize3D resize_mode must be one of {self.MODES}, got {resize_mode!r}")
        if len(self.inputs) != len(self.outputs):
            raise ValueError(f"Resize3D needs one output per input, got {self.inputs} -> {self.outputs}")
        self.output_shape = [int(size) for size in output_shape]
        self.resize_mode = resize_mode
        # as FastEstimator: one key takes and gives one tensor, a list of keys a list (a list is accepted either way)
        self.in_list = not isinstance(inputs, str)
        self.out_list = not isinstance(outputs, str)

    def forward(self, data: Any, state: Dict[str, Any]) -> Any:
        values = list(data) if isinstance(data, (list, tuple)) else [data]
        resized = super().forward(values, state)
        return resized if self.out_list or len(resized) != 1 else resized[0]
