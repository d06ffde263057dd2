"""The control path's messages as their serialized (CDR) bytes: sensor_msgs/JointState read
from a raw subscription's bytes, and the feedforward (std_msgs/Float64MultiArray and its
stamped sensor_msgs/JointState copy), the monitoring's joint states, wrenches and /tf
written into preallocated buffers and published as bytes. rclpy publishes ``bytes`` as a
serialized message and hands a ``raw=True`` subscription the bytes, on Humble, Jazzy and
Kilted alike; skipping the conversion to and from Python message objects is a quarter of
rclpy's cost per message (issue 37).

The layout is XCDR1 as ROS 2's rmw implementations write it: a 4-byte encapsulation header
(``00 01``: little-endian CDR, then two option bytes), then the fields in their order, each
primitive aligned to its own size counted from the end of that header; a string is a uint32
length (its terminating NUL included), its bytes and the NUL; a sequence is a uint32 count
and its elements. Padding bytes carry no meaning (Fast DDS leaves them as they were in
memory); this module writes zeros.

A message in another encoding (big-endian CDR, XCDR2) is read by rclpy's own
``deserialize_message``, as are the names of a message whose names block was not seen
before: the names a message is read with are always rclpy's.
"""
from __future__ import annotations

import struct
from typing import NamedTuple, Optional, Sequence

import numpy as np
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from ...evaluators.measurements import CDR_HEADER
from ..common.inputs import MAX_JOINT_NAMES, InputRejected

#: little-endian CDR: the only encoding read here without rclpy
LITTLE_ENDIAN_CDR = b"\x00\x01"
HEADER = CDR_HEADER        # the encapsulation header's bytes, as the core's reader
#: name blocks remembered (one per publisher on a merged topic; a healthy robot has a few)
MAX_CACHED_NAME_BLOCKS = 8
#: most names of a block remembered: a message with more is read by rclpy alone (finding
#: the end of its block in Python would cost more than rclpy's whole reading)
MAX_CACHED_BLOCK_NAMES = 100

_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iI")


class JointStateArrays(NamedTuple):
    """A JointState's fields the node reads: its header's stamp (``sec``, ``nanosec``: as
    sent, checked by ``stamps.to_nanoseconds``), the names, and the three arrays, each a
    writable contiguous float64 array of its own (an empty one: not measured)."""
    sec: int
    nanosec: int
    name: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


def _aligned(offset: int, size: int) -> int:
    """``offset`` moved up to a multiple of ``size`` counted from the header's end."""
    return HEADER + (offset - HEADER + size - 1) // size * size


def _malformed(detail: str) -> InputRejected:
    return InputRejected("invalid_value", f"joint_states: not a JointState message ({detail})")


def joint_state_arrays(msg: JointState) -> JointStateArrays:
    """The arrays of a JointState message object (a typed subscription's, a test's)."""
    stamp = msg.header.stamp
    return JointStateArrays(stamp.sec, stamp.nanosec, tuple(msg.name),
                            *(np.array(values, dtype=float)
                              for values in (msg.position, msg.velocity, msg.effort)))


class JointStateReader:
    """Reads a JointState's CDR bytes without building a message: the stamp and the arrays
    from their offsets, the names from a cache of the name blocks seen (compared byte for
    byte where the block starts: a message with the same names as an earlier one creates
    no string). A message whose block is not cached is read by rclpy, and its block
    remembered. A count of names above ``MAX_JOINT_NAMES`` is ``too_many_names`` before any
    name is read (little-endian CDR); bytes that are not a JointState are
    ``invalid_value``."""

    def __init__(self) -> None:
        self._blocks: list[tuple[bytes, tuple[str, ...]]] = []   # newest first
        #: the names block of the message read last (None: not little-endian CDR, or too
        #: many names to remember)
        self.last_block: Optional[bytes] = None

    def __call__(self, data: bytes) -> JointStateArrays:
        self.last_block = None
        if data[:2] != LITTLE_ENDIAN_CDR:
            return joint_state_arrays(self._deserialize(data))
        size = len(data)
        if size < HEADER + 16:
            raise _malformed(f"{size} bytes")
        sec, nanosec = _STAMP.unpack_from(data, HEADER)
        frame_length = _U32.unpack_from(data, HEADER + 8)[0]
        at = _aligned(HEADER + 12 + frame_length, 4)
        if at + 4 > size:
            raise _malformed("frame_id beyond the end")
        count = _U32.unpack_from(data, at)[0]
        if count > MAX_JOINT_NAMES:
            raise InputRejected("too_many_names", f"{count} names, expected at most "
                                                  f"{MAX_JOINT_NAMES}")
        # a block: the count and the strings (a block cannot then be the start of another)
        names = self._cached_names(data, at)
        if names is None:
            arrays = joint_state_arrays(self._deserialize(data))
            if count <= MAX_CACHED_BLOCK_NAMES:
                self._remember(data[at:self._skip_names(data, at + 4, count)], arrays.name)
                self.last_block = self._blocks[0][0]
            return arrays
        self.last_block = self._blocks[0][0]
        at += len(self.last_block)
        position, at = self._doubles(data, at)
        velocity, at = self._doubles(data, at)
        effort, _ = self._doubles(data, at)
        return JointStateArrays(sec, nanosec, names, position, velocity, effort)

    def touch(self, block: bytes, names: tuple[str, ...]) -> None:
        """A message of ``block`` read elsewhere (the steady path's compiled call): the cache
        left as reading it here would leave it (the block first, remembered again if it was
        dropped), so that what this reader says of the next message does not depend on
        where this one was read."""
        blocks = self._blocks
        if blocks and blocks[0][0] == block:      # (the same object, most often)
            return
        for k, (known, _) in enumerate(blocks):
            if known == block:
                blocks.insert(0, blocks.pop(k))
                return
        self._remember(block, names)

    def _cached_names(self, data: bytes, at: int) -> Optional[tuple[str, ...]]:
        """The names of a block seen before that ``data`` holds at ``at`` (it moved first)."""
        for k, (block, names) in enumerate(self._blocks):
            if data.startswith(block, at):
                if k:
                    self._blocks.insert(0, self._blocks.pop(k))
                return names
        return None

    def _remember(self, block: bytes, names: tuple[str, ...]) -> None:
        self._blocks.insert(0, (block, names))
        del self._blocks[MAX_CACHED_NAME_BLOCKS:]

    @staticmethod
    def _skip_names(data: bytes, at: int, count: int) -> int:
        """Where the ``count`` strings from ``at`` end (each bounds-checked)."""
        size = len(data)
        for _ in range(count):
            at = _aligned(at, 4)
            if at + 4 > size:
                raise _malformed("names beyond the end")
            at += 4 + _U32.unpack_from(data, at)[0]
            if at > size:
                raise _malformed("a name beyond the end")
        return at

    @staticmethod
    def _doubles(data: bytes, at: int) -> tuple[np.ndarray, int]:
        """A float64 sequence at ``at`` and the offset after it."""
        at = _aligned(at, 4)
        if at + 4 > len(data):
            raise _malformed("an array beyond the end")
        count = _U32.unpack_from(data, at)[0]
        at += 4
        if not count:
            return np.empty(0), at
        at = _aligned(at, 8)
        end = at + 8 * count
        if end > len(data):
            raise _malformed(f"{count} values beyond the end")
        return np.frombuffer(data, "<f8", count, at).astype(float), end

    @staticmethod
    def _deserialize(data: bytes) -> JointState:
        try:
            return deserialize_message(data, JointState)
        except Exception as exc:         # the rmw's own error type differs from distro to distro
            raise _malformed(type(exc).__name__) from None


class _Writer:
    """Builds CDR bytes field by field (little-endian, padding zero)."""

    def __init__(self) -> None:
        self.buffer = bytearray(LITTLE_ENDIAN_CDR + b"\x00\x00")

    def align(self, size: int) -> None:
        self.buffer.extend(bytes(_aligned(len(self.buffer), size) - len(self.buffer)))

    def uint32(self, value: int) -> int:
        """Writes ``value``; returns its offset."""
        self.align(4)
        self.buffer.extend(_U32.pack(value))
        return len(self.buffer) - 4

    def string(self, text: str) -> None:
        encoded = text.encode()
        self.uint32(len(encoded) + 1)
        self.buffer.extend(encoded + b"\x00")

    def doubles(self, count: int) -> int:
        """A float64 sequence of ``count`` zeros; returns where its values start."""
        self.uint32(count)
        if count:
            self.align(8)
        start = len(self.buffer)
        self.buffer.extend(bytes(8 * count))
        return start


class Float64ArrayWriter:
    """std_msgs/Float64MultiArray of ``size`` values (no layout), written in place."""

    def __init__(self, size: int) -> None:
        writer = _Writer()
        writer.uint32(0)                  # layout.dim: empty
        writer.uint32(0)                  # layout.data_offset
        self._buffer = writer.buffer
        self._values = np.frombuffer(self._buffer, "<f8", size, writer.doubles(size))

    def __call__(self, values: np.ndarray) -> bytes:
        """The message's bytes, to publish (new ``bytes``: the buffer is reused)."""
        self._values[:] = values
        return bytes(self._buffer)


class JointStateWriter:
    """sensor_msgs/JointState with fixed ``names`` and ``frame_id``, written in place: the
    arrays named in ``fields`` (of "position", "velocity", "effort") as long as the names,
    the others empty."""

    def __init__(self, names: Sequence[str], fields: Sequence[str], frame_id: str = "") -> None:
        writer = _Writer()
        writer.buffer.extend(bytes(8))    # header.stamp, written per message
        writer.string(frame_id)
        writer.uint32(len(names))
        for name in names:
            writer.string(name)
        arrays = {field: writer.doubles(len(names) if field in fields else 0)
                  for field in ("position", "velocity", "effort")}
        self._buffer = writer.buffer
        self._arrays = [np.frombuffer(self._buffer, "<f8", len(names), arrays[field])
                        for field in fields]

    def __call__(self, stamp_ns: int, *arrays: np.ndarray) -> bytes:
        """The message stamped ``stamp_ns`` with one array for each of ``fields``, in its
        order (new ``bytes``: the buffer is reused)."""
        _STAMP.pack_into(self._buffer, HEADER, *divmod(stamp_ns, 1_000_000_000))
        for out, values in zip(self._arrays, arrays, strict=True):
            out[:] = values
        return bytes(self._buffer)


class WrenchWriter:
    """geometry_msgs/WrenchStamped with a fixed ``frame_id``, written in place."""

    def __init__(self, frame_id: str) -> None:
        writer = _Writer()
        writer.buffer.extend(bytes(8))    # header.stamp, written per message
        writer.string(frame_id)
        writer.align(8)
        start = len(writer.buffer)
        writer.buffer.extend(bytes(48))   # force x y z, torque x y z
        self._buffer = writer.buffer
        self._values = np.frombuffer(self._buffer, "<f8", 6, start)

    def __call__(self, stamp_ns: int, force: np.ndarray, torque: np.ndarray) -> bytes:
        _STAMP.pack_into(self._buffer, HEADER, *divmod(stamp_ns, 1_000_000_000))
        self._values[:3] = force
        self._values[3:] = torque
        return bytes(self._buffer)


class TFWriter:
    """tf2_msgs/TFMessage of fixed (parent, child) frame pairs, written in place: every
    transform with one stamp, translations (n, 3) and quaternions (n, 4, x y z w)."""

    def __init__(self, parents: Sequence[str], children: Sequence[str]) -> None:
        writer = _Writer()
        writer.uint32(len(parents))
        stamps, values = [], []
        for parent, child in zip(parents, children, strict=True):
            writer.align(4)
            stamps.append(len(writer.buffer))
            writer.buffer.extend(bytes(8))
            writer.string(parent)
            writer.string(child)
            writer.align(8)
            values.append(len(writer.buffer))
            writer.buffer.extend(bytes(56))  # translation x y z, rotation x y z w
        self._buffer = writer.buffer
        # every double of the message lies on one grid, 8 bytes from the header's end; the
        # stamps' 32-bit words on one 4 bytes from it
        self._values = np.frombuffer(self._buffer, "<f8", (len(self._buffer) - HEADER) // 8,
                                     HEADER)
        self._value_index = (np.array(values, dtype=np.int64)[:, None] - HEADER) // 8 \
            + np.arange(7)
        self._words = np.frombuffer(self._buffer, "<u4", (len(self._buffer) - HEADER) // 4,
                                    HEADER)
        self._stamp_index = (np.array(stamps, dtype=np.int64) - HEADER) // 4

    def __call__(self, stamp_ns: int, translations: np.ndarray,
                 quaternions: np.ndarray) -> bytes:
        sec, nanosec = divmod(stamp_ns, 1_000_000_000)
        self._words[self._stamp_index] = sec & 0xFFFFFFFF          # int32, two's complement
        self._words[self._stamp_index + 1] = nanosec
        self._values[self._value_index[:, :3]] = translations
        self._values[self._value_index[:, 3:]] = quaternions
        return bytes(self._buffer)
