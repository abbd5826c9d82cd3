"""Framework-free utilities of fe (FastEstimator's `fe.util`), one module per concept.

The torch and TensorFlow halves (`get_device`, tensors moved/detached/converted, model parameter counts) live in the
mirrored modules `fe_torch.util.*` / `fe_tf.util.*` and are reached by type, so importing this package imports no
framework. The figure classes (`fe_core.util.display`) import plotly / matplotlib only when used.
"""
from fe_core.util.cli_parsing import SaveAction, parse_cli_to_dictionary, parse_string_to_python
from fe_core.util.colors import get_colors
from fe_core.util.config_helpers import IfElse, param_to_range
from fe_core.util.console import LogSplicer, draw, in_notebook, warn
from fe_core.util.display import BatchDisplay, Display, GridDisplay, ImageDisplay
from fe_core.util.devices import cpu_count, get_gpu_info, get_num_devices, get_num_gpus
from fe_core.util.download_progress import bar_custom, callback_progress
from fe_core.util.downloads import ChecksumError, DownloadError, download, file_digest
from fe_core.util.google_drive import download_file_from_google_drive
from fe_core.util.files import is_valid_file, list_files
from fe_core.util.inspection import get_batch_size, get_shape, get_type, to_number
from fe_core.util.models import count_params, get_model_parameters, get_optimizer_name
from fe_core.util.padding import pad_batch, pad_data
from fe_core.util.strings import is_number, prettify_metric_name, strip_prefix, strip_suffix
from fe_core.util.suppress import Suppressor
from fe_core.util.tensors import detach_tensors, move_tensors_to_device
from fe_core.util.timing import Timer
from fe_core.util.wrappers import FEID, DefaultKeyDict, Flag, NonContext

__all__ = [
    "SaveAction", "parse_cli_to_dictionary", "parse_string_to_python", "get_colors", "IfElse", "param_to_range",
    "LogSplicer", "draw", "in_notebook", "warn", "cpu_count", "get_gpu_info", "get_num_devices", "get_num_gpus",
    "bar_custom", "callback_progress", "ChecksumError", "DownloadError", "download", "file_digest", "is_valid_file",
    "list_files", "get_batch_size", "get_shape", "get_type", "to_number", "count_params", "get_model_parameters",
    "get_optimizer_name", "pad_batch", "pad_data", "is_number", "prettify_metric_name", "strip_prefix",
    "strip_suffix", "Suppressor", "detach_tensors", "move_tensors_to_device", "Timer", "FEID", "DefaultKeyDict",
    "Flag", "NonContext", "Display", "ImageDisplay", "BatchDisplay", "GridDisplay",
    "download_file_from_google_drive",
]
