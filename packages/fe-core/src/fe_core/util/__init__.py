"""Framework-free utilities of fe (FastEstimator's `fe.util`)."""
from fe_core.util.download_progress import bar_custom, callback_progress
from fe_core.util.downloads import ChecksumError, DownloadError, download, file_digest

__all__ = ["bar_custom", "callback_progress", "download", "file_digest", "DownloadError", "ChecksumError"]
