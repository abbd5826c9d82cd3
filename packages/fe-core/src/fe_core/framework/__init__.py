"""The backend interface and registry (no framework is imported here)."""
from fe_core.framework.base import Backend, Kernel, StateReducer
from fe_core.framework.registry import (BackendNotInstalledError, available_backends, backend_for_model, framework_backends,
                                      get_backend,
                                      loaded_backends, model_backend, register_backend, unregister_backend)

__all__ = ["Backend", "Kernel", "StateReducer", "BackendNotInstalledError", "available_backends", "backend_for_model",
           "get_backend", "loaded_backends", "model_backend", "register_backend", "unregister_backend",
           "framework_backends"]
