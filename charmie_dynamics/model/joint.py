"""The joint transform (Featherstone's jcalc): the one place that tells joint types apart.

For a joint with unit axis ``a`` (in the joint frame, which the joint's own motion leaves
fixed) and joint value ``value`` (rad or m: multiplier * coordinate + offset), the joint
moves by R_J = Rot(a, value) (revolute), t_J = value a (prismatic), nothing (fixed); its
motion subspace in the body frame is [s_w; s_v] = [a; 0], [0; a] or 0 (seed 002 eqs. 11d,
12b). :func:`joint_transform` gives them composed with the body's constant placement in its
parent (rotation R_c, origin B), as forward kinematics needs them:

    R^{p}_{i} = R_c R_J,   r^{p}_{i} = B + R_c t_J,   s_w, s_v

The subspace is constant: the model packs it once (model/packed.py, with R_c = 1 and value
0) for the joint efforts, CRBA and ABA. :func:`joint_motion` gives the joint's own terms of
the motion pass (kinematics/motion.py), with joint rate qd, acceleration qdd and w_in the
parent's angular velocity in the body frame:

    omega += qd s_w,   omegad += qdd s_w + qd w_in x s_w,
    v += qd s_v,       a += qdd s_v + 2 qd w_in x s_v      (a: classical, of the body origin)

A continuous joint is a revolute joint without limits.

Kinds (body_int's KIND column) are the joint types, with a revolute joint about a coordinate
axis +-e_k as kinds of their own, as Pinocchio has JointModelRX/RY/RZ beside
RevoluteUnaligned: turning the rows of R_c costs 12 products instead of Rodrigues' matrix
and a full product. CHARMIE's 20 revolute joints are all of these: measured on it, the
general form alone made batched FK 27 % and batched inverse dynamics 18 % slower. Likewise
joint_motion computes only the terms of its kind, and both are inlined into the kernels
(``kernel(inline=True)``: called, they made the motion pass 30 % slower).
"""
from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..linalg import add, cross3, mat_mul, mat_vec, scale
from .parameters import JointType
from .rotations import rotation_about, turn_about_coordinate_axis

REVOLUTE, PRISMATIC = int(JointType.REVOLUTE), int(JointType.PRISMATIC)
FIXED_KIND, REVOLUTE_KIND, PRISMATIC_KIND = int(JointType.FIXED), REVOLUTE, PRISMATIC
REVOLUTE_X_KIND = 3                 # then Y and Z: REVOLUTE_X_KIND + k about +-e_k


def joint_kind(joint_type: int, axis: np.ndarray) -> int:
    """The kind of joint transform of a joint type and unit axis (module docstring)."""
    nonzero = np.flatnonzero(axis)
    if joint_type == REVOLUTE and len(nonzero) == 1:
        return REVOLUTE_X_KIND + int(nonzero[0])
    return int(joint_type)


@kernel(inline=True)
def joint_transform(kind, axis, value, R_c, B):
    """(R^{p}_{i}, r^{p}_{i}, s_w, s_v) of a joint (kernel; module docstring): rows and
    3-tuples; ``R_c``, ``B`` the constant placement."""
    zero = (0.0, 0.0, 0.0)
    if kind >= REVOLUTE_X_KIND:                   # axis = +-e_k: turn by +-value about e_k
        k = kind - REVOLUTE_X_KIND
        return turn_about_coordinate_axis(R_c, k, axis[k] * value), B, axis, zero
    if kind == REVOLUTE_KIND:
        return mat_mul(R_c, rotation_about(axis, value)), B, axis, zero
    if kind == PRISMATIC_KIND:
        return R_c, add(B, scale(value, mat_vec(R_c, axis))), zero, axis
    return R_c, B, zero, zero


@kernel(inline=True)
def joint_motion(kind, axis, rate, acc, w_in):
    """The joint's terms of the motion pass (kernel; module docstring): what it adds to the
    angular velocity, angular acceleration, velocity and acceleration of the body origin."""
    zero = (0.0, 0.0, 0.0)
    if kind == PRISMATIC_KIND:
        return zero, zero, scale(rate, axis), add(scale(acc, axis),
                                                  scale(2.0 * rate, cross3(w_in, axis)))
    if kind == FIXED_KIND:
        return zero, zero, zero, zero
    return scale(rate, axis), add(scale(acc, axis), scale(rate, cross3(w_in, axis))), zero, zero
