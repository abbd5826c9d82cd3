"""Rasterizing COCO segmentations (polygons and run-length encodings) into binary masks."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from fe_core.optional import import_optional

__all__ = ["annotation_mask", "decode_rle"]


def _counts_from_string(encoded: str) -> List[int]:
    """Decode COCO's compressed RLE string (6 bits per character, offset 48, 0x20 continues, deltas from the
    count two back after the first two)."""
    counts: List[int] = []
    position = 0
    while position < len(encoded):
        value, shift, more = 0, 0, True
        while more:
            char = ord(encoded[position]) - 48
            value |= (char & 0x1F) << (5 * shift)
            more = bool(char & 0x20)
            position += 1
            shift += 1
            if not more and (char & 0x10):
                value |= -1 << (5 * shift)
        if len(counts) > 2:
            value += counts[-2]
        counts.append(value)
    return counts


def decode_rle(rle: Dict[str, Any]) -> np.ndarray:
    """A (height, width) uint8 mask from a COCO RLE dict ({'size': [h, w], 'counts': list or compressed str}).

    Example:
        >>> decode_rle({"size": [2, 2], "counts": [1, 2, 1]}).tolist()
        [[0, 1], [1, 0]]
    """
    height, width = rle["size"]
    counts = rle["counts"]
    if isinstance(counts, (bytes, str)):
        counts = _counts_from_string(counts.decode("ascii") if isinstance(counts, bytes) else counts)
    flat = np.zeros(height * width, dtype=np.uint8)
    position, value = 0, 0
    for count in counts:
        if value:
            flat[position:position + count] = 1
        position += count
        value ^= 1
    return flat.reshape(width, height).T  # RLE runs go down the columns


def annotation_mask(annotation: Dict[str, Any], height: int, width: int) -> np.ndarray:
    """The (height, width) uint8 mask of one COCO annotation (polygons are filled with OpenCV)."""
    segmentation = annotation.get("segmentation")
    if isinstance(segmentation, dict):
        return decode_rle(segmentation)
    mask = np.zeros((height, width), dtype=np.uint8)
    if segmentation:
        cv2 = import_optional("cv2", extra="image", feature="MSCOCODataset masks")
        polygons = [np.round(np.asarray(polygon, dtype=np.float64).reshape(-1, 2)).astype(np.int32)
                    for polygon in segmentation if len(polygon) >= 6]
        if polygons:
            cv2.fillPoly(mask, polygons, 1)
    return mask
