"""The joint transform (Featherstone's jcalc): the kernels' one switch on joint types (what
the Python side knows of each type is its module in model/joint_types/).

A joint is given by its kind and its parameter row ``joint`` = (a_x, a_y, a_z, h): the unit
axis ``a`` (in the joint frame, which the joint's own motion leaves fixed) and the pitch
``h`` (m/rad, a helical joint's; 0 for the others). With the joint value ``value`` (rad or
m: multiplier * coordinate + offset) the joint moves by R_J = Rot(a, value) (revolute),
t_J = value a (prismatic), R_J = Rot(a, value) and t_J = h value a (helical: Featherstone's
RBDA Table 4.1, Pinocchio's JointModelHelicalUnaligned), nothing (fixed); its motion
subspace in the body frame is [s_w; s_v] = [a; 0], [0; a], [a; h a] or 0 (seed 002 eqs.
11d, 12b; RBDA Table 4.1). :func:`joint_transform` gives them composed with the body's
constant placement in its parent (rotation R_c, origin B), as forward kinematics needs them:

    R^{p}_{i} = R_c R_J,   r^{p}_{i} = B + R_c t_J,   s_w, s_v

The subspace is constant: the model packs it once (model/packed.py, with R_c = 1 and value
0) for the joint efforts, CRBA and ABA. :func:`joint_motion` gives the joint's own terms of
the motion pass (kinematics/motion.py), with joint rate qd, acceleration qdd and w_in the
parent's angular velocity in the body frame:

    omega += qd s_w,   omegad += qdd s_w + qd w_in x s_w,
    v += qd s_v,       a += qdd s_v + 2 qd w_in x s_v      (a: classical, of the body origin)

(a helical joint has both terms: its slide R_c h value a runs along a line fixed in the
parent, so its Coriolis term is the prismatic joint's, and its turn adds the revolute's).
A continuous joint is a revolute joint without limits.

**The free-flyer** (JointType.FLOATING, Pinocchio's JointModelFreeFlyer; only on a root
body, model/loader.py) has the configuration q = (x, y, z, qx, qy, qz, qw) at its
``configuration_index``: t_J = (x, y, z) in the joint frame and R_J = R(quaternion), so
R^{p}_{i} = R_c R_J, r^{p}_{i} = B + R_c t_J as above. Its velocity coordinates (6 at its
``coordinate_index``) are Pinocchio's v = [v_J; w_J]: the velocity of the body origin
relative to the joint frame and the relative angular velocity, both in the body frame. In
our [omega; v] order its motion subspace is the constant permutation S = [[0, 1], [1, 0]]:
column d is the unit vector e_{FREE_COLUMNS[d]}, and its effort S^T [n; f] = [f; n] is
Pinocchio's (force, torque) in the body frame. Differentiating r^{p}_{i} and R^T omega_p
(as the formulas above do for one axis) gives its motion-pass terms, with a_J = dv_J/dt:

    omega += w_J,   omegad += a_w + w_in x w_J,
    v += v_J,       a += a_v + w_J x v_J + 2 w_in x v_J

(w_in = 0 at the root; the w_J x v_J term is the classical acceleration of the origin,
Pinocchio's spatial acceleration being a_v.)
The recursions over degrees of freedom (the efforts, CRBA, ABA) read a joint's columns from
the packed subspace, and the free-flyer's six from FREE_COLUMNS: the one other place a
joint kind is asked for.

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
from .rotations import quaternion_rows, rotation_about, turn_about_coordinate_axis

REVOLUTE, PRISMATIC = int(JointType.REVOLUTE), int(JointType.PRISMATIC)
FIXED_KIND, REVOLUTE_KIND, PRISMATIC_KIND = int(JointType.FIXED), REVOLUTE, PRISMATIC
FREE_KIND, HELICAL_KIND = int(JointType.FLOATING), int(JointType.HELICAL)
REVOLUTE_X_KIND = len(JointType)    # then Y and Z: REVOLUTE_X_KIND + k about +-e_k
#: the free-flyer's motion subspace: its velocity coordinate d (Pinocchio's v = [v; w]) is
#: the component FREE_COLUMNS[d] of our [omega; v] twist (module docstring)
FREE_COLUMNS = (3, 4, 5, 0, 1, 2)


def joint_kind(joint_type: int, axis: np.ndarray) -> int:
    """The kind of joint transform of a joint type and unit axis (module docstring)."""
    nonzero = np.flatnonzero(axis)
    if joint_type == REVOLUTE and len(nonzero) == 1:
        return REVOLUTE_X_KIND + int(nonzero[0])
    return int(joint_type)


@kernel(inline=True)
def joint_transform(kind, joint, value, q, iq, R_c, B):
    """(R^{p}_{i}, r^{p}_{i}, s_w, s_v) of a joint (kernel; module docstring): rows and
    3-tuples; ``joint`` its parameter row (a_x, a_y, a_z, h); ``R_c``, ``B`` the constant
    placement; a free-flyer reads its configuration q[iq:iq + 7] (s_w = s_v = 0: its
    subspace is FREE_COLUMNS)."""
    zero = (0.0, 0.0, 0.0)
    axis = (joint[0], joint[1], joint[2])
    if kind == FREE_KIND:
        t = (q[iq], q[iq + 1], q[iq + 2])
        R_J = quaternion_rows(q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6])
        return mat_mul(R_c, R_J), add(B, mat_vec(R_c, t)), zero, zero
    if kind >= REVOLUTE_X_KIND:                   # axis = +-e_k: turn by +-value about e_k
        k = kind - REVOLUTE_X_KIND
        return turn_about_coordinate_axis(R_c, k, axis[k] * value), B, axis, zero
    if kind == REVOLUTE_KIND:
        return mat_mul(R_c, rotation_about(axis, value)), B, axis, zero
    if kind == PRISMATIC_KIND:
        return R_c, add(B, scale(value, mat_vec(R_c, axis))), zero, axis
    if kind == HELICAL_KIND:
        s_v = scale(joint[3], axis)
        return (mat_mul(R_c, rotation_about(axis, value)),
                add(B, scale(value, mat_vec(R_c, s_v))), axis, s_v)
    return R_c, B, zero, zero


@kernel(inline=True)
def joint_motion(kind, joint, rate, acc, w_in, qd, qdd, c):
    """The joint's terms of the motion pass (kernel; module docstring): what it adds to the
    angular velocity, angular acceleration, velocity and acceleration of the body origin;
    ``joint`` its parameter row (a_x, a_y, a_z, h); a free-flyer reads its rates
    qd[c:c + 6] and accelerations qdd[c:c + 6]."""
    zero = (0.0, 0.0, 0.0)
    axis = (joint[0], joint[1], joint[2])
    if kind == FREE_KIND:
        v_J, w_J = (qd[c], qd[c + 1], qd[c + 2]), (qd[c + 3], qd[c + 4], qd[c + 5])
        a_v, a_w = (qdd[c], qdd[c + 1], qdd[c + 2]), (qdd[c + 3], qdd[c + 4], qdd[c + 5])
        return w_J, add(a_w, cross3(w_in, w_J)), v_J, \
            add(add(a_v, cross3(w_J, v_J)), scale(2.0, cross3(w_in, v_J)))
    if kind == PRISMATIC_KIND:
        return zero, zero, scale(rate, axis), add(scale(acc, axis),
                                                  scale(2.0 * rate, cross3(w_in, axis)))
    if kind == FIXED_KIND:
        return zero, zero, zero, zero
    if kind == HELICAL_KIND:
        s_v = scale(joint[3], axis)
        return scale(rate, axis), add(scale(acc, axis), scale(rate, cross3(w_in, axis))), \
            scale(rate, s_v), add(scale(acc, s_v), scale(2.0 * rate, cross3(w_in, s_v)))
    return scale(rate, axis), add(scale(acc, axis), scale(rate, cross3(w_in, axis))), zero, zero
