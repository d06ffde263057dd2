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

from ..kinematics.forward import Placements, forward_kinematics
from ..kinematics.motion import BodyMotion, body_motion
from ..kinematics.state import JointSpaceState
from ..linalg import cross, rotate
from ..mechanisms.forces import PassiveForces, add_point_force, passive_forces
from ..mechanisms.loops import LoopLoads, distribute
from ..model.model import Model
from .rnea import TreeWrenches, joint_efforts, tree_backward_pass


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
    joint_force: np.ndarray         # (..., nb, 3) child frame
    joint_torque: np.ndarray        # (..., nb, 3) child frame, about the joint point
    joint_force_world: np.ndarray   # (..., nb, 3)
    joint_torque_world: np.ndarray  # (..., nb, 3) about the joint point
    base_body: int                  # the first massive body: its joint load is the floor load
    placements: Placements = field(repr=False)
    motion: BodyMotion = field(repr=False)
    tree: TreeWrenches = field(repr=False)
    loops: LoopLoads = field(repr=False)
    passive: PassiveForces = field(repr=False)

    @property
    def base_force_world(self) -> np.ndarray:
        return self.joint_force_world[..., self.base_body, :]

    @property
    def base_torque_world(self) -> np.ndarray:
        return self.joint_torque_world[..., self.base_body, :]


def inverse_dynamics(model: Model, state: JointSpaceState, *,
                     payloads: Sequence[Payload] = (),
                     external: Sequence[ExternalWrench] = (),
                     gravity_only: bool = False) -> Loads:
    """All joint, actuator and spring loads for a (batch of) joint-space state(s).

    ``gravity_only``: velocities and accelerations taken as zero (gravity compensation).
    """
    q = state.q
    qd = np.zeros_like(q) if gravity_only else state.qd
    qdd = np.zeros_like(q) if gravity_only else state.qdd
    placements = forward_kinematics(model, q)
    motion = body_motion(model, placements, qd, qdd, base_acceleration=-model.gravity)
    passive = passive_forces(model, placements)
    ext_f = passive.external_force.copy()
    ext_n = passive.external_torque.copy()
    for load in payloads:
        p = model.point(load.point)
        # inertial and gravity force of a point mass: -m (a_p - g), gravity folded in motion
        acc = (motion.linear_acceleration[..., p.body, :]
               + cross(motion.angular_acceleration[..., p.body, :], p.local)
               + cross(motion.angular_velocity[..., p.body, :],
                       cross(motion.angular_velocity[..., p.body, :], p.local)))
        ext_f[..., p.body, :] -= load.mass * acc
        ext_n[..., p.body, :] -= load.mass * cross(np.broadcast_to(p.local, acc.shape), acc)
    for load in external:
        p = model.point(load.point)
        point = placements.to_world(p.body, p.local)
        force = np.broadcast_to(np.asarray(load.force, dtype=float), point.shape)
        add_point_force(ext_f, ext_n, placements, p.body, point, force)
        ext_n[..., p.body, :] += np.einsum("...ji,...j->...i",
                                           placements.rotation_world[..., p.body, :, :],
                                           np.broadcast_to(np.asarray(load.torque, float), point.shape))
    tree = tree_backward_pass(model, placements, motion, ext_f, ext_n)
    loops = distribute(model, placements, tree)
    joint_force = tree.force.copy()
    joint_torque = tree.torque.copy()
    for k, act in enumerate(model.actuators):
        joint_force[..., act.drives, :] = loops.joint_force[..., k, :]
        joint_torque[..., act.drives, :] = loops.joint_torque[..., k, :]
    R = placements.rotation_world
    base_body = next(i for i, b in enumerate(model.bodies) if not b.virtual)
    return Loads(
        coordinate_effort=joint_efforts(model, tree), actuator_force=loops.actuator_force,
        spring_names=passive.spring_names, spring_tension=passive.spring_tension,
        joint_force=joint_force, joint_torque=joint_torque,
        joint_force_world=rotate(R, joint_force), joint_torque_world=rotate(R, joint_torque),
        base_body=base_body, placements=placements, motion=motion, tree=tree, loops=loops,
        passive=passive)
