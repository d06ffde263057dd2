"""The robot's recorded messages as a log of model inputs and efforts, read as the dynamics
node reads them live (pure Python: no rclpy here; the messages are any objects with the ROS
messages' fields, as a bag reader decodes them).

Each message passes the node's checks (``inputs.read_joint_state`` under the merge policy, the
joint map's names and units, ``too_many_names``, the model's limits, the actuators' strokes,
odometry's ``base_from_odometry``); a refused message is counted by the node's reason
(``inputs.REASONS``) and never used. Several publishers may share a topic, each with a part
of the joints (joint_state_broadcasters of several hardware boards), under hardware names;
names the model does not use (wheels, fingers) are counted and ignored.

Every input keeps its own series of stamped values, as the node keeps each joint's stamp
(merge policy). The log is sampled on a regular grid at the fastest input's median period
(the identification differentiates at a regular period) from the first recorded stamp to
the last: each input's position, velocity and effort are interpolated linearly between its
two samples around a grid time, and both must lie within ``max_joint_age`` of it (the node's
limit on how far a merged joint may lag the newest). A grid time outside an input's samples
(before it started, after it stopped: never extrapolated) is dropped as ``missing_name``, one
too far from them as ``joint_too_old``; the log is the times kept, which must follow each
other without a gap. Efforts: JointState's ``effort`` in the model's unit (the joint map's
``effort_scale`` divided out); an input whose messages carry no efforts (the base from
odometry, a joint whose driver reports none) is ``unmeasured``: NaN in the log, left out of
the identification.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from ...documents import bounded
from ...identification.logs import (MAX_EFFORT, Log, LogError, max_samples, read_log,
                                    too_many_samples)
from ...kinematics.limits import VELOCITY_TOLERANCE
from ...model.model import Model
from ...recordings import JOINT_STATE, MAX_RECORDING_BYTES, ODOMETRY, open_recording
from ...recordings.storage import MCAP_MAGIC, SQLITE_MAGIC, ZSTD_MAGIC
from ..common.inputs import (MAX_JOINT_NAMES, InputLimits, InputRejected, actuator_strokes,
                             check_strokes, read_robot_joint_state)
from ..common.joint_map import JointMap
from ..common.odometry import base_from_odometry
from ..common.stamps import to_nanoseconds
from .robot_inputs import RobotTopics


@dataclass
class _Series:
    """One input's accepted samples, in stamp order."""

    stamps: list[int] = field(default_factory=list)
    position: list[float] = field(default_factory=list)
    velocity: list[float] = field(default_factory=list)
    effort: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class RecordedLog:
    """A log read from recorded messages, and what was not used, by reason."""

    log: Log
    rejected: Counter            # messages refused, by the node's reason
    first_rejection: Mapping[str, str]   # reason -> the first refusal's text
    dropped: Counter             # grid times without every input, by reason
    ignored_names: tuple[str, ...]   # names the model does not use, as recorded
    unmeasured: tuple[str, ...]      # inputs without efforts (model names)
    period: float                    # s, of the grid
    conflicting: tuple[str, ...] = ()    # joints given by two publishers, as recorded
    without: Mapping[str, int] = field(default_factory=dict)   # joint messages without efforts


def _stamp(msg: object) -> int:
    """The header stamp, ns, checked as the node checks it (``stamps.to_nanoseconds``)."""
    stamp = msg.header.stamp                     # type: ignore[attr-defined]
    if not (isinstance(stamp.sec, int) and isinstance(stamp.nanosec, int)):
        raise InputRejected("invalid_value", "header.stamp is not two integers (sec, "
                                             "nanosec)")
    return to_nanoseconds(stamp)


class _Reader:
    """The node's checks on one message at a time, into per-input series."""

    def __init__(self, model: Model, joint_map: JointMap, topics: RobotTopics,
                 position_tolerance: float) -> None:
        self.model, self.joint_map, self.topics = model, joint_map, topics
        self.position_tolerance = position_tolerance
        self.base = model.base.coordinates if topics.odometry and model.base else ()
        self.joints = tuple(n for n in model.input_names if n not in self.base)
        self.limits = InputLimits.of(model)
        self.strokes = actuator_strokes(model)
        self.series = {n: _Series() for n in model.input_names}
        self.without_effort: set[str] = set()
        self.rejected: Counter = Counter()
        self.first_rejection: dict[str, str] = {}    # reason -> the first one's text
        self.sources: dict[str, frozenset] = {}      # joint -> names of its first message
        self.conflicting: dict[str, None] = {}       # joints in messages of two name sets
        self.without: Counter = Counter()            # joint messages without efforts
        self.ignored: dict[str, None] = {}

    def message(self, topic: str, msg: object) -> None:
        """One message of a recorded topic; a message without the fields of its type (a
        recording's own definition of it) is ``invalid_value``."""
        try:
            if topic == self.topics.odometry:
                if self.base:
                    self.odometry(msg)
            elif topic == self.topics.actuator_states:
                self.joint_state(msg, self.model.actuator_names)
            else:
                self.joint_state(msg, self.joints)
        except (AttributeError, TypeError, ValueError) as exc:
            if isinstance(exc, InputRejected):
                raise
            # fields of another type under this one's name (the recording's own definition)
            expected = ODOMETRY if topic == self.topics.odometry else JOINT_STATE
            raise InputRejected("invalid_value", f"not a {expected} ({type(exc).__name__})"
                                ) from None

    def joint_state(self, msg: object, allowed: Sequence[str]) -> None:
        """A joint_states or actuator_states message; what it tells of the recording (names
        ignored, two publishers, no velocities or efforts) is kept only once it is stored."""
        names = list(msg.name)                                   # type: ignore[attr-defined]
        if not all(isinstance(n, str) for n in names[:MAX_JOINT_NAMES + 1]):
            raise InputRejected("invalid_value", f"field name is not a string[], expected "
                                                 f"a {JOINT_STATE}")
        position, velocity, effort = (list(getattr(msg, f)) for f in
                                      ("position", "velocity", "effort"))
        values = read_robot_joint_state(self.joint_map, names, position, velocity, effort,
                                        allowed)
        # the base's names where odometry gives it are set aside, not foreign
        ignored = self.joint_map.to_hardware(n for n in values.ignored if n not in self.base)
        if not values.positions:
            self.ignored.update(dict.fromkeys(ignored))
            return
        efforts: dict[str, float] = {}
        if len(effort):
            index = {n: k for k, n in enumerate(self.joint_map.message_to_model(names))}
            scale = self.joint_map.effort_scale
            efforts = {n: float(effort[index[n]]) / scale.get(n, 1.0) for n in values.positions}
            if any(map(math.isinf, efforts.values())):
                raise InputRejected("non_finite", "infinite effort")
            beyond = [n for n, e in efforts.items() if abs(e) > MAX_EFFORT]
            if beyond:         # another unit, or garbage: its estimate would overflow
                raise InputRejected("invalid_value", f"effort {efforts[beyond[0]]:.6g} of "
                                                     f"{self.joint_map.to_hardware(beyond)[0]}, "
                                                     f"expected |effort| <= {MAX_EFFORT:g}")
        self._store(_stamp(msg), values.positions,
                    values.velocities if len(velocity) else {}, efforts)
        self.ignored.update(dict.fromkeys(ignored))
        source = frozenset(names)          # a joint in messages of two name sets: two publishers
        for name in values.positions:
            if self.sources.setdefault(name, source) != source:
                self.conflicting.setdefault(name, None)
        # NaN: not measured (a broadcaster's joint without that state interface)
        unmeasured = [n for n in values.positions if math.isnan(efforts.get(n, math.nan))]
        self.without_effort.update(unmeasured)
        self.without["effort"] += bool(unmeasured)

    def odometry(self, msg: object) -> None:
        pose, twist = msg.pose.pose, msg.twist.twist            # type: ignore[attr-defined]
        o = pose.orientation
        positions, velocities = base_from_odometry(
            self.model.base, pose.position.x, pose.position.y, (o.x, o.y, o.z, o.w),
            (twist.linear.x, twist.linear.y), twist.angular.z)
        self._store(_stamp(msg), positions, velocities, {})
        self.without_effort.update(positions)

    def _store(self, stamp: int, positions: dict[str, float], velocities: dict[str, float],
               efforts: dict[str, float]) -> None:
        self.limits.check(positions, velocities or dict.fromkeys(positions, 0.0),
                          self.position_tolerance, VELOCITY_TOLERANCE, self.joint_map.hardware)
        check_strokes(positions, self.strokes, self.joint_map.hardware)
        series = [self.series[n] for n in positions]
        if any(s.stamps and stamp <= s.stamps[-1] for s in series):
            raise InputRejected("time_backwards", f"stamp {stamp * 1e-9:.9f} s not after "
                                                  "the last of its joints")
        for name, s in zip(positions, series):
            s.stamps.append(stamp)
            s.position.append(positions[name])
            s.velocity.append(velocities.get(name, math.nan))
            s.effort.append(efforts.get(name, math.nan))


def read_recorded(model: Model, messages: Iterable[tuple[str, object]], topics: RobotTopics,
                  joint_map: JointMap, max_joint_age: float, source: str,
                  position_tolerance: float = math.inf) -> RecordedLog:
    """The log of ``messages`` ((topic, message) in recorded order; module docstring).
    ``position_tolerance``: rad or m a position may lie beyond the model's joint limits (the
    node's ``position_limit_tolerance``); by default not checked (``check_position_limits``
    false): a recording is what the robot did, the limits guard the live feedforward.
    Raises :class:`LogError` naming ``source`` when an input is never measured, no grid time
    has every input, or the grid has a gap inside (a publisher that fell silent)."""
    reader = _Reader(model, joint_map, topics, position_tolerance)
    for topic, msg in messages:
        try:
            reader.message(topic, msg)
        except InputRejected as exc:
            reader.rejected[exc.reason] += 1
            reader.first_rejection.setdefault(exc.reason, f"{topic}: {exc.detail}")
    never = [joint_map.to_hardware([n])[0] for n, s in reader.series.items() if len(s.stamps) < 2]
    if never:
        raise LogError(f"{source}: no samples (two at least) of {', '.join(never[:8])} on "
                       f"{', '.join(topics.types())}; rejected messages: "
                       f"{_rejections(reader.rejected, reader.first_rejection)}")
    return _sampled(model, reader, max_joint_age, source, joint_map)


def _counts(counter: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


def _rejections(rejected: Mapping[str, int], first: Mapping[str, str]) -> str:
    """Counts by reason, and the first refusal of each."""
    if not rejected:
        return "none"
    return f"{_counts(rejected)} (first: {'; '.join(first[r] for r in sorted(rejected))})"


def _sampled(model: Model, reader: _Reader, max_joint_age: float, source: str,
             joint_map: JointMap) -> RecordedLog:
    """The per-input series on the regular grid (module docstring)."""
    names = model.input_names
    stamps = [np.asarray(reader.series[n].stamps, dtype=np.int64) for n in names]
    # integer nanoseconds throughout: a float of an epoch stamp (1.7e18 ns) resolves 256 ns
    period_ns = max(1, int(round(min(float(np.median(np.diff(s))) for s in stamps))))
    # from the first recorded stamp to the last, so that the times before every input
    # started and after one stopped count
    first, end = min(int(s[0]) for s in stamps), max(int(s[-1]) for s in stamps)
    count = (end - first) // period_ns + 1
    if count > max_samples(model):
        too_many_samples(source, f"{count:,} samples at {period_ns * 1e-6:g} ms", model)
    grid = first + np.arange(count, dtype=np.int64) * period_ns
    age = int(max_joint_age * 1e9)
    missing, old = np.zeros(len(grid), bool), np.zeros(len(grid), bool)
    for s in stamps:
        after = np.searchsorted(s, grid, side="left")          # s[after-1] < t <= s[after]
        outside = (grid < s[0]) | (grid > s[-1])
        missing |= outside
        inside = np.clip(after, 1, len(s) - 1)
        lag = np.where(grid == s[np.minimum(after, len(s) - 1)], 0,
                       np.maximum(grid - s[inside - 1], s[inside] - grid))
        old |= ~outside & (lag > age)
    keep = ~missing & ~old
    dropped = Counter({"missing_name": int(np.count_nonzero(missing)),
                       "joint_too_old": int(np.count_nonzero(old & ~missing))})
    dropped = +dropped
    kept = np.flatnonzero(keep)
    if len(kept) < 2:
        raise LogError(f"{source}: no two times at which every input has a value stamped "
                       f"within max_joint_age {max_joint_age:g} s ({first * 1e-9:.3f} to "
                       f"{end * 1e-9:.3f} s); dropped: {_counts(dropped)}")
    if kept[-1] - kept[0] + 1 != len(kept):
        gap = int(kept[np.flatnonzero(np.diff(kept) > 1)[0]])
        raise LogError(f"{source}: a gap after {grid[gap] * 1e-9:.3f} s: "
                       f"{len(grid) - len(kept)} grid times without every input (dropped: "
                       f"{_counts(dropped)}; max_joint_age {max_joint_age:g} s), expected a "
                       "recording without gaps (trim it, or raise --max-joint-age)")
    t_ns = grid[kept]
    t = t_ns * 1e-9
    columns = {}
    for field_name in ("position", "velocity", "effort"):
        columns[field_name] = np.column_stack([
            np.interp(t_ns - first, stamps[k] - first,
                      _continuous(getattr(reader.series[n], field_name), n, reader.base,
                                  field_name))
            for k, n in enumerate(names)])
    velocity = columns["velocity"]
    xd = None if np.isnan(velocity).any() else velocity
    unmeasured = tuple(n for n in names if n in reader.without_effort)
    effort = columns["effort"]
    effort[:, [names.index(n) for n in unmeasured]] = np.nan
    if len(unmeasured) == len(names):
        raise LogError(f"{source}: no input's messages carry efforts (JointState.effort empty "
                       "or NaN), expected the measured efforts (N m or N) of the joints")
    if not np.any(np.nan_to_num(effort)):
        measured = [joint_map.to_hardware([n])[0] for n in names if n not in unmeasured]
        raise LogError(f"{source}: every effort ({', '.join(measured[:8])}"
                       f"{' ...' if len(measured) > 8 else ''}) is 0 in all {len(t_ns)} "
                       "samples, expected the measured efforts (N m or N)")
    return RecordedLog(Log(t, columns["position"], xd, effort), reader.rejected,
                       reader.first_rejection, dropped,
                       tuple(reader.ignored), unmeasured, period_ns * 1e-9,
                       tuple(joint_map.to_hardware(reader.conflicting)), dict(reader.without))


def _continuous(values: list[float], name: str, base: tuple[str, ...], field_name: str
                ) -> np.ndarray:
    """A series as interpolated: odometry's yaw made continuous across +-pi (the log keeps it
    so: the differentiation of positions needs no jumps)."""
    array = np.asarray(values, dtype=float)
    return np.unwrap(array) if base and name == base[2] and field_name == "position" else array


def is_recording(path: str | Path) -> bool:
    """A rosbag2 folder, or a file that begins as an MCAP, sqlite3 or zstd file does (a
    CSV log otherwise)."""
    path = Path(path)
    if path.is_dir():
        return True
    try:
        if not path.is_file():
            return False               # read_log names what it is
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError:                    # unreadable: read_log says why
        return False
    return head.startswith((MCAP_MAGIC, SQLITE_MAGIC, ZSTD_MAGIC))


def read_recording(path: str | Path, model: Model, topics: RobotTopics, joint_map: JointMap,
                   max_joint_age: float, max_bytes: int = MAX_RECORDING_BYTES) -> RecordedLog:
    """The log of a recording (``recordings.open_recording``): its topics checked against
    ``topics``' types (the actuator_states topic is optional: the lengths may come on
    joint_states), then :func:`read_recorded`."""
    recording = open_recording(path, max_bytes)
    wanted = topics.types()
    for topic, type_ in wanted.items():
        if topic != topics.actuator_states or topic in recording.topics:
            recording.require(topic, type_)
    present = [t for t in wanted if t in recording.topics]
    return read_recorded(model, ((m.topic, m.message) for m in recording.messages(present)),
                         topics, joint_map, max_joint_age, recording.path)


def read_any_log(path: str | Path, model: Model, topics: RobotTopics, joint_map: JointMap,
                 max_joint_age: float) -> tuple[Log, str]:
    """A recording (:func:`is_recording`) or a CSV log, and a line saying what of a
    recording was not used (empty for a CSV log)."""
    if not is_recording(path):
        return read_log(path, model), ""
    read = read_recording(path, model, topics, joint_map, max_joint_age)
    return read.log, summary(read)


def summary(read: RecordedLog) -> str:
    """What was read and what was not, by reason, in one line."""
    parts = [f"{len(read.log.t)} samples every {read.period * 1e3:g} ms"]
    if read.rejected:
        parts.append(f"messages refused: {_rejections(read.rejected, read.first_rejection)}")
    if read.dropped:
        parts.append(f"times without every input: {_counts(read.dropped)}")
    if read.ignored_names:
        parts.append(f"names not in the model, ignored: {_listed(read.ignored_names)}")
    if read.conflicting:
        parts.append(f"WARNING: joints given by two publishers (messages of different joint "
                     f"sets), their values merged as they came: {_listed(read.conflicting)}")
    if read.log.xd is None:
        parts.append("velocities differentiated from the positions (messages without "
                     "velocities)")
    if read.unmeasured:
        parts.append(f"inputs without efforts, not fitted: {_listed(read.unmeasured)}"
                     + (f" ({read.without['effort']} joint messages without efforts)"
                        if read.without.get("effort") else ""))
    return "; ".join(parts)


def _listed(names: Sequence[str]) -> str:
    """Up to 12 names, the whole within a line's reach."""
    return bounded(", ".join(names[:12]) + (" ..." if len(names) > 12 else ""), 600)
