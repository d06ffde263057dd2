"""Logs of measured motion and efforts: CSV files, and the messages ``record`` writes into a
recording (recordings/: a rosbag2 folder or a single MCAP file; the robot's recordings are
read by ros/tools/recorded_inputs.py, as the dynamics node reads its inputs).

The messages (CDR-encoded ``sensor_msgs/msg/JointState``):

* ``/joint_states``: the inputs that are joint coordinates (``model.input_names`` without the
  actuators): ``position`` (rad or m), ``velocity``, and ``effort``, the measured motor effort
  (N m or N: motor current times torque constant, as the robot's drivers publish it);
* ``/actuator_states``: the linear actuators (the dynamics node's ``actuator_states_topic``):
  ``position`` = length (m), ``velocity`` (m/s), and ``effort``, the measured axial force (N,
  positive pushes: a load cell, or motor current times force constant).

The efforts are the ``effort`` fields of these two topics, in the dynamics node's convention
(its ``actuator_loads`` output, plus friction). The time of a sample is its header stamp. A
missing velocity (an empty array, JointState's "not measured") is differentiated from the
positions.

CSV: a ``time`` column (s), and per input ``NAME``, ``NAME.velocity`` (optional) and
``NAME.effort`` (the trajectory files' columns, trajectories.py, plus the efforts).
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Optional, Sequence

import numpy as np

from ..documents import DocumentError, bounded, decode_text, read_bytes
from ..model.model import Model
from ..recordings import JOINT_STATE, JOINT_STATE_DEFINITION
from ..recordings.writer import write_mcap_file
from ..trajectories import csv_header
from .regressor import parameter_layout

JOINT_STATES, ACTUATOR_STATES = "/joint_states", "/actuator_states"
#: Largest CSV log read: 256 MiB.
MAX_LOG_BYTES = 256 * 1024 * 1024
#: Largest |effort| read, N m or N: CHARMIE's largest is about 500 N; more is another unit
#: or garbage (1e300 overflowed the estimate).
MAX_EFFORT = 1e6
#: Largest regressor of a log (identification builds it whole): 2 GiB, 42,900 samples of
#: CHARMIE (21 inputs x 298 parameters), 43 s at 1 kHz.
MAX_REGRESSOR_BYTES = 2 * 1024 ** 3


class LogError(DocumentError):
    """A log that cannot be used; the message names the file and the topic, column or row."""


@dataclass(frozen=True)
class Log:
    """Samples in ``model.input_names`` order: t (N,) s; x, xd, effort (N, n_inputs) SI;
    ``xd`` None where the log holds no velocities; an input's effort NaN in every sample where
    the log holds none (a recording's base from odometry: not fitted)."""

    t: np.ndarray
    x: np.ndarray
    xd: Optional[np.ndarray]
    effort: np.ndarray


def _split(model: Model) -> tuple[list[int], list[int]]:
    """Indices of the joint inputs and of the actuator inputs in ``model.input_names``."""
    actuators = set(model.actuator_names)
    joints = [k for k, n in enumerate(model.input_names) if n not in actuators]
    return joints, [model.input_names.index(a) for a in model.actuator_names]


def log_messages(model: Model, log: Log, names: Optional[Sequence[str]] = None
                 ) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(topic, stamp ns, message fields) of ``log``, sample by sample: /joint_states and
    /actuator_states (module docstring); ``names``: each input's name in the messages (the
    model's by default; a robot's under a joint map)."""
    joints, actuators = _split(model)
    names = list(names or model.input_names)
    for s, t in enumerate(log.t):
        ns = int(round(t * 1e9))
        stamp = {"sec": ns // 1_000_000_000, "nanosec": ns % 1_000_000_000}
        for topic, cols in ((JOINT_STATES, joints), (ACTUATOR_STATES, actuators)):
            if cols:
                yield topic, ns, {"header": {"stamp": stamp, "frame_id": ""},
                                  "name": [names[k] for k in cols],
                                  "position": log.x[s, cols].tolist(),
                                  "velocity": [] if log.xd is None else log.xd[s, cols].tolist(),
                                  "effort": log.effort[s, cols].tolist()}


def write_mcap(path: str | Path, model: Model, log: Log) -> None:
    """Write ``log`` as one MCAP file (:func:`log_messages`)."""
    joint_state = (JOINT_STATE, JOINT_STATE_DEFINITION)
    write_mcap_file(Path(path), {JOINT_STATES: joint_state, ACTUATOR_STATES: joint_state},
                    log_messages(model, log))


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
                too_many_samples(path, f"more than {cap:,} rows of samples", model)
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


def too_many_samples(source: str, count: str, model: Model) -> NoReturn:
    """Refuse a log of more than :func:`max_samples` samples (``count`` says how many)."""
    raise LogError(f"{source}: {count}, expected at most {max_samples(model):,} for "
                   f"{model.name} (its regressor within {MAX_REGRESSOR_BYTES / 2**30:g} GiB): "
                   "decimate the log, trim it or split it")


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
    """A CSV log (module docstring), read through the package's input guard; raises
    :class:`LogError`."""
    return _from_csv(str(path), read_bytes(path, "log", max_bytes, error=LogError), model)


def write_log(path: str | Path, model: Model, log: Log) -> None:
    """One MCAP file for a path ending in ``.mcap``, CSV otherwise."""
    (write_mcap if str(path).endswith(".mcap") else write_csv)(path, model, log)
