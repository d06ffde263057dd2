"""A rosbag2 folder's ``metadata.yaml``, checked field by field.

rosbag2 (``rosbag2_storage/yaml.hpp``) writes one mapping, ``rosbag2_bagfile_information``:
``version`` (1 to 9 today; 3 added ``compression_format``/``compression_mode``, 5 ``files``,
6 ``custom_data``, 7 ``type_description_hash``, 8 ``ros_distro``, 9 the QoS as a list),
``storage_identifier`` (``sqlite3`` or ``mcap``), ``relative_file_paths`` (the split files,
in recording order, relative to the folder), ``duration``, ``starting_time``,
``message_count`` and ``topics_with_message_count`` (``topic_metadata``: ``name``, ``type``,
``serialization_format``, ``offered_qos_profiles``; and ``message_count``).
Compression (``rosbag2_compression``): ``compression_format`` ``zstd``, ``compression_mode``
``FILE`` (each split file a whole zstd file, listed with its ``.zstd`` suffix) or ``MESSAGE``
(each message's bytes a zstd frame); rosbag2 writes the mode in capitals, rosbags in lower
case: both are read.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from ..documents import DocumentError, bounded, decode_text, parse_yaml, read_bytes

METADATA = "metadata.yaml"
ROOT_KEY = "rosbag2_bagfile_information"
#: rosbag2_storage/bag_metadata.hpp's version today (9, Kilted); older ones are read alike.
VERSIONS = range(1, 10)
STORAGES = ("mcap", "sqlite3")
COMPRESSION_FORMATS = ("", "zstd")
#: compression_mode as rosbag2 writes it ("" or NONE: none), read case-insensitively
COMPRESSION_MODES = ("", "none", "file", "message")
#: Largest metadata.yaml read (a real one is a few kB per topic).
MAX_METADATA_BYTES = 4 * 1024 * 1024


class RecordingError(DocumentError):
    """A recording that cannot be read: one line naming the folder and file, what is wrong
    and what was expected."""


@dataclass(frozen=True)
class TopicInfo:
    """One entry of ``topics_with_message_count``."""

    name: str
    type: str
    serialization_format: str
    message_count: int


@dataclass(frozen=True)
class BagMetadata:
    """The fields of ``rosbag2_bagfile_information`` the reader uses."""

    version: int
    storage: str
    files: tuple[Path, ...]
    compression_format: str
    compression_mode: str            # "", "file" or "message"
    topics: tuple[TopicInfo, ...]


def _field(where: str, mapping: Mapping, key: str, kind: type, expected: str,
           default: Any = None) -> Any:
    """``mapping[key]`` of ``kind``, or ``default`` when absent and a default is given."""
    if key not in mapping and default is not None:
        return default
    value = mapping.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        shown = "missing" if key not in mapping else bounded(repr(value), 80)
        raise RecordingError(f"{where}: field {key} is {shown}, expected {expected}")
    return value


def _file_path(where: str, folder: Path, name: Any) -> Path:
    """A split file inside ``folder``: relative, no ``..``. Old rosbag2 wrote the folder's
    name in front (``bag/bag_0.db3``): found in the folder alike."""
    if not isinstance(name, str) or not name:
        raise RecordingError(f"{where}: relative_file_paths entry {bounded(repr(name), 80)}, "
                             "expected a file name relative to the folder")
    if "\x00" in name:
        raise RecordingError(f"{where}: relative_file_paths entry {bounded(repr(name), 80)} "
                             "holds a NUL byte, expected a file name")
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts:
        raise RecordingError(f"{where}: relative_file_paths entry {bounded(name, 120)} leaves "
                             "the folder, expected a file name relative to it")
    if len(rel.parts) > 1 and rel.parts[0] == folder.name \
            and not (folder / rel).exists():
        rel = PurePosixPath(*rel.parts[1:])
    for k in range(1, len(rel.parts)):      # a linked folder inside could lead anywhere
        if (folder / PurePosixPath(*rel.parts[:k])).is_symlink():
            raise RecordingError(f"{where}: relative_file_paths entry {bounded(name, 120)} "
                                 "passes through a symbolic link, expected a file inside the "
                                 "folder")
    return folder / rel


def _topic(where: str, k: int, entry: Any) -> TopicInfo:
    here = f"{where}: topics_with_message_count[{k}]"
    if not isinstance(entry, dict):
        raise RecordingError(f"{here} is {bounded(repr(entry), 80)}, expected a mapping with "
                             "topic_metadata and message_count")
    meta = _field(here, entry, "topic_metadata", dict,
                  "a mapping (name, type, serialization_format)")
    count = _field(here, entry, "message_count", int, "an integer >= 0")
    if count < 0:
        raise RecordingError(f"{here}: message_count is {count}, expected an integer >= 0")
    return TopicInfo(_field(here, meta, "name", str, "a topic name such as /joint_states"),
                     _field(here, meta, "type", str, "a type such as sensor_msgs/msg/JointState"),
                     _field(here, meta, "serialization_format", str, "cdr"), count)


def read_metadata(folder: Path) -> BagMetadata:
    """``folder/metadata.yaml`` read through the package's guard and checked."""
    path = folder / METADATA
    where = str(path)
    if not path.exists() and not path.is_symlink():
        raise RecordingError(f"{folder}: a folder without {METADATA}, expected a rosbag2 "
                             "folder (a recording cut short by a crash has none: `ros2 bag "
                             "reindex` rebuilds it)")
    data = read_bytes(path, "rosbag2 metadata", MAX_METADATA_BYTES, error=RecordingError)
    document = parse_yaml(decode_text(data, path, "rosbag2 metadata", RecordingError), where,
                          RecordingError)
    if not isinstance(document, dict) or not isinstance(document.get(ROOT_KEY), dict):
        raise RecordingError(f"{where}: not rosbag2 metadata, expected a mapping with the key "
                             f"{ROOT_KEY}")
    info = document[ROOT_KEY]
    version = _field(where, info, "version", int, f"an integer {VERSIONS[0]} to {VERSIONS[-1]}")
    if version not in VERSIONS:
        raise RecordingError(f"{where}: field version is {version}, expected "
                             f"{VERSIONS[0]} to {VERSIONS[-1]} (rosbag2's metadata versions)")
    storage = _field(where, info, "storage_identifier", str, " or ".join(STORAGES))
    if storage not in STORAGES:
        raise RecordingError(f"{where}: field storage_identifier is "
                             f"{bounded(storage, 80)}, expected {' or '.join(STORAGES)}")
    names = _field(where, info, "relative_file_paths", list, "a list of file names")
    if not names:
        raise RecordingError(f"{where}: field relative_file_paths is empty, expected the "
                             "recording's files")
    fmt = _field(where, info, "compression_format", str, "'' or zstd", "")
    mode = _field(where, info, "compression_mode", str, "'', FILE or MESSAGE", "").lower()
    if fmt not in COMPRESSION_FORMATS:
        raise RecordingError(f"{where}: field compression_format is {bounded(fmt, 80)}, "
                             "expected '' or zstd")
    if mode not in COMPRESSION_MODES or (fmt == "zstd") != (mode in ("file", "message")):
        raise RecordingError(f"{where}: field compression_mode is {bounded(mode, 80)} with "
                             f"compression_format {fmt!r}, expected FILE or MESSAGE with "
                             "zstd, '' or NONE without")
    entries = _field(where, info, "topics_with_message_count", list, "a list of topics")
    topics = tuple(_topic(where, k, e) for k, e in enumerate(entries))
    for t in topics:
        other = next(u for u in topics if u.name == t.name)
        if other.type != t.type:
            raise RecordingError(f"{where}: topic {bounded(t.name, 120)} listed as "
                                 f"{bounded(other.type, 80)} and {bounded(t.type, 80)}, "
                                 "expected one type per topic")
    files = tuple(_file_path(where, folder, n) for n in names)
    seen: set[Path] = set()
    for f in files:
        if f in seen:
            raise RecordingError(f"{where}: relative_file_paths lists {bounded(f.name, 120)} "
                                 "twice, expected each split file once")
        seen.add(f)
    return BagMetadata(version, storage, files, fmt, mode if mode != "none" else "", topics)
