"""`ResNet9` for PyTorch (from fe_torch)."""
from fe.architecture._backend_import import require_backend

require_backend("fe_torch", "torch", "fe.architecture.pytorch")

from fe_torch.architecture.resnet9 import ResNet9  # noqa: E402  pylint: disable=wrong-import-position

__all__ = ["ResNet9"]
