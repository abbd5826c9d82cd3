"""`LeNet` for TensorFlow (from fe_tf)."""
from fe.architecture._backend_import import require_backend

require_backend("fe_tf", "tf", "fe.architecture.tensorflow")

from fe_tf.architecture.lenet import LeNet  # noqa: E402  pylint: disable=wrong-import-position

__all__ = ["LeNet"]
