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
                                _inverse_dynamics_batch, kernel_arguments)
from ..jit import kernel
from ..kinematics.indirect import check_length
from ..kinematics.state import (JointSpaceState, inputs_from_dict, resolve_state,
                                resolve_state_sample, state_samples)
from ..layout import IN_PARENT, IN_WORLD
from ..linalg import column, mat, mat_mul, mat_t_vec, sub, vec
from ..mechanisms.auxiliary import auxiliary_segments_sample, balancer_range_error, segment_names
from ..model.model import JointType, Model
from ..model.packed import unflat_packed
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
    ``inverse``: the inverse-dynamics kernel's arguments (inverse.kernel_arguments);
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


@kernel(hold_gil=True)
def _evaluate_mapped(x, xd, xdd, state, inverse, segments, poses, outputs, mapping):
    """:func:`_evaluate`, then its efforts in another order and units (kernel): ``mapping``
    = (an :class:`EffortMap`, clamp, mapped); ``mapped[j]`` = efforts[index[j]], clipped at
    +-limits[index[j]] with ``clamp``, times factors[j]. Returns _evaluate's three results
    and the number of efforts beyond their limits (0 where the evaluation failed). Keeps the
    GIL: on a control path, a thread taking it while the kernel runs would hold the caller
    up to the switch interval after it."""
    bad, failed, finite = _evaluate(x, xd, xdd, state, inverse, segments, poses, outputs)
    if bad >= 0 or failed >= 0 or not finite:
        return bad, failed, finite, 0
    effort_map, clamp, mapped = mapping
    index, factors, limits = effort_map
    efforts = outputs[0]
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
        entry, arguments = evaluator._mapped_calls[bool(gravity_only)]
        bad, failed, finite, beyond = entry(x, xd, xdd, *arguments,
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
_evaluate_quietly = _evaluate if jit.ENABLED else _silenced(_evaluate)
_evaluate_mapped_quietly = _evaluate_mapped if jit.ENABLED else _silenced(_evaluate_mapped)


class Evaluator:
    """Efforts, loads and TF poses of one state of ``model`` per call, in one crossing of the
    core, with buffers built once (see the module docstring). Not thread-safe: one call at a
    time (a node's executor)."""

    def __init__(self, model: Model,
                 applied: tuple[np.ndarray, np.ndarray] = NO_LOADS,
                 first: Optional[np.ndarray] = None) -> None:
        """``applied``: loads applied at every call, packed as inverse dynamics packs its
        payloads and external wrenches (body indices, (k, 4, 3) values); the caller may
        change the values between calls (the loop evaluator's cut wrenches). ``first``: the
        inputs of the first evaluation, at rest, which compiles (or loads) the kernel and
        checks that the model assembles there: the model's default inputs when omitted (the
        loop evaluator gives its tree the loops' assembled configuration)."""
        self.model = model
        self.input_names: tuple[str, ...] = tuple(model.input_names)
        n = model.n_coordinates
        # the state at the default inputs: the buffer, and proof that the model assembles
        self.state = resolve_state(model, *inputs_from_dict(model))
        self.data = InverseDynamicsData(model)
        loads = self.data.loads
        segments = segment_names(model)
        moving = [i for i in range(model.n_bodies) if model.joint_type[i] != JointType.FIXED]
        names = model.body_names
        self.frames = PoseFrames(
            tuple(None if model.parent[i] < 0 else names[model.parent[i]] for i in moving)
            + tuple(names[body] for _, _, body in segments),
            tuple(names[i] for i in moving) + tuple(name for name, _, _ in segments))
        n_poses = len(moving) + len(segments)
        self._zeros = np.zeros(n)
        self._efforts = np.empty(n)
        self._translations = np.empty((n_poses, 3))
        self._xyzw = np.empty((n_poses, 4))
        self._segments = (np.empty((len(segments), 2, 3)), np.empty(len(segments)),
                          np.empty((len(segments), 1, 3, 3)))
        self._state = state_samples(self.state)
        q, qd, qdd = self._state[:3]
        # the arguments of inverse_dynamics' kernel, without payloads: with the state's
        # rates, and with zero rates for gravity compensation
        zeros = self.data.zeros
        self._inverse = {False: kernel_arguments(q, qd, qdd, self.data, applied),
                         True: kernel_arguments(q, zeros, zeros, self.data, applied)}
        self._tail = (self._segments,
                      (np.array(moving, dtype=np.int64),
                       np.array([body for _, _, body in segments], dtype=np.int64),
                       np.array([model.input_names.index(a) for a in model.actuator_names],
                                dtype=np.int64)),
                      (self._efforts, self._translations, self._xyzw))
        self.result = Evaluation(self._efforts, loads.actuator_force, self.state, loads,
                                 self._translations, self._xyzw)
        # compiles (or loads) the kernel now; every later call has these types (the inputs
        # made contiguous float64 of shape (n,), the buffers the evaluator's own): one entry
        # for each set of arguments, taken for the types of that set
        x0, xd0, xdd0 = (np.ascontiguousarray(v, dtype=float) for v in inputs_from_dict(model))
        if first is not None:
            x0 = np.array(first, dtype=float)
        self._shape = (n,)
        self._calls = {}            # gravity_only: (the entry, its arguments after the inputs)
        self._mapped_calls = {}     # the same for MappedEvaluation
        # an effort map of the types every map has (mapping)
        n_inputs = len(self.input_names)
        identity = EffortMap(np.arange(n_inputs, dtype=np.int64), np.ones(n_inputs),
                             np.full(n_inputs, np.inf))
        for gravity, inverse in self._inverse.items():
            arguments = (self._state, inverse, *self._tail)
            self._calls[gravity] = (jit.fixed_entry(_evaluate_quietly, x0, xd0, xdd0,
                                                    *arguments), arguments)
            self._mapped_calls[gravity] = (jit.fixed_entry(
                _evaluate_mapped_quietly, x0, xd0, xdd0, *arguments,
                (identity, False, np.zeros(n_inputs))), arguments)
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
        entry, arguments = self._calls[bool(gravity_only)]
        bad, failed, finite = entry(x, xd, xdd, *arguments)
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
