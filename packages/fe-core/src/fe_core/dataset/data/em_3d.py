"""3D electron-microscope platelet data (https://bio3d-vision.github.io/platelet-description)."""
from __future__ import annotations

import os
from typing import Optional, Tuple

import numpy as np

from fe_core.dataset.data._download import data_dir, extract, fetch_google_drive
from fe_core.dataset.numpy_dataset import NumpyDataset
from fe_core.export import fe_export
from fe_core.optional import import_optional

__all__ = ["load_data", "generate_tiles", "get_encode_label", "COLOR_MAPPING"]

GOOGLE_DRIVE_ID = "1OMVY1bkfssYdH11xuFdxv7nhqEjzCY7L"
COLOR_MAPPING = {0: [0, 0, 0, 0], 1: [0, 40, 255, 255], 2: [0, 212, 255, 255], 3: [124, 255, 121, 255],
                 4: [127, 0, 0, 255], 5: [255, 70, 0, 255], 6: [255, 229, 0, 255]}


@fe_export("fe.dataset.data.em_3d.generate_tiles")
def generate_tiles(input_image: np.ndarray, tile_size: int = 256, overlap: int = 128) -> np.ndarray:
    """This method to crop the image into smaller crops.

    Args:
        input_image: numpy array of input image, (depth, height, width).
        tile_size: The crop size
        overlap: Overlap between two crops

    Returns:
        tiles: numpy array of image crops, (tiles, depth, tile_size, tile_size) (only crops that fit entirely).
    """
    stride = tile_size - overlap
    _, height, width = input_image.shape[:3]
    tiles = [input_image[:, top:top + tile_size, left:left + tile_size]
             for top in range(0, height, stride) for left in range(0, width, stride)
             if top + tile_size < height and left + tile_size < width]
    return np.array(tiles)


@fe_export("fe.dataset.data.em_3d.get_encode_label")
def get_encode_label(label_data: np.ndarray) -> np.ndarray:
    """Turn a colour-coded (RGBA) label volume into class indices 0..6 (0: background).

    Args:
        label_data: Color encoded input label, (..., 4).

    Returns:
        encoded_label: uint8 class index per pixel, (...).
    """
    encoded = np.zeros(label_data.shape[:-1], np.uint8)
    for index, color in COLOR_MAPPING.items():
        encoded[np.all(label_data == color, axis=-1)] = index
    return encoded


def _read_stack(path: str) -> np.ndarray:
    """All pages of a multi-page TIFF as one array (Pillow)."""
    image_module = import_optional("PIL.Image", extra="image", feature="em_3d.load_data")
    sequence = import_optional("PIL.ImageSequence", extra="image", feature="em_3d.load_data")
    with image_module.open(path) as image:
        return np.stack([np.asarray(page) for page in sequence.Iterator(image)])


def _one_hot(labels: np.ndarray) -> np.ndarray:
    return np.eye(7, dtype=np.float64)[labels][..., 1:]


@fe_export("fe.dataset.data.em_3d.load_data")
def load_data(root_dir: Optional[str] = None, image_key: str = "image", label_key: str = "label",
              tile: bool = True) -> Tuple[NumpyDataset, NumpyDataset]:
    """Load and return the 3d electron microscope platelet dataset.

    Two volumes: 800x800x50 (training) and 800x800x24 (validation). With `tile`, the training volume is cut into
    three overlapping 24-slice stacks and every stack into 256x256 tiles overlapping by 128 (about 75 training and 25
    validation tiles); without it, each volume is one sample. Labels are one-hot over 6 classes (background left
    out): Cell, Mitochondria, Alpha granule, Canalicular vessel, Dense granule body, Dense granule core.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).
        image_key: The key for image.
        label_key: The key for label.
        tile: Whether to tile the image into multiple smaller images, or to return the individual volumes directly.

    Returns:
        (train_data, eval_data): images (height, width, depth), labels (height, width, depth, 6).
    """
    directory = data_dir(root_dir, "electronmicroscopy")
    folder = os.path.join(directory, "platelet-em")
    if not os.path.exists(os.path.join(folder, "images")):
        archive = fetch_google_drive(GOOGLE_DRIVE_ID, os.path.join(directory, "images_and_labels_rgba.zip"))
        extract(archive, directory, expected=["platelet-em"])
    train_images = _read_stack(os.path.join(folder, "images", "50-images.tif"))
    eval_images = _read_stack(os.path.join(folder, "images", "24-images.tif"))
    train_labels = get_encode_label(_read_stack(os.path.join(folder, "labels-semantic", "50-semantic.tif")))
    eval_labels = get_encode_label(_read_stack(os.path.join(folder, "labels-semantic", "24-semantic.tif")))
    if tile:
        stacks = [slice(0, 24), slice(13, 37), slice(26, 50)]
        x_train = np.concatenate([generate_tiles(train_images[part]) for part in stacks])
        y_train = np.concatenate([generate_tiles(train_labels[part]) for part in stacks])
        x_eval, y_eval = generate_tiles(eval_images), generate_tiles(eval_labels)
    else:
        x_train, y_train = train_images[None], train_labels[None]
        x_eval, y_eval = eval_images[None], eval_labels[None]
    x_train, y_train = np.moveaxis(x_train, 1, -1), np.moveaxis(y_train, 1, -1)
    x_eval, y_eval = np.moveaxis(x_eval, 1, -1), np.moveaxis(y_eval, 1, -1)
    return (NumpyDataset({image_key: x_train, label_key: _one_hot(y_train)}),
            NumpyDataset({image_key: x_eval, label_key: _one_hot(y_eval)}))
