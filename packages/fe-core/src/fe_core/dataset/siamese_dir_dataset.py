"""`SiameseDirDataset`: pairs of files from class folders, labelled 1 when both come from the same class."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from fe_core.dataset.dataset import DatasetArgumentError, DatasetSummary, KeySummary
from fe_core.dataset.labeled_dir_dataset import LabeledDirDataset, class_files
from fe_core.export import fe_export

__all__ = ["SiameseDirDataset"]


@fe_export("fe.dataset.siamese_dir_dataset.SiameseDirDataset", "fe.dataset.SiameseDirDataset")
class SiameseDirDataset(LabeledDirDataset):
    """A dataset which returns pairs of data.

    This dataset reads files from a folder hierarchy like root/class(/es)/data.file. Data is returned in pairs,
    where the label value is 1 if the data are drawn from the same class, and 0 otherwise. One epoch is defined as
    the time it takes to visit every data point exactly once as the 'data_key_left'. Each data point may occur zero
    or many times as 'data_key_right' within the same epoch. `split()` splits by class index rather than by data
    instance index. A matching right-hand element is another file of the same class (when the class has one). The
    right-hand element is drawn from numpy's global random state (reproducible and resumable).

    Args:
        root_dir: The path to the directory containing data sorted by folders.
        data_key_left: What key to assign to the first data element in the pair.
        data_key_right: What key to assign to the second data element in the pair.
        label_key: What key to assign to the label values in the data dictionary.
        percent_matching_data: What percentage of the time should data be paired by class (label value = 1).
        label_mapping: A dictionary defining the mapping to use. If not provided will map classes to int labels.
        file_extension: If provided then only files ending with the file_extension will be included.

    Raises:
        DatasetArgumentError: If `percent_matching_data` is not in [0, 1] or there are fewer than 2 classes.
    """

    def __init__(self,
                 root_dir: str,
                 data_key_left: str = "x_a",
                 data_key_right: str = "x_b",
                 label_key: str = "y",
                 percent_matching_data: float = 0.5,
                 label_mapping: Optional[Dict[str, Any]] = None,
                 file_extension: Optional[str] = None) -> None:
        if not 0 <= percent_matching_data <= 1:
            raise DatasetArgumentError(f"SiameseDirDataset percent_matching_data must be in [0, 1], got "
                                       f"{percent_matching_data}")
        self.root_path = os.path.normpath(root_dir)
        self.data_key_left, self.data_key_right, self.label_key = data_key_left, data_key_right, label_key
        self.percent_matching_data = percent_matching_data
        classes, self.mapping = class_files(root_dir, file_extension, label_mapping, "SiameseDirDataset")
        self.class_data: Dict[Any, List[str]] = {}
        for name, files in classes.items():
            self.class_data.setdefault(self.mapping[name], []).extend(files)
        self._index()

    def _index(self) -> None:
        """Rebuild the flat (class, position) index after construction or a split."""
        self._classes = list(self.class_data)
        self._locations: List[Tuple[Any, int]] = [(label, position) for label in self._classes
                                                  for position in range(len(self.class_data[label]))]
        self.data = {}

    def __len__(self) -> int:
        return len(self._locations)

    def __getitem__(self, index: Any) -> Dict[str, Any]:
        """A pair: sample `index` on the left, a random same-class (label 1) or other-class (label 0) file on the
        right."""
        if isinstance(index, str):
            raise KeyError("SiameseDirDataset draws pairs at random; it has no fixed columns")
        label, position = self._locations[index]
        files = self.class_data[label]
        if len(self._classes) < 2 or np.random.uniform() < self.percent_matching_data:
            if len(files) > 1:  # another file of the same class
                other = np.random.randint(len(files) - 1)
                right = files[other + 1 if other >= position else other]
            else:
                right = files[position]
            same = 1
        else:
            others = [other for other in self._classes if other != label]
            other = others[np.random.randint(len(others))]
            candidates = self.class_data[other]
            right = candidates[np.random.randint(len(candidates))]
            same = 0
        return {self.data_key_left: files[position], self.data_key_right: right, self.label_key: same}

    def keys(self) -> List[str]:
        return [self.data_key_left, self.data_key_right, self.label_key]

    def _class_values(self, key: str) -> List[Any]:
        raise DatasetArgumentError("SiameseDirDataset.split splits by class; stratify is not supported")

    def split(self, *fractions: Any, seed: Optional[int] = None, stratify: Optional[str] = None) -> Any:
        """Split by class: fractions, counts and indices refer to classes, not to files (see FEDataset.split).

        Returns:
            One SiameseDirDataset per fraction (a single one for a single fraction), holding the classes moved out.
        """
        if stratify is not None:
            raise DatasetArgumentError("SiameseDirDataset.split splits by class; stratify is not supported")
        splits = _ClassView(self)._split_indices(fractions, seed=seed, stratify=None)
        children = []
        for split in splits:
            child = object.__new__(SiameseDirDataset)
            child.__dict__.update(self.__dict__)
            child.class_data = {self._classes[int(i)]: self.class_data[self._classes[int(i)]] for i in split}
            child._index()
            children.append(child)
        for split in splits:
            for i in split:
                self.class_data.pop(self._classes[int(i)], None)
        self._index()
        return children[0] if len(children) == 1 else children

    def one_shot_trial(self, n: int) -> Tuple[List[str], List[str]]:
        """Generate one-shot trial data.

        The similarity should be highest between the index 0 elements of the arrays.

        Args:
            n: The number of samples to draw for computing one shot accuracy. Should be <= the number of total
                classes.

        Returns:
            ([class_a_instance_x, class_a_instance_x, class_a_instance_x, ...],
            [class_a_instance_w, class_b_instance_y, class_c_instance_z, ...])

        Raises:
            DatasetArgumentError: If `n` exceeds the number of classes.
        """
        if not 2 <= n <= len(self._classes):
            raise DatasetArgumentError(f"one_shot_trial needs 2 <= n <= {len(self._classes)} (the number of classes), "
                                       f"got {n}")
        picked = np.random.choice(len(self._classes), size=n, replace=False)
        first = self.class_data[self._classes[picked[0]]]
        pair = np.random.choice(len(first), size=2, replace=len(first) < 2)  # two different files when possible
        left = [first[pair[0]]] * n
        right = [first[pair[1]]]
        for class_index in picked[1:]:
            files = self.class_data[self._classes[class_index]]
            right.append(files[np.random.randint(len(files))])
        return left, right

    def summary(self) -> DatasetSummary:
        """Generate a summary representation of this dataset.

        Returns:
            A summary representation of this dataset.
        """
        keys = {self.data_key_left: KeySummary(dtype="str"), self.data_key_right: KeySummary(dtype="str"),
                self.label_key: KeySummary(dtype="int", num_unique_values=2)}
        # the label says "same class or not", so the class mapping is left out (as FastEstimator does)
        return DatasetSummary(num_instances=len(self), keys=keys, num_classes=len(self._classes),
                              class_key=self.label_key)


class _ClassView:
    """Lets FEDataset's split arithmetic count classes instead of files."""

    def __init__(self, dataset: SiameseDirDataset) -> None:
        self.size = len(dataset._classes)

    def __len__(self) -> int:
        return self.size

    def _split_indices(self, fractions: Sequence[Any], seed: Optional[int], stratify: Optional[str]):
        from fe_core.dataset.dataset import FEDataset
        return FEDataset._split_indices(self, fractions, seed, stratify)  # type: ignore[arg-type]
