"""Backward pass of the recursive Newton-Euler algorithm on a tree (seed 000 section 5.1,
eqs. 33-34), with external wrenches.

For every body i, in its own frame, the wrench that its parent applies on it at its joint
point A_i (the body origin), summing over any number of successors j:

    f_i = m_i a_Ci - f_ext,i + sum_j R_ij f_j                                        (eq. 33)
    n_i = I_i omegad_i + omega_i x (I_i omega_i) + c_i x m_i a_Ci - n_ext,i
          + sum_j (R_ij n_j + r_ij x R_ij f_j)                                       (eq. 34)

with gravity folded into the accelerations (base acceleration -g), torques about A_i rather
than about C_i (eq. 34's reference point; the two differ by c_i x f_i and give the same joint
loads), and external wrenches (springs, payloads) given about A_i in the body frame.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics.forward import Placements
from ..kinematics.motion import BodyMotion
from ..linalg import cross, rotate
from ..model.model import JointType, Model


@dataclass(frozen=True)
class TreeWrenches:
    """Wrench of the parent on each body at its joint point, in the body frame, (..., nb, 3)."""

    force: np.ndarray
    torque: np.ndarray


def tree_backward_pass(model: Model, placements: Placements, motion: BodyMotion,
                       external_force: np.ndarray | None = None,
                       external_torque: np.ndarray | None = None) -> TreeWrenches:
    """Eqs. 33-34 from the end bodies to the root. ``motion`` must include -g (base acceleration)."""
    m = model.mass[:, None]
    F = m * motion.com_acceleration                              # m_i a_Ci
    Iw = np.einsum("bij,...bj->...bi", model.inertia, motion.angular_velocity)
    N = (np.einsum("bij,...bj->...bi", model.inertia, motion.angular_acceleration)
         + cross(motion.angular_velocity, Iw) + cross(np.broadcast_to(model.com, F.shape), F))
    f = F if external_force is None else F - external_force
    n = N if external_torque is None else N - external_torque
    f, n = f.copy(), n.copy()
    for i in range(model.n_bodies - 1, -1, -1):
        p = model.parent[i]
        if p < 0:
            continue
        R = placements.rotation_parent[..., i, :, :]
        fp = rotate(R, f[..., i, :])
        f[..., p, :] += fp
        n[..., p, :] += rotate(R, n[..., i, :]) + cross(placements.origin_parent[..., i, :], fp)
    return TreeWrenches(f, n)


def joint_efforts(model: Model, wrenches: TreeWrenches) -> np.ndarray:
    """Generalized effort of every coordinate (..., n_coordinates): torque about a revolute
    axis (N m) or force along a prismatic axis (N), summed over coupled joints with their
    multipliers (virtual work: the coordinate moves joint i by multiplier_i)."""
    lead = wrenches.force.shape[:-2]
    tau = np.zeros(lead + (model.n_coordinates,))
    for i in range(model.n_bodies):
        c = model.coordinate_index[i]
        if c < 0:
            continue
        w = wrenches.torque if model.joint_type[i] == JointType.REVOLUTE else wrenches.force
        tau[..., c] += model.multiplier[i] * (w[..., i, :] @ model.axis[i])
    return tau
