"""Input/output traces: `BestModelSaver` and `ModelSaver` (model weights to files), `RestoreWizard` (checkpoints and
exact resume), `CSVLogger` (logged values into a CSV file) and `TensorBoard` (scalars into TensorBoard event files,
written without TensorFlow), `TestReport` (automated tests, JSON + LaTeX report), `Traceability` (a LaTeX report of the run), `ImageSaver`/`ImageViewer` (pictures
other traces made, to files or the screen), `BatchDisplay`/`GridDisplay` (figures of batches), `MLflowLogger` (experiment
tracking in MLflow) and `ModelExporter` (a verified serving export at the end of training)."""
from fe_core.trace.io.batch_display import BatchDisplay
from fe_core.trace.io.best_model_saver import BestModelSaver
from fe_core.trace.io.csv_logger import CSVLogger
from fe_core.trace.io.grid_display import GridDisplay
from fe_core.trace.io.image_saver import ImageSaver
from fe_core.trace.io.image_viewer import ImageViewer
from fe_core.trace.io.mlflow_logger import MLflowLogger
from fe_core.trace.io.model_exporter import ModelExporter
from fe_core.trace.io.model_saver import ModelSaver
from fe_core.trace.io.restore_wizard import RestoreWizard
from fe_core.trace.io.tensorboard import TensorBoard
from fe_core.trace.io.test_report import TestCase, TestReport
from fe_core.trace.io.traceability import Traceability

__all__ = ["BestModelSaver", "CSVLogger", "MLflowLogger", "ModelExporter", "ModelSaver", "RestoreWizard", "TensorBoard",
           "TestCase", "TestReport", "BatchDisplay", "GridDisplay", "ImageSaver", "ImageViewer", "Traceability"]
