"""Velocity and acceleration pass: the forward iterations of the recursive Newton-Euler
algorithm (seed 000 section 5.1, eqs. 28-32), for any joint axis and constant rotation.

Everything is expressed in the body's own frame (superscript i in the paper). With
R = R^{p}_{i}, r = r^{p}_{i} (forward.py), a the unit axis in the body frame and
u = R_c a the axis in the parent frame, for body i with parent p:

    omega_i  = R^T omega_p + qd a                                         (eq. 29)
    omegad_i = R^T omegad_p + qdd a + qd (R^T omega_p) x a                (eq. 30)
    v_i      = R^T (v_p + omega_p x r + [P] qd u)
    a_i      = R^T (a_p + omegad_p x r + omega_p x (omega_p x r)
                    + [P] (qdd u + 2 qd omega_p x u))                      (eq. 31)
    a_Ci     = a_i + omegad_i x c_i + omega_i x (omega_i x c_i)            (eq. 32)

[P] marks prismatic-only terms, the revolute terms (qd, qdd) apply to revolute joints only.
Deviation: eq. 30 as extracted reads ``qd omegad_{i-1} x z_i``; the derivative of
``R^T omega_p + qd a`` gives ``qd omega_{i-1} x z_i`` (angular velocity, not acceleration).
The paper's a_Bi (eq. 31) is the acceleration at the joint point of each child; here the
acceleration is of the body's origin A_i, which for a tree serves every child alike.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..linalg import cross, rotate_back
from ..model.model import JointType, Model

REVOLUTE, PRISMATIC = int(JointType.REVOLUTE), int(JointType.PRISMATIC)
from .forward import Placements, joint_values


@dataclass(frozen=True)
class BodyMotion:
    """Velocities and accelerations of every body in its own frame, (..., nb, 3), SI."""

    angular_velocity: np.ndarray
    angular_acceleration: np.ndarray
    linear_velocity: np.ndarray       # of the body origin
    linear_acceleration: np.ndarray   # of the body origin
    com_velocity: np.ndarray
    com_acceleration: np.ndarray


def body_motion(model: Model, placements: Placements, qd: np.ndarray, qdd: np.ndarray,
                base_acceleration: np.ndarray | None = None) -> BodyMotion:
    """Forward iterations for joint velocities and accelerations (..., n_coordinates).

    ``base_acceleration`` (world frame) is added to the world's linear acceleration:
    passing ``-gravity`` folds gravity into the accelerations, as the RNEA does.
    """
    wd = joint_values(model, qd)
    wdd = joint_values(model, qdd)
    lead = wd.shape[:-1]
    shape = lead + (model.n_bodies, 3)
    w, dw, v, a = (np.empty(shape) for _ in range(4))
    zero = np.zeros(lead + (3,))
    a0 = zero if base_acceleration is None else np.broadcast_to(base_acceleration, zero.shape)
    types = model.joint_type.tolist()         # plain ints: cheap comparisons in the loop
    for i in range(model.n_bodies):
        R = placements.rotation_parent[..., i, :, :]
        r = placements.origin_parent[..., i, :]
        p = model.parent[i]
        if p < 0:
            w_p, dw_p, v_p, a_p = zero, zero, zero, a0
        else:
            w_p, dw_p, v_p, a_p = w[..., p, :], dw[..., p, :], v[..., p, :], a[..., p, :]
        w_in = rotate_back(R, w_p)
        lin_v = v_p + cross(w_p, r)
        lin_a = a_p + cross(dw_p, r) + cross(w_p, cross(w_p, r))
        jt = types[i]
        axis = model.axis[i]
        if jt == REVOLUTE:
            w[..., i, :] = w_in + wd[..., i, None] * axis
            dw[..., i, :] = (rotate_back(R, dw_p) + wdd[..., i, None] * axis
                             + wd[..., i, None] * cross(w_in, np.broadcast_to(axis, w_in.shape)))
        else:
            w[..., i, :] = w_in
            dw[..., i, :] = rotate_back(R, dw_p)
            if jt == PRISMATIC:
                u = np.broadcast_to(model.rotation[i] @ axis, w_p.shape)
                lin_v = lin_v + wd[..., i, None] * u
                lin_a = lin_a + wdd[..., i, None] * u + 2.0 * wd[..., i, None] * cross(w_p, u)
        v[..., i, :] = rotate_back(R, lin_v)
        a[..., i, :] = rotate_back(R, lin_a)
    c = np.broadcast_to(model.com, shape)
    vc = v + cross(w, c)
    ac = a + cross(dw, c) + cross(w, cross(w, c))
    return BodyMotion(w, dw, v, a, vc, ac)
