"""Turning measurements into model inputs, with the checks the dynamics node applies to every
message (pure Python: no rclpy here, so it is testable and reusable anywhere).

A message is either accepted whole or rejected whole with an :class:`InputRejected` whose
``reason`` is one of :data:`REASONS`: the node counts rejections by reason and reports them
in diagnostics; a rejected message never becomes a published number.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, NamedTuple, Optional, Sequence

import numpy as np

from ..kinematics.limits import PLAUSIBLE
from ..kinematics.limits import InputLimits as ModelLimits
from ..model.model import Model
from .joint_map import JointMap

REASONS = ("length_mismatch", "non_finite", "unknown_name", "duplicate_name", "missing_name",
           "joint_too_old", "out_of_range", "beyond_limits", "invalid_value", "stale_input",
           "time_backwards", "future_stamp", "throttled", "loop_singular", "loop_jump",
           "dependent_beyond_limits", "too_many_names")
#: Most names a joint_states or actuator_states message may hold (a robot has far fewer
#: joints): a larger one is ``too_many_names``, refused before its names are read, so a
#: flood of foreign names costs O(1) a message
MAX_JOINT_NAMES = 1000
#: How joint_states messages are read: ``merge`` (as robots send them: names the model does
#: not know ignored, partial messages merged joint by joint) or ``strict`` (every message
#: holds exactly the model's inputs, no other name).
JOINT_STATE_POLICIES = ("merge", "strict")


class InputRejected(ValueError):
    """A measurement that is not used; ``reason`` is one of :data:`REASONS`."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class JointStateValues(NamedTuple):
    positions: dict[str, float]
    velocities: dict[str, float]
    ignored: tuple[str, ...]          # names the model does not use (merge policy)


def named(names: Sequence[str], shown: Mapping[str, str]) -> str:
    """The first six of ``names`` for a rejection's text, each as ``shown`` maps it."""
    return ", ".join(shown.get(n, n) for n in names[:6])


def read_joint_state(names: Sequence[str], position: Sequence[float],
                     velocity: Sequence[float], allowed: Sequence[str],
                     required: Sequence[str] = (), effort: Sequence[float] = (),
                     policy: str = "strict", shown: Mapping[str, str] = {}
                     ) -> JointStateValues:
    """Positions and velocities by name from a sensor_msgs/JointState's arrays.

    ``velocity`` and ``effort`` may be empty (JointState's convention for "not measured":
    a velocity is then taken as 0; efforts are not used but their length is checked).
    ``strict``: every name must be ``allowed`` and every name of ``required`` present (a
    partial message would keep the others' old values looking fresh). ``merge``: names not
    ``allowed`` are returned as ``ignored`` (their values unchecked, a repeated one too: a
    wheel's NaN is not the model's concern) and ``required`` is not checked here (the
    assembler checks each joint's age instead). A name the model uses given twice is
    ``duplicate_name`` under either policy. The texts name an input as ``shown`` maps it (the
    robot's own name under a joint map).
    """
    if len(position) != len(names) or len(velocity) not in (0, len(names)) \
            or len(effort) not in (0, len(names)):
        raise InputRejected("length_mismatch", f"{len(names)} names, {len(position)} positions, "
                                               f"{len(velocity)} velocities, {len(effort)} efforts")
    given = set(names)
    if len(given) != len(names):
        seen: set[str] = set()
        twice = [n for n in names if n in seen or seen.add(n)]
        used = [n for n in twice if policy == "strict" or n in allowed]
        if used:
            raise InputRejected("duplicate_name", f"{shown.get(used[0], used[0])} appears twice")
    ignored: tuple[str, ...] = ()
    if not given.issubset(allowed):
        unknown = tuple(dict.fromkeys(n for n in names if n not in allowed))
        if policy == "strict":
            raise InputRejected("unknown_name", f"{', '.join(unknown[:5])} not among the "
                                                "model's inputs")
        ignored = unknown
        keep = [k for k, n in enumerate(names) if n in allowed]
        names = [names[k] for k in keep]
        position = [position[k] for k in keep]
        velocity = [velocity[k] for k in keep] if len(velocity) else velocity
    if policy == "strict" and not given.issuperset(required):
        missing = [n for n in required if n not in given]
        raise InputRejected("missing_name", f"{named(missing, shown)} not in the message")
    if not (np.isfinite(np.asarray(position, dtype=float)).all()
            and np.isfinite(np.asarray(velocity, dtype=float)).all()):
        raise InputRejected("non_finite", "NaN or infinite position or velocity")
    vel = dict(zip(names, velocity)) if len(velocity) else dict.fromkeys(names, 0.0)
    return JointStateValues(dict(zip(names, position)), vel, ignored)


def read_robot_joint_state(joint_map: JointMap, names: Sequence[str], position: Sequence[float],
                           velocity: Sequence[float], effort: Sequence[float],
                           allowed: Sequence[str], required: Sequence[str] = (),
                           policy: str = "merge") -> JointStateValues:
    """A joint_states or actuator_states message as the robot sends it (hardware names and
    units under ``joint_map``) in the model's names and units: ``too_many_names`` first (a
    flood of names costs O(1)), then :func:`read_joint_state` and the map's scale and offset
    (``non_finite`` where a converted value is not finite). ``ignored`` holds model names."""
    if len(names) > MAX_JOINT_NAMES:
        raise InputRejected("too_many_names", f"{len(names)} names, expected at most "
                                              f"{MAX_JOINT_NAMES}")
    values = read_joint_state(joint_map.message_to_model(names), position, velocity, allowed,
                              required, effort, policy, joint_map.hardware)
    if joint_map.converted:
        joint_map.convert(values.positions, values.velocities)
        if not (all(map(math.isfinite, values.positions.values()))
                and all(map(math.isfinite, values.velocities.values()))):
            raise InputRejected("non_finite", "a value is not finite after the joint map's "
                                              "scale and offset")
    return values


#: Most orders of names whose bounds ``InputLimits.within`` keeps (a healthy stream uses one
#: or two; a hostile one could send a new order with every message: about 1.2 kB each)
MAX_CACHED_ORDERS = 16


class InputLimits(ModelLimits):
    """The model's limits (:class:`charmie_dynamics.kinematics.limits.InputLimits`) with the
    node's rejection."""

    def check(self, positions: Mapping[str, float], velocities: Mapping[str, float],
              position_tolerance: float, velocity_tolerance: float,
              shown: Mapping[str, str] = {}) -> None:
        """Raise ``beyond_limits`` for the first value beyond the limits (``violation``),
        its input named as ``shown`` maps it.

        Values that pass :meth:`within` (every message of a healthy stream) skip ``violation``,
        which only names the first value beyond."""
        if self.within(positions, velocities, position_tolerance, velocity_tolerance):
            return
        problem = self.violation(positions, velocities, position_tolerance, velocity_tolerance)
        if problem is not None:
            raise InputRejected("beyond_limits", str(replace(
                problem, name=shown.get(problem.name, problem.name))))

    def within(self, positions: Mapping[str, float], velocities: Mapping[str, float],
               position_tolerance: float, velocity_tolerance: float) -> bool:
        """True only where ``violation`` finds nothing (the same comparisons, on arrays of
        the bounds built once per order of names); False where it may find something, or
        where the velocities' names are not the positions' (``violation`` decides)."""
        names = tuple(positions)
        if tuple(velocities) != names:
            return False
        bounds = self.__dict__.setdefault("_bounds_by_names", {})   # frozen: a cache, not state
        if names not in bounds:
            if len(bounds) >= MAX_CACHED_ORDERS:    # a publisher that shuffles its names
                bounds.clear()
            bounds[names] = tuple(np.array([d.get(n, none) for n in names]) for d, none in
                                  ((self.lower, -math.inf), (self.upper, math.inf),
                                   (self.velocity, math.inf)))
        lower, upper, speed = bounds[names]
        p = np.fromiter(positions.values(), float, len(names))
        v = np.fromiter(velocities.values(), float, len(names))
        ok = (np.abs(p) <= PLAUSIBLE) & (np.abs(v) <= PLAUSIBLE) \
            & (np.abs(v) <= speed * (1.0 + velocity_tolerance))
        if math.isfinite(position_tolerance):
            ok &= (lower - position_tolerance <= p) & (p <= upper + position_tolerance)
        return bool(ok.all())


def actuator_strokes(model: Model) -> dict[str, tuple[float, float]]:
    """Each actuator's stroke (lo, hi) m: the range where the loader checked its mechanism
    assembles."""
    return {j.actuator: j.stroke for j in model.compiled.indirect_joints}


def check_strokes(positions: Mapping[str, float], strokes: Mapping[str, tuple[float, float]],
                  shown: Mapping[str, str] = {}) -> None:
    """``out_of_range`` for an actuator length outside its stroke (``strokes``: actuator ->
    (lo, hi) m, where the loader checked the mechanism assembles), named as ``shown`` maps it."""
    for name, value in positions.items():
        if name in strokes:
            lo, hi = strokes[name]
            if not lo <= value <= hi:
                raise InputRejected("out_of_range", f"{shown.get(name, name)} = {value!r} m "
                                                    f"outside [{lo:.4g}, {hi:.4g}] m")


@dataclass
class StateAssembler:
    """Latest measurement of every model input; assembles input arrays for one evaluation.

    Inputs come from joint_states (any input), actuator_states (actuator lengths) and, when
    ``base_from_odometry``, an odometry message (the planar base coordinates). For a model
    with loops the inputs are its independent coordinates (``inputs``) and the dependent
    ones are ``ignored``: a message may carry them (a driver publishing every joint), they
    are checked like the others and never evaluated (the evaluator solves them).
    """

    model: Model
    base_coordinates: tuple[str, ...] = ()       # set when the base comes from odometry
    inputs: tuple[str, ...] = ()                 # the evaluated inputs; () model.input_names
    ignored: tuple[str, ...] = ()                # names accepted, checked and not evaluated
    shown: Mapping[str, str] = field(default_factory=dict)     # an input's name in the texts
    positions: dict[str, float] = field(default_factory=dict)
    velocities: dict[str, float] = field(default_factory=dict)
    received: dict[str, float] = field(default_factory=dict)   # arrival time of each value
    stamps: dict[str, int] = field(default_factory=dict)       # header stamp of each, ns

    def __post_init__(self) -> None:
        self.names = self.inputs or self.model.input_names
        self.strokes = actuator_strokes(self.model)
        self._accepted = tuple(n for n in self.names + self.ignored
                               if n not in self.base_coordinates)
        actuators = set(self.model.actuator_names)
        self._required = tuple(n for n in self.names
                               if n not in actuators and n not in self.base_coordinates)

    def accepted_names(self) -> tuple[str, ...]:
        """Names joint_states may carry: every input (and ignored name) but the base's when
        it comes from odometry."""
        return self._accepted

    def required_names(self) -> tuple[str, ...]:
        """Names every joint_states must carry: the joint coordinates (the actuator lengths may
        come from actuator_states instead)."""
        return self._required

    def update(self, positions: Mapping[str, float], velocities: Mapping[str, float],
               now: float = 0.0, stamp: Optional[int] = None) -> None:
        """Store a checked measurement received at ``now`` (raises ``out_of_range`` for an
        actuator length). With its header ``stamp`` (ns; the merge policy), a value older
        than the one kept for its name (a slower publisher's) does not replace it."""
        check_strokes(positions, self.strokes, self.shown)
        if stamp is not None:
            kept = self.stamps
            newer = [n for n in positions if kept.get(n, stamp) <= stamp]
            if len(newer) < len(positions):
                positions = {n: positions[n] for n in newer}
                velocities = {n: velocities[n] for n in newer if n in velocities}
            kept.update(dict.fromkeys(newer, stamp))
        self.positions.update(positions)
        self.velocities.update(velocities)
        self.received.update(dict.fromkeys(positions, now))

    def anything_new(self, names: Iterable[str], stamp: int) -> bool:
        """Whether a message stamped ``stamp`` brings a value of one of ``names`` no older
        than the one kept (else it is wholly older: ``time_backwards``, or a clock jump)."""
        kept = self.stamps
        return any(kept.get(n, stamp) <= stamp for n in names)

    def merged_stamp(self, max_age_ns: int) -> int:
        """The stamp of the merged joint state (merge policy): the newest stamp of the
        required joints, each of which must have a value stamped at most ``max_age_ns``
        before it (``missing_name`` for a joint never received, ``joint_too_old`` for one
        older; each names the joints)."""
        stamps = self.stamps
        missing = [n for n in self._required if n not in stamps]
        if missing:
            raise InputRejected("missing_name", f"no measurement yet of "
                                                f"{named(missing, self.shown)}")
        newest = max((stamps[n] for n in self._required), default=0)
        old = [n for n in self._required if newest - stamps[n] > max_age_ns]
        if old:
            raise InputRejected("joint_too_old", f"{named(old, self.shown)} stamped more than "
                                                 f"{max_age_ns * 1e-9:g} s before the newest "
                                                 f"joint ({newest * 1e-9:.9f} s)")
        return newest

    def assemble(self, now: float = 0.0, max_age: float = math.inf
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Input positions and velocities in ``names`` order; every value must have
        been received at most ``max_age`` before ``now``."""
        missing = [n for n in self.names if n not in self.positions]
        if missing:
            raise InputRejected("missing_name", f"no measurement yet of "
                                                f"{named(missing, self.shown)}")
        # a value "received" after now (the node clock went back) is as unusable as an old one
        old = [n for n in self.names if not 0.0 <= now - self.received[n] <= max_age]
        if old:
            raise InputRejected("stale_input", f"{named(old, self.shown)} older than "
                                               f"{max_age:g} s")
        return (np.array([self.positions[n] for n in self.names]),
                np.array([self.velocities.get(n, 0.0) for n in self.names]))


@dataclass
class AccelerationEstimator:
    """Acceleration from measured velocities: differences through a first-order low-pass
    filter with cut-off ``cutoff_hz`` (the ``estimate`` acceleration source). Times are
    integer nanoseconds (a float of seconds since 1970 resolves only about 240 ns)."""

    cutoff_hz: float
    _last_t: Optional[int] = None
    _last_v: Optional[np.ndarray] = None
    _estimate: Optional[np.ndarray] = None

    def update(self, t_ns: int, v: np.ndarray) -> np.ndarray:
        if self._last_t is None or t_ns < self._last_t:   # first sample, or time reset
            self._last_t, self._last_v = t_ns, v.copy()
            self._estimate = np.zeros_like(v)
            return self._estimate.copy()
        if t_ns == self._last_t:                          # same instant: nothing new to learn
            return self._estimate.copy()
        dt = (t_ns - self._last_t) * 1e-9
        raw = (v - self._last_v) / dt
        alpha = dt / (dt + 1.0 / (2.0 * math.pi * self.cutoff_hz))
        self._estimate = self._estimate + alpha * (raw - self._estimate)
        self._last_t, self._last_v = t_ns, v.copy()
        return self._estimate.copy()


@dataclass
class ReferenceTrajectory:
    """A desired trajectory (trajectory_msgs/JointTrajectory) sampled at a state's time: the
    ``reference`` acceleration source. Accelerations are interpolated linearly between
    points; before the first point or after the last, the end values hold."""

    names: tuple[str, ...]
    times: np.ndarray             # absolute, s
    accelerations: np.ndarray     # (n_points, n_names)

    def sample(self, t: float) -> np.ndarray:
        """Accelerations at ``t``, in ``names`` order (one interpolation for every name)."""
        times = self.times
        if t <= times[0]:
            return self.accelerations[0].copy()
        if t >= times[-1]:
            return self.accelerations[-1].copy()
        k = int(np.searchsorted(times, t, side="right"))       # times[k-1] <= t < times[k]
        w = (t - times[k - 1]) / (times[k] - times[k - 1])
        return (1.0 - w) * self.accelerations[k - 1] + w * self.accelerations[k]
