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
from typing import Sequence

import numpy as np

from ..jit import kernel
from ..kinematics.forward import Placements, forward_kinematics_sample
from ..kinematics.motion import BodyMotion, body_motion_sample
from ..kinematics.state import JointSpaceState
from ..linalg import accumulate, add, cross3, mat, mat_t_vec, mat_vec, scale, store, vec
from ..mechanisms.auxiliary import balancer_range_error
from ..mechanisms.forces import (add_point_force, passive_forces_sample,
                                 spring_names, to_world)
from ..mechanisms.loops import LoopLoads, distribute_sample
from ..model.model import Model
from ..model.packed import A_DRIVES, packed
from ..slots import A, DW, F, F_WORLD, JOINT_FORCE, JOINT_TORQUE, N, N_WORLD, W
from .rnea import TreeWrenches, joint_efforts_sample, tree_backward_pass_sample


@dataclass(frozen=True)
class Payload:
    """A point mass (kg) carried at a named point ``BODY.POINT`` (weight and inertia)."""

    point: str
    mass: float


@dataclass(frozen=True)
class ExternalWrench:
    """A force (N) and torque (N m), world frame, applied on the body at ``BODY.POINT``."""

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
    spring_tension: np.ndarray      # (..., n_springs): N, positive pulls
    joint_wrenches: np.ndarray      # (..., nb, 4, 3): force and torque in the child frame,
                                    # then in the world frame (slots F, N, F_WORLD, N_WORLD)
    base_body: int                  # the first massive body: its joint load is the floor load
    placements: Placements = field(repr=False)
    motion: BodyMotion = field(repr=False)
    tree: TreeWrenches = field(repr=False)
    loops: LoopLoads = field(repr=False)
    applied: np.ndarray = field(repr=False)   # (..., nb, 2, 3): every external load on each
    # body (springs, balancers, payloads, external wrenches), body frame, about its origin
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


# slots of the load_vec rows of the applied loads (one row per payload or external wrench)
LOAD_POINT, LOAD_FORCE, LOAD_TORQUE, LOAD_MASS = 0, 1, 2, 3


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
        accumulate(external, b, N, mat_t_vec(mat(rotations, b, 1), vec(load_vec, k, LOAD_TORQUE)))


@kernel
def _inverse_dynamics_batch(body_int, body_vec, body_mat, act_int, act_vec, spring_int,
                            spring_vec, bal_int, bal_vec, load_body, load_vec, base_acceleration,
                            q, qd, qdd, values, rotations, origins, motion, tension, hanger,
                            external, tree, tau, axial, loops, balancer_couple, joints) -> int:
    failed = -1
    for s in range(q.shape[0]):
        forward_kinematics_sample(body_int, body_vec, body_mat, q[s], values[s], rotations[s],
                                  origins[s])
        body_motion_sample(body_int, body_vec, rotations[s], origins[s], qd[s], qdd[s],
                           base_acceleration, motion[s])
        external[s] = 0.0
        k = passive_forces_sample(spring_int, spring_vec, bal_int, bal_vec, rotations[s],
                                  origins[s], tension[s], hanger[s], external[s])
        if k >= 0:
            failed = k
        apply_loads_sample(load_body, load_vec, rotations[s], origins[s], motion[s], external[s])
        tree_backward_pass_sample(body_int, body_vec, body_mat, rotations[s], origins[s],
                                  motion[s], external[s], tree[s])
        joint_efforts_sample(body_int, body_vec, tree[s], tau[s])
        distribute_sample(body_int, body_vec, act_int, act_vec, bal_int, rotations[s],
                          origins[s], tree[s], axial[s], loops[s], balancer_couple[s])
        for i in range(body_int.shape[0]):
            f, n = vec(tree[s], i, F), vec(tree[s], i, N)
            store(joints[s], i, F, f)
            store(joints[s], i, N, n)
        for k in range(act_int.shape[0]):
            i = act_int[k, A_DRIVES]
            store(joints[s], i, F, vec(loops[s], k, JOINT_FORCE))
            store(joints[s], i, N, vec(loops[s], k, JOINT_TORQUE))
        for i in range(body_int.shape[0]):
            R = mat(rotations[s], i, 1)
            store(joints[s], i, F_WORLD, mat_vec(R, vec(joints[s], i, F)))
            store(joints[s], i, N_WORLD, mat_vec(R, vec(joints[s], i, N)))
    return failed


def _applied_loads(model: Model, payloads: Sequence[Payload], external: Sequence[ExternalWrench]
                   ) -> tuple[np.ndarray, np.ndarray]:
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


class InverseDynamicsData:
    """Preallocated buffers and results of :func:`inverse_dynamics` for one model and one
    batch shape, as Pinocchio's ``Data``: a loop that passes the same data to every call
    allocates nothing. ``loads`` is returned by every call; its arrays are views of the
    buffers and are overwritten by the next call."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        self.model = model
        self.lead = tuple(lead)
        S = int(np.prod(self.lead, dtype=np.int64))
        nb, n = model.n_bodies, model.n_coordinates
        na, ns, nbal = len(model.actuators), len(model.springs), len(model.balancers)
        shapes = {"values": (nb,), "rotations": (nb, 2, 3, 3), "origins": (nb, 2, 3),
                  "motion": (nb, 6, 3), "tension": (ns + nbal,), "hanger": (nbal,),
                  "applied": (nb, 2, 3), "tree": (nb, 2, 3), "tau": (n,), "axial": (na,),
                  "loops": (na, 4, 3), "balancer_couple": (nbal,), "joints": (nb, 4, 3)}
        # the kernel's outputs, in its argument order, with the samples on one axis
        self.buffers = tuple(np.empty((S,) + shape) for shape in shapes.values())
        b = {k: v.reshape(self.lead + v.shape[1:]) for k, v in zip(shapes, self.buffers)}
        self.zeros = np.zeros((S, n))
        self.loads = Loads(
            coordinate_effort=b["tau"], actuator_force=b["axial"],
            spring_names=spring_names(model), spring_tension=b["tension"],
            joint_wrenches=b["joints"], base_body=base_body(model),
            placements=Placements(b["values"], b["rotations"], b["origins"]),
            motion=BodyMotion(b["motion"]), tree=TreeWrenches(b["tree"]),
            loops=LoopLoads(b["axial"], b["loops"], b["balancer_couple"]),
            applied=b["applied"], hanger_force=b["hanger"])


def _samples(a: np.ndarray, lead: tuple[int, ...], n: int) -> np.ndarray:
    """``a`` as a C-contiguous (samples, n) float array (a view when it already is one)."""
    a = np.asarray(a, dtype=float)
    if a.shape != lead + (n,):
        a = np.broadcast_to(a, lead + (n,))
    return np.ascontiguousarray(a).reshape(-1, n)


_NO_LOADS = (np.empty(0, dtype=np.int64), np.zeros((0, 4, 3)))


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
    lead, n = np.shape(state.q)[:-1], model.n_coordinates
    if data is None:
        data = InverseDynamicsData(model, lead)
    elif data.model is not model or data.lead != lead:
        raise ValueError(f"data is for {data.model.name} with sample shape {data.lead}, "
                         f"got {model.name} with {lead}")
    q = _samples(state.q, lead, n)
    if gravity_only:
        qd = qdd = data.zeros
    else:
        qd, qdd = _samples(state.qd, lead, n), _samples(state.qdd, lead, n)
    applied = _applied_loads(model, payloads, external) if payloads or external else _NO_LOADS
    pm = packed(model)
    failed = _inverse_dynamics_batch(
        pm.body_int, pm.body_vec, pm.body_mat, pm.act_int, pm.act_vec, pm.spring_int,
        pm.spring_vec, pm.bal_int, pm.bal_vec, *applied, pm.base_acceleration, q, qd, qdd,
        *data.buffers)
    if failed >= 0:
        raise balancer_range_error(model.balancers[failed])
    return data.loads


def base_body(model: Model) -> int:
    """The first massive body: its joint load is the floor load."""
    return next(i for i, b in enumerate(model.bodies) if not b.virtual)
