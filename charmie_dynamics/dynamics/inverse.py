"""Inverse dynamics of a model with its mechanisms: the seven-step method of seed 000 from
a joint-space state to every joint and actuator load.

    placements  = forward_kinematics(q)                          (section 4.2)
    motion      = forward iterations with -g at the base          (eqs. 28-32)
    passive     = spring and balancer forces                      (eqs. 35, 39-41)
    tree        = backward iterations with those forces           (eqs. 33-34)
    loops       = split at the actuator-driven joints             (eqs. 36-38, 42-43)

Every array keeps the state's leading sample axes: one call evaluates a whole batch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Sequence

import numpy as np

from ..flat import view2, view4, view5
from ..jit import kernel
from ..kinematics.configuration import check_configuration
from ..kinematics.forward import Placements, forward_kinematics_sample, to_world
from ..kinematics.motion import BodyMotion, body_motion_sample
from ..kinematics.state import JointSpaceState, state_samples
from ..layout import (DRIVEN_BY, DW, F_WORLD, IN_WORLD, JOINT_FORCE, JOINT_TORQUE, LOAD_FORCE,
                      LOAD_MASS, LOAD_POINT, LOAD_TORQUE, N_WORLD, A, F, N, W)
from ..linalg import accumulate, add, cross3, mat, mat_t_vec, mat_vec, scale, store, vec
from ..mechanisms.auxiliary import balancer_range_error
from ..mechanisms.forces import add_point_force, passive_forces_sample, spring_names
from ..mechanisms.loops import LoopLoads, distribute_sample
from ..model.data import AlgorithmData
from ..model.model import Model
from ..model.packed import unflat_packed
from .rnea import TreeWrenches, joint_efforts_sample, tree_backward_pass_sample


@dataclass(frozen=True)
class Payload:
    """A point mass (kg) carried at a named point ``BODY.POINT`` (weight and inertia)."""

    point: str
    mass: float


@dataclass(frozen=True)
class ExternalWrench:
    """A force (N) and torque (N m), world frame, applied on the body at ``BODY.POINT``; the
    same 3-vectors for every sample of a batch."""

    point: str
    force: Sequence[float]
    torque: Sequence[float] = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class Loads:
    """Results of :func:`inverse_dynamics`; wrenches are those the parent applies on the
    child, at the child's joint point (its origin). For an actuator-driven joint the joint
    wrench is the joint's own share; the actuator's share is in ``loops``."""

    coordinate_effort: np.ndarray   # (..., n_coordinates): N m (revolute) or N (prismatic)
    actuator_force: np.ndarray      # (..., n_actuators): axial, N, positive pushes
    spring_names: tuple[str, ...]
    spring_tension: np.ndarray      # (..., n_springs): N (torsion springs N m), positive pulls
    joint_wrenches: np.ndarray      # (..., nb, 4, 3): torque and force ([n; f], slots N,
                                    # F) in the child frame, then in the world frame (slots
                                    # N_WORLD, F_WORLD): layout.py's convention
    base_body: int                  # the first massive body (see base_body())
    placements: Placements = field(repr=False)
    motion: BodyMotion = field(repr=False)
    tree: TreeWrenches = field(repr=False)
    loops: LoopLoads = field(repr=False)
    applied: np.ndarray = field(repr=False)   # (..., nb, 2, 3): every external load on each
    # body (springs, balancers, payloads, external wrenches), [n; f], body frame, about its origin
    hanger_force: np.ndarray = field(repr=False)   # (..., n_balancers), see PassiveForces

    @property
    def joint_force(self) -> np.ndarray:
        """(..., nb, 3) child frame."""
        return self.joint_wrenches[..., F, :]

    @property
    def joint_torque(self) -> np.ndarray:
        """(..., nb, 3) child frame, about the joint point."""
        return self.joint_wrenches[..., N, :]

    @property
    def joint_force_world(self) -> np.ndarray:
        return self.joint_wrenches[..., F_WORLD, :]

    @property
    def joint_torque_world(self) -> np.ndarray:
        """About the joint point."""
        return self.joint_wrenches[..., N_WORLD, :]

    @property
    def base_force_world(self) -> np.ndarray:
        return self.joint_force_world[..., self.base_body, :]

    @property
    def base_torque_world(self) -> np.ndarray:
        return self.joint_torque_world[..., self.base_body, :]


@kernel
def apply_loads_sample(load_body, load_vec, rotations, origins, motion, external) -> None:
    """Payload point masses and external wrenches of one sample, added to ``external``."""
    for k in range(load_body.shape[0]):
        b = load_body[k]
        p = vec(load_vec, k, LOAD_POINT)
        m = load_vec[k, LOAD_MASS, 0]
        if m != 0.0:
            # inertial and gravity force of a point mass: -m (a_p - g), gravity folded in motion
            w = vec(motion, b, W)
            acc = add(add(vec(motion, b, A), cross3(vec(motion, b, DW), p)),
                      cross3(w, cross3(w, p)))
            accumulate(external, b, F, scale(-m, acc))
            accumulate(external, b, N, scale(-m, cross3(p, acc)))
        add_point_force(external, rotations, origins, b, to_world(rotations, origins, b, p),
                        vec(load_vec, k, LOAD_FORCE))
        accumulate(external, b, N,
                   mat_t_vec(mat(rotations, b, IN_WORLD), vec(load_vec, k, LOAD_TORQUE)))


@kernel
def tree_efforts_sample(pm, loads, q, qd, qdd, b, s, t) -> int:
    """The module docstring's placements, motion, passive forces (with the payloads and
    external wrenches ``loads`` = (load_body, load_vec)) and tree pass of one sample, and the
    coordinate efforts (kernel; ``pm``: a :class:`~..model.packed.PackedModel`), into the
    :class:`InverseDynamicsBuffers` ``b``: row ``s`` of the per-sample buffers, ``t`` of the
    per-body ones. Returns a balancer whose spring cannot reach its anchor
    (passive_forces_sample), or -1."""
    load_body, load_vec = loads
    values, rotations, origins, motion, applied, tree = b.values[t], b.rotations[t], \
        b.origins[t], b.motion[t], b.applied[t], b.tree[t]
    tension, hanger, tau = b.tension[s], b.hanger[s], b.tau[s]
    forward_kinematics_sample(pm.body_int, pm.body_vec, pm.body_mat, q, values, rotations,
                              origins)
    body_motion_sample(pm.body_int, pm.body_vec, rotations, origins, qd, qdd,
                       pm.base_acceleration, motion)
    applied[:] = 0.0
    k = passive_forces_sample(pm.mech_int, pm.mech_vec, rotations, origins, tension, hanger,
                              applied)
    apply_loads_sample(load_body, load_vec, rotations, origins, motion, applied)
    tree_backward_pass_sample(pm.body_int, pm.body_vec, pm.body_mat, rotations, origins,
                              motion, applied, tree)
    joint_efforts_sample(pm.body_int, pm.body_vec, tree, tau)
    return k


class InverseDynamicsBuffers(NamedTuple):
    """The inverse-dynamics kernel's result and work buffers, (samples or 1, ...) each:
    one sample's shapes in :class:`InverseDynamicsData`'s layout."""

    values: np.ndarray
    rotations: np.ndarray
    origins: np.ndarray
    motion: np.ndarray
    tension: np.ndarray
    hanger: np.ndarray
    applied: np.ndarray
    tree: np.ndarray
    tau: np.ndarray
    axial: np.ndarray
    loops: np.ndarray
    balancer_couple: np.ndarray
    joints: np.ndarray


@kernel(inline=True)
def buffers_view(header, floats, k):
    """The :class:`InverseDynamicsBuffers` flattened (flat.py) at the header's rows k to
    k + 12, as views (kernel)."""
    return InverseDynamicsBuffers(
        view2(floats, header, k), view5(floats, header, k + 1), view4(floats, header, k + 2),
        view4(floats, header, k + 3), view2(floats, header, k + 4), view2(floats, header, k + 5),
        view4(floats, header, k + 6), view4(floats, header, k + 7), view2(floats, header, k + 8),
        view2(floats, header, k + 9), view4(floats, header, k + 10),
        view2(floats, header, k + 11), view4(floats, header, k + 12))


@kernel
def _inverse_dynamics_batch(model, applied, q, qd, qdd, buffers) -> int:
    """The pipeline of the module docstring, sample by sample. ``model``: the packed model
    flattened (``model.compiled.packed_args``), ``applied``: (load_body, load_vec),
    ``buffers``: those of :class:`InverseDynamicsBuffers` as a plain tuple (numba's dispatch
    checks a plain tuple of arrays about as fast as the arrays one by one, a NamedTuple
    about 2.5 us slower: benchmarks/bench_named_arguments.py); named here. The per-body
    buffers (values to tree) hold every sample, or one sample that each sample overwrites
    (keep="efforts", where ``joints`` has no rows and the joint wrenches are skipped)."""
    pm, b = unflat_packed(model), InverseDynamicsBuffers(*buffers)
    failed = -1
    for s in range(q.shape[0]):
        t = s % b.rotations.shape[0]
        R, O, T = b.rotations[t], b.origins[t], b.tree[t]
        k = tree_efforts_sample(pm, applied, q[s], qd[s], qdd[s], b, s, t)
        if k >= 0:
            failed = k
        distribute_sample(pm, R, O, T, b.axial[s], b.loops[s], b.balancer_couple[s])
        if b.joints.shape[0] == 0:           # keep="efforts": no joint wrenches
            continue
        J = b.joints[t]
        for i in range(pm.body_int.shape[0]):
            k = pm.body_int[i, DRIVEN_BY]
            if k < 0:
                f, n = vec(T, i, F), vec(T, i, N)
            else:                            # the joint's own share of a driven joint
                f, n = vec(b.loops[s], k, JOINT_FORCE), vec(b.loops[s], k, JOINT_TORQUE)
            R_i = mat(R, i, IN_WORLD)
            store(J, i, F, f)
            store(J, i, N, n)
            store(J, i, F_WORLD, mat_vec(R_i, f))
            store(J, i, N_WORLD, mat_vec(R_i, n))
    return failed


def applied_loads(model: Model, payloads: Sequence[Payload], external: Sequence[ExternalWrench]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Payloads and external wrenches packed for the kernel: body indices (k,) and values
    (k, 4, 3) in the ``LOAD_*`` slots."""
    rows = len(payloads) + len(external)
    body = np.empty(rows, dtype=np.int64)
    values = np.zeros((rows, 4, 3))
    for k, load in enumerate(payloads):
        p = model.point(load.point)
        body[k] = p.body
        values[k, LOAD_POINT] = p.local
        values[k, LOAD_MASS, 0] = load.mass
    for k, load in enumerate(external, start=len(payloads)):
        p = model.point(load.point)
        body[k] = p.body
        values[k, LOAD_POINT] = p.local
        values[k, LOAD_FORCE] = load.force
        values[k, LOAD_TORQUE] = load.torque
    return body, values


PER_BODY = ("values", "rotations", "origins", "motion", "applied", "tree", "joints")


def inverse_dynamics_buffers(model: Model, nb: int, samples: int, keep: str
                             ) -> InverseDynamicsBuffers:
    """The buffers of the inverse-dynamics kernel for ``samples`` samples of ``model``'s
    coordinates and mechanisms on a tree of ``nb`` bodies (the model's, or its moving tree:
    model/moving_tree.py). The per-body ones (``PER_BODY``) have a row per sample, or one
    row for ``keep="efforts"`` (``joints`` none: see :class:`InverseDynamicsData`)."""
    n = model.n_coordinates
    na, nm, nbal = len(model.actuators), model.compiled.packed.mech_int.shape[0], \
        len(model.balancers)
    shapes = {"values": (nb,), "rotations": (nb, 2, 3, 3), "origins": (nb, 2, 3),
              "motion": (nb, 6, 3), "tension": (nm,), "hanger": (nbal,),
              "applied": (nb, 2, 3), "tree": (nb, 2, 3), "tau": (n,), "axial": (na,),
              "loops": (na, 4, 3), "balancer_couple": (nbal,), "joints": (nb, 4, 3)}
    rows = {k: (samples if keep == "all" or k not in PER_BODY else 1) for k in shapes}
    if keep == "efforts":
        rows["joints"] = 0
    return InverseDynamicsBuffers(**{k: np.empty((rows[k],) + shape)
                                     for k, shape in shapes.items()})


class InverseDynamicsData(AlgorithmData):
    """Preallocated buffers and results of :func:`inverse_dynamics` for one model and one
    batch shape, as Pinocchio's ``Data``: a loop that passes the same data to every call
    allocates no result arrays (payloads and external wrenches are packed at each call).
    ``loads`` is returned by every call; its arrays are views of the buffers and are
    overwritten by the next call.

    ``keep="efforts"`` keeps, for every sample, only the coordinate efforts, actuator
    forces, spring tensions and the loop loads; the per-body arrays (placements, motion,
    tree and joint wrenches, applied loads) are then None in ``loads``, and the recursions
    work in one sample's worth of memory (for training data and parametric studies over
    many states, where writing every body's intermediate results would cost more memory
    traffic than the arithmetic)."""

    def __init__(self, model: Model, lead: tuple[int, ...] = (), keep: str = "all",
                 buffers: Optional[InverseDynamicsBuffers] = None) -> None:
        """``buffers``: the kernel's buffers in the caller's memory (the evaluator's
        flattened block, evaluators/evaluator.py), of the shapes this data would build;
        new ones when omitted."""
        if keep not in ("all", "efforts"):
            raise ValueError(f"keep: got {keep!r}, expected 'all' or 'efforts'")
        super().__init__(model, lead)
        S = self.samples
        named = inverse_dynamics_buffers(model, model.n_bodies, S, keep)
        if buffers is not None:
            if [a.shape for a in buffers] != [a.shape for a in named] \
                    or any(a.dtype != np.float64 for a in buffers):
                raise ValueError(f"buffers of shapes {[a.shape for a in buffers]}, expected "
                                 f"{[a.shape for a in named]}, float64 ({model.name})")
            named = InverseDynamicsBuffers(*buffers)
        self.buffers = tuple(named)          # a plain tuple: the kernel's dispatch is faster
        self.packed = model.compiled.packed_args      # the kernel's model argument
        b = {k: (v.reshape(self.lead + v.shape[1:]) if keep == "all" or k not in PER_BODY
                 else None) for k, v in named._asdict().items()}
        self.zeros = np.zeros((S, model.n_coordinates))
        self.loads = Loads(
            coordinate_effort=b["tau"], actuator_force=b["axial"],
            spring_names=spring_names(model), spring_tension=b["tension"],
            joint_wrenches=b["joints"], base_body=base_body(model),
            placements=None if b["values"] is None else
            Placements(b["values"], b["rotations"], b["origins"]),
            motion=None if b["motion"] is None else BodyMotion(b["motion"]),
            tree=None if b["tree"] is None else TreeWrenches(b["tree"]),
            loops=LoopLoads(b["axial"], b["loops"], b["balancer_couple"]),
            applied=b["applied"], hanger_force=b["hanger"])


NO_LOADS = (np.empty(0, dtype=np.int64), np.zeros((0, 4, 3)))


def inverse_dynamics(model: Model, state: JointSpaceState, *,
                     payloads: Sequence[Payload] = (),
                     external: Sequence[ExternalWrench] = (),
                     gravity_only: bool = False,
                     data: InverseDynamicsData | None = None) -> Loads:
    """All joint, actuator and spring loads for a (batch of) joint-space state(s).

    ``gravity_only``: velocities and accelerations taken as zero (gravity compensation).
    ``data``: preallocated buffers for ``state``'s batch shape, reused (see
    :class:`InverseDynamicsData`); new ones when omitted.
    """
    n, q = model.n_coordinates, state.q
    # the common case, the data's own model and sample shape, needs no further check
    if not (type(data) is InverseDynamicsData and data.model is model
            and type(q) is np.ndarray and q.shape[:-1] == data.lead):
        data = InverseDynamicsData.reuse(data, model, np.shape(q)[:-1])
    q, qd, qdd = state_samples(state)[:3]
    if not (q.shape[1] == model.nq and qd.shape[1] == qdd.shape[1] == n):
        raise ValueError(f"state of {q.shape[1]} configuration and {qd.shape[1]}, "
                         f"{qdd.shape[1]} velocity entries, expected {model.nq} and {n} "
                         f"({model.name})")
    if model.free_flyers:
        check_configuration(model, q)
    if gravity_only:
        qd = qdd = data.zeros
    applied = applied_loads(model, payloads, external) if payloads or external else NO_LOADS
    return run_inverse_dynamics(model, q, qd, qdd, data, applied)


def kernel_arguments(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     data: InverseDynamicsData,
                     applied: tuple[np.ndarray, np.ndarray] = NO_LOADS) -> tuple:
    """The arguments of the inverse-dynamics kernel, in its order: the packed model (held by
    ``data``, built for its model), the applied loads, the (samples, n) states and
    ``data``'s buffers (plain tuples, see the kernel). The one place that spells them out:
    :func:`run_inverse_dynamics` and the closed chains' dynamics take them from here."""
    return data.packed, applied, q, qd, qdd, data.buffers


def run_inverse_dynamics(model: Model, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                         data: InverseDynamicsData,
                         applied: tuple[np.ndarray, np.ndarray] = NO_LOADS) -> Loads:
    """The kernel of :func:`inverse_dynamics` on (samples, n) arrays checked against
    ``data`` by the caller; ``applied``: the packed payloads and external wrenches."""
    failed = _inverse_dynamics_batch(*kernel_arguments(q, qd, qdd, data, applied))
    if failed >= 0:
        raise balancer_range_error(model.balancers[failed])
    return data.loads


def base_body(model: Model) -> int:
    """The first massive body: its joint load is the floor load. In a model of massless
    bodies only, the first body (a root: its joint carries every applied load)."""
    return next((i for i, b in enumerate(model.bodies) if not b.virtual), 0)
