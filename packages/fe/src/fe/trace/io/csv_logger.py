"""`CSVLogger`."""
from fe_core.trace.io.csv_logger import CSVLogger

__all__ = ["CSVLogger"]
