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

import math
from dataclasses import dataclass

import numpy as np

from ..jit import kernel
from ..kinematics.forward import Placements
from ..kinematics.motion import BodyMotion
from ..layout import (AC, COM, COORD, DW, IN_PARENT, INERTIA, KIND, MASS, MULTIPLIER, PARENT, S_V,
                      S_W, SCALARS, F, N, W)
from ..linalg import accumulate, add, cross3, dot, mat, mat_vec, scale, store, sub, vec
from ..model.joint import FREE_KIND
from ..model.model import Model


@dataclass(frozen=True)
class TreeWrenches:
    """Wrench of the parent on each body at its joint point, in the body frame; ``buffer``
    (..., nb, 2, 3) holds torque and force (slots N, F): reshaped (..., nb, 6), the spatial
    force [n; f] of dynamics/spatial.py (layout.py's convention)."""

    buffer: np.ndarray

    @property
    def force(self) -> np.ndarray:
        return self.buffer[..., F, :]

    @property
    def torque(self) -> np.ndarray:
        return self.buffer[..., N, :]


@kernel
def tree_backward_pass_sample(body_int, body_vec, body_mat, rotations, origins, motion,
                              external, wrenches) -> None:
    """Eqs. 33-34 for one sample (kernel); ``external`` (nb, 2, 3) holds the external
    wrench [n; f] on each body (body frame, about its origin; slots N, F)."""
    body_wrenches_sample(body_int, body_vec, body_mat, motion, external, wrenches)
    for i in range(body_int.shape[0] - 1, -1, -1):
        push_wrench(body_int, rotations, origins, wrenches, i)


@kernel
def body_wrenches_sample(body_int, body_vec, body_mat, motion, external, wrenches) -> None:
    """Each body's own terms of eqs. 33-34 (kernel): m_i a_Ci - f_ext,i and
    I_i omegad_i + omega_i x (I_i omega_i) + c_i x m_i a_Ci - n_ext,i, into ``wrenches``."""
    for i in range(body_int.shape[0]):
        m = body_vec[i, SCALARS, MASS]
        I = mat(body_mat, i, INERTIA)
        w = vec(motion, i, W)
        f = scale(m, vec(motion, i, AC))                                   # m_i a_Ci
        n = add(add(mat_vec(I, vec(motion, i, DW)), cross3(w, mat_vec(I, w))),
                cross3(vec(body_vec, i, COM), f))
        store(wrenches, i, F, sub(f, vec(external, i, F)))
        store(wrenches, i, N, sub(n, vec(external, i, N)))


@kernel
def push_wrench(body_int, rotations, origins, wrenches, i) -> None:
    """The sums of eqs. 33-34 for body i (kernel): its wrench, complete, added to its
    parent's, R_ij f_j and R_ij n_j + r_ij x R_ij f_j; nothing for a root."""
    p = body_int[i, PARENT]
    if p >= 0:
        R = mat(rotations, i, IN_PARENT)
        fp = mat_vec(R, vec(wrenches, i, F))
        accumulate(wrenches, p, F, fp)
        accumulate(wrenches, p, N, add(mat_vec(R, vec(wrenches, i, N)),
                                       cross3(vec(origins, i, IN_PARENT), fp)))


@kernel
def joint_efforts_sample(body_int, body_vec, wrenches, tau) -> None:
    """Generalized efforts of one sample (kernel), see :func:`joint_efforts`."""
    tau[:] = 0.0
    for i in range(body_int.shape[0]):
        c = body_int[i, COORD]
        if c < 0:
            continue
        if body_int[i, KIND] == FREE_KIND:   # S^T [n; f] = [f; n] (model/joint.py)
            for k in range(3):
                tau[c + k] += wrenches[i, F, k]
                tau[c + 3 + k] += wrenches[i, N, k]
            continue
        # the wrench projected on the motion subspace: s_w . n + s_v . f
        tau[c] += body_vec[i, SCALARS, MULTIPLIER] * (
            dot(vec(wrenches, i, N), vec(body_vec, i, S_W))
            + dot(vec(wrenches, i, F), vec(body_vec, i, S_V)))


@kernel
def _tree_backward_pass_batch(body_int, body_vec, body_mat, rotations, origins, motion,
                              external, wrenches) -> None:
    for s in range(motion.shape[0]):
        tree_backward_pass_sample(body_int, body_vec, body_mat, rotations[s], origins[s],
                                  motion[s], external[s], wrenches[s])


@kernel
def _joint_efforts_batch(body_int, body_vec, wrenches, tau) -> None:
    for s in range(wrenches.shape[0]):
        joint_efforts_sample(body_int, body_vec, wrenches[s], tau[s])


def tree_backward_pass(model: Model, placements: Placements, motion: BodyMotion,
                       external_force: np.ndarray | None = None,
                       external_torque: np.ndarray | None = None) -> TreeWrenches:
    """Eqs. 33-34 from the end bodies to the root. ``motion`` must include -g (base
    acceleration)."""
    lead, nb = placements.lead, model.n_bodies
    external = np.zeros(lead + (nb, 2, 3))
    if external_force is not None:
        external[..., F, :] = external_force
    if external_torque is not None:
        external[..., N, :] = external_torque
    pm = model.compiled.packed
    wrenches = np.empty(external.shape)
    _tree_backward_pass_batch(pm.body_int, pm.body_vec, pm.body_mat, *placements.per_sample(model),
                              motion.buffer.reshape(-1, nb, 6, 3), external.reshape(-1, nb, 2, 3),
                              wrenches.reshape(-1, nb, 2, 3))
    return TreeWrenches(wrenches)


def joint_efforts(model: Model, wrenches: TreeWrenches) -> np.ndarray:
    """Generalized effort of every coordinate (..., n_coordinates): torque about a revolute
    axis (N m) or force along a prismatic axis (N), summed over coupled joints with their
    multipliers (virtual work: the coordinate moves joint i by multiplier_i); a free-flyer's
    6 efforts are the force and torque (about the body origin) in the body frame,
    Pinocchio's order."""
    nb = model.n_bodies
    lead = wrenches.buffer.shape[:-3]
    tau = np.empty(lead + (model.n_coordinates,))
    pm = model.compiled.packed
    _joint_efforts_batch(pm.body_int, pm.body_vec, wrenches.buffer.reshape(-1, nb, 2, 3),
                         tau.reshape(math.prod(lead), model.n_coordinates))   # n may be 0
    return tau
