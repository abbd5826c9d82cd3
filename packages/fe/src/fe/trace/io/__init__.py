"""Input/output traces (FastEstimator's `fastestimator.trace.io`)."""
from fe_core.trace.io.best_model_saver import BestModelSaver
from fe_core.trace.io.csv_logger import CSVLogger
from fe_core.trace.io.model_saver import ModelSaver
from fe_core.trace.io.restore_wizard import RestoreWizard
from fe_core.trace.io.tensorboard import TensorBoard
from fe.trace.io import best_model_saver, csv_logger, model_saver, restore_wizard, tensorboard

__all__ = ["BestModelSaver", "CSVLogger", "ModelSaver", "RestoreWizard", "TensorBoard", "best_model_saver",
           "csv_logger", "model_saver", "restore_wizard", "tensorboard"]
