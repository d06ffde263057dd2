"""Six-dimensional (spatial) quantities in body frames, for the joint-space algorithms
(composite rigid bodies, articulated bodies).

These are seed 002's twists and wrenches (section 2.1, eqs. 6-7): a motion vector is
``[omega; v]`` (angular velocity, velocity of the body origin A_i) and a force vector is
``[n; f]`` (torque about A_i, force), both in the body's own frame, as in the motion pass
(kinematics/motion.py) and the tree pass (dynamics/rnea.py). With R = R^{p}_{i} and
r = r^{p}_{i} from forward kinematics:

    t_i = A_i t_p + p_i qd_i,   A_i = [[R^T, 0], [-R^T [r]x, R^T]]      (seed 002 eqs. 11c-d)
    w_p = A_i^T w_i   (a wrench at A_i, moved to A_p in the parent frame)
    p_i = [s_w; s_v], the joint's motion subspace (model/joint.py; seed 002 eqs. 11d, 12b)
    M_i = [[I_Ci + m (c.c 1 - c c^T), m [c]x], [m [c]x^T, m 1]]            (eq. 6, about A_i)

with c the centre of mass in the body frame and [.]x the cross-product matrix (built once per
model: ``model.compiled.spatial_inertias``, model/compiled.py). Seed 002
writes A_{i,i-1} in one common frame; here each body has its own, so A_i also rotates.
"""
from __future__ import annotations

from ..jit import kernel
from ..linalg import mat, vec
from ..layout import IN_PARENT


@kernel
def parent_transform_into(rotations, origins, i, A) -> None:
    """A_i of body i, one sample (kernel), into the (6, 6) array ``A``:
    [[E, 0], [-E [r]x, E]] with E = (R^{p}_{i})^T and r = r^{p}_{i}."""
    R = mat(rotations, i, IN_PARENT)
    r = vec(origins, i, IN_PARENT)
    for a in range(3):
        e0, e1, e2 = R[0][a], R[1][a], R[2][a]                 # row a of E
        for b in range(3):
            A[a, b] = R[b][a]
            A[a, b + 3] = 0.0
            A[a + 3, b + 3] = R[b][a]
        A[a + 3, 0] = e2 * r[1] - e1 * r[2]
        A[a + 3, 1] = e0 * r[2] - e2 * r[0]
        A[a + 3, 2] = e1 * r[0] - e0 * r[1]


@kernel
def add_inertia_to_parent(A, M, scratch, out) -> None:
    """``out += A^T M A``: a body-frame inertia (6, 6) seen from the parent through A;
    ``scratch`` is a (6, 6) work array."""
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for k in range(6):
                acc += M[a, k] * A[k, b]
            scratch[a, b] = acc
    for a in range(6):
        for b in range(6):
            acc = 0.0
            for k in range(6):
                acc += A[k, a] * scratch[k, b]
            out[a, b] += acc


@kernel
def add_force_to_parent(A, f, out) -> None:
    """``out += A^T f``: a body-frame wrench (6,) moved to the parent's origin and frame."""
    for b in range(6):
        acc = 0.0
        for k in range(6):
            acc += A[k, b] * f[k]
        out[b] += acc


@kernel
def motion_to_child_into(A, v, out) -> None:
    """``out = A v``: a parent-frame twist or twist rate (6,) carried to the child (seed 002
    eq. 11c)."""
    for a in range(6):
        acc = 0.0
        for k in range(6):
            acc += A[a, k] * v[k]
        out[a] = acc
