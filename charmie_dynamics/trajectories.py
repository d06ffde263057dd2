"""Reference motions of the papers, as input arrays in ``model.input_names`` order.

* ``validation`` (seed 000 section 6, 5 s): every revolute input (base yaw included)
  accelerates at pi/9 rad/s^2, the two body actuators (act4, act5) at 3 mm/s^2, the base's
  linear coordinates (d1, d2) at 30 mm/s^2, with the sign negative for the first 2.5 s and
  positive for the last 2.5 s; start at rest at 0, the actuators at 400 mm; stops at 5 s.
* ``kinematic-validation`` (seed 001 section 4.4, 20 s): constant velocities: directly
  actuated revolute joints pi/36 rad/s, theta7c and theta8c pi/72 rad/s, linear coordinates
  and act4 5 mm/s, act5 2.5 mm/s; start at 0, act4 = 400 mm, act5 = 350 mm. The claws stay
  closed (the paper replaces them by their centre point).

A model with loops moves by its independent coordinates (:func:`motion_inputs`); its motions
(:data:`LOOP_REFERENCES`, the nodes' motions of the five-bar, seed 002 section 3.5):

* ``seed002-eq35``: eq. 22a, theta(t) = theta(0) + (theta(T) - theta(0)) / T
  (t - T / (2 pi) sin(2 pi t / T)), with eq. 35's data: 30 -> 90 deg and 30 -> 70.3 deg, T = 20 s;
* ``seed002-free-fall``: eq. 36's start, at rest at 80 and 70 deg (one sample: a start state,
  unactuated from there).
"""
from __future__ import annotations

import csv
import io
import itertools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from .documents import DEFAULT_MAX_BYTES, DocumentError, bounded, read_text
from .errors import InputError
from .kinematics.limits import POSITION_TOLERANCE, VELOCITY_TOLERANCE, InputLimits, Violation
from .model.model import Model

#: Most samples of a trajectory file: 10x the longest reference motion at its finest period
#: (20,001), 200 s at 1 kHz. ``analyze`` takes about 25 s and writes about 170 MB of CSV for
#: 200,000 (measured on 2 shared cores); 300,000 ran over a minute and 240 MB.
MAX_SAMPLES = 200_000


@dataclass(frozen=True)
class Trajectory:
    """Sampled inputs: t (N,), x, xd, xdd (N, n_inputs) in ``model.input_names`` order (of
    a model with loops, :func:`inputs_from_csv`'s: its independent coordinates only)."""

    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray


def coordinate_kinds(model: Model) -> dict[str, str]:
    """``"linear"`` or ``"angular"`` for each coordinate of a joint (by its first joint's
    type)."""
    joint = {}
    for b in model.bodies:
        joint.setdefault(b.coordinate, b.joint_type)
    return {c: "angular" if t.angular else "linear" for c, t in joint.items()}


def input_kinds(model: Model) -> list[str]:
    """``"actuator"``, ``"linear"`` or ``"angular"`` for each of ``model.input_names``."""
    actuators, kinds = set(model.actuator_names), coordinate_kinds(model)
    return ["actuator" if name in actuators else kinds[name] for name in model.input_names]


def _start(model: Model, actuator_start: dict[str, float]) -> np.ndarray:
    """Coordinates at 0; actuators at ``actuator_start`` where named, else at their default."""
    x0 = np.zeros(len(model.input_names))
    for a in model.actuators:
        x0[model.input_names.index(a.name)] = actuator_start.get(a.name, a.default_length)
    return x0


def validation(model: Model, dt: float = 0.01) -> Trajectory:
    """Seed 000 section 6: bang-bang accelerations over 5 s (see the module docstring)."""
    rates = {"actuator": 3e-3, "linear": 30e-3, "angular": np.pi / 9}
    accel = np.array([rates[k] for k in input_kinds(model)])
    x0 = _start(model, {a.name: 0.4 for a in model.actuators})
    t = np.linspace(0.0, 5.0, int(round(5.0 / dt)) + 1)
    half = 2.5
    first = t <= half
    tau = np.where(first, t, t - half)[:, None]
    # v and x at the switch, for the second half's initial conditions
    v_half = -accel * half
    x_half = x0 - 0.5 * accel * half ** 2
    sign = np.where(first, -1.0, 1.0)[:, None]
    xdd = sign * accel
    xd = np.where(first[:, None], -accel * tau, v_half + accel * tau)
    x = np.where(first[:, None], x0 - 0.5 * accel * tau ** 2,
                 x_half + v_half * tau + 0.5 * accel * tau ** 2)
    xdd[-1] = 0.0           # the robot is stopped at the end
    return Trajectory(t, x, xd, xdd)


def kinematic_validation(model: Model, dt: float = 0.01) -> Trajectory:
    """Seed 001 section 4.4: constant velocities over 20 s (see the module docstring)."""
    rates = {"actuator": 5e-3, "linear": 5e-3, "angular": np.pi / 36}
    special = {"theta7c": np.pi / 72, "theta8c": np.pi / 72, "act5": 2.5e-3,
               "theta13a": 0.0, "theta13b": 0.0}
    names = model.input_names
    vel = np.array([special.get(n, rates[k]) for n, k in zip(names, input_kinds(model))])
    x0 = _start(model, {"act4": 0.4, "act5": 0.35})
    t = np.linspace(0.0, 20.0, int(round(20.0 / dt)) + 1)
    x = x0 + t[:, None] * vel
    return Trajectory(t, x, np.broadcast_to(vel, x.shape).copy(), np.zeros_like(x))


MOTIONS: dict[str, Callable[[Model, float], Trajectory]] = {
    "validation": validation,
    "kinematic-validation": kinematic_validation,
}

EQ35 = ((30.0, 90.0), (30.0, 70.3), 20.0)          # deg, deg, s
EQ36 = (80.0, 70.0)                                # deg, at rest


def motion_inputs(model: Model) -> tuple[str, ...]:
    """The names a motion of ``model`` gives, in coordinate order: ``model.input_names`` for
    a tree; for a model with loops its independent coordinates (the declared ones and every
    coordinate outside the loops; the others are solved from the constraints)."""
    if model.loops is None:
        return tuple(model.input_names)
    dependent = {c for group in model.loops.groups for c in group.dependent}
    return tuple(n for c, n in enumerate(model.coordinate_names) if c not in dependent)


def sine_ramp(t: np.ndarray, start: float, end: float, T: float) -> tuple[np.ndarray, ...]:
    """Seed 002 eq. 22a and its first two derivatives."""
    w, k = 2 * math.pi / T, (end - start) / T
    return start + k * (t - np.sin(w * t) / w), k * (1 - np.cos(w * t)), k * w * np.sin(w * t)


def _two_inputs(model: Model, name: str) -> None:
    inputs = motion_inputs(model)
    if model.loops is None or len(inputs) != 2:
        raise InputError(f"motion '{name}': moves a five-bar (a model with loops and two "
                         f"independent coordinates); {model.name} has "
                         f"{'no loops' if model.loops is None else ', '.join(inputs)}")


def seed002_eq35(model: Model, dt: float = 0.01) -> Trajectory:
    """Seed 002 eqs. 22a and 35 on the two independent coordinates (module docstring)."""
    _two_inputs(model, "seed002-eq35")
    (a0, a1), (b0, b1), T = EQ35
    t = np.linspace(0.0, T, int(round(T / dt)) + 1)
    ramps = [sine_ramp(t, math.radians(s), math.radians(e), T) for s, e in ((a0, a1), (b0, b1))]
    x, xd, xdd = (np.stack([r[k] for r in ramps], axis=1) for k in range(3))
    return Trajectory(t, x, xd, xdd)


def seed002_free_fall(model: Model, dt: float = 0.01) -> Trajectory:
    """Seed 002 eq. 36's start: one sample at rest at 80 and 70 deg (module docstring)."""
    _two_inputs(model, "seed002-free-fall")
    x = np.radians(np.array([EQ36]))
    return Trajectory(np.zeros(1), x, np.zeros_like(x), np.zeros_like(x))


#: The nodes' motions of a model with loops, over :func:`motion_inputs`.
LOOP_REFERENCES: dict[str, Callable[[Model, float], Trajectory]] = {
    "seed002-eq35": seed002_eq35,
    "seed002-free-fall": seed002_free_fall,
}


def node_motion(model: Model, name: str, dt: float) -> Trajectory:
    """The motion ``name`` of the nodes (player, simulator) for ``model``: one of
    :data:`MOTIONS` for a tree, of :data:`LOOP_REFERENCES` for a model with loops (columns
    :func:`motion_inputs`); :class:`InputError` for a motion that does not move it."""
    motions = MOTIONS if model.loops is None else LOOP_REFERENCES
    if name not in motions:
        kind = "a tree" if model.loops is None else "loops"
        raise InputError(f"motion '{name}': {model.name} has {kind}, expected one of "
                         f"{', '.join(motions)}")
    return motions[name](model, dt)


# Sample periods of a reference motion: the 20 s motion has at most 20,001 samples at MIN_DT.
MIN_DT, MAX_DT = 1e-3, 0.5


def check_dt(dt: float, option: str = "--dt") -> None:
    """Raise :class:`InputError` for a sample period outside [MIN_DT, MAX_DT] (NaN too)."""
    if not MIN_DT <= dt <= MAX_DT:
        raise InputError(f"{option} {dt}: expected a sample period in [{MIN_DT:g}, {MAX_DT:g}] s")


def motion(model: Model, name: str, dt: float, check_position_limits: bool = False
           ) -> Trajectory:
    """The reference motion ``name`` (a key of :data:`MOTIONS`) sampled every ``dt``;
    :class:`InputError` for a bad ``dt`` or a sample beyond ``model``'s limits (another
    model's limits may be narrower than the motion): see :func:`violation`."""
    check_dt(dt)
    traj = MOTIONS[name](model, dt)
    bad = violation(model, traj, check_position_limits)
    if bad is not None:
        raise InputError(f"motion '{name}': sample {bad.sample} (time {traj.t[bad.sample]:g} s): "
                         f"{bad}")
    return traj


def violation(model: Model, traj: Trajectory, check_position_limits: bool = False
              ) -> Optional[Violation]:
    """The first sample of ``traj`` beyond the model's limits (:meth:`InputLimits.violation`
    with the dynamics node's default tolerances): every value within
    :data:`~charmie_dynamics.kinematics.limits.PLAUSIBLE`, speeds within the velocity limits,
    and positions within the joint limits only when ``check_position_limits`` (the papers'
    validation motion leaves CHARMIE's estimated joint limits on purpose)."""
    def columns(a: np.ndarray) -> dict[str, np.ndarray]:
        return {name: a[:, k] for k, name in enumerate(model.input_names)}
    return InputLimits.of(model).violation(
        columns(traj.x), columns(traj.xd),
        POSITION_TOLERANCE if check_position_limits else math.inf, VELOCITY_TOLERANCE,
        columns(traj.xdd))


class TrajectoryFileError(DocumentError):
    """A trajectory CSV that cannot be used; the message names the file, row or column."""


def csv_header(path: str, row: list[str], error: type[DocumentError]) -> list[str]:
    """The column names of a CSV file's first ``row``, stripped; raises ``error`` for a name
    given twice (a reader that took the first of two would use one silently)."""
    header = [h.strip() for h in row]
    if len(set(header)) != len(header):
        twice = sorted(h for h, k in Counter(header).items() if k > 1)
        raise error(f"{path}: duplicate column(s) {bounded(', '.join(twice))}, "
                    "expected each column once")
    return header


def from_csv(model: Model, path: str, max_bytes: int = DEFAULT_MAX_BYTES,
             check_position_limits: bool = False,
             columns: Optional[Sequence[str]] = None) -> Trajectory:
    """Read a trajectory CSV: a ``time`` column (s, increasing) and, per input of
    ``model.input_names`` (or of ``columns``, the inputs the file may give: a model with
    loops' independent coordinates), optional columns ``NAME``, ``NAME.velocity``,
    ``NAME.acceleration`` (SI units). Missing positions take the state defaults; missing rates
    are the central differences (``numpy.gradient``) of the positions and of the velocities.
    The file must be a regular UTF-8 file of at most ``max_bytes`` and :data:`MAX_SAMPLES`
    rows, every sample within the model's limits (:func:`violation`); raises
    :class:`TrajectoryFileError`.
    """
    text = read_text(path, "trajectory file", max_bytes, error=TrajectoryFileError)
    try:
        # the header, MAX_SAMPLES rows and one more to tell that there are too many
        rows = list(itertools.islice(csv.reader(io.StringIO(text, newline="")), MAX_SAMPLES + 2))
    except csv.Error as exc:            # e.g. a field over csv's size limit
        raise TrajectoryFileError(f"{path}: not a usable CSV file: {bounded(exc)}") from None
    if len(rows) < 3:
        raise TrajectoryFileError(f"{path}: expected a header and at least 2 rows")
    if len(rows) > MAX_SAMPLES + 1:
        raise TrajectoryFileError(f"{path}: more than {MAX_SAMPLES:,} rows of samples, expected "
                                  f"at most {MAX_SAMPLES:,} (split the motion into several files)")
    header = csv_header(path, rows[0], TrajectoryFileError)
    if "time" not in header:
        raise TrajectoryFileError(f"{path}: no 'time' column; columns: "
                                  f"{bounded(', '.join(header))}")
    names = model.input_names
    given = names if columns is None else columns
    allowed = {"time"} | {f"{n}{s}" for n in given for s in ("", ".velocity", ".acceleration")}
    unknown = [h for h in header if h not in allowed]
    if unknown:
        raise TrajectoryFileError(f"{path}: unknown column(s) {bounded(', '.join(unknown))}; "
                                  "expected time and NAME[.velocity|.acceleration] for NAME in "
                                  f"{bounded(', '.join(given))}")
    data = np.empty((len(rows) - 1, len(header)))
    for r, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise TrajectoryFileError(f"{path}: row {r} has {len(row)} values, expected "
                                      f"{len(header)}")
        for c, cell in enumerate(row):
            try:
                data[r - 2, c] = float(cell)
            except ValueError:
                raise TrajectoryFileError(f"{path}: row {r}, column {header[c]}: got "
                                          f"{bounded(repr(cell), 80)}, expected a number") from None
    if not np.all(np.isfinite(data)):
        raise TrajectoryFileError(f"{path}: NaN or infinite values, expected finite numbers")
    t = data[:, header.index("time")]
    if np.any(np.diff(t) <= 0):
        raise TrajectoryFileError(f"{path}: time must increase strictly from row to row")
    n = len(t)
    defaults = {a.name: a.default_length for a in model.actuators}
    x = np.array([defaults.get(nm, 0.0) for nm in names]) * np.ones((n, 1))
    xd, xdd = np.zeros_like(x), np.zeros_like(x)
    for k, nm in enumerate(names):
        if nm in header:
            x[:, k] = data[:, header.index(nm)]
        xd[:, k] = data[:, header.index(f"{nm}.velocity")] if f"{nm}.velocity" in header \
            else np.gradient(x[:, k], t)
        xdd[:, k] = data[:, header.index(f"{nm}.acceleration")] if f"{nm}.acceleration" in header \
            else np.gradient(xd[:, k], t)
    traj = Trajectory(t, x, xd, xdd)
    bad = violation(model, traj, check_position_limits)
    if bad is not None:
        suffix = {"position": "", "velocity": ".velocity", "acceleration": ".acceleration"}
        column = bad.name + suffix[bad.quantity]
        # a value the file does not hold is named by where it comes from
        origin = "" if column in header else " (not in the file: " + (
            "the default position" if bad.quantity == "position" else "the central difference "
            f"of {bad.name}{suffix['position' if bad.quantity == 'velocity' else 'velocity']} "
            "over time") + ")"
        raise TrajectoryFileError(f"{path}: row {bad.sample + 2}, column {column}{origin}: "
                                  f"{bad.value:.6g} {bad.why}")
    return traj


def inputs_from_csv(model: Model, path: str, inputs: Sequence[str],
                    check_position_limits: bool = False) -> Trajectory:
    """:func:`from_csv` of a file that gives only ``inputs`` (a model with loops: its
    independent coordinates): the trajectory of those inputs alone, in that order."""
    full = from_csv(model, path, check_position_limits=check_position_limits, columns=inputs)
    cols = [model.input_names.index(n) for n in inputs]
    return Trajectory(full.t, full.x[:, cols], full.xd[:, cols], full.xdd[:, cols])
