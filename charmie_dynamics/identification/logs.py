"""Logs of measured motion and efforts: MCAP (rosbag2's default storage) and CSV.

MCAP, as ``ros2 bag record`` writes it (CDR-encoded ``sensor_msgs/msg/JointState``):

* ``/joint_states``: the inputs that are joint coordinates (``model.input_names`` without the
  actuators): ``position`` (rad or m), ``velocity``, and ``effort``, the measured motor effort
  (N m or N: motor current times torque constant, as the robot's drivers publish it);
* ``/actuator_states``: the linear actuators (the dynamics node's ``actuator_states_topic``):
  ``position`` = length (m), ``velocity`` (m/s), and ``effort``, the measured axial force (N,
  positive pushes: a load cell, or motor current times force constant).

The efforts are the ``effort`` fields of these two topics, in the dynamics node's convention
(its ``actuator_loads`` output, plus friction). The time of a sample is its header stamp;
actuator samples are interpolated (linearly, never extrapolated: their stamps must increase
and span the joint_states stamps) to the joint_states stamps. A missing velocity
(an empty array, JointState's "not measured") is differentiated from the positions.

CSV: a ``time`` column (s), and per input ``NAME``, ``NAME.velocity`` (optional) and
``NAME.effort`` (the trajectory files' columns, trajectories.py, plus the efforts).
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NoReturn, Optional, Sequence

import numpy as np

from ..documents import DocumentError, bounded, decode_text, read_bytes
from ..model.model import Model
from ..trajectories import csv_header
from .regressor import parameter_layout

JOINT_STATES, ACTUATOR_STATES = "/joint_states", "/actuator_states"
JOINT_STATE = "sensor_msgs/msg/JointState"
#: The message definition as rosbag2 stores it (the type, then each dependency)
JOINT_STATE_DEFINITION = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""
MCAP_MAGIC = b"\x89MCAP0\r\n"
#: Largest log read: 256 MiB (a 20 s, 1 kHz MCAP log of CHARMIE is about 3 MiB).
MAX_LOG_BYTES = 256 * 1024 * 1024
#: Largest |effort| read, N m or N: CHARMIE's largest is about 500 N; more is another unit
#: or garbage (1e300 overflowed the estimate).
MAX_EFFORT = 1e6
#: Largest regressor of a log (identification builds it whole): 2 GiB, 42,900 samples of
#: CHARMIE (21 inputs x 298 parameters), 43 s at 1 kHz.
MAX_REGRESSOR_BYTES = 2 * 1024 ** 3


class LogError(DocumentError):
    """A log that cannot be used; the message names the file and the topic, column or row."""


def _mcap(path: str) -> tuple:
    """make_reader, DecoderFactory and Writer, imported on first use: the mcap packages are
    required on Python 3.11+ (setup.py) but not on ROS 2 Humble's Python 3.10 (no apt
    package), where the rest of the command line must keep working."""
    try:
        from mcap.reader import make_reader
        from mcap_ros2.decoder import DecoderFactory
        from mcap_ros2.writer import Writer
    except ImportError as exc:
        raise LogError(f"{path}: MCAP logs need the mcap and mcap-ros2-support packages ({exc}): "
                       "python3 -m pip install 'mcap>=1.1' 'mcap-ros2-support>=0.5'; or use "
                       "a CSV log") from None
    return make_reader, DecoderFactory, Writer


@dataclass(frozen=True)
class Log:
    """Samples in ``model.input_names`` order: t (N,) s; x, xd, effort (N, n_inputs) SI;
    ``xd`` None where the log holds no velocities."""

    t: np.ndarray
    x: np.ndarray
    xd: Optional[np.ndarray]
    effort: np.ndarray


def _split(model: Model) -> tuple[list[int], list[int]]:
    """Indices of the joint inputs and of the actuator inputs in ``model.input_names``."""
    actuators = set(model.actuator_names)
    joints = [k for k, n in enumerate(model.input_names) if n not in actuators]
    return joints, [model.input_names.index(a) for a in model.actuator_names]


def write_mcap(path: str | Path, model: Model, log: Log) -> None:
    """Write ``log`` as /joint_states and /actuator_states (module docstring)."""
    Writer = _mcap(str(path))[2]
    joints, actuators = _split(model)
    names = model.input_names
    with open(path, "wb") as f:
        writer = Writer(f)
        schema = writer.register_msgdef(JOINT_STATE, JOINT_STATE_DEFINITION)
        for s, t in enumerate(log.t):
            ns = int(round(t * 1e9))
            stamp = {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}
            for topic, cols in ((JOINT_STATES, joints), (ACTUATOR_STATES, actuators)):
                if not cols:
                    continue
                message = {"header": {"stamp": stamp, "frame_id": ""},
                           "name": [names[k] for k in cols],
                           "position": log.x[s, cols].tolist(),
                           "velocity": [] if log.xd is None else log.xd[s, cols].tolist(),
                           "effort": log.effort[s, cols].tolist()}
                writer.write_message(topic, schema, message, log_time=ns, publish_time=ns)
        writer.finish()


def _fields(path: str, topic: str, s: int, msg: object
            ) -> tuple[float, list[str], dict[str, np.ndarray]]:
    """Stamp (s), names and the position, velocity, effort arrays of message ``s``, refused
    in one line when its schema is not JointState's (a ``name`` of numbers, no header)."""
    where = f"{path}: {topic} message {s}"
    try:
        stamp = msg.header.stamp            # type: ignore[attr-defined]
        t = float(stamp.sec) + 1e-9 * float(stamp.nanosec)
    except (AttributeError, TypeError, ValueError):
        raise LogError(f"{where}: no header.stamp (sec, nanosec), expected {JOINT_STATE}"
                       ) from None
    names = getattr(msg, "name", None)
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise LogError(f"{where}: field name is not a string[], expected {JOINT_STATE}")
    arrays = {}
    for field in ("position", "velocity", "effort"):
        values = np.asarray(getattr(msg, field, None))
        if values.ndim != 1 or (values.size and values.dtype.kind not in "fiu"):
            raise LogError(f"{where}: field {field} is not a float64[], expected {JOINT_STATE}")
        arrays[field] = values.astype(float)
    return t, list(names), arrays


def _topic_arrays(path: str, topic: str, messages: list, wanted: list[str]
                  ) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray], np.ndarray]:
    """t, position, velocity (or None), effort of one topic's messages for ``wanted`` names."""
    if not messages:
        raise LogError(f"{path}: no {topic} messages, expected sensor_msgs/msg/JointState "
                       f"with {bounded(', '.join(wanted))}")
    n, m = len(messages), len(wanted)
    t = np.empty(n)
    position, velocity, effort = np.empty((n, m)), np.empty((n, m)), np.empty((n, m))
    has_velocity = True
    for s, msg in enumerate(messages):
        t[s], names, arrays = _fields(path, topic, s, msg)
        index = {name: k for k, name in enumerate(names)}
        missing = [w for w in wanted if w not in index]
        if missing:
            raise LogError(f"{path}: {topic} message {s}: no {bounded(', '.join(missing))}; "
                           f"names: {bounded(', '.join(names))}")
        for field, out in (("position", position), ("effort", effort)):
            values = arrays[field]
            if len(values) != len(names):
                raise LogError(f"{path}: {topic} message {s}: {len(values)} values in {field}, "
                               f"expected {len(names)} (one per name)")
            out[s] = [values[index[w]] for w in wanted]
        values = arrays["velocity"]
        has_velocity = has_velocity and len(values) == len(names)
        if has_velocity:
            velocity[s] = [values[index[w]] for w in wanted]
    _check_bound(path, effort, lambda s, k: f"{topic} message {s}, effort of {wanted[k]}")
    return t, position, velocity if has_velocity else None, effort


def _from_mcap(path: str, data: bytes, model: Model) -> Log:
    """A log from an MCAP file's bytes (module docstring)."""
    make_reader, DecoderFactory, _ = _mcap(path)
    messages: dict[str, list] = {JOINT_STATES: [], ACTUATOR_STATES: []}
    cap = max_samples(model)
    try:
        reader = make_reader(io.BytesIO(data), decoder_factories=[DecoderFactory()])
        for _, channel, _, decoded in reader.iter_decoded_messages(topics=list(messages)):
            if len(messages[channel.topic]) == cap:
                _too_many(path, f"more than {cap:,} {channel.topic} messages", model)
            messages[channel.topic].append(decoded)
    except LogError:
        raise
    except Exception as exc:          # the reader's and decoder's errors have no common base
        raise LogError(f"{path}: not a readable MCAP log: {type(exc).__name__}: "
                       f"{bounded(exc)}") from None
    joints, actuators = _split(model)
    names = model.input_names
    t, x_j, xd_j, u_j = _topic_arrays(path, JOINT_STATES, messages[JOINT_STATES],
                                      [names[k] for k in joints])
    n = len(names)
    x, effort = np.empty((len(t), n)), np.empty((len(t), n))
    xd: Optional[np.ndarray] = np.empty((len(t), n))
    x[:, joints], effort[:, joints] = x_j, u_j
    if xd_j is None:
        xd = None
    else:
        xd[:, joints] = xd_j
    if actuators:
        t_a, x_a, xd_a, u_a = _topic_arrays(path, ACTUATOR_STATES,
                                            messages[ACTUATOR_STATES],
                                            [names[k] for k in actuators])
        _check_cover(path, t, t_a)
        for col, k in enumerate(actuators):
            x[:, k] = np.interp(t, t_a, x_a[:, col])
            effort[:, k] = np.interp(t, t_a, u_a[:, col])
            if xd is not None and xd_a is not None:
                xd[:, k] = np.interp(t, t_a, xd_a[:, col])
        if xd_a is None:
            xd = None
    return _checked(path, Log(t, x, xd, effort), names)


def _check_cover(path: str, t: np.ndarray, t_a: np.ndarray) -> None:
    """Actuator samples are interpolated to the joint stamps, never extrapolated: their stamps
    must increase and span the joint samples' (within half an actuator period)."""
    back = np.flatnonzero(np.diff(t_a) <= 0) if len(t_a) > 1 else np.array([], int)
    if back.size:
        s = int(back[0]) + 1
        raise LogError(f"{path}: {ACTUATOR_STATES} message {s}: stamp {t_a[s]:.9f} s is not "
                       f"after message {s - 1}'s {t_a[s - 1]:.9f} s, expected increasing "
                       "stamps (messages in the order they were stamped)")
    margin = 0.5 * float(np.median(np.diff(t_a))) if len(t_a) > 1 else 0.0
    outside = int(np.count_nonzero((t < t_a[0] - margin) | (t > t_a[-1] + margin)))
    if outside:
        raise LogError(f"{path}: {ACTUATOR_STATES} cover {t_a[0]:.3f} to {t_a[-1]:.3f} s, "
                       f"{JOINT_STATES} {t.min():.3f} to {t.max():.3f} s: {outside} joint "
                       "samples have no actuator sample around them, expected both topics "
                       "over the same span (trim the log to it)")


def write_csv(path: str | Path, model: Model, log: Log) -> None:
    """Write ``log`` as CSV (module docstring)."""
    header = ["time"]
    columns = [log.t[:, None]]
    for k, name in enumerate(model.input_names):
        header.append(name)
        columns.append(log.x[:, k:k + 1])
        if log.xd is not None:
            header.append(f"{name}.velocity")
            columns.append(log.xd[:, k:k + 1])
        header.append(f"{name}.effort")
        columns.append(log.effort[:, k:k + 1])
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(header)
        out.writerows(np.hstack(columns).tolist())


def _from_csv(path: str, data: bytes, model: Model) -> Log:
    """A log from a CSV file's bytes (module docstring), parsed row by row into one array
    (a list of every row's strings took 20x the file's size)."""
    text = decode_text(data, path, "CSV log", LogError)
    cap = max_samples(model)
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        header = csv_header(path, next(rows, []), LogError)
        names = model.input_names
        required = ["time"] + list(names) + [f"{n}.effort" for n in names]
        missing = [h for h in required if h not in header]
        if missing:
            raise LogError(f"{path}: missing column(s) {bounded(', '.join(missing))}; expected "
                           "time, NAME, NAME.effort and optionally NAME.velocity per input")
        # every row ends in a line break: this many rows at most, and the cap's one more
        lines = text.count("\n") + text.count("\r") + 1
        values = np.empty((min(lines, cap + 1), len(header)))
        n = 0
        for row in rows:
            if n == cap:
                _too_many(path, f"more than {cap:,} rows", model)
            if len(row) != len(header):
                raise LogError(f"{path}: row {n + 2} has {len(row)} values, expected "
                               f"{len(header)}")
            try:
                values[n] = [float(v) for v in row]
            except ValueError as exc:
                raise LogError(f"{path}: row {n + 2}: {bounded(exc)}, expected numbers"
                               ) from None
            n += 1
    except csv.Error as exc:            # e.g. a field over csv's size limit
        raise LogError(f"{path}: not a usable CSV log: {bounded(exc)}") from None
    if n < 1:
        raise LogError(f"{path}: expected a header and at least one row of samples")
    values = values[:n]

    def column(name: str) -> np.ndarray:
        return values[:, header.index(name)]
    effort = np.column_stack([column(f"{n}.effort") for n in names])
    _check_bound(path, effort, lambda s, k: f"row {s + 2}, column {names[k]}.effort")
    velocity = all(f"{n}.velocity" in header for n in names)
    return _checked(path, Log(
        column("time"), np.column_stack([column(n) for n in names]),
        np.column_stack([column(f"{n}.velocity") for n in names]) if velocity else None,
        effort), names)


def _check_bound(path: str, effort: np.ndarray, where: Callable[[int, int], str]) -> None:
    """Refuse an effort beyond :data:`MAX_EFFORT`, naming its place ``where(sample, column)``
    (a log in other units, or garbage, whose estimate would overflow)."""
    beyond = np.argwhere(~(np.abs(effort) <= MAX_EFFORT))
    if len(beyond):
        s, k = beyond[0]
        raise LogError(f"{path}: {where(s, k)}: effort {effort[s, k]:.6g}, expected "
                       f"|effort| <= {MAX_EFFORT:g} (N m or N)")


def max_samples(model: Model) -> int:
    """The most samples of a log for ``model``: its regressor (samples x inputs x
    parameters, float64) within :data:`MAX_REGRESSOR_BYTES`."""
    per_sample = 8 * len(model.input_names) * len(parameter_layout(model))
    return max(1, MAX_REGRESSOR_BYTES // per_sample)


def _too_many(path: str, count: str, model: Model) -> NoReturn:
    raise LogError(f"{path}: {count} of samples, expected at most {max_samples(model):,} for "
                   f"{model.name} (its regressor within {MAX_REGRESSOR_BYTES / 2**30:g} GiB): "
                   "decimate the log or split it")


def _checked(path: str, log: Log, names: Sequence[str]) -> Log:
    arrays = [log.t, log.x, log.effort] + ([] if log.xd is None else [log.xd])
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise LogError(f"{path}: NaN or infinite values, expected finite numbers")
    if len(log.t) < 2 or np.any(np.diff(log.t) <= 0):
        raise LogError(f"{path}: times must increase strictly over at least 2 samples")
    if not np.any(log.effort):
        raise LogError(f"{path}: every effort ({bounded(', '.join(names))}) is 0 in all "
                       f"{len(log.t)} samples, expected the measured efforts (N m or N)")
    return log


def read_log(path: str | Path, model: Model, max_bytes: int = MAX_LOG_BYTES) -> Log:
    """An MCAP log (recognised by its magic bytes) or a CSV log (module docstring), read
    through the package's input guard; raises :class:`LogError`."""
    data = read_bytes(path, "log", max_bytes, error=LogError)
    parse = _from_mcap if data.startswith(MCAP_MAGIC) else _from_csv
    return parse(str(path), data, model)


def write_log(path: str | Path, model: Model, log: Log) -> None:
    """MCAP for a path ending in ``.mcap``, CSV otherwise."""
    (write_mcap if str(path).endswith(".mcap") else write_csv)(path, model, log)
