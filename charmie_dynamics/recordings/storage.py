"""One split file of a recording read whole: its topics, message definitions and messages
(raw CDR bytes), from rosbag2's two storages.

- sqlite3 (``rosbag2_storage_sqlite3``): tables ``topics(id, name, type,
  serialization_format, offered_qos_profiles[, type_description_hash])``,
  ``messages(id, topic_id, timestamp, data)`` and, from schema version 4 (Iron), the
  ``message_definitions(topic_type, encoding, encoded_message_definition,
  type_description_hash)``; opened in memory from the guarded bytes (``deserialize``), so
  the file is read once, through the guard, like every other.
- MCAP (``rosbag2_storage_mcap``): Schema (``ros2msg``/``ros2idl``), Channel and Message
  records, read as a stream; its chunks are decompressed here under the byte budget (a
  chunk declares its own size, which is not trusted).

Every file is read through :func:`documents.read_bytes` (regular files only; a symbolic link
is refused before it is opened) and every decompression is capped by the :class:`Budget`.
"""
from __future__ import annotations

import dataclasses
import io
import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..documents import bounded, read_bytes
from .metadata import RecordingError

MCAP_MAGIC = b"\x89MCAP0\r\n"
SQLITE_MAGIC = b"SQLite format 3\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: Largest recording read: 256 MiB (a 20 s, 1 kHz MCAP log of CHARMIE is about 3 MiB).
MAX_RECORDING_BYTES = 256 * 1024 * 1024
#: Bytes each message counts in the budget beside its data: what holding it costs (a tuple,
#: a bytes object, its sort key), so that millions of empty messages stop at the cap too
MESSAGE_COST = 200
_READ = 1 << 20


def lazy_import(path: str, what: str) -> Any:
    """The optional packages (``what``: zstandard, mcap_writer, or mcap: the reader's
    names), imported on first use, with the pip command when missing: they are not on ROS 2
    Humble's Python (setup.py), where the rest of the package must keep working."""
    try:
        if what == "zstandard":
            import zstandard
            return zstandard
        if what == "mcap_writer":
            from mcap_ros2.writer import Writer
            return Writer
        from mcap.records import Chunk, Schema
        from mcap.stream_reader import StreamReader, breakup_chunk
        from mcap_ros2.decoder import DecoderFactory
        return Chunk, Schema, StreamReader, breakup_chunk, DecoderFactory
    except ImportError as exc:
        package = "'zstandard'" if what == "zstandard" else \
            "'mcap>=1.1' 'mcap-ros2-support>=0.5'"
        raise RecordingError(f"{path}: reading it needs {exc.name or what} ({exc}): "
                             f"python3 -m pip install {package}") from None


class Budget:
    """Bytes a recording may hold, read or decompressed, over all its files: a zstd or lz4
    bomb stops at the cap instead of filling the memory."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes, self.left = max_bytes, max_bytes

    def take(self, where: str, n: int) -> None:
        if n > self.left:
            raise RecordingError(f"{where}: more than {self.max_bytes:,} bytes read or "
                                 f"decompressed in all, expected at most {self.max_bytes:,} "
                                 "(the recordings' read limit; each message counts "
                                 f"{MESSAGE_COST} bytes beside its data): trim or split the "
                                 "recording")
        self.left -= n


def zstd_decompress(where: str, data: bytes, budget: Budget) -> bytes:
    """One or more zstd frames decompressed by streaming, never beyond the budget."""
    zstandard = lazy_import(where, "zstandard")
    out = io.BytesIO()
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data),
                                                            read_across_frames=True)
        while True:
            piece = reader.read(min(_READ, budget.left + 1))
            if not piece:
                break
            budget.take(where, len(piece))
            out.write(piece)
    except zstandard.ZstdError as exc:
        raise RecordingError(f"{where}: corrupt zstd data ({bounded(exc, 120)}), expected "
                             "the file as rosbag2's zstd compression writes it") from None
    return out.getvalue()


def _lz4_decompress(where: str, data: bytes, budget: Budget) -> bytes:
    try:
        import lz4.frame
    except ImportError as exc:
        raise RecordingError(f"{where}: an lz4 MCAP chunk needs lz4 ({exc}): "
                             "python3 -m pip install lz4") from None
    decompressor = lz4.frame.LZ4FrameDecompressor()
    out = io.BytesIO()
    pending = data
    while not decompressor.eof:
        piece = decompressor.decompress(pending, max_length=min(_READ, budget.left + 1))
        pending = b""
        if not piece:
            if decompressor.needs_input:
                raise RecordingError(f"{where}: truncated lz4 chunk, expected a whole frame")
            continue
        budget.take(where, len(piece))
        out.write(piece)
    return out.getvalue()


@dataclass
class StorageFile:
    """What one split file holds: topic -> type, topic -> serialization format, type ->
    (definition encoding, text) where the file stores one, and its messages as (log_time ns,
    topic, raw bytes) in the file's order."""

    path: str
    storage: str
    topics: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)
    definitions: dict[str, tuple[str, str]] = field(default_factory=dict)
    rows: list[tuple[int, str, bytes]] = field(default_factory=list)


def read_guarded(path: Path, what: str, budget: Budget, inside: bool) -> bytes:
    """The file's bytes through the package's guard, counted in the budget. ``inside``: a
    file named by metadata.yaml, where a symbolic link is refused (it may lead anywhere)."""
    where = str(path)
    try:
        info = os.lstat(path)
    except (OSError, ValueError) as exc:       # ValueError: a NUL byte in the name
        raise RecordingError(f"{where}: cannot read the {what}: {exc.strerror or exc}, "
                             "expected the file metadata.yaml lists") from None
    if inside and stat.S_ISLNK(info.st_mode):
        raise RecordingError(f"{where}: the {what} is a symbolic link, expected a regular file "
                             "inside the recording's folder")
    data = read_bytes(path, what, budget.left, error=RecordingError)
    budget.take(where, len(data))
    wal = Path(f"{path}-wal")
    if data.startswith(SQLITE_MAGIC) and wal.exists() and wal.stat().st_size:
        # messages not yet copied into the file: reading without them would be a silent cut
        raise RecordingError(f"{wal}: a write-ahead log beside {where} (a recorder stopped "
                             "before it closed the bag), expected a closed bag: open it once "
                             "with sqlite3 (it checkpoints the log), then read it again")
    return data


def _value(where: str, value: Any, kind: type, what: str) -> Any:
    if not isinstance(value, kind):
        raise RecordingError(f"{where}: {what} is {bounded(repr(value), 80)}, expected "
                             f"{kind.__name__}")
    return value


def read_sqlite(where: str, data: bytes, budget: Budget) -> StorageFile:
    """A rosbag2 sqlite3 file from its bytes (module docstring)."""
    out = StorageFile(where, "sqlite3")
    if data[18:20] == b"\x02\x02":
        # rosbag2 records in WAL mode (header bytes 18-19); an in-memory database cannot
        # open a WAL file, and a cleanly closed bag has no WAL left: read it as a rollback one
        data = data[:18] + b"\x01\x01" + data[20:]
    db = sqlite3.connect(":memory:")
    try:
        db.deserialize(data)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"topics", "messages"} <= tables:
            raise RecordingError(f"{where}: an SQLite file without the tables topics and "
                                 "messages, expected a rosbag2 sqlite3 bag")
        ids = {}
        for tid, name, type_, fmt in db.execute(
                "SELECT id, name, type, serialization_format FROM topics ORDER BY id"):
            name = _value(where, name, str, "a topic name")
            ids[tid] = name
            out.topics[name] = _value(where, type_, str, f"the type of {bounded(name, 80)}")
            out.formats[name] = _value(where, fmt, str,
                                       f"the serialization_format of {bounded(name, 80)}")
        if "message_definitions" in tables:
            for type_, encoding, text in db.execute(
                    "SELECT topic_type, encoding, encoded_message_definition "
                    "FROM message_definitions"):
                if isinstance(type_, str) and isinstance(encoding, str) \
                        and isinstance(text, str) and text:
                    out.definitions[type_] = (encoding, text)
        for tid, stamp, blob in db.execute(
                "SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id"):
            if tid not in ids:
                raise RecordingError(f"{where}: a message of topic id {bounded(tid, 40)}, "
                                     "expected an id of the topics table")
            budget.take(where, MESSAGE_COST)
            out.rows.append((_value(where, stamp, int, "a message timestamp"), ids[tid],
                             bytes(_value(where, blob, bytes, "a message's data"))))
    except sqlite3.Error as exc:
        raise RecordingError(f"{where}: not a readable rosbag2 sqlite3 file "
                             f"({type(exc).__name__}: {bounded(exc, 120)}), expected a whole "
                             ".db3 file as rosbag2 writes it") from None
    finally:
        db.close()
    return out


def read_mcap(where: str, data: bytes, budget: Budget) -> StorageFile:
    """A rosbag2 MCAP file from its bytes (module docstring)."""
    Chunk, _, StreamReader, breakup_chunk, _ = lazy_import(where, "mcap")
    out = StorageFile(where, "mcap")
    schemas: dict[int, Any] = {}
    channels: dict[int, str] = {}

    def records(stream) -> Any:
        for record in stream:
            if isinstance(record, Chunk):
                raw = record.data
                if record.compression == "zstd":
                    raw = zstd_decompress(where, raw, budget)
                elif record.compression == "lz4":
                    raw = _lz4_decompress(where, raw, budget)
                elif record.compression:
                    raise RecordingError(f"{where}: chunk compression "
                                         f"{bounded(record.compression, 40)}, expected zstd, "
                                         "lz4 or none")
                yield from breakup_chunk(dataclasses.replace(
                    record, compression="", data=raw, uncompressed_size=len(raw)),
                    validate_crc=True)
            else:
                yield record

    try:
        stream = StreamReader(io.BytesIO(data), emit_chunks=True, validate_crcs=True).records
        for record in records(stream):
            kind = type(record).__name__
            if kind == "Schema":
                schemas[record.id] = record
            elif kind == "Channel":
                schema = schemas.get(record.schema_id)
                if schema is None:
                    raise RecordingError(f"{where}: channel {bounded(record.topic, 80)} "
                                         f"names schema {record.schema_id}, expected a schema "
                                         "recorded before it")
                channels[record.id] = record.topic
                out.topics[record.topic] = schema.name
                out.formats[record.topic] = record.message_encoding
                if schema.data:
                    definition = (schema.encoding, schema.data.decode("utf-8"))
                    if out.definitions.setdefault(schema.name, definition) != definition:
                        # messages are decoded by type name: one name, one definition
                        raise RecordingError(f"{where}: two definitions of "
                                             f"{bounded(schema.name, 80)} (schemas), expected "
                                             "one per type, as rosbag2 writes")
            elif kind == "Message":
                if record.channel_id not in channels:
                    raise RecordingError(f"{where}: a message on channel {record.channel_id}, "
                                         "expected a channel recorded before it")
                budget.take(where, MESSAGE_COST)
                out.rows.append((record.log_time, channels[record.channel_id],
                                 bytes(record.data)))
    except RecordingError:
        raise
    except Exception as exc:           # the mcap reader's errors have no common base
        raise RecordingError(f"{where}: not a readable MCAP file ({type(exc).__name__}: "
                             f"{bounded(exc, 120)}), expected a whole .mcap file as rosbag2 "
                             "writes it") from None
    return out


def read_storage(where: str, data: bytes, budget: Budget, storage: str | None) -> StorageFile:
    """A split file by its magic bytes (a zstd file decompressed first); ``storage``, when
    known from metadata.yaml, must be what the bytes are."""
    if data.startswith(ZSTD_MAGIC):
        data = zstd_decompress(where, data, budget)
    found = "mcap" if data.startswith(MCAP_MAGIC) else \
        "sqlite3" if data.startswith(SQLITE_MAGIC) else None
    if found is None or (storage is not None and found != storage):
        expected = storage or "mcap or sqlite3"
        raise RecordingError(f"{where}: {'a ' + found + ' file' if found else 'unknown bytes'} "
                             f"(starts {bounded(repr(data[:16]), 60)}), expected a {expected} "
                             "file (its magic bytes)")
    return (read_mcap if found == "mcap" else read_sqlite)(where, data, budget)
