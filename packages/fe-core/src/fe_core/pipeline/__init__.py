"""The Pipeline: datasets per mode, NumpyOps per sample and per batch, batching, and its benchmark."""
from fe_core.pipeline.epoch_plan import EpochPlan
from fe_core.pipeline.loader import EpochLoader
from fe_core.pipeline.pipeline import Pipeline, is_native_dataset

__all__ = ["Pipeline", "EpochLoader", "EpochPlan", "is_native_dataset"]
