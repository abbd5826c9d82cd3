"""Small archives in the real layouts of the public data sets, for the loader tests (served from 127.0.0.1)."""
from __future__ import annotations

import gzip
import hashlib
import io
import pickle
import tarfile
import zipfile
from typing import Dict, Union

import numpy as np

Content = Union[bytes, str]


def _bytes(content: Content) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


def make_zip(files: Dict[str, Content]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, content in files.items():
            bundle.writestr(name, _bytes(content))
    return buffer.getvalue()


def make_tar(files: Dict[str, Content], mode: str = "w:gz") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as bundle:
        for name, content in files.items():
            data = _bytes(content)
            info = tarfile.TarInfo(name)
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def gz(content: Content) -> bytes:
    return gzip.compress(_bytes(content))


def npz(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def png(value: int = 0, shape=(4, 4, 3)) -> bytes:
    import cv2
    ok, encoded = cv2.imencode(".png", np.full(shape, value, dtype=np.uint8))
    assert ok
    return encoded.tobytes()


def digest(content: bytes, algorithm: str = "md5") -> str:
    return hashlib.new(algorithm, content).hexdigest()


def cifar_batch(images: np.ndarray, labels: Dict[str, list]) -> bytes:
    """A CIFAR 'python version' batch: a pickled dict with bytes keys, flat uint8 rows and label lists."""
    content = {b"data": images.reshape(len(images), -1).astype(np.uint8), b"batch_label": b"fixture"}
    content.update({key.encode(): value for key, value in labels.items()})
    return pickle.dumps(content, protocol=2)


def multipage_tiff(pages: np.ndarray) -> bytes:
    from PIL import Image
    frames = [Image.fromarray(page) for page in pages]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="TIFF", save_all=True, append_images=frames[1:])
    return buffer.getvalue()
