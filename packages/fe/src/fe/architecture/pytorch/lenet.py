"""`LeNet` for PyTorch (from fe_torch)."""
from fe.architecture._backend_import import require_backend

require_backend("fe_torch", "torch", "fe.architecture.pytorch")

from fe_torch.architecture.lenet import LeNet  # noqa: E402  pylint: disable=wrong-import-position

__all__ = ["LeNet"]
