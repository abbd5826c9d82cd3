"""The exception raised for an invalid configuration: a ValueError (or TypeError) with fe's message, which is also an
AssertionError, because FastEstimator `assert`s the same conditions.

Code written for FastEstimator catches `AssertionError` where its configuration checks fail (invalid ds_ids, a
TensorOp in a Pipeline, models of two frameworks in one Network, a TensorFlow model given a torch optimizer, an unknown
resize mode, ...); code written for fe catches `ValueError` (or `TypeError` where fe raised one). One exception
satisfies both. This module imports nothing from fe, so every module can raise it.

Example:
    >>> try:
    ...     raise ConfigurationError("Pipeline ds_id '!a' must not start with '!'")
    ... except AssertionError as error:
    ...     print(isinstance(error, ValueError), error)
    True Pipeline ds_id '!a' must not start with '!'
"""
from __future__ import annotations

__all__ = ["ConfigurationError", "ConfigurationTypeError"]


class ConfigurationError(ValueError, AssertionError):
    """An invalid configuration: a ValueError, and an AssertionError as FastEstimator raises for the same case, so
    `except ValueError` and `except AssertionError` clauses both catch it."""


class ConfigurationTypeError(TypeError, ConfigurationError):
    """An invalid configuration detected by its type (a TensorOp where a NumpyOp belongs, an optimizer of another
    framework): a TypeError as fe raised before, and a ValueError and an AssertionError (see `ConfigurationError`)."""
