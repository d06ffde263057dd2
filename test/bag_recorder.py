"""Recordings for the tests, written as rosbag2 writes them, by rosbags (an independent
writer: the reader under test never checks itself).

- :func:`write_bag`: serialized messages as a rosbag2 folder, storage ``mcap`` or
  ``sqlite3``, split into N files by message count, optionally zstd-compressed by file or
  by message. rosbags writes one file per bag: each part is a bag of its own, whose file is
  moved into the folder as ``FOLDER_k.EXT[.zstd]`` and listed in one metadata.yaml (the
  parts' metadata merged), as ``ros2 bag record --max-bag-size`` leaves it.
- :class:`BagRecorder`: records topics over DDS like ``ros2 bag record``: an rclpy node (in
  its own context, spun on a thread) subscribes with ``raw=True`` (the CDR bytes), stamps
  each message with its receive time (ns) and, when the ``with`` block ends, writes them with
  :func:`write_bag`.
"""
from __future__ import annotations

import math
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

STORAGE_SUFFIX = {"mcap": ".mcap", "sqlite3": ".db3"}


def typestore() -> Any:
    from rosbags.typesys import Stores, get_typestore
    return get_typestore(Stores.ROS2_HUMBLE)


def write_bag(folder: str | Path, topics: Mapping[str, str],
              rows: Iterable[tuple[str, int, bytes]], storage: str = "mcap",
              split_files: int = 1, compression: str = "") -> Path:
    """``rows`` (topic, log_time ns, CDR bytes) of ``topics`` (topic -> type) as a rosbag2
    folder (module docstring); ``compression``: "", "file" or "message" (zstd)."""
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
    folder = Path(folder)
    rows = list(rows)
    store = typestore()
    per_part = max(1, math.ceil(len(rows) / split_files))
    parts = [rows[k * per_part:(k + 1) * per_part] for k in range(split_files)]
    folder.mkdir(parents=True)
    infos = []
    with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
        for k, part in enumerate(parts):
            bag = Path(scratch) / f"part{k}"
            writer = Writer(bag, version=9, storage_plugin=StoragePlugin[storage.upper()])
            if compression:
                writer.set_compression(CompressionMode[compression.upper()],
                                       CompressionFormat.ZSTD)
            with writer:
                connections = {t: writer.add_connection(t, ty, typestore=store)
                               for t, ty in topics.items()}
                for topic, log_time, data in part:
                    writer.write(connections[topic], log_time, data)
            info = yaml.safe_load((bag / "metadata.yaml").read_text())
            info = info["rosbag2_bagfile_information"]
            (written,) = info["relative_file_paths"]
            name = f"{folder.name}_{k}{STORAGE_SUFFIX[storage]}" + \
                (".zstd" if compression == "file" else "")
            shutil.move(bag / written, folder / name)
            info["relative_file_paths"] = [name]
            info["files"][0]["path"] = name
            infos.append(info)
    merged = dict(infos[0])
    merged["relative_file_paths"] = [i["relative_file_paths"][0] for i in infos]
    merged["files"] = [i["files"][0] for i in infos]
    merged["message_count"] = len(rows)
    stamps = [t for _, t, _ in rows] or [0]
    merged["starting_time"] = {"nanoseconds_since_epoch": min(stamps)}
    merged["duration"] = {"nanoseconds": max(stamps) - min(stamps)}
    for k, entry in enumerate(merged["topics_with_message_count"]):
        entry["message_count"] = sum(i["topics_with_message_count"][k]["message_count"]
                                     for i in infos)
    (folder / "metadata.yaml").write_text(
        yaml.safe_dump({"rosbag2_bagfile_information": merged}, sort_keys=False))
    return folder


class BagRecorder:
    """``with BagRecorder(folder, {"/joint_states": JointState}, storage="sqlite3",
    split_files=2, compression="file") as rec: rec.wait_for(count=50, timeout=20)``: the
    folder is written when the block ends (module docstring). ``types``: topic -> the rclpy
    message class; ``domain_id``: the DDS domain (the caller's, from ROS_DOMAIN_ID when
    None)."""

    def __init__(self, folder: str | Path, types: Mapping[str, type], storage: str = "mcap",
                 split_files: int = 1, compression: str = "",
                 domain_id: int | None = None) -> None:
        if compression == "zstd":               # rosbag2's name of the format: by file
            compression = "file"
        self.folder, self.types, self.storage = Path(folder), dict(types), storage
        self.split_files, self.compression, self.domain_id = split_files, compression, domain_id
        self.rows: list[tuple[str, int, bytes]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()

    @staticmethod
    def type_name(cls: type) -> str:
        """``sensor_msgs/msg/JointState`` of an rclpy message class."""
        module = cls.__module__.split(".")
        return f"{module[0]}/msg/{cls.__name__}"

    def __enter__(self) -> "BagRecorder":
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        self.context = Context()
        kwargs = {} if self.domain_id is None else {"domain_id": self.domain_id}
        rclpy.init(context=self.context, **kwargs)
        self.node = rclpy.create_node("bag_recorder", context=self.context)
        for topic, cls in self.types.items():
            self.node.create_subscription(cls, topic, self._callback(topic), 1000, raw=True)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()
        return self

    def _callback(self, topic: str):
        def record(data: bytes) -> None:
            now = time.time_ns()                  # the receive time, as rosbag2 logs it
            with self._lock:
                self.rows.append((topic, now, bytes(data)))
        return record

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def count(self, topic: str | None = None) -> int:
        with self._lock:
            return sum(1 for t, _, _ in self.rows if topic is None or t == topic)

    def wait_for(self, count: int, timeout: float, topic: str | None = None) -> bool:
        """Whether ``count`` messages (of ``topic``, or all) arrived within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count(topic) >= count:
                return True
            time.sleep(0.02)
        return self.count(topic) >= count

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()
        if exc[0] is None:
            with self._lock:
                rows = list(self.rows)
            write_bag(self.folder, {t: self.type_name(c) for t, c in self.types.items()},
                      rows, self.storage, self.split_files, self.compression)
