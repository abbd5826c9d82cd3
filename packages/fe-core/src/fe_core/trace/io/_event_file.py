"""A pure-python writer of TensorBoard event files (scalars only), so fe-core needs neither TensorFlow nor tensorboard.

An event file is a sequence of TFRecords, each holding one serialized `tensorflow.Event` protocol buffer:

```
record := uint64 length | uint32 masked_crc32c(length bytes) | data[length] | uint32 masked_crc32c(data)
```

(all little-endian; masked_crc32c(x) = rotate_right(crc32c(x), 15) + 0xa282ead8). The messages written here, with
their protobuf field numbers:

```
Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
Summary { repeated Value value = 1; }
Value   { string tag = 1; float simple_value = 2; }
```

The first record of every file is `Event{wall_time, file_version: "brain.Event:2"}`.
"""
from __future__ import annotations

import itertools
import os
import socket
import struct
import time
from typing import BinaryIO, Iterable, List, Mapping, Optional, Tuple, Union

__all__ = ["crc32c", "masked_crc32c", "encode_scalar_event", "encode_file_version_event", "frame_record",
           "EventFileWriter", "FILE_VERSION"]

#: The file_version string TensorBoard expects in the first event of a file.
FILE_VERSION = "brain.Event:2"
_CRC32C_POLY = 0x82F63B78  # Castagnoli polynomial, bit-reflected
_MASK_DELTA = 0xA282EAD8
_UINT32 = 0xFFFFFFFF
_UINT64 = 0xFFFFFFFFFFFFFFFF


def _crc32c_table() -> Tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _CRC32C_POLY if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """The CRC-32C (Castagnoli) checksum of `data`, computed with a 256-entry table.

    Example:
        >>> hex(crc32c(b"123456789"))
        '0xe3069283'
    """
    table = _CRC32C_TABLE
    crc = _UINT32
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ _UINT32


def masked_crc32c(data: bytes) -> int:
    """The masked CRC-32C that TFRecord framing stores (so that CRCs of data containing CRCs stay well distributed).

    Example:
        >>> hex(masked_crc32c(b""))
        '0xa282ead8'
    """
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & _UINT32


def frame_record(data: bytes) -> bytes:
    """Wrap `data` in TFRecord framing: length, masked CRC of the length, data, masked CRC of the data."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


# ---------------------------------------------------------------------------------------------- protobuf encoding
def _varint(value: int) -> bytes:
    value &= _UINT64  # negative int64 values are written as their 64-bit two's complement (10 bytes)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire_type: int) -> bytes:
    return _varint((field << 3) | wire_type)


def _length_delimited(field: int, payload: bytes) -> bytes:
    return _key(field, 2) + _varint(len(payload)) + payload


def _encode_value(tag: str, value: float) -> bytes:
    return _length_delimited(1, tag.encode("utf-8")) + _key(2, 5) + struct.pack("<f", value)


def _event_header(wall_time: float, step: int) -> bytes:
    out = _key(1, 1) + struct.pack("<d", wall_time)
    if step:
        out += _key(2, 0) + _varint(int(step))
    return out


def encode_file_version_event(wall_time: float) -> bytes:
    """The serialized `Event{wall_time, file_version: "brain.Event:2"}` that starts an event file."""
    return _event_header(wall_time, 0) + _length_delimited(3, FILE_VERSION.encode("utf-8"))


def encode_scalar_event(wall_time: float, step: int, scalars: Iterable[Tuple[str, float]]) -> bytes:
    """The serialized `Event{wall_time, step, summary: {value: [{tag, simple_value}, ...]}}` for some scalars.

    Args:
        wall_time: Seconds since the epoch.
        step: The step the values belong to.
        scalars: (tag, value) pairs; values are stored as 32-bit floats, as TensorBoard's `simple_value` is.

    Returns:
        The protobuf bytes (not yet framed as a record).
    """
    summary = b"".join(_length_delimited(1, _encode_value(tag, value)) for tag, value in scalars)
    return _event_header(wall_time, step) + _length_delimited(5, summary)


# ---------------------------------------------------------------------------------------------- the writer
_FILE_COUNTER = itertools.count()


class EventFileWriter:
    """Writes scalar summaries into a new TensorBoard event file in `log_dir`.

    The file is named `events.out.tfevents.<10-digit unix time>.<hostname>.<pid>.<n>` (the pid and a per-process
    counter keep two writers started in the same second apart); TensorBoard reads any file whose name contains
    'tfevents'. Writes are buffered: call `flush` to make them visible to a running TensorBoard.

    Args:
        log_dir: The directory to write into (created if needed).

    Example:
        >>> import tempfile
        >>> with EventFileWriter(tempfile.mkdtemp()) as writer:
        ...     writer.add_scalars({"loss": 0.5, "accuracy": 0.9}, step=100)
    """

    def __init__(self, log_dir: str) -> None:
        os.makedirs(log_dir, exist_ok=True)
        now = time.time()
        name = (f"events.out.tfevents.{int(now):010d}.{socket.gethostname()}.{os.getpid()}."
                f"{next(_FILE_COUNTER)}")
        self.log_dir = log_dir
        self.path = os.path.join(log_dir, name)
        self._file: Optional[BinaryIO] = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._file.write(frame_record(encode_file_version_event(now)))

    @property
    def closed(self) -> bool:
        """Whether `close` has been called."""
        return self._file is None

    def add_scalars(self, scalars: Union[Mapping[str, float], Iterable[Tuple[str, float]]], step: int,
                    wall_time: Optional[float] = None) -> None:
        """Write several scalars of one step as one event.

        Args:
            scalars: A mapping (or pairs) of tag to value.
            step: The step to record them at.
            wall_time: Seconds since the epoch (default: now).

        Raises:
            ValueError: If the writer is closed.
        """
        pairs: List[Tuple[str, float]] = [(str(tag), float(value)) for tag, value in
                                          (scalars.items() if isinstance(scalars, Mapping) else scalars)]
        if not pairs:
            return
        if self._file is None:
            raise ValueError(f"EventFileWriter for {self.path!r} is closed")
        event = encode_scalar_event(time.time() if wall_time is None else wall_time, step, pairs)
        self._file.write(frame_record(event))

    def add_scalar(self, tag: str, value: float, step: int, wall_time: Optional[float] = None) -> None:
        """Write one scalar (see `add_scalars`)."""
        self.add_scalars([(tag, value)], step=step, wall_time=wall_time)

    def flush(self) -> None:
        """Push buffered events to the file."""
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush and close the file (closing twice is harmless)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "EventFileWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
