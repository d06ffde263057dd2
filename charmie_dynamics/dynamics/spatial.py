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
from ..layout import IN_PARENT
from ..linalg import mat, mat_mul, vec


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


# The same three operations without the (6, 6) A_i, from R = R^{p}_{i} and r = r^{p}_{i}
# (forward kinematics' placements) directly, as Pinocchio applies its SE3 actions
# (Featherstone, RBDA, section 2.8: a transform X = rot(E) xlt(r) applied
# blockwise). A_i = [[E, 0], [-E [r]x, E]] with E = R^T, i.e. A_i = diag(E, E) T with
# T = [[1, 0], [-[r]x, 1]].

@kernel
def rt_motion_to_child_into(rotations, origins, i, v, out) -> None:
    """``out = A_i v`` (eq. 11c): omega_i = R^T omega_p, v_i = R^T (v_p - r x omega_p)."""
    R = mat(rotations, i, IN_PARENT)
    r = vec(origins, i, IN_PARENT)
    u0 = v[3] - (r[1] * v[2] - r[2] * v[1])
    u1 = v[4] - (r[2] * v[0] - r[0] * v[2])
    u2 = v[5] - (r[0] * v[1] - r[1] * v[0])
    for a in range(3):
        out[a] = R[0][a] * v[0] + R[1][a] * v[1] + R[2][a] * v[2]
        out[a + 3] = R[0][a] * u0 + R[1][a] * u1 + R[2][a] * u2


@kernel
def rt_add_force_to_parent(rotations, origins, i, f, out) -> None:
    """``out += A_i^T f``: f_p = R f, n_p = R n + r x f_p."""
    R = mat(rotations, i, IN_PARENT)
    r = vec(origins, i, IN_PARENT)
    g0 = R[0][0] * f[3] + R[0][1] * f[4] + R[0][2] * f[5]
    g1 = R[1][0] * f[3] + R[1][1] * f[4] + R[1][2] * f[5]
    g2 = R[2][0] * f[3] + R[2][1] * f[4] + R[2][2] * f[5]
    out[0] += R[0][0] * f[0] + R[0][1] * f[1] + R[0][2] * f[2] + (r[1] * g2 - r[2] * g1)
    out[1] += R[1][0] * f[0] + R[1][1] * f[1] + R[1][2] * f[2] + (r[2] * g0 - r[0] * g2)
    out[2] += R[2][0] * f[0] + R[2][1] * f[1] + R[2][2] * f[2] + (r[0] * g1 - r[1] * g0)
    out[3] += g0
    out[4] += g1
    out[5] += g2


@kernel
def rt_add_inertia_to_parent(rotations, origins, i, M, out) -> None:
    """``out += A_i^T M A_i`` for a symmetric (6, 6) ``M`` (a rigid or articulated
    inertia), without A_i: N = diag(R, R) M diag(R^T, R^T) blockwise (N_ab = R M_ab R^T),
    then the shift T^T N T,

        [[N11 - Q - Q^T - P [r]x, N12 + P], [(N12 + P)^T, N22]],
        Q = N12 [r]x,  P = [r]x N22,

    in 3x3 tuples (registers; numba indexes a tuple by a loop variable through a copy, so
    every index here is a constant): about 250 multiplications against 432 for the two
    (6, 6) products of :func:`add_inertia_to_parent`."""
    R = mat(rotations, i, IN_PARENT)
    r = vec(origins, i, IN_PARENT)
    Rt = ((R[0][0], R[1][0], R[2][0]), (R[0][1], R[1][1], R[2][1]), (R[0][2], R[1][2], R[2][2]))
    X = ((0.0, -r[2], r[1]), (r[2], 0.0, -r[0]), (-r[1], r[0], 0.0))     # [r]x
    N11 = mat_mul(R, mat_mul(block(M, 0, 0), Rt))
    N12 = mat_mul(R, mat_mul(block(M, 0, 3), Rt))
    N22 = mat_mul(R, mat_mul(block(M, 3, 3), Rt))
    P = mat_mul(X, N22)
    Q = mat_mul(N12, X)
    S = mat_mul(P, X)
    T = ((N12[0][0] + P[0][0], N12[0][1] + P[0][1], N12[0][2] + P[0][2]),
         (N12[1][0] + P[1][0], N12[1][1] + P[1][1], N12[1][2] + P[1][2]),
         (N12[2][0] + P[2][0], N12[2][1] + P[2][1], N12[2][2] + P[2][2]))
    add_block(out, 0, 0, (
        (N11[0][0] - Q[0][0] - Q[0][0] - S[0][0], N11[0][1] - Q[0][1] - Q[1][0] - S[0][1],
         N11[0][2] - Q[0][2] - Q[2][0] - S[0][2]),
        (N11[1][0] - Q[1][0] - Q[0][1] - S[1][0], N11[1][1] - Q[1][1] - Q[1][1] - S[1][1],
         N11[1][2] - Q[1][2] - Q[2][1] - S[1][2]),
        (N11[2][0] - Q[2][0] - Q[0][2] - S[2][0], N11[2][1] - Q[2][1] - Q[1][2] - S[2][1],
         N11[2][2] - Q[2][2] - Q[2][2] - S[2][2])))
    add_block(out, 0, 3, T)
    add_block(out, 3, 0, ((T[0][0], T[1][0], T[2][0]), (T[0][1], T[1][1], T[2][1]),
                          (T[0][2], T[1][2], T[2][2])))
    add_block(out, 3, 3, N22)


@kernel(inline=True)
def block(M, a0, b0):
    """The 3x3 block of the (6, 6) array ``M`` at (a0, b0), as rows (kernel)."""
    return ((M[a0, b0], M[a0, b0 + 1], M[a0, b0 + 2]),
            (M[a0 + 1, b0], M[a0 + 1, b0 + 1], M[a0 + 1, b0 + 2]),
            (M[a0 + 2, b0], M[a0 + 2, b0 + 1], M[a0 + 2, b0 + 2]))


@kernel(inline=True)
def add_block(out, a0, b0, B) -> None:
    """``out[a0:a0 + 3, b0:b0 + 3] += B`` (kernel), B as rows."""
    add_row(out, a0, b0, B[0])
    add_row(out, a0 + 1, b0, B[1])
    add_row(out, a0 + 2, b0, B[2])


@kernel(inline=True)
def add_row(out, a, b0, row) -> None:
    """``out[a, b0:b0 + 3] += row`` (kernel)."""
    out[a, b0] += row[0]
    out[a, b0 + 1] += row[1]
    out[a, b0 + 2] += row[2]
