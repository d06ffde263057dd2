"""A recording written as ``ros2 bag record -s mcap`` lays it out: ``FOLDER/FOLDER_0.mcap``
(profile ``ros2``, ``ros2msg`` schemas, CDR messages; mcap_ros2's writer) and
``FOLDER/metadata.yaml`` (``rosbag2_bagfile_information`` version 8: storage_identifier,
relative_file_paths, duration, starting_time, message_count, topics_with_message_count with
topic_metadata name/type/serialization_format ``cdr``/offered_qos_profiles ``''``/
type_description_hash ``''``, compression_format and compression_mode ``''``, files,
custom_data, ros_distro). Written into a hidden sibling folder and renamed into place:
nothing partial is left on failure."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from ..documents import bounded
from .metadata import METADATA, ROOT_KEY, RecordingError
from .storage import lazy_import

#: The metadata version written: rosbag2 Jazzy's (offered_qos_profiles as a string).
VERSION = 8


def _metadata(name: str, topics: Mapping[str, tuple[str, str]], counts: dict[str, int],
              first: int, last: int) -> dict:
    total = sum(counts.values())
    start, duration = (first, last - first) if total else (0, 0)
    return {ROOT_KEY: {
        "version": VERSION, "storage_identifier": "mcap",
        "duration": {"nanoseconds": duration},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": total,
        "topics_with_message_count": [
            {"topic_metadata": {"name": topic, "type": type_, "serialization_format": "cdr",
                                "offered_qos_profiles": "", "type_description_hash": ""},
             "message_count": counts[topic]} for topic, (type_, _) in topics.items()],
        "compression_format": "", "compression_mode": "",
        "relative_file_paths": [name],
        "files": [{"path": name, "starting_time": {"nanoseconds_since_epoch": start},
                   "duration": {"nanoseconds": duration}, "message_count": total}],
        "custom_data": None, "ros_distro": ""}}


def write_mcap_file(path: Path, topics: Mapping[str, tuple[str, str]],
                    messages: Iterable[tuple[str, int, Mapping[str, Any]]]
                    ) -> tuple[dict[str, int], int, int]:
    """Write ``messages`` (:func:`write_recording`) into the one MCAP file ``path``; returns
    the messages per topic and the first and last log_time (0, 0 without messages). Raises
    :class:`RecordingError` for a message of another topic, a bad log_time or fields that do
    not encode as its type."""
    name = path.name
    Writer = lazy_import(name, "mcap_writer")
    counts = dict.fromkeys(topics, 0)
    first, last = None, None
    with open(path, "wb") as f:
        writer = Writer(f)
        schemas = {t: writer.register_msgdef(type_, text) for t, (type_, text) in
                   topics.items()}
        for k, (topic, log_time, message) in enumerate(messages):
            if topic not in schemas:
                raise RecordingError(f"{name}: message {k} is on topic {bounded(topic, 80)}, "
                                     f"expected one of {bounded(', '.join(topics))}")
            if not isinstance(log_time, int) or isinstance(log_time, bool) or log_time < 0:
                raise RecordingError(f"{name}: message {k}: log_time "
                                     f"{bounded(repr(log_time), 40)}, expected an int >= 0 (ns)")
            try:
                writer.write_message(topic, schemas[topic], message, log_time=log_time,
                                     publish_time=log_time, sequence=counts[topic])
            except Exception as exc:   # the CDR encoder's errors have no common base
                raise RecordingError(f"{name}: message {k} on {bounded(topic, 80)} does not "
                                     f"encode as {topics[topic][0]} ({type(exc).__name__}: "
                                     f"{bounded(exc, 120)})") from None
            counts[topic] += 1
            first = log_time if first is None else min(first, log_time)
            last = log_time if last is None else max(last, log_time)
        writer.finish()
    return counts, first or 0, last or 0


def write_recording(folder: str | Path, topics: Mapping[str, tuple[str, str]],
                    messages: Iterable[tuple[str, int, Mapping[str, Any]]]) -> Path:
    """Write ``messages`` (topic, log_time ns, the message as a dict of its fields) of
    ``topics`` (topic -> (type, ros2msg definition text)) as the rosbag2 MCAP folder
    ``folder`` (module docstring); returns it. Refuses a folder that exists and is not
    empty; raises :class:`RecordingError`."""
    folder = Path(folder)
    if folder.is_symlink() or folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise RecordingError(f"{folder}: exists and is not an empty folder, expected a new "
                             "recording folder (rosbag2 never writes into an old one)")
    name = f"{folder.name}_0.mcap"
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    except OSError as exc:
        raise RecordingError(f"{folder}: cannot write beside it: {exc.strerror or exc}") \
            from None
    try:
        counts, first, last = write_mcap_file(tmp / name, topics, messages)
        text = yaml.safe_dump(_metadata(name, topics, counts, first, last), sort_keys=False)
        (tmp / METADATA).write_text(text)
        tmp.chmod(0o755)                   # mkdtemp's folder is private to its owner
        if folder.exists():
            folder.rmdir()                 # empty (checked): rename needs it gone or empty
        os.rename(tmp, folder)
    except OSError as exc:
        raise RecordingError(f"{folder}: cannot write the recording: {exc.strerror or exc}") \
            from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder
