"""TensorFlow implementations of `fe.backend`'s tensor functions, one module per group of `fe_core.backend`.

The public functions live in `fe_core.backend` (`fe.backend.<name>`); they hand tf tensors, variables and Keras models
to the same-named function of the mirrored module here (`fe_core.backend.reductions` -> `fe_tf.backend.reductions`).
Everything works eagerly and inside `tf.function`. Call the public functions; these modules take already-normalised
arguments.
"""
__all__: list = []
