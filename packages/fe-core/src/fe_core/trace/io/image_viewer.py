"""`ImageViewer`: show images, figures and graphs that traces produced, on screen or in a notebook."""
from __future__ import annotations

from typing import Iterable, Sequence, Union

from fe_core.distributed.communicator import is_main_process
from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.trace.io.image_output import show_value
from fe_core.trace.trace import Trace

__all__ = ["ImageViewer"]


@fe_export("fe.trace.io.image_viewer.ImageViewer", "fe.trace.io.ImageViewer")
class ImageViewer(Trace):
    """A trace that interrupts your training in order to display images on the screen.

    This class is useful primarily for Jupyter Notebook, or for debugging purposes. At the end of each epoch (and of
    the run) every input key present in the data is shown: Display figures as figures, Summaries as graphs, image
    arrays one image at a time.

    Args:
        inputs: Key(s) of images to be displayed.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        interactive: Whether the image should be interactive. This is False by default to reduce jupyter file size.
    """

    def __init__(self,
                 inputs: Union[str, Sequence[str]],
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 interactive: bool = False) -> None:
        super().__init__(inputs=inputs, mode=mode)
        self.interactive = interactive

    def on_epoch_end(self, data: Data) -> None:
        self._show_images(data)

    def on_end(self, data: Data) -> None:
        self._show_images(data)

    def _show_images(self, data: Data) -> None:
        if not is_main_process():  # a data-parallel run: rank 0 shows the images
            return
        for key in self.inputs:
            if key in data:
                show_value(data[key], title=key, interactive=self.interactive)
