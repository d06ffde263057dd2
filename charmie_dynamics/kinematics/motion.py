"""Velocity and acceleration pass: the forward iterations of the recursive Newton-Euler
algorithm (seed 000 section 5.1, eqs. 28-32), for any joint axis and constant rotation.

Everything is expressed in the body's own frame (superscript i in the paper). With
R = R^{p}_{i}, r = r^{p}_{i} (forward.py), [s_w; s_v] the joint's motion subspace in the body
frame ([a; 0] revolute, [0; a] prismatic, 0 fixed), qd and qdd the joint's rate and
acceleration (multiplier times the coordinate's) and w_in = R^T omega_p, for body i with
parent p (the joint's terms from model/joint.py's joint_motion):

    omega_i  = w_in + qd s_w                                              (eq. 29)
    omegad_i = R^T omegad_p + qdd s_w + qd w_in x s_w                     (eq. 30)
    v_i      = R^T (v_p + omega_p x r) + qd s_v
    a_i      = R^T (a_p + omegad_p x r + omega_p x (omega_p x r))
               + qdd s_v + 2 qd w_in x s_v                                 (eq. 31)
    a_Ci     = a_i + omegad_i x c_i + omega_i x (omega_i x c_i)            (eq. 32)

A free-flyer adds its six rates instead (model/joint.py: qd, qdd its Pinocchio v, a).
(a_i is the classical acceleration of the body origin: the last two terms of a_i are the
sliding joint's relative and Coriolis accelerations, R^T u = s_v for the parent-frame axis
u = R_c s_v, which the joint's own rotation leaves fixed.)
Deviation: eq. 30 as extracted reads ``qd omegad_{i-1} x z_i``; the derivative of
``R^T omega_p + qd a`` gives ``qd omega_{i-1} x z_i`` (angular velocity, not acceleration).
The paper's a_Bi (eq. 31) is the acceleration at the joint point of each child; here the
acceleration is of the body's origin A_i, which for a tree serves every child alike.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..jit import kernel
from ..layout import AC, COM, COORD, DW, IN_PARENT, KIND, MULTIPLIER, PARENT, SCALARS, VC, A, V, W
from ..linalg import add, cross3, mat, mat_t_vec, store, vec, vec3
from ..model.data import AlgorithmData
from ..model.joint import joint_motion
from ..model.model import Model
from ..model.packed import joint_parameters
from .forward import Placements
from .state import samples


@dataclass(frozen=True)
class BodyMotion:
    """Velocities and accelerations of every body in its own frame, SI; ``buffer``
    (..., nb, 6, 3) holds them in the slots W, DW, V, A, VC, AC (the kernels' layout)."""

    buffer: np.ndarray

    @property
    def angular_velocity(self) -> np.ndarray:
        return self.buffer[..., W, :]

    @property
    def angular_acceleration(self) -> np.ndarray:
        return self.buffer[..., DW, :]

    @property
    def linear_velocity(self) -> np.ndarray:
        """Of the body origin."""
        return self.buffer[..., V, :]

    @property
    def linear_acceleration(self) -> np.ndarray:
        """Of the body origin."""
        return self.buffer[..., A, :]

    @property
    def com_velocity(self) -> np.ndarray:
        return self.buffer[..., VC, :]

    @property
    def com_acceleration(self) -> np.ndarray:
        return self.buffer[..., AC, :]


@kernel
def body_motion_sample(body_int, body_vec, rotations, origins, qd, qdd, base_acceleration,
                       motion) -> None:
    """Forward iterations of one sample (kernel): ``motion[i, W..AC]`` as in the module
    docstring; ``rotations``/``origins`` are forward_kinematics_sample's."""
    zero = (0.0, 0.0, 0.0)
    for i in range(body_int.shape[0]):
        R = mat(rotations, i, IN_PARENT)
        r = vec(origins, i, IN_PARENT)
        p = body_int[i, PARENT]
        if p < 0:
            w_p, dw_p, v_p, a_p = zero, zero, zero, vec3(base_acceleration)
        else:
            w_p, dw_p = vec(motion, p, W), vec(motion, p, DW)
            v_p, a_p = vec(motion, p, V), vec(motion, p, A)
        c = body_int[i, COORD]
        rate = 0.0 if c < 0 else body_vec[i, SCALARS, MULTIPLIER] * qd[c]
        acc = 0.0 if c < 0 else body_vec[i, SCALARS, MULTIPLIER] * qdd[c]
        w_in = mat_t_vec(R, w_p)
        w_J, dw_J, v_J, a_J = joint_motion(body_int[i, KIND], joint_parameters(body_vec, i),
                                           rate, acc, w_in, qd, qdd, c)
        w = add(w_in, w_J)
        dw = add(mat_t_vec(R, dw_p), dw_J)
        v = add(mat_t_vec(R, add(v_p, cross3(w_p, r))), v_J)
        a = add(mat_t_vec(R, add(add(a_p, cross3(dw_p, r)), cross3(w_p, cross3(w_p, r)))), a_J)
        com = vec(body_vec, i, COM)
        store(motion, i, W, w)
        store(motion, i, DW, dw)
        store(motion, i, V, v)
        store(motion, i, A, a)
        store(motion, i, VC, add(v, cross3(w, com)))
        store(motion, i, AC, add(add(a, cross3(dw, com)), cross3(w, cross3(w, com))))


@kernel
def _body_motion_batch(body_int, body_vec, rotations, origins, qd, qdd, base_acceleration,
                       motion) -> None:
    for s in range(qd.shape[0]):
        body_motion_sample(body_int, body_vec, rotations[s], origins[s], qd[s], qdd[s],
                           base_acceleration, motion[s])


class MotionData(AlgorithmData):
    """Buffers of :func:`body_motion` for one model and sample shape ``lead``; ``motion`` is
    returned by every call, its buffer overwritten by the next."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        super().__init__(model, lead)
        nb = model.n_bodies
        self.buffer = np.empty((self.samples, nb, 6, 3))
        self.base_acceleration = np.zeros(3)
        self.motion = BodyMotion(self.buffer.reshape(self.lead + (nb, 6, 3)))


def body_motion(model: Model, placements: Placements, qd: np.ndarray, qdd: np.ndarray,
                base_acceleration: np.ndarray | None = None, *,
                data: MotionData | None = None) -> BodyMotion:
    """Forward iterations for joint velocities and accelerations (..., n_coordinates).

    ``base_acceleration`` (world frame) is added to the world's linear acceleration:
    passing ``-gravity`` folds gravity into the accelerations, as the RNEA does. ``data``:
    buffers for the placements' sample shape, reused (see :class:`MotionData`); new ones
    when omitted.
    """
    lead, n = placements.lead, model.n_coordinates
    data = MotionData.reuse(data, model, lead)
    rotations, origins = placements.per_sample(model)
    qd, qdd = samples(qd, lead, n), samples(qdd, lead, n)
    data.base_acceleration[:] = 0.0 if base_acceleration is None else \
        np.asarray(base_acceleration, dtype=float).reshape(3)
    pm = model.compiled.packed
    _body_motion_batch(pm.body_int, pm.body_vec, rotations, origins, qd, qdd,
                       data.base_acceleration, data.buffer)
    return data.motion
