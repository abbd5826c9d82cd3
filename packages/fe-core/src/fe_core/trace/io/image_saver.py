"""`ImageSaver`: write images, figures and graphs that traces produced to files."""
from __future__ import annotations

import os
from typing import Iterable, Sequence, Union

from fe_core.distributed.communicator import is_main_process
from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.trace.io.image_output import save_value
from fe_core.trace.trace import Trace

__all__ = ["ImageSaver"]


@fe_export("fe.trace.io.image_saver.ImageSaver", "fe.trace.io.ImageSaver")
class ImageSaver(Trace):
    """A trace that saves images to the disk.

    At the end of each epoch (and of the run) every input key present in the data is saved into `save_dir` as
    `<key>_<mode>_epoch_<epoch>.png`: a Display figure (as GradCAM, EigenCAM and Saliency write) is rendered, a
    Summary or list of Summaries (as InstanceTracker and LabelTracker write) is plotted, and a batch of image arrays
    is written one file per element (`..._elem_<i>.png`) with Pillow.

    Args:
        inputs: Key(s) of images to be saved.
        save_dir: The directory into which to write the images.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
    """

    def __init__(self,
                 inputs: Union[str, Sequence[str]],
                 save_dir: str = os.getcwd(),
                 mode: Union[None, str, Iterable[str]] = ("eval", "test")) -> None:
        super().__init__(inputs=inputs, mode=mode)
        self.save_dir = save_dir

    def on_epoch_end(self, data: Data) -> None:
        self._save_images(data)

    def on_end(self, data: Data) -> None:
        self._save_images(data)

    def _save_images(self, data: Data) -> None:
        if not is_main_process():  # a data-parallel run: rank 0 writes the files
            return
        for key in self.inputs:
            if key in data:
                stem = os.path.join(self.save_dir, f"{key}_{self.system.mode}_epoch_{self.system.epoch_idx}")
                for path in save_value(data[key], stem):
                    print(f"FastEstimator-ImageSaver: saved image to {path}")
