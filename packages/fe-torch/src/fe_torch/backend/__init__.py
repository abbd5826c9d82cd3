"""Torch implementations of `fe.backend`'s tensor functions, one module per group of `fe_core.backend`.

The public functions live in `fe_core.backend` (`fe.backend.<name>`); they hand torch tensors and modules to the
same-named function of the mirrored module here (`fe_core.backend.reductions` -> `fe_torch.backend.reductions`).
Call the public functions; these modules take already-normalised arguments.
"""
__all__: list = []
