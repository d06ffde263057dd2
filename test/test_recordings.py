"""charmie_dynamics.recordings: rosbag2 folders (MCAP and sqlite3, split, zstd by file and
by message), single .mcap and .db3 files, read back exactly as an independent writer
(rosbags) wrote them; real bags recorded by rosbag2 (test/data/bags); the writer's folder
read by rosbags and by the reader; hostile recordings refused in one line naming the path."""
from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import yaml

from bag_recorder import typestore, write_bag
from charmie_dynamics.recordings import (JOINT_STATE, JOINT_STATE_DEFINITION, ODOMETRY,
                                         ODOMETRY_DEFINITION, RecordingError, open_recording,
                                         write_recording)
from charmie_dynamics.recordings.storage import MESSAGE_COST

pytest.importorskip("rosbags")
BAGS = Path(__file__).resolve().parent / "data" / "bags"
TOPICS = {"/joint_states": JOINT_STATE, "/odom": ODOMETRY}
NAMES = ["act4", "act5", "neck_pan"]


def _messages(n_joint: int = 20, n_odom: int = 10) -> list[tuple[str, int, dict]]:
    """(topic, log_time, fields) with distinct stamps and arrays; odometry every other
    joint message, with ties of log_time between the two topics."""
    out = []
    for k in range(n_joint):
        t = 1_700_000_000_000_000_000 + k * 10_000_000
        stamp = {"sec": t // 10**9, "nanosec": t % 10**9 + 1}
        out.append(("/joint_states", t, {
            "header": {"stamp": stamp, "frame_id": f"f{k}"}, "name": NAMES,
            "position": [0.1 * k, -0.2 * k, 0.3 + k], "velocity": [1.0 * k, 2.0, 3.0],
            "effort": [] if k % 3 == 0 else [5.0, 6.0 * k, 7.0]}))
        if k % 2 == 0 and k // 2 < n_odom:
            out.append(("/odom", t, {
                "header": {"stamp": stamp, "frame_id": "odom"}, "child_frame_id": "base",
                "pose": {"pose": {"position": {"x": 0.5 * k, "y": 1.0, "z": 0.0},
                                  "orientation": {"x": 0.0, "y": 0.0, "z": 0.1 * k, "w": 1.0}},
                         "covariance": [float(i + k) for i in range(36)]},
                "twist": {"twist": {"linear": {"x": 0.2 * k, "y": 0.0, "z": 0.0},
                                    "angular": {"x": 0.0, "y": 0.0, "z": -0.1 * k}},
                          "covariance": [0.0] * 36}}))
    return out


def _rosbags_message(store, type_: str, fields: dict):
    """A rosbags message object of ``type_`` from nested dicts."""
    field_types = {name: ftype for name, ftype in store.fielddefs[type_][1]}
    values = {}
    for name in field_types:
        value = fields[name]
        if isinstance(value, dict):                 # a nested message: (kind, its type)
            value = _rosbags_message(store, field_types[name][1], value)
        elif isinstance(value, list) and name != "name":
            value = np.asarray(value, dtype=np.float64)
        values[name] = value
    return store.types[type_](**values)


def _cdr_rows(messages):
    store = typestore()
    return [(topic, t, bytes(store.serialize_cdr(_rosbags_message(store, TOPICS[topic], f),
                                                 TOPICS[topic])))
            for topic, t, f in messages]


def _check(recording, messages) -> None:
    """The reader yields exactly ``messages``: order, topics, log_times, every field."""
    got = list(recording.messages(list(TOPICS)))
    assert [(m.topic, m.log_time) for m in got] == [(t, lt) for t, lt, _ in messages]
    for m, (_, _, f) in zip(got, messages):
        msg = m.message
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id) == \
            (f["header"]["stamp"]["sec"], f["header"]["stamp"]["nanosec"],
             f["header"]["frame_id"])
        if m.topic == "/joint_states":
            assert list(msg.name) == f["name"]
            for field in ("position", "velocity", "effort"):
                assert list(getattr(msg, field)) == f[field]
        else:
            assert msg.child_frame_id == f["child_frame_id"]
            assert msg.pose.pose.position.x == f["pose"]["pose"]["position"]["x"]
            assert msg.pose.pose.orientation.z == f["pose"]["pose"]["orientation"]["z"]
            assert list(msg.pose.covariance) == f["pose"]["covariance"]
            assert msg.twist.twist.angular.z == f["twist"]["twist"]["angular"]["z"]


# ------------------------------------------------------------------ real rosbag2 bags
@pytest.mark.parametrize("path", ["talker_sqlite3", "talker_mcap", "talker_mcap/talker.mcap",
                                  "talker_sqlite3/talker.db3"])
def test_real_rosbag2_recordings(path):
    """rosbag2's own test bags: topics and types; /topic's std_msgs/String decoded with the
    definitions stored in them (both files have them)."""
    recording = open_recording(BAGS / path)
    assert recording.storage == ("mcap" if "mcap" in path else "sqlite3")
    assert recording.topics == {"/topic": "std_msgs/msg/String",
                                "/rosout": "rcl_interfaces/msg/Log",
                                "/parameter_events": "rcl_interfaces/msg/ParameterEvent"}
    got = list(recording.messages(["/topic"]))
    assert [m.message.data for m in got] == [f"Hello, world! {k}" for k in range(10)]
    times = [m.log_time for m in got]
    assert times == sorted(times) and times[0] == 1585866235112609068
    assert len(list(recording.messages(["/rosout"]))) == 10


# ------------------------------------------------------ what rosbags wrote, read back
@pytest.mark.parametrize("split", [1, 2])
@pytest.mark.parametrize("compression", ["", "file", "message"])
@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_reads_exactly_what_rosbags_wrote(tmp_path, storage, compression, split):
    messages = _messages()
    folder = write_bag(tmp_path / "run", TOPICS, _cdr_rows(messages), storage, split,
                       compression)
    recording = open_recording(folder)
    assert recording.storage == storage and recording.topics == TOPICS
    assert len(recording.files) == split
    assert all(Path(f).name.endswith(".zstd") == (compression == "file")
               for f in recording.files)
    _check(recording, messages)
    only = list(recording.messages(["/odom"]))
    assert [m.topic for m in only] == ["/odom"] * 10


def test_split_files_are_merged_by_log_time(tmp_path):
    """The second file's messages earlier than the first's end come out interleaved."""
    messages = _messages()
    rows = _cdr_rows(messages)
    folder = write_bag(tmp_path / "run", TOPICS, rows[1::2] + rows[::2], "mcap", 2)
    order = sorted(range(len(messages)), key=lambda k: messages[k][1])
    got = [m.log_time for m in open_recording(folder).messages(list(TOPICS))]
    assert got == [messages[k][1] for k in order]


def test_a_humble_sqlite3_bag_without_definitions_uses_the_bundled_ones(tmp_path):
    messages = _messages()
    folder = write_bag(tmp_path / "run", TOPICS, _cdr_rows(messages), "sqlite3")
    db = sqlite3.connect(folder / "run_0.db3")
    db.execute("DROP TABLE message_definitions")
    db.commit()
    db.close()
    _check(open_recording(folder), messages)
    _check(open_recording(folder / "run_0.db3"), messages)


def test_require_names_the_topics(tmp_path):
    folder = write_bag(tmp_path / "run", TOPICS, _cdr_rows(_messages(2, 1)), "mcap")
    recording = open_recording(folder)
    recording.require("/odom", ODOMETRY)
    with pytest.raises(RecordingError) as info:
        recording.require("/x", JOINT_STATE)
    assert str(info.value) == (f"{folder}: no topic /x; it has /joint_states ({JOINT_STATE}), "
                               f"/odom ({ODOMETRY})")
    with pytest.raises(RecordingError) as info:
        recording.require("/odom", JOINT_STATE)
    assert str(info.value) == f"{folder}: topic /odom is {ODOMETRY}, expected {JOINT_STATE}"
    with pytest.raises(RecordingError, match="no topic /x"):
        recording.messages(["/x"])


# --------------------------------------------------------------------------- the writer
def test_the_writers_folder_reads_back_in_rosbags_and_here(tmp_path):
    messages = _messages()
    folder = write_recording(tmp_path / "rec", {"/joint_states": (JOINT_STATE,
                                                                   JOINT_STATE_DEFINITION),
                                                 "/odom": (ODOMETRY, ODOMETRY_DEFINITION)},
                             messages)
    assert sorted(p.name for p in folder.iterdir()) == ["metadata.yaml", "rec_0.mcap"]
    info = yaml.safe_load((folder / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["version"] >= 5 and info["storage_identifier"] == "mcap"
    assert info["message_count"] == len(messages) and info["relative_file_paths"] == ["rec_0.mcap"]
    assert {e["topic_metadata"]["name"]: e["message_count"]
            for e in info["topics_with_message_count"]} == {"/joint_states": 20, "/odom": 10}
    _check(open_recording(folder), messages)

    from rosbags.rosbag2 import Reader
    store = typestore()
    with Reader(folder) as reader:
        assert {c.topic: c.msgtype for c in reader.connections} == TOPICS
        got = [(c.topic, t, store.deserialize_cdr(raw, c.msgtype))
               for c, t, raw in reader.messages()]
    assert [(t, lt) for t, lt, _ in got] == [(t, lt) for t, lt, _ in messages]
    for (_, _, msg), (topic, _, f) in zip(got, messages):
        assert msg.header.stamp.nanosec == f["header"]["stamp"]["nanosec"]
        if topic == "/joint_states":
            assert msg.name == NAMES and msg.position.tolist() == f["position"]
        else:
            assert msg.pose.covariance.tolist() == f["pose"]["covariance"]


def test_the_writer_refuses_a_folder_with_files_and_leaves_nothing_partial(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    topics = {"/joint_states": (JOINT_STATE, JOINT_STATE_DEFINITION)}
    with pytest.raises(RecordingError, match="full: exists and is not an empty folder"):
        write_recording(tmp_path / "full", topics, [])
    bad = _messages(3, 0) + [("/joint_states", 5, {"position": ["not a number"]})]
    with pytest.raises(RecordingError) as info:
        write_recording(tmp_path / "new", topics, bad)
    assert "\n" not in str(info.value) and "message 3" in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]
    with pytest.raises(RecordingError, match="on topic /odom, expected one of /joint_states"):
        write_recording(tmp_path / "new", topics, [("/odom", 1, {})])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]
    (tmp_path / "empty").mkdir()
    write_recording(tmp_path / "empty", topics, _messages(3, 0))
    assert len(list(open_recording(tmp_path / "empty").messages(["/joint_states"]))) == 3


# ----------------------------------------------------------------------- hostile bags
def _bag(tmp_path, storage="mcap", compression="", split=1):
    return write_bag(tmp_path / "bag", TOPICS, _cdr_rows(_messages(6, 3)), storage, split,
                     compression)


def _edit_metadata(folder: Path, edit) -> None:
    path = folder / "metadata.yaml"
    document = yaml.safe_load(path.read_text())
    edit(document["rosbag2_bagfile_information"])
    path.write_text(yaml.safe_dump(document))


def _refused(path, *needles, max_bytes=None) -> str:
    before = sorted(p.name for p in Path(path).parent.iterdir())
    with pytest.raises(RecordingError) as info:
        recording = open_recording(path) if max_bytes is None else \
            open_recording(path, max_bytes=max_bytes)
        list(recording.messages(list(recording.topics)))
    text = str(info.value)
    assert "\n" not in text and len(text) < 700 and str(path) in text, text
    for needle in needles:
        assert needle in text, text
    assert sorted(p.name for p in Path(path).parent.iterdir()) == before   # nothing written
    return text


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_truncated_split_file(tmp_path, storage):
    folder = _bag(tmp_path, storage, split=2)
    second = folder / f"bag_1{'.mcap' if storage == 'mcap' else '.db3'}"
    data = second.read_bytes()
    second.write_bytes(data[:len(data) * 2 // 3])
    _refused(folder, str(second))


def test_metadata_naming_a_missing_file(tmp_path):
    folder = _bag(tmp_path, split=2)
    (folder / "bag_1.mcap").unlink()
    _refused(folder, "bag_1.mcap", "cannot read")


@pytest.mark.parametrize("edit, needle", [
    (lambda i: i.update(version=12), "field version is 12, expected 1 to 9"),
    (lambda i: i.update(version="8"), "field version is '8'"),
    (lambda i: i.update(storage_identifier="rosbag1"), "storage_identifier is rosbag1"),
    (lambda i: i.update(compression_format="lz4", compression_mode="file"),
     "compression_format is lz4"),
    (lambda i: i.update(compression_format="zstd", compression_mode="chunk"),
     "compression_mode is chunk"),
    (lambda i: i.update(relative_file_paths=["../../etc/passwd"]), "leaves the folder"),
    (lambda i: i["topics_with_message_count"][0]["topic_metadata"].update(
        type="nav_msgs/msg/Odometry"), "says nav_msgs/msg/Odometry"),
    (lambda i: i["topics_with_message_count"][1].update(message_count=99),
     "metadata.yaml says 99"),
    (lambda i: i["topics_with_message_count"][0]["topic_metadata"].update(
        serialization_format="json"), "serialized as cdr, "),
])
def test_bad_metadata(tmp_path, edit, needle):
    folder = _bag(tmp_path)
    _edit_metadata(folder, edit)
    _refused(folder, needle)


def test_a_folder_without_metadata_says_how_to_rebuild_it(tmp_path):
    folder = _bag(tmp_path)
    (folder / "metadata.yaml").unlink()
    _refused(folder, "a folder without metadata.yaml", "ros2 bag reindex")


@pytest.mark.parametrize("text", ["- just\n- a list\n", "rosbag2_bagfile_information: 3\n",
                                  "a: [unclosed\n", "\xff\xfe"])
def test_metadata_that_is_not_a_mapping(tmp_path, text):
    folder = _bag(tmp_path)
    (folder / "metadata.yaml").write_bytes(text.encode("latin-1"))
    _refused(folder, "metadata.yaml")


def test_an_sqlite_file_that_is_not_a_bag(tmp_path):
    path = tmp_path / "other.db3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE things(id INTEGER)")
    db.commit()
    db.close()
    _refused(path, "without the tables topics and messages")


def test_corrupt_zstd(tmp_path):
    folder = _bag(tmp_path, "sqlite3", "file")
    path = folder / "bag_0.db3.zstd"
    data = bytearray(path.read_bytes())
    data[len(data) // 2:] = bytes(len(data) - len(data) // 2)
    path.write_bytes(bytes(data))
    _refused(folder, "corrupt zstd", "bag_0.db3.zstd")


def test_a_zstd_bomb_stops_at_max_bytes(tmp_path):
    import zstandard
    folder = _bag(tmp_path, "sqlite3", "file")
    bomb = zstandard.ZstdCompressor(level=3).compress(bytes(32 << 20))   # 32 MiB of zeros
    (folder / "bag_0.db3.zstd").write_bytes(bomb)
    _refused(folder, "bag_0.db3.zstd: more than 4,194,304 bytes", max_bytes=4 << 20)


def test_total_bytes_are_bounded_across_files(tmp_path):
    folder = _bag(tmp_path, "mcap", split=2)
    one = (folder / "bag_0.mcap").stat().st_size
    # the first file and every message's cost (9 in all), not the second file's bytes too
    assert one > 9 * MESSAGE_COST + 100
    _refused(folder, "bag_1.mcap", max_bytes=one + 9 * MESSAGE_COST + 100)


def test_a_symlink_and_a_fifo(tmp_path):
    folder = _bag(tmp_path)
    target = tmp_path / "elsewhere.mcap"
    shutil.move(folder / "bag_0.mcap", target)
    os.symlink(target, folder / "bag_0.mcap")
    _refused(folder, "symbolic link")
    (folder / "bag_0.mcap").unlink()
    os.mkfifo(folder / "bag_0.mcap")
    _refused(folder, "not a regular file")
    os.mkfifo(tmp_path / "fifo.mcap")
    _refused(tmp_path / "fifo.mcap", "not a regular file")


def test_a_file_of_another_storage_or_none(tmp_path):
    folder = _bag(tmp_path, "mcap")
    _edit_metadata(folder, lambda i: i.update(storage_identifier="sqlite3"))
    _refused(folder, "a mcap file", "expected a sqlite3 file")
    junk = tmp_path / "junk.mcap"
    junk.write_bytes(b"\x00" * 100)
    _refused(junk, "unknown bytes")


# ------------------------------------------------------------- recording over DDS (ROS)
PUBLISHER = """
import sys, time
import rclpy
from sensor_msgs.msg import JointState
rclpy.init()
node = rclpy.create_node("bag_recorder_publisher")
pub = node.create_publisher(JointState, "/joint_states", 100)
deadline = time.monotonic() + 30
while pub.get_subscription_count() < 1 and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
for k in range(50):
    msg = JointState(name=["act4", "neck_pan"], position=[0.01 * k, -1.0 * k])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 100 + k, 7
    pub.publish(msg)
    rclpy.spin_once(node, timeout_sec=0.005)
time.sleep(2.0)                     # reliable delivery: stay until the recorder has them
node.destroy_node()
rclpy.shutdown()
"""


@pytest.mark.ros
@pytest.mark.parametrize("storage, split, compression", [("mcap", 1, ""),
                                                         ("sqlite3", 2, "zstd")])
def test_bag_recorder_records_over_dds(tmp_path, monkeypatch, storage, split, compression):
    """50 JointState messages published by another process, recorded as rosbag2 records
    them (test/bag_recorder.py), read back in both storages."""
    pytest.importorskip("rclpy")
    import subprocess
    import sys

    from sensor_msgs.msg import JointState

    from bag_recorder import BagRecorder
    from domains import domain_id
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.delenv("ROS_LOCALHOST_ONLY", raising=False)
    folder = tmp_path / "recorded"
    with BagRecorder(folder, {"/joint_states": JointState}, storage=storage,
                     split_files=split, compression=compression) as rec:
        publisher = subprocess.Popen([sys.executable, "-c", PUBLISHER], env=dict(os.environ),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            arrived = rec.wait_for(count=50, timeout=60)
        finally:
            out = publisher.communicate(timeout=60)[0].decode(errors="replace")
        assert arrived, f"{rec.count()} of 50 messages arrived; publisher: {out[-2000:]}"
    recording = open_recording(folder)
    assert recording.storage == storage and len(recording.files) == split
    assert recording.topics == {"/joint_states": JOINT_STATE}
    got = list(recording.messages(["/joint_states"]))
    assert [m.message.header.stamp.sec for m in got] == list(range(100, 150))
    assert [list(m.message.position) for m in got] == [[0.01 * k, -1.0 * k] for k in range(50)]
    assert all(list(m.message.name) == ["act4", "neck_pan"] for m in got)
    assert [m.log_time for m in got] == sorted(m.log_time for m in got)


# ------------------------------------------------ the attack of 2026-11-28 (issue 36)
def test_listed_files_with_a_nul_twice_or_through_a_linked_folder(tmp_path):
    folder = _bag(tmp_path, split=2)
    _edit_metadata(folder, lambda i: i.update(relative_file_paths=["bag\x00_0.mcap"]))
    _refused(folder, "NUL byte")
    folder = _bag(tmp_path / "twice", split=1)
    _edit_metadata(folder, lambda i: i.update(relative_file_paths=["bag_0.mcap"] * 2))
    _refused(folder, "lists bag_0.mcap twice")
    folder = _bag(tmp_path / "linked", split=1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (folder / "bag_0.mcap").rename(elsewhere / "bag_0.mcap")
    (folder / "lnk").symlink_to(elsewhere)
    _edit_metadata(folder, lambda i: i.update(relative_file_paths=["lnk/bag_0.mcap"]))
    _refused(folder, "passes through a symbolic link")


def test_an_mcap_with_two_definitions_of_one_type_is_refused(tmp_path):
    """Messages are decoded by type name: a second schema of that name (other fields) would
    decode the first's messages with its layout."""
    from mcap_ros2.writer import Writer
    swapped = JOINT_STATE_DEFINITION.replace("float64[] position\nfloat64[] velocity",
                                             "float64[] velocity\nfloat64[] position")
    path = tmp_path / "two.mcap"
    with open(path, "wb") as f:
        writer = Writer(f)
        for topic, definition in (("/joint_states", JOINT_STATE_DEFINITION),
                                  ("/actuator_states", swapped)):
            schema = writer.register_msgdef(JOINT_STATE, definition)
            writer.write_message(topic, schema, {"header": {"stamp": {"sec": 0, "nanosec": 0},
                                                            "frame_id": ""}, "name": ["a"],
                                                 "position": [1.0], "velocity": [2.0],
                                                 "effort": [3.0]}, log_time=0, publish_time=0)
        writer.finish()
    _refused(path, "two definitions of sensor_msgs/msg/JointState")


def test_a_db3_with_its_write_ahead_log_beside_it_is_refused(tmp_path):
    """A recorder killed before it closed the bag leaves messages in FILE.db3-wal: read
    without them the recording would be silently cut."""
    folder = _bag(tmp_path, "sqlite3")
    db = folder / "bag_0.db3"
    (folder / "bag_0.db3-wal").write_bytes(b"\0" * 64)
    _refused(folder, "bag_0.db3-wal", "write-ahead log")
    _refused(db, "bag_0.db3-wal")


def test_millions_of_empty_messages_stop_at_the_cap(tmp_path):
    """Each message counts MESSAGE_COST bytes beside its data: a 1 MB file of 100,000 empty
    messages is refused at a 16 MiB cap instead of holding them all (the attack's 7 MB MCAP of
    3 M messages took 912 MB)."""
    from mcap.writer import Writer as McapWriter
    path = tmp_path / "tiny.mcap"
    with open(path, "wb") as f:
        writer = McapWriter(f)
        writer.start(profile="ros2")
        schema = writer.register_schema(JOINT_STATE, "ros2msg", JOINT_STATE_DEFINITION.encode())
        channel = writer.register_channel("/joint_states", "cdr", schema)
        for k in range(100_000):
            writer.add_message(channel, log_time=k, data=b"", publish_time=k)
        writer.finish()
    _refused(path, "bytes read or decompressed in all", max_bytes=16 * 2**20)
