"""`OpDataset`: a dataset whose samples come out with a list of NumpyOps already applied."""
from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Optional, Set

from fe_core.export import fe_export

__all__ = ["OpDataset"]


@fe_export("fe.dataset.op_dataset.OpDataset")
class OpDataset:
    """A wrapper for datasets which allows operators to be applied to them in a pipeline.

    fe's Pipeline plans ops per epoch itself (and runs batch-capable ops on whole batches), so it never needs this
    wrapper; it is kept for code that applies ops to a dataset by hand. Items of batched datasets (lists of samples,
    as BatchDataset returns) get the ops applied to every sample.

    Args:
        dataset: The base dataset to wrap.
        ops: A list of ops to be applied after the base `dataset` `__getitem__` is invoked.
        mode: What mode the system is currently running in ('train', 'eval', 'test', or 'infer').
        output_keys: What keys can be produced from pipeline. If None or empty, all keys will be considered.
        deep_remainder: Whether data which is not modified by Ops should be deep copied or not (fe copies only the
            sample dict, never the arrays, since ops receive copies of their inputs; kept for compatibility).

    Example:
        >>> import numpy as np
        >>> from fe_core.dataset import NumpyDataset
        >>> from fe_core.op.numpyop import LambdaOp
        >>> ds = OpDataset(NumpyDataset({"x": np.arange(3)}), [LambdaOp(lambda x: x * 10, "x", "x")], "train")
        >>> int(ds[2]["x"])
        20
    """

    warned: ClassVar[Set[str]] = set()

    def __init__(self, dataset: Any, ops: List[Any], mode: str, output_keys: Optional[Set[str]] = None,
                 deep_remainder: bool = True) -> None:
        from fe_core.op.numpyop.remove_if import FilteredData
        from fe_core.pipeline.op_runner import compile_steps
        self.dataset = dataset
        self.ops = list(ops)
        self.mode = mode
        self.output_keys = set(output_keys) if output_keys else None
        self.deep_remainder = deep_remainder
        self._steps = compile_steps(self.ops, batched=False)
        self._filtered_type = FilteredData
        self._state: Dict[str, Any] = {"mode": mode, "epoch": 1, "ds_id": "", "warmup": False}

    def __len__(self) -> int:
        return len(self.dataset)

    def _apply(self, sample: Dict[str, Any]) -> Any:
        from fe_core.pipeline.op_runner import run_steps
        sample = dict(sample)
        filtered = run_steps(sample, self._steps, self._state)
        if filtered is not None:
            return filtered
        if self.output_keys is not None:
            unused = set(sample) - self.output_keys
            if unused:
                self.handle_warning(unused)
            sample = {key: value for key, value in sample.items() if key in self.output_keys}
        return sample

    def __getitem__(self, index: int) -> Any:
        """The sample (or list of samples) at `index` with the ops applied, or FilteredData if an op dropped it."""
        item = self.dataset[index]
        if isinstance(item, list):
            results = [self._apply(sample) for sample in item]
            kept = [result for result in results if not isinstance(result, self._filtered_type)]
            return kept if kept else results[0]
        return self._apply(item)

    @classmethod
    def handle_warning(cls, candidates: Set[str]) -> None:
        """Print a warning about unused keys, once per set of keys.

        Args:
            candidates: Unused keys which you might need to print a warning message about.
        """
        fresh = sorted(key for key in candidates if key not in cls.warned)
        if fresh:
            cls.warned.update(fresh)
            print(f"FastEstimator-Warn: the following key(s) are not being used by the network or traces and will be "
                  f"dropped from the batch: {', '.join(fresh)}")
