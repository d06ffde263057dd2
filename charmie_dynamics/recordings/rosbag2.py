"""A recording of the robot's topics as ``ros2 bag record`` leaves it, opened and read.

Accepted: a rosbag2 folder (``metadata.yaml`` and its split files, storage ``mcap`` or
``sqlite3``, optionally zstd-compressed by file or by message: metadata.py), a single
``.mcap`` file or a single ``.db3`` file without metadata; recognised by content (the magic
bytes), not by suffix. The whole recording is read and checked when it is opened (every
file's topics and types against metadata.yaml's ``topics_with_message_count``, every topic's
message count against its ``message_count``), so a truncated or mismatched split file is
refused before any message is handed out; messages are decoded as they are read.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..documents import bounded
from .definitions import decoder
from .metadata import METADATA, RecordingError, read_metadata
from .storage import (MAX_RECORDING_BYTES, Budget, StorageFile, read_guarded, read_storage,
                      zstd_decompress)


@dataclass(frozen=True)
class RecordedMessage:
    """One decoded message: ``message`` has the ROS message's fields as attributes
    (``message.header.stamp.sec``); ``log_time`` is the recorder's receive time, ns."""

    topic: str
    log_time: int
    message: Any


@dataclass(frozen=True)
class Recording:
    """An opened recording. ``files``: its split files in metadata.yaml's order; ``topics``:
    topic name -> type (``sensor_msgs/msg/JointState``)."""

    path: str
    storage: str                          # "mcap" or "sqlite3"
    files: tuple[str, ...]
    topics: dict[str, str]
    compression_mode: str = ""            # "", "file" or "message" (zstd)
    max_bytes: int = MAX_RECORDING_BYTES
    _parts: tuple[StorageFile, ...] = field(default=(), repr=False, compare=False)

    def _listing(self) -> str:
        return bounded(", ".join(f"{t} ({ty})" for t, ty in sorted(self.topics.items())))

    def require(self, topic: str, type_: str) -> None:
        """Refuse, in one line, a recording without ``topic`` of type ``type_``."""
        if topic not in self.topics:
            raise RecordingError(f"{self.path}: no topic {bounded(topic, 80)}; it has "
                                 f"{self._listing() or 'no topics'}")
        if self.topics[topic] != type_:
            raise RecordingError(f"{self.path}: topic {bounded(topic, 80)} is "
                                 f"{bounded(self.topics[topic], 80)}, expected {type_}")

    def messages(self, topics: Sequence[str]) -> Iterator[RecordedMessage]:
        """The messages of ``topics``, decoded, in log_time order over all split files
        (ties keep the files' order, then each file's)."""
        wanted = set(topics)
        for topic in sorted(wanted):
            if topic not in self.topics:
                self.require(topic, "")
        decoders = {}
        for k, part in enumerate(self._parts):
            for topic in wanted & part.topics.keys():
                if part.formats[topic] != "cdr":
                    raise RecordingError(f"{part.path}: topic {bounded(topic, 80)} is "
                                         f"serialized as {bounded(part.formats[topic], 40)}, "
                                         "expected cdr")
                type_ = part.topics[topic]
                decoders[k, topic] = decoder(part.path, type_, part.definitions.get(type_),
                                             len(decoders) + 1)
        return self._decoded(wanted, decoders)

    def _decoded(self, wanted: set[str], decoders: dict) -> Iterator[RecordedMessage]:
        budget = Budget(self.max_bytes)
        # each file's rows sorted by log_time (stable), then merged: (time, file, row) keys
        streams = [sorted(((t, k, n, topic, data) for n, (t, topic, data)
                           in enumerate(part.rows) if topic in wanted),
                          key=lambda row: row[0])
                   for k, part in enumerate(self._parts)]
        for t, k, n, topic, data in heapq.merge(*streams, key=lambda row: row[:3]):
            where = self._parts[k].path
            if self.compression_mode == "message":
                data = zstd_decompress(f"{where}: {topic} message {n}", data, budget)
            try:
                message = decoders[k, topic](data)
            except Exception as exc:   # the CDR decoder's errors have no common base
                raise RecordingError(f"{where}: {bounded(topic, 80)} message {n} (log_time "
                                     f"{t}) does not decode as {self.topics[topic]} "
                                     f"({type(exc).__name__}: {bounded(exc, 120)})") from None
            yield RecordedMessage(topic, t, message)


def _open_folder(folder: Path, max_bytes: int) -> Recording:
    meta = read_metadata(folder)
    where = str(folder / METADATA)
    budget = Budget(max_bytes)
    parts = []
    for path in meta.files:
        data = read_guarded(path, "recording file", budget, inside=True)
        parts.append(read_storage(str(path), data, budget, meta.storage))
    listed = {t.name: t for t in meta.topics}
    counts = dict.fromkeys(listed, 0)
    for part in parts:
        for topic, type_ in part.topics.items():
            if topic not in listed:
                raise RecordingError(f"{part.path}: topic {bounded(topic, 80)} "
                                     f"({bounded(type_, 80)}) is not in {where}, expected "
                                     "the topics it lists")
            if listed[topic].type != type_:
                raise RecordingError(f"{part.path}: topic {bounded(topic, 80)} is "
                                     f"{bounded(type_, 80)}, {where} says "
                                     f"{bounded(listed[topic].type, 80)}")
            if listed[topic].serialization_format != part.formats[topic]:
                raise RecordingError(f"{part.path}: topic {bounded(topic, 80)} is serialized "
                                     f"as {bounded(part.formats[topic], 40)}, {where} says "
                                     f"{bounded(listed[topic].serialization_format, 40)}")
        for _, topic, _ in part.rows:
            counts[topic] += 1
    for name, info in listed.items():
        if counts[name] != info.message_count:
            raise RecordingError(f"{folder}: topic {bounded(name, 80)} has {counts[name]} "
                                 f"messages in the files, {where} says {info.message_count} "
                                 "(a truncated or missing split file?)")
    return Recording(str(folder), meta.storage, tuple(str(p) for p in meta.files),
                     {t.name: t.type for t in meta.topics}, meta.compression_mode, max_bytes,
                     tuple(parts))


def open_recording(path: str | Path, max_bytes: int = MAX_RECORDING_BYTES) -> Recording:
    """A rosbag2 folder, a ``.mcap`` or a ``.db3`` file (module docstring), read whole
    within ``max_bytes`` (bytes read and decompressed, over all files); raises
    :class:`RecordingError`."""
    path = Path(path)
    if path.is_dir():
        return _open_folder(path, max_bytes)
    budget = Budget(max_bytes)
    data = read_guarded(path, "recording", budget, inside=False)
    part = read_storage(str(path), data, budget, None)
    return Recording(str(path), part.storage, (str(path),), dict(part.topics), "", max_bytes,
                     (part,))
