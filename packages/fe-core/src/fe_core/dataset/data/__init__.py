"""Loaders of public data sets (FastEstimator's `fe.dataset.data`): `mnist.load_data()`, `cifar10.load_data()`, ...

Each loader is a module imported on first use (`fe_core.dataset.data.mnist`), so importing this package is free.
Files are cached under `~/fastestimator_data` (or `$FE_DATA_DIR`, or a loader's `root_dir`); `$FE_DATA_MIRROR`
redirects every download to a local mirror. See `fe_core.dataset.data._download`.
"""
import importlib
from typing import Any, List

__all__ = ["breast_cancer", "cifair10", "cifair100", "cifar10", "cifar100", "cub200", "em_3d", "food101",
           "horse2zebra", "imdb_review", "mendeley", "mitmovie_ner", "mnist", "montgomery", "mscoco", "nih_chestxray",
           "omniglot", "penn_treebank", "shakespeare", "skl_digits", "svhn", "svhn_cropped", "tednmt", "usps",
           "pascal_voc", "medmnist", "wikitext_103", "unnatural_instructions", "tiny_imagenet"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(__all__))
