"""The torch half of `fe.util` (mirrors fe_core.util: tensors, devices, models)."""
from fe_torch.util.devices import get_device

__all__ = ["get_device"]
