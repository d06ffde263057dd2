"""Turning measurements into model inputs, with the checks the dynamics node applies to every
message (pure Python: no rclpy here, so it is testable and reusable anywhere).

A message is either accepted whole or rejected whole with an :class:`InputRejected` whose
``reason`` is one of :data:`REASONS`: the node counts rejections by reason and reports them
in diagnostics; a rejected message never becomes a published number.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping, NamedTuple, Optional, Sequence

import numpy as np

from ... import jit
from ...evaluators.measurements import (PASSED, anything_newer, check_measurement, gather_inputs,
                                        store_measurement)
from ...kinematics.limits import PLAUSIBLE
from ...kinematics.limits import InputLimits as ModelLimits
from ...model.model import Model
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
#: Most orders of names whose layout, slots or bounds are kept (a healthy stream uses one or
#: two; a hostile one could send a new order with every message: about 1.2 kB each)
MAX_CACHED_ORDERS = 16


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


@dataclass(frozen=True, eq=False)
class MessageLayout:
    """What a message's names alone decide, worked out once per order of names
    (:class:`JointStateParser`): the model names kept, where they sit in the message, the names
    ignored, the joint map's factors, or the rejection every message with these names gets."""

    names: tuple[str, ...]                 # the model names kept, in the message's order
    keep: Optional[np.ndarray]             # their indices in the message (None: every entry)
    ignored: tuple[str, ...] = ()          # names the model does not use (merge policy)
    scale: Optional[np.ndarray] = None     # model value = scale * value + offset (None: none
    offset: Optional[np.ndarray] = None    # of ``names`` converted)
    rejection: Optional[tuple[str, str]] = None    # (reason, detail) for any such message


def message_layout(names: Sequence[str], allowed: Sequence[str], required: Sequence[str] = (),
                   policy: str = "strict", shown: Mapping[str, str] = {}) -> MessageLayout:
    """The names' part of :func:`read_joint_state` (``names``: model names)."""
    given = set(names)
    if len(given) != len(names):
        seen: set[str] = set()
        twice = [n for n in names if n in seen or seen.add(n)]
        used = [n for n in twice if policy == "strict" or n in allowed]
        if used:
            return MessageLayout((), None, rejection=(
                "duplicate_name", f"{shown.get(used[0], used[0])} appears twice"))
    if given.issubset(allowed):
        kept, keep, ignored = tuple(names), None, ()
    else:
        ignored = tuple(dict.fromkeys(n for n in names if n not in allowed))
        if policy == "strict":
            return MessageLayout((), None, rejection=(
                "unknown_name", f"{', '.join(ignored[:5])} not among the model's inputs"))
        indices = [k for k, n in enumerate(names) if n in allowed]
        kept, keep = tuple(names[k] for k in indices), np.array(indices, dtype=np.intp)
    if policy == "strict" and not given.issuperset(required):
        missing = [n for n in required if n not in given]
        return MessageLayout((), None, rejection=(
            "missing_name", f"{named(missing, shown)} not in the message"))
    return MessageLayout(kept, keep, ignored)


def _values(layout: MessageLayout, names: Sequence[str], position: Sequence[float],
            velocity: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The kept positions and velocities of a message with ``layout`` whose lengths and names
    passed (:func:`_check_lengths`): finiteness, then the joint map's conversion."""
    p = np.array(position, dtype=float)
    v = np.array(velocity, dtype=float) if len(velocity) else np.zeros(len(names))
    if layout.keep is not None:
        p, v = p[layout.keep], v[layout.keep]
    if not (np.isfinite(p).all() and np.isfinite(v).all()):
        raise InputRejected("non_finite", "NaN or infinite position or velocity")
    if layout.scale is not None:
        with np.errstate(over="ignore", invalid="ignore"):      # checked just below
            p = layout.scale * p + layout.offset
            v = layout.scale * v
        if not (np.isfinite(p).all() and np.isfinite(v).all()):
            raise InputRejected("non_finite", "a value is not finite after the joint map's "
                                              "scale and offset")
    return p, v


def _check_lengths(layout: MessageLayout, names: Sequence[str], position: Sequence[float],
                   velocity: Sequence[float], effort: Sequence[float]) -> None:
    """``length_mismatch``, then the rejection the names decide."""
    if len(position) != len(names) or len(velocity) not in (0, len(names)) \
            or len(effort) not in (0, len(names)):
        raise InputRejected("length_mismatch", f"{len(names)} names, {len(position)} positions, "
                                               f"{len(velocity)} velocities, {len(effort)} efforts")
    if layout.rejection is not None:
        raise InputRejected(*layout.rejection)


def _as_dicts(layout: MessageLayout, p: np.ndarray, v: np.ndarray) -> JointStateValues:
    return JointStateValues(dict(zip(layout.names, p.tolist())),
                            dict(zip(layout.names, v.tolist())), layout.ignored)


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
    layout = message_layout(names, allowed, required, policy, shown)
    _check_lengths(layout, names, position, velocity, effort)
    return _as_dicts(layout, *_values(layout, names, position, velocity))


class JointStateParser:
    """Reads joint_states or actuator_states messages as the robot sends them (hardware names
    and units under ``joint_map``) into the model's names and units, for one set of
    ``allowed`` and ``required`` names and one ``policy``: ``too_many_names`` first (a flood
    of names costs O(1)), then :func:`read_joint_state`'s checks and the map's scale and
    offset (``non_finite`` where a converted value is not finite).

    What a message's names decide (:class:`MessageLayout`) is worked out once per order of
    names and kept (at most ``MAX_CACHED_ORDERS``): a stream whose names repeat pays only for
    its values, on arrays."""

    def __init__(self, joint_map: JointMap, allowed: Sequence[str],
                 required: Sequence[str] = (), policy: str = "merge") -> None:
        self.joint_map, self.allowed, self.required = joint_map, tuple(allowed), tuple(required)
        self.policy = policy
        self._layouts: dict[tuple[str, ...], MessageLayout] = {}

    def layout(self, names: Sequence[str]) -> MessageLayout:
        key = tuple(names)
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= MAX_CACHED_ORDERS:     # a publisher that shuffles names
                self._layouts.clear()
            layout = self._layouts[key] = self._new_layout(key)
        return layout

    def _new_layout(self, names: tuple[str, ...]) -> MessageLayout:
        joint_map = self.joint_map
        layout = message_layout(joint_map.message_to_model(names), self.allowed, self.required,
                                self.policy, joint_map.hardware)
        factors = joint_map.position_factors(layout.names)
        return layout if factors is None else replace(layout, scale=factors[0], offset=factors[1])

    def read(self, names: Sequence[str], position: Sequence[float], velocity: Sequence[float],
             effort: Sequence[float]) -> tuple[MessageLayout, np.ndarray, np.ndarray]:
        """The message's layout and its kept positions and velocities (model units, in
        ``layout.names`` order)."""
        layout = self.read_layout(names, position, velocity, effort)
        return (layout, *_values(layout, names, position, velocity))

    def read_layout(self, names: Sequence[str], position: Sequence[float],
                    velocity: Sequence[float], effort: Sequence[float]) -> MessageLayout:
        """:meth:`read` up to the values: ``too_many_names``, the lengths and what the names
        decide (the values are then checked by :class:`CompiledChecks`)."""
        if len(names) > MAX_JOINT_NAMES:
            raise InputRejected("too_many_names", f"{len(names)} names, expected at most "
                                                  f"{MAX_JOINT_NAMES}")
        layout = self.layout(names)
        _check_lengths(layout, names, position, velocity, effort)
        return layout


def read_robot_joint_state(joint_map: JointMap, names: Sequence[str], position: Sequence[float],
                           velocity: Sequence[float], effort: Sequence[float],
                           allowed: Sequence[str], required: Sequence[str] = (),
                           policy: str = "merge") -> JointStateValues:
    """One message read by a :class:`JointStateParser` (its names' layout not kept), by name;
    ``ignored`` holds model names."""
    return _as_dicts(*JointStateParser(joint_map, allowed, required, policy).read(
        names, position, velocity, effort))



class InputLimits(ModelLimits):
    """The model's limits (:class:`charmie_dynamics.kinematics.limits.InputLimits`) with the
    node's rejection."""

    def check(self, positions: Mapping[str, float], velocities: Mapping[str, float],
              position_tolerance: float, velocity_tolerance: float,
              shown: Mapping[str, str] = {}) -> None:
        """Raise ``beyond_limits`` for the first value beyond the limits (``violation``),
        its input named as ``shown`` maps it."""
        names = tuple(positions)
        if tuple(velocities) == names:
            self.check_arrays(names, np.fromiter(positions.values(), float, len(names)),
                              np.fromiter(velocities.values(), float, len(names)),
                              position_tolerance, velocity_tolerance, shown)
        else:
            self._raise_violation(positions, velocities, position_tolerance,
                                  velocity_tolerance, shown)

    def check_arrays(self, names: tuple[str, ...], p: np.ndarray, v: np.ndarray,
                     position_tolerance: float, velocity_tolerance: float,
                     shown: Mapping[str, str] = {}) -> None:
        """:meth:`check` of values in ``names`` order. Values that pass :meth:`within`
        (every message of a healthy stream) skip ``violation``, which only names the first
        value beyond."""
        if not self.within(names, p, v, position_tolerance, velocity_tolerance):
            self._raise_violation(dict(zip(names, p.tolist())), dict(zip(names, v.tolist())),
                                  position_tolerance, velocity_tolerance, shown)

    def _raise_violation(self, positions: Mapping[str, float], velocities: Mapping[str, float],
                         position_tolerance: float, velocity_tolerance: float,
                         shown: Mapping[str, str]) -> None:
        problem = self.violation(positions, velocities, position_tolerance, velocity_tolerance)
        if problem is not None:
            raise InputRejected("beyond_limits", str(replace(
                problem, name=shown.get(problem.name, problem.name))))

    def bounds(self, names: Sequence[str]) -> np.ndarray:
        """(3, len(names)): each name's lower and upper position limit and speed limit (-inf,
        inf, inf where it has none)."""
        return np.array([[d.get(n, none) for n in names] for d, none in
                         ((self.lower, -math.inf), (self.upper, math.inf),
                          (self.velocity, math.inf))]).reshape(3, len(names))

    def within(self, names: tuple[str, ...], p: np.ndarray, v: np.ndarray,
               position_tolerance: float, velocity_tolerance: float) -> bool:
        """True only where ``violation`` finds nothing (the same comparisons, on arrays of
        the bounds built once per order of names); False where it may find something."""
        bounds = self.__dict__.setdefault("_bounds_by_names", {})   # frozen: a cache, not state
        if names not in bounds:
            if len(bounds) >= MAX_CACHED_ORDERS:    # a publisher that shuffles its names
                bounds.clear()
            bounds[names] = self.bounds(names)
        lower, upper, speed = bounds[names]
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

    The values are kept in arrays, one slot per name (``slots``); a message's names are
    turned into slot indices once per order of names.
    """

    model: Model
    base_coordinates: tuple[str, ...] = ()       # set when the base comes from odometry
    inputs: tuple[str, ...] = ()                 # the evaluated inputs; () model.input_names
    ignored: tuple[str, ...] = ()                # names accepted, checked and not evaluated
    shown: Mapping[str, str] = field(default_factory=dict)     # an input's name in the texts

    def __post_init__(self) -> None:
        self.names = self.inputs or self.model.input_names
        self.strokes = actuator_strokes(self.model)
        self._accepted = tuple(n for n in self.names + self.ignored
                               if n not in self.base_coordinates)
        actuators = set(self.model.actuator_names)
        self._required = tuple(n for n in self.names
                               if n not in actuators and n not in self.base_coordinates)
        self.slot_names = tuple(dict.fromkeys(self.names + self.ignored + self.base_coordinates))
        self.slots = {n: k for k, n in enumerate(self.slot_names)}
        # by slot, as evaluators/measurements.py's kernels take them: position, velocity,
        # arrival time (s), 1.0 once a value came; the header stamp (ns), 1 once stamped
        self.latest = np.zeros((4, len(self.slot_names)))
        self.stamps = np.zeros((2, len(self.slot_names)), dtype=np.int64)
        self._position, self._velocity, self._received, self._has_value = self.latest
        self._stamp, self._stamped = self.stamps
        self.stroke_bounds = np.array([self.strokes.get(n, (-math.inf, math.inf))
                                       for n in self.slot_names]).reshape(-1, 2).T
        self.input_slots = np.array([self.slots[n] for n in self.names], dtype=np.int64)
        self.required_slots = np.array([self.slots[n] for n in self._required], dtype=np.int64)
        self._indices: dict[tuple[str, ...], np.ndarray] = {}

    def accepted_names(self) -> tuple[str, ...]:
        """Names joint_states may carry: every input (and ignored name) but the base's when
        it comes from odometry."""
        return self._accepted

    def required_names(self) -> tuple[str, ...]:
        """Names every joint_states must carry: the joint coordinates (the actuator lengths may
        come from actuator_states instead)."""
        return self._required

    @property
    def positions(self) -> dict[str, float]:
        """The latest position of each name received, by name."""
        return {n: float(p) for n, p, has in zip(self.slot_names, self._position,
                                                 self._has_value) if has}

    def indices(self, names: Sequence[str]) -> np.ndarray:
        """The slots of ``names`` (each one of ``slot_names``), kept per order of names."""
        names = tuple(names)
        found = self._indices.get(names)
        if found is None:
            if len(self._indices) >= MAX_CACHED_ORDERS:
                self._indices.clear()
            found = self._indices[names] = np.array([self.slots[n] for n in names],
                                                    dtype=np.intp)
        return found

    def update(self, positions: Mapping[str, float], velocities: Mapping[str, float],
               now: float = 0.0, stamp: Optional[int] = None) -> None:
        """Store a checked measurement received at ``now`` (raises ``out_of_range`` for an
        actuator length). With its header ``stamp`` (ns; the merge policy), a value older
        than the one kept for its name (a slower publisher's) does not replace it. A name
        without a velocity is taken at rest."""
        names = tuple(positions)
        self.store(names, np.fromiter(positions.values(), float, len(names)),
                   np.array([velocities.get(n, 0.0) for n in names]), now, stamp)

    def store(self, names: tuple[str, ...], p: np.ndarray, v: np.ndarray, now: float = 0.0,
              stamp: Optional[int] = None) -> None:
        """:meth:`update` of values in ``names`` order."""
        slots = self.indices(names)
        lo, hi = self.stroke_bounds[:, slots]
        if not ((lo <= p) & (p <= hi)).all():
            check_strokes(dict(zip(names, p.tolist())), self.strokes, self.shown)
        if stamp is not None:
            newer = (self._stamped[slots] == 0) | (self._stamp[slots] <= stamp)
            if not newer.all():
                slots, p, v = slots[newer], p[newer], v[newer]
            self._stamp[slots] = stamp
            self._stamped[slots] = 1
        self._position[slots] = p
        self._velocity[slots] = v
        self._received[slots] = now
        self._has_value[slots] = 1.0

    def forget_stamps(self) -> None:
        """Forget every joint's stamp (the clock jumped back: they are of another time
        base)."""
        self._stamped[:] = 0

    def anything_new(self, names: Sequence[str], stamp: int) -> bool:
        """Whether a message stamped ``stamp`` brings a value of one of ``names`` no older
        than the one kept (else it is wholly older: ``time_backwards``, or a clock jump)."""
        slots = self.indices(names)
        return bool(((self._stamped[slots] == 0) | (self._stamp[slots] <= stamp)).any())

    def _require(self, has: np.ndarray, names: Sequence[str]) -> None:
        """``missing_name``, naming them, where a joint of ``names`` has no value yet."""
        if not has.all():
            missing = [n for n, h in zip(names, has) if not h]
            raise InputRejected("missing_name", f"no measurement yet of "
                                                f"{named(missing, self.shown)}")

    def merged_stamp(self, max_age_ns: int) -> int:
        """The stamp of the merged joint state (merge policy): the newest stamp of the
        required joints, each of which must have a value stamped at most ``max_age_ns``
        before it (``missing_name`` for a joint never received, ``joint_too_old`` for one
        older; each names the joints)."""
        required = self.required_slots
        self._require(self._stamped[required] != 0, self._required)
        stamps = self._stamp[required]
        newest = int(stamps.max()) if len(stamps) else 0
        old = newest - stamps > max_age_ns
        if old.any():
            late = [n for n, o in zip(self._required, old) if o]
            raise InputRejected("joint_too_old", f"{named(late, self.shown)} stamped more than "
                                                 f"{max_age_ns * 1e-9:g} s before the newest "
                                                 f"joint ({newest * 1e-9:.9f} s)")
        return newest

    def assemble(self, now: float = 0.0, max_age: float = math.inf
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Input positions and velocities in ``names`` order; every value must have
        been received at most ``max_age`` before ``now``."""
        slots = self.input_slots
        self._require(self._has_value[slots] != 0, self.names)
        # a value "received" after now (the node clock went back) is as unusable as an old one
        age = now - self._received[slots]
        fresh = (0.0 <= age) & (age <= max_age)
        if not fresh.all():
            old = [n for n, f in zip(self.names, fresh) if not f]
            raise InputRejected("stale_input", f"{named(old, self.shown)} older than "
                                               f"{max_age:g} s")
        return self._position[slots], self._velocity[slots]


class Gathered(NamedTuple):
    """:meth:`CompiledChecks.gather`'s results: None where the reference raises."""
    stamp: Optional[int]                                 # the merged stamp, ns
    inputs: Optional[tuple[np.ndarray, np.ndarray]]      # positions, velocities


class CompiledChecks:
    """:meth:`JointStateParser.read`'s value checks, ``InputLimits.check_arrays`` and
    :meth:`StateAssembler.store` of one message in two compiled calls, and the assembler's
    ``anything_new``, ``merged_stamp`` and ``assemble`` in one each
    (``evaluators/measurements.py``), for one assembler and the model's limits. A message a
    check fails is left to the reference, which gives the rejection's text (the caller runs
    it on that message).

    The kernels are called through their entry points for fixed types (``jit.fixed_entry``:
    no type or bounds checks), so the arrays are the ones built here and the message's
    arrays must be writable contiguous float64 of the lengths ``read_layout`` checked (the
    indices into them come from the layout)."""

    def __init__(self, assembler: StateAssembler, limits: InputLimits) -> None:
        self.assembler = assembler
        self.bounds = np.ascontiguousarray(np.vstack(
            [limits.bounds(assembler.slot_names), assembler.stroke_bounds]))
        self._checks = np.zeros(2)
        self._stamp = np.zeros(2, dtype=np.int64)
        self._arrays: dict[MessageLayout, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        # the entry points for these types, taken on a message of no values (nothing indexed)
        none, entries, kept = np.zeros(0), np.zeros((2, 0), dtype=np.int64), np.zeros((2, 0))
        self._check = jit.fixed_entry(check_measurement, none, none, entries, kept,
                                      self.bounds, self._checks, kept)
        self._store = jit.fixed_entry(store_measurement, entries, kept, assembler.latest,
                                      assembler.stamps, self._stamp, 0.0)
        self._newer = jit.fixed_entry(anything_newer, entries, assembler.stamps, self._stamp)
        self._times, self._merge = np.zeros(2), np.zeros(2, dtype=np.int64)
        self._codes = np.zeros(2, dtype=np.int64)
        n = len(assembler.names)
        self._gather = jit.fixed_entry(
            gather_inputs, assembler.latest.copy(), assembler.stamps.copy(),
            assembler.input_slots, assembler.required_slots, self._times, self._merge.copy(),
            self._codes.copy(), np.zeros(n), np.zeros(n))

    def layout_arrays(self, layout: MessageLayout
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The kernels' (message index, slot) pairs, factors and workspace of ``layout``."""
        found = self._arrays.get(layout)
        if found is None:
            if len(self._arrays) >= MAX_CACHED_ORDERS:
                self._arrays.clear()
            k = len(layout.names)
            index = np.arange(k) if layout.keep is None else layout.keep
            entries = np.ascontiguousarray([index, self.assembler.indices(layout.names)],
                                           dtype=np.int64).reshape(2, k)
            factors = np.empty((2, 0)) if layout.scale is None else \
                np.ascontiguousarray([layout.scale, layout.offset], dtype=float)
            found = self._arrays[layout] = (entries, factors, np.empty((2, k)))
        return found

    def check(self, layout: MessageLayout, position: np.ndarray, velocity: np.ndarray,
              position_tolerance: float, velocity_tolerance: float
              ) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """The kept positions and velocities (model units; views of a buffer the next
        message of this layout overwrites) where every check passes, else None.
        ``position`` and ``velocity``: the message's, writable contiguous float64."""
        for values in (position, velocity):       # the entry point would not check them
            if not (type(values) is np.ndarray and values.dtype == np.float64
                    and values.ndim == 1 and values.flags.c_contiguous
                    and values.flags.writeable):
                raise TypeError("CompiledChecks.check: the message's arrays must be writable "
                                "contiguous float64")
        entries, factors, kept = self.layout_arrays(layout)
        self._checks[0], self._checks[1] = position_tolerance, velocity_tolerance
        if self._check(position, velocity, entries, factors, self.bounds, self._checks,
                       kept) != PASSED:
            return None
        return kept[0], kept[1]

    def store(self, layout: MessageLayout, received: float, stamp: Optional[int]) -> None:
        """Store the values the last :meth:`check` of ``layout`` passed (``stamp``: each
        joint's, merge policy)."""
        entries, _, kept = self.layout_arrays(layout)
        self._stamp[0], self._stamp[1] = (0, 0) if stamp is None else (stamp, 1)
        self._store(entries, kept, self.assembler.latest, self.assembler.stamps, self._stamp,
                    received)

    def anything_new(self, layout: MessageLayout, stamp: int) -> bool:
        """:meth:`StateAssembler.anything_new` of the values of ``layout``."""
        self._stamp[0] = stamp
        return self._newer(self.layout_arrays(layout)[0], self.assembler.stamps, self._stamp)

    def gather(self, now: float, max_age: float, max_joint_age_ns: int) -> Gathered:
        """The merged stamp (merge policy) and the inputs' positions and velocities (new
        arrays), each None where :meth:`StateAssembler.merged_stamp` or
        :meth:`StateAssembler.assemble` would raise (the caller runs it for the text)."""
        a, n = self.assembler, len(self.assembler.names)
        self._times[0], self._times[1], self._merge[0] = now, max_age, max_joint_age_ns
        x, xd = np.empty(n), np.empty(n)
        self._gather(a.latest, a.stamps, a.input_slots, a.required_slots, self._times,
                     self._merge, self._codes, x, xd)
        stamp, inputs = self._codes
        return Gathered(int(self._merge[1]) if stamp == PASSED else None,
                        (x, xd) if inputs == PASSED else None)


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
