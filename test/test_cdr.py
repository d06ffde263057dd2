"""The control path's message layer (ros/dynamics_parts/cdr.py) against rclpy's own serialization: the
reader gives exactly what ``deserialize_message`` gives on fuzzed messages (and refuses
what it cannot read, never reading wrong numbers), the writer's bytes equal
``serialize_message``'s at every byte that carries meaning (found by flipping each byte and
asking rclpy whether the message changed: padding is left as it was in memory by Fast DDS)."""
from __future__ import annotations

import math
import random
import struct

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped, WrenchStamped
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from tf2_msgs.msg import TFMessage

from charmie_dynamics.ros.common.inputs import MAX_JOINT_NAMES, InputRejected
from charmie_dynamics.ros.dynamics_parts.cdr import (MAX_CACHED_BLOCK_NAMES, MAX_CACHED_NAME_BLOCKS,
                                                     Float64ArrayWriter, JointStateReader,
                                                     JointStateWriter, TFWriter, WrenchWriter,
                                                     joint_state_arrays)

pytestmark = pytest.mark.ros       # in the Jazzy lane too: its rmw writes the bytes

ALPHABET = "abcxyz_019/ÄéλΩ"


def fuzzed_name(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 24)))


def fuzzed_values(rng: random.Random, count: int) -> list[float]:
    special = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308]
    return [rng.choice(special) if rng.random() < 0.1 else rng.uniform(-1e3, 1e3)
            for _ in range(count)]


def fuzzed_message(rng: random.Random) -> JointState:
    """Names, frame and stamps of any length and value; each array empty, as long as the
    names or of another length (the node rejects that later; the reader reads it as sent)."""
    n = rng.randrange(0, 30)
    msg = JointState(name=[fuzzed_name(rng) for _ in range(n)])
    for field in ("position", "velocity", "effort"):
        setattr(msg, field, fuzzed_values(rng, rng.choice([0, n, n, rng.randrange(0, 40)])))
    msg.header.frame_id = fuzzed_name(rng)
    msg.header.stamp = Time(sec=rng.randrange(-2**31, 2**31), nanosec=rng.randrange(0, 2**32))
    return msg


def same_fields(arrays, msg: JointState) -> bool:
    """Field by field, the floats bit for bit (NaN included)."""
    bits = lambda values: np.asarray(values, dtype=float).tobytes()     # noqa: E731
    return (arrays.sec == msg.header.stamp.sec and arrays.nanosec == msg.header.stamp.nanosec
            and arrays.name == tuple(msg.name)
            and all(bits(getattr(arrays, f)) == bits(getattr(msg, f))
                    for f in ("position", "velocity", "effort")))


def test_the_reader_reads_what_rclpy_reads_on_fuzzed_messages():
    rng = random.Random(37)
    reader = JointStateReader()
    for _ in range(400):
        msg = fuzzed_message(rng)
        data = serialize_message(msg)
        first, again = reader(data), reader(data)     # the names block new, then known
        assert same_fields(first, msg) and same_fields(again, msg)
        assert same_fields(first, deserialize_message(data, JointState))  # the fuzz is fair


def test_a_known_names_block_is_not_taken_for_a_longer_one():
    """A block of names [a, b] is the first bytes of [a, b, c]'s strings: the count is part
    of the block, so the longer message is read with its own names."""
    reader = JointStateReader()
    short = JointState(name=["a", "b"], position=[1.0, 2.0])
    long = JointState(name=["a", "b", "c"], position=[1.0, 2.0, 3.0])
    assert reader(serialize_message(short)).name == ("a", "b")
    assert reader(serialize_message(long)).name == ("a", "b", "c")
    assert reader(serialize_message(short)).name == ("a", "b")


def test_publishers_beyond_the_cache_are_read_right():
    """More publishers (name blocks) than the cache holds, in turn: every message is still
    read with its own names."""
    reader = JointStateReader()
    messages = [JointState(name=[f"joint_{k}"], position=[float(k)])
                for k in range(MAX_CACHED_NAME_BLOCKS + 3)]
    for _ in range(3):
        for msg in messages:
            assert same_fields(reader(serialize_message(msg)), msg)


def test_a_message_of_many_names_is_read_by_rclpy_each_time():
    """Beyond MAX_CACHED_BLOCK_NAMES names no block is remembered (rclpy reads it whole)."""
    reader = JointStateReader()
    names = [f"j{k}" for k in range(MAX_CACHED_BLOCK_NAMES + 1)]
    msg = JointState(name=names, position=[float(k) for k in range(len(names))])
    for _ in range(2):
        assert same_fields(reader(serialize_message(msg)), msg)
    assert not reader._blocks


def test_truncated_and_corrupted_bytes_are_refused_or_read_as_rclpy_reads_them():
    """Every prefix of a message, and messages with a byte changed: the reader raises
    InputRejected or returns exactly what rclpy reads from the same bytes (a corrupted count
    or length never turns into numbers read from the wrong place). The encapsulation bytes
    are not changed here: a header of another encoding is read by rclpy itself."""
    rng = random.Random(3)
    reader = JointStateReader()
    outcomes = {"read": 0, "refused": 0}
    for _ in range(40):
        data = serialize_message(fuzzed_message(rng))
        cases = [data[:k] for k in range(len(data))]
        for _ in range(60):
            changed = bytearray(data)
            changed[rng.randrange(2, len(data))] ^= rng.randrange(1, 256)
            cases.append(bytes(changed))
        for case in cases:
            try:
                arrays = reader(case)
            except InputRejected as exc:
                assert exc.reason in ("invalid_value", "too_many_names")
                outcomes["refused"] += 1
                continue
            assert same_fields(arrays, deserialize_message(case, JointState))
            outcomes["read"] += 1
    assert outcomes["read"] > 100 and outcomes["refused"] > 100, outcomes


def big_endian(msg: JointState) -> bytes:
    """A JointState in big-endian CDR (encapsulation 00 00), written by hand."""
    out = bytearray(b"\x00\x00\x00\x00")

    def align(size):
        out.extend(bytes(-(len(out) - 4) % size))

    def u32(value):
        align(4)
        out.extend(struct.pack(">I", value))

    def string(text):
        u32(len(text.encode()) + 1)
        out.extend(text.encode() + b"\x00")

    out.extend(struct.pack(">iI", msg.header.stamp.sec, msg.header.stamp.nanosec))
    string(msg.header.frame_id)
    u32(len(msg.name))
    for name in msg.name:
        string(name)
    for values in (msg.position, msg.velocity, msg.effort):
        u32(len(values))
        if len(values):
            align(8)
            out.extend(struct.pack(f">{len(values)}d", *values))
    return bytes(out)


def test_another_encoding_is_read_by_rclpy():
    msg = JointState(name=["left", "right"], position=[0.25, -1.5], velocity=[2.0, 3.0])
    msg.header.stamp = Time(sec=12, nanosec=345)
    data = big_endian(msg)
    assert same_fields(joint_state_arrays(deserialize_message(data, JointState)), msg)  # hand-made
    assert same_fields(JointStateReader()(data), msg)


def test_too_many_names_are_refused_before_they_are_read():
    data = bytearray(serialize_message(JointState()))
    struct.pack_into("<I", data, 4 + 16, MAX_JOINT_NAMES + 1)     # the names' count
    with pytest.raises(InputRejected) as refused:
        JointStateReader()(bytes(data))
    assert refused.value.reason == "too_many_names"


def test_a_message_object_gives_the_same_arrays():
    msg = fuzzed_message(random.Random(5))
    arrays, read = joint_state_arrays(msg), JointStateReader()(serialize_message(msg))
    assert arrays[:3] == read[:3] and same_fields(arrays, msg) and same_fields(read, msg)
    for values in arrays[3:] + read[3:]:                 # what the compiled checks take
        assert values.dtype == np.float64 and values.flags.c_contiguous and values.flags.writeable


def meaningful_bytes(data: bytes, kind) -> list[int]:
    """The offsets of ``data`` whose byte, changed, changes the message rclpy reads (or makes
    it unreadable): every byte but padding and what follows the message. The lowest bit is
    flipped, so a count grows by at most 2**24."""
    base = repr(deserialize_message(data, kind))       # repr: NaN equal to NaN
    meaningful = []
    for k in range(len(data)):
        changed = bytearray(data)
        changed[k] ^= 1
        try:
            if repr(deserialize_message(bytes(changed), kind)) != base:
                meaningful.append(k)
        except Exception:       # noqa: BLE001 - the rmw's error type: unreadable is a change
            meaningful.append(k)
    return meaningful


def assert_written_as_rclpy_writes(ours: bytes, msg) -> None:
    theirs = serialize_message(msg)
    meaningful = meaningful_bytes(theirs, type(msg))
    assert meaningful[-1] + 1 <= len(ours) <= len(theirs)
    assert all(ours[k] == theirs[k] for k in meaningful)
    assert repr(deserialize_message(ours, type(msg))) == repr(msg)      # NaN equal to NaN
    # padding (where theirs is as the memory was) and bytes that change nothing (the
    # encapsulation's order byte of a message of zeros): ours zero, or theirs
    others = set(range(len(ours))) - set(meaningful)
    assert all(ours[k] in (0, theirs[k]) for k in others)


def fuzzed_stamp(rng: random.Random) -> int:
    return rng.randrange(-2**31, 2**31) * 1_000_000_000 + rng.randrange(0, 10**9)


def header_stamp(stamp_ns: int) -> Time:
    return Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)


def test_float64_arrays_are_written_as_rclpy_writes_them():
    rng = random.Random(11)
    for size in list(range(5)) + [rng.randrange(5, 60) for _ in range(10)]:
        writer = Float64ArrayWriter(size)
        for _ in range(2):                            # the buffer is reused
            values = np.array(fuzzed_values(rng, size))
            assert_written_as_rclpy_writes(writer(values), Float64MultiArray(data=values))


@pytest.mark.parametrize("fields", [("effort",), ("position", "velocity"),
                                    ("position", "velocity", "effort")])
def test_joint_states_are_written_as_rclpy_writes_them(fields):
    rng = random.Random(len(fields))
    for _ in range(15):
        names = [fuzzed_name(rng) for _ in range(rng.randrange(0, 25))]
        frame = fuzzed_name(rng)
        writer = JointStateWriter(names, fields, frame)
        for _ in range(2):
            arrays = [np.array(fuzzed_values(rng, len(names))) for _ in fields]
            stamp = fuzzed_stamp(rng)
            expected = JointState(name=names, **dict(zip(fields, arrays)))
            expected.header.stamp, expected.header.frame_id = header_stamp(stamp), frame
            assert_written_as_rclpy_writes(writer(stamp, *arrays), expected)


def test_tf_is_written_as_rclpy_writes_it():
    rng = random.Random(103)
    for n in (0, 1, 2, 7, 30):
        parents = [fuzzed_name(rng) for _ in range(n)]
        children = [fuzzed_name(rng) for _ in range(n)]
        writer = TFWriter(parents, children)
        for _ in range(2):
            stamp = fuzzed_stamp(rng)
            translations = np.array(fuzzed_values(rng, 3 * n)).reshape(n, 3)
            quaternions = np.array(fuzzed_values(rng, 4 * n)).reshape(n, 4)
            expected = TFMessage()
            for parent, child, t, r in zip(parents, children, translations, quaternions):
                transform = TransformStamped(child_frame_id=child)
                transform.header.stamp, transform.header.frame_id = header_stamp(stamp), parent
                v, q = transform.transform.translation, transform.transform.rotation
                v.x, v.y, v.z = (float(a) for a in t)
                q.x, q.y, q.z, q.w = (float(a) for a in r)
                expected.transforms.append(transform)
            assert_written_as_rclpy_writes(writer(stamp, translations, quaternions), expected)


def test_wrenches_are_written_as_rclpy_writes_them():
    rng = random.Random(7)
    for _ in range(10):
        frame = fuzzed_name(rng)
        writer = WrenchWriter(frame)
        for _ in range(2):
            stamp = fuzzed_stamp(rng)
            force, torque = (np.array(fuzzed_values(rng, 3)) for _ in range(2))
            expected = WrenchStamped()
            expected.header.stamp, expected.header.frame_id = header_stamp(stamp), frame
            w = expected.wrench
            w.force.x, w.force.y, w.force.z = (float(a) for a in force)
            w.torque.x, w.torque.y, w.torque.z = (float(a) for a in torque)
            assert_written_as_rclpy_writes(writer(stamp, force, torque), expected)
