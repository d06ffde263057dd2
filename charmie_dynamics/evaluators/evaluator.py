"""One measured state in, everything a robot's nodes publish out, in one compiled call.

:class:`Evaluator` is built once per model with every buffer it needs (the joint-space
state, :class:`~.inverse.InverseDynamicsData`, the auxiliary segments, the TF poses). A call
takes the inputs in ``model.input_names`` order and runs, as one kernel: the indirect
joints (resolve_state), the seven steps of inverse dynamics, the auxiliary segments and the
relative poses; nothing is allocated. The results are views of the buffers, overwritten by
the next call.

It lives in the core, not in ros/, because it is the core's own pipeline in one crossing
(any loop over measured states, a controller's or a node's, wants it) and because it calls
the kernels with the packed model's arrays, which only the core may know.
"""
from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass
from typing import NamedTuple, NoReturn, Optional

import numpy as np

from .. import jit
from ..dynamics.inverse import (NO_LOADS, InverseDynamicsBuffers, InverseDynamicsData, Loads,
                                _inverse_dynamics_batch, buffers_view, inverse_dynamics_buffers)
from ..flat import flatten, view1, view2, view3, view4
from ..jit import kernel
from ..kinematics.indirect import check_length
from ..kinematics.state import (JointSpaceState, inputs_from_dict, resolve_state,
                                resolve_state_sample, state_samples)
from ..layout import IN_PARENT, IN_WORLD
from ..linalg import column, mat, mat_mul, mat_t_vec, sub, vec
from ..mechanisms.auxiliary import auxiliary_segments_sample, balancer_range_error, segment_names
from ..model.model import JointType, Model
from ..model.packed import PackedModel, unflat_packed
from ..model.rotations import quaternion_of

#: Around the kernel: compiled, overflow gives inf silently (numba's numpy error model);
#: as plain Python, numpy's warnings are silenced so that it shows as non-finite alike
#: (np.errstate costs about 1.5 us a call: not on the compiled path)
_quiet = contextlib.nullcontext if jit.ENABLED else functools.partial(np.errstate, all="ignore")


class NonFiniteLoads(ArithmeticError):
    """Loads that came out NaN or infinite (inputs too large for a finite result)."""


@dataclass(frozen=True)
class PoseFrames:
    """Parent and child of every pose, in the order of ``Evaluation.translations``: the
    moving bodies (parent None: the world) relative to their parent, then the auxiliary
    bodies relative to the body they hang on."""

    parents: tuple[Optional[str], ...]
    children: tuple[str, ...]


@dataclass(frozen=True)
class Evaluation:
    """One evaluation; every array is a view of the evaluator's buffers."""

    efforts: np.ndarray          # (n_inputs,): joint efforts, the actuators' axial forces in
    #                              their inputs' slots (N m or N)
    actuator_force: np.ndarray   # (n_actuators,): axial, N, positive pushes
    state: JointSpaceState       # joint coordinates with their rates, actuator lengths
    loads: Loads                 # every load of inverse_dynamics (joint wrenches, placements)
    translations: np.ndarray     # (n_poses, 3): origin of the child in the parent frame, m
    quaternions: np.ndarray      # (n_poses, 4): orientation of the child, x y z w


@kernel
def _evaluate(x, xd, xdd, state, inverse, segments, poses, outputs):
    """resolve_state, inverse dynamics, auxiliary segments and poses of one sample (kernel);
    ``inverse``: the inverse-dynamics kernel's arguments (model, applied loads, q, qd, qdd,
    buffers: :func:`_unflat` builds them, the evaluator's whole block as the model);
    ``poses`` = (the moving bodies, the bodies the segments hang from, the actuators' input
    slots); ``outputs`` = (efforts, translations, xyzw). Returns (actuator out of its stroke
    or -1, balancer that cannot reach or -1, finite)."""
    moving, hanging, actuator_slots = poses
    efforts, translations, xyzw = outputs
    pm, b = unflat_packed(inverse[0]), InverseDynamicsBuffers(*inverse[5])
    rotations, origins, tau, axial, joints = b.rotations[0], b.origins[0], b.tau[0], \
        b.axial[0], b.joints[0]
    bad = resolve_state_sample(pm, x, xd, xdd, state, 0)
    if bad >= 0:
        return bad, -1, False
    failed = _inverse_dynamics_batch(*inverse)
    ends, lengths, frames = segments
    k = auxiliary_segments_sample(pm, rotations, origins, ends, lengths, frames)
    if k >= 0:
        failed = k
    total = 0.0                       # one sum: non-finite if any term is (or overflows)
    for c in range(tau.shape[0]):
        efforts[c] = tau[c]
        total += tau[c]
    for a in range(axial.shape[0]):
        efforts[actuator_slots[a]] = axial[a]
        total += axial[a]
    for i in range(joints.shape[0]):
        for s in range(joints.shape[1]):
            total += joints[i, s, 0] + joints[i, s, 1] + joints[i, s, 2]
    for p in range(moving.shape[0]):
        i = moving[p]
        translations[p, 0], translations[p, 1], translations[p, 2] = vec(origins, i, IN_PARENT)
        xyzw[p, 0], xyzw[p, 1], xyzw[p, 2], xyzw[p, 3] = quaternion_of(
            mat(rotations, i, IN_PARENT))
    n = moving.shape[0]
    for s in range(hanging.shape[0]):
        b = hanging[s]
        R = mat(rotations, b, IN_WORLD)
        translations[n + s, 0], translations[n + s, 1], translations[n + s, 2] = mat_t_vec(
            R, sub(vec(ends, s, 0), vec(origins, b, IN_WORLD)))
        RF = mat_mul((column(R, 0), column(R, 1), column(R, 2)), mat(frames, s, 0))  # R^T F
        xyzw[n + s, 0], xyzw[n + s, 1], xyzw[n + s, 2], xyzw[n + s, 3] = quaternion_of(RF)
    return -1, failed, math.isfinite(total)


# The header rows (flat.py) of the arrays the evaluator flattens into one block, in order:
# the packed model (first: the block is also the packed model's flat form, unflat_packed),
# the applied loads (body indices, values), the state's seven (1, k) arrays, (1, n) zeros
# (gravity compensation's rates), the inverse-dynamics buffers, the auxiliary segments
# (ends, lengths, frames), the poses' bodies (moving, hanging, actuator slots) and the
# outputs (efforts, translations, xyzw).
_LOADS = len(PackedModel._fields)
_STATE = _LOADS + 2
_ZEROS = _STATE + 7
_BUFFERS = _ZEROS + 1
_SEGMENTS = _BUFFERS + len(InverseDynamicsBuffers._fields)
_POSES = _SEGMENTS + 3
_OUTPUTS = _POSES + 3


@kernel
def _unflat(flat, gravity_only):
    """:func:`_evaluate`'s arguments after the inputs, as views of the evaluator's block
    ``flat`` = (header, ints, floats) (kernel); with ``gravity_only``, zero rates and
    accelerations for the inverse dynamics."""
    header, ints, floats = flat
    state = (view2(floats, header, _STATE), view2(floats, header, _STATE + 1),
             view2(floats, header, _STATE + 2), view2(floats, header, _STATE + 3),
             view2(floats, header, _STATE + 4), view2(floats, header, _STATE + 5),
             view2(floats, header, _STATE + 6))
    zeros = view2(floats, header, _ZEROS)
    qd, qdd = (zeros, zeros) if gravity_only else (state[1], state[2])
    inverse = (flat, (view1(ints, header, _LOADS), view3(floats, header, _LOADS + 1)),
               state[0], qd, qdd, buffers_view(header, floats, _BUFFERS))
    segments = (view3(floats, header, _SEGMENTS), view1(floats, header, _SEGMENTS + 1),
                view4(floats, header, _SEGMENTS + 2))
    poses = (view1(ints, header, _POSES), view1(ints, header, _POSES + 1),
             view1(ints, header, _POSES + 2))
    outputs = (view1(floats, header, _OUTPUTS), view2(floats, header, _OUTPUTS + 1),
               view2(floats, header, _OUTPUTS + 2))
    return state, inverse, segments, poses, outputs


@kernel
def _evaluate_flat(x, xd, xdd, flat, gravity_only):
    """:func:`_evaluate` on the evaluator's block (:func:`_unflat`; kernel): numba unboxes
    six arrays per call (the inputs and the block) instead of forty (the inputs and the 37
    arrays one by one), about 1 us of an 11 us call (docs/performance.md)."""
    return _evaluate(x, xd, xdd, *_unflat(flat, gravity_only))


@kernel(hold_gil=True)
def _evaluate_mapped(x, xd, xdd, flat, gravity_only, mapping):
    """:func:`_evaluate_flat`, then its efforts in another order and units (kernel): ``mapping``
    = (an :class:`EffortMap`, clamp, mapped); ``mapped[j]`` = efforts[index[j]], clipped at
    +-limits[index[j]] with ``clamp``, times factors[j]. Returns _evaluate's three results
    and the number of efforts beyond their limits (0 where the evaluation failed). Keeps the
    GIL: on a control path, a thread taking it while the kernel runs would hold the caller
    up to the switch interval after it."""
    arguments = _unflat(flat, gravity_only)
    bad, failed, finite = _evaluate(x, xd, xdd, *arguments)
    if bad >= 0 or failed >= 0 or not finite:
        return bad, failed, finite, 0
    effort_map, clamp, mapped = mapping
    index, factors, limits = effort_map
    efforts = arguments[4][0]
    beyond = 0
    for c in range(limits.shape[0]):
        if abs(efforts[c]) > limits[c]:
            beyond += 1
    for j in range(index.shape[0]):
        effort = efforts[index[j]]
        if clamp:                             # np.clip's order: the lower bound, the upper
            effort = min(max(effort, -limits[index[j]]), limits[index[j]])
        mapped[j] = effort * factors[j]
    return bad, failed, finite, beyond


class EffortMap(NamedTuple):
    """The evaluator's efforts (its inputs' order) as another party takes them: ``index``
    (m,) int64, the input of each entry; ``factors`` (m,), its units (ones: none); ``limits``
    (n_inputs,), the effort limits an effort is beyond (and clipped at, on request). Built
    checked by :meth:`Evaluator.mapping`."""

    index: np.ndarray
    factors: np.ndarray
    limits: np.ndarray


class MappedEvaluation:
    """:meth:`Evaluator.__call__` and its efforts as an :class:`EffortMap` gives them, in one
    compiled call (:meth:`Evaluator.mapping` builds it: the map's arrays and ``values`` are
    its own, checked once, as the kernel's entry point takes them unchecked)."""

    def __init__(self, evaluator: Evaluator, effort_map: EffortMap) -> None:
        self.evaluator = evaluator
        self.effort_map = effort_map
        self.values = np.zeros(len(effort_map.index))   # the mapped efforts, overwritten

    def __call__(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray, gravity_only: bool,
                 clamp: bool) -> int:
        """Evaluate (the evaluator's result, as :meth:`Evaluator.__call__` leaves it) and
        write the mapped efforts into :attr:`values`, clipped at their limits with
        ``clamp``; returns how many efforts are beyond their limits. The same errors as
        :meth:`Evaluator.__call__`; :attr:`values` is then left as it was."""
        evaluator = self.evaluator
        x, xd, xdd = evaluator._inputs(x, xd, xdd)
        bad, failed, finite, beyond = evaluator._mapped_entry(
            x, xd, xdd, evaluator.flat, bool(gravity_only),
            (self.effort_map, bool(clamp), self.values))
        if bad >= 0 or failed >= 0 or not finite:
            evaluator._raise(x, bad, failed)
        return beyond


def _silenced(function):
    """``function`` called with numpy's warnings silenced (:data:`_quiet`)."""
    def call(*args):
        with _quiet():
            return function(*args)
    return call


#: The kernel as the evaluator calls it: compiled, itself (its entry point is taken); as
#: plain Python, with numpy's warnings silenced at each call
_evaluate_quietly = _evaluate_flat if jit.ENABLED else _silenced(_evaluate_flat)
_evaluate_mapped_quietly = _evaluate_mapped if jit.ENABLED else _silenced(_evaluate_mapped)


class Evaluator:
    """Efforts, loads and TF poses of one state of ``model`` per call, in one crossing of the
    core, with buffers built once (see the module docstring). Not thread-safe: one call at a
    time (a node's executor)."""

    def __init__(self, model: Model,
                 applied: tuple[np.ndarray, np.ndarray] = NO_LOADS,
                 first: Optional[np.ndarray] = None) -> None:
        """``applied``: loads applied at every call, packed as inverse dynamics packs its
        payloads and external wrenches (body indices, (k, 4, 3) values), copied into the
        evaluator's block: a caller that changes them between calls (the loop evaluator's
        cut wrenches) writes :attr:`applied`. ``first``: the inputs of the first evaluation,
        at rest, which compiles (or loads) the kernel and checks that the model assembles
        there: the model's default inputs when omitted (the loop evaluator gives its tree
        the loops' assembled configuration)."""
        self.model = model
        self.input_names: tuple[str, ...] = tuple(model.input_names)
        n = model.n_coordinates
        # the state at the default inputs: proof that the model assembles, and the state
        # buffers' first values
        resolved = resolve_state(model, *inputs_from_dict(model))
        segments = segment_names(model)
        moving = [i for i in range(model.n_bodies) if model.joint_type[i] != JointType.FIXED]
        names = model.body_names
        self.frames = PoseFrames(
            tuple(None if model.parent[i] < 0 else names[model.parent[i]] for i in moving)
            + tuple(names[body] for _, _, body in segments),
            tuple(names[i] for i in moving) + tuple(name for name, _, _ in segments))
        n_poses = len(moving) + len(segments)
        # every array of the kernel but the inputs, in one block (the rows _LOADS ...
        # _OUTPUTS); the state, the loads and the results are views of it
        header, ints, floats, views = flatten([
            *model.compiled.packed, np.asarray(applied[0], dtype=np.int64),
            np.asarray(applied[1], dtype=float), *state_samples(resolved), np.zeros((1, n)),
            *inverse_dynamics_buffers(model, model.n_bodies, 1, "all"),
            np.empty((len(segments), 2, 3)), np.empty(len(segments)),
            np.empty((len(segments), 1, 3, 3)),
            np.array(moving, dtype=np.int64),
            np.array([body for _, _, body in segments], dtype=np.int64),
            np.array([model.input_names.index(a) for a in model.actuator_names],
                     dtype=np.int64),
            np.empty(n), np.empty((n_poses, 3)), np.empty((n_poses, 4))])
        self.flat = (header, ints, floats)
        self.applied: tuple[np.ndarray, np.ndarray] = (views[_LOADS], views[_LOADS + 1])
        self.state = JointSpaceState(*(v.reshape(v.shape[1:]) for v in views[_STATE:_ZEROS]))
        self.data = InverseDynamicsData(model, buffers=InverseDynamicsBuffers(
            *views[_BUFFERS:_SEGMENTS]))
        loads = self.data.loads
        self._zeros = np.zeros(n)
        self._efforts, self._translations, self._xyzw = views[_OUTPUTS:]
        self.result = Evaluation(self._efforts, loads.actuator_force, self.state, loads,
                                 self._translations, self._xyzw)
        # compiles (or loads) the kernels now; every later call has these types (the inputs
        # made contiguous float64 of shape (n,), the block the evaluator's own): their entry
        # points, taken for those types
        x0, xd0, xdd0 = (np.ascontiguousarray(v, dtype=float) for v in inputs_from_dict(model))
        if first is not None:
            x0 = np.array(first, dtype=float)
        self._shape = (n,)
        self._entry = jit.fixed_entry(_evaluate_quietly, x0, xd0, xdd0, self.flat, False)
        # an effort map of the types every map has (mapping)
        n_inputs = len(self.input_names)
        identity = EffortMap(np.arange(n_inputs, dtype=np.int64), np.ones(n_inputs),
                             np.full(n_inputs, np.inf))
        self._mapped_entry = jit.fixed_entry(_evaluate_mapped_quietly, x0, xd0, xdd0,
                                             self.flat, False,
                                             (identity, False, np.zeros(n_inputs)))
        self(x0, xd0, xdd0)                  # the checks of the default inputs

    def __call__(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                 gravity_only: bool = False) -> Evaluation:
        """Evaluate inputs (n_inputs,) each, in ``model.input_names`` order.

        ``gravity_only``: the loads with velocities and accelerations taken as zero (the
        state keeps the given rates). Raises ``ActuatorRangeError`` for an actuator length
        outside its stroke, ``MechanismRangeError`` for a balancer that cannot reach and
        :class:`NonFiniteLoads` for loads that are not finite.
        """
        # a node's every input comes here: attribute lookups and Python calls kept few
        # (about 2 us of a 12 us call were this wrapper's)
        x, xd, xdd = self._inputs(x, xd, xdd)
        bad, failed, finite = self._entry(x, xd, xdd, self.flat, bool(gravity_only))
        if bad >= 0 or failed >= 0 or not finite:
            self._raise(x, bad, failed)
        return self.result

    def mapping(self, index: np.ndarray, factors: Optional[np.ndarray],
                limits: np.ndarray) -> MappedEvaluation:
        """The evaluation with its efforts mapped (:class:`EffortMap`): entry ``j`` is the
        effort of input ``index[j]`` times ``factors[j]`` (None: ones); ``limits``, one per
        input. Raises ValueError for an index outside the inputs or lengths that differ."""
        n = len(self.input_names)
        index = np.array(index, dtype=np.int64).reshape(-1)
        factors = np.ones(len(index)) if factors is None else \
            np.array(factors, dtype=float).reshape(-1)
        limits = np.array(limits, dtype=float).reshape(-1)
        if ((index < 0) | (index >= n)).any() or factors.shape != index.shape \
                or limits.shape != (n,):
            raise ValueError(f"an effort map of {len(index)} indices in [0, {n}), "
                             f"{len(factors)} factors and {len(limits)} limits, expected the "
                             f"indices in range, as many factors and {n} limits "
                             f"({self.model.name})")
        return MappedEvaluation(self, EffortMap(index, factors, limits))

    def _inputs(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The inputs as the entry points take them: contiguous float64 of shape (n,)."""
        x = np.ascontiguousarray(x, dtype=float)
        xd = np.ascontiguousarray(xd, dtype=float)
        xdd = np.ascontiguousarray(xdd, dtype=float)
        shape = self._shape
        if x.shape != shape or xd.shape != shape or xdd.shape != shape:
            raise ValueError(f"inputs of shapes {x.shape}, {xd.shape}, {xdd.shape}, expected "
                             f"{shape} each ({self.model.name})")
        return x, xd, xdd

    def _raise(self, x: np.ndarray, bad: int, failed: int) -> NoReturn:
        """The error of a failed evaluation (the kernel's results)."""
        if bad >= 0:
            check_length(self.model.compiled.indirect_joints[bad], x[self.model.coordinate_index[
                self.model.actuators[bad].drives]])
        if failed >= 0:
            raise balancer_range_error(self.model.balancers[failed])
        raise NonFiniteLoads(f"the loads of this input are not finite (inputs too large "
                             f"for {self.model.name})")

    def gravity(self, x: np.ndarray) -> Evaluation:
        """Gravity compensation at positions ``x``: velocities and accelerations zero."""
        return self(x, self._zeros, self._zeros, gravity_only=True)
