"""The constraint embedding of embedding.py compiled: the dependent coordinates, the
constraint Jacobian, gamma, the embedding map G, the rates and accelerations and the
minimum-norm multipliers of one state in one kernel call on buffers built once.

The same method as embedding.py and constraints.py, step for step (the same iterations,
stopping rules, damping and continuation), so that the results equal theirs to rounding:

* rows (seed 003 eqs. 12-13, 55, 72-75; appendix A): per row of a cut joint, with p_A, p_B
  the cut points, d = p_B - p_A, e, u fixed in A and w in B (world frame),
      position:     Phi = e . d    Phi_q = e^T (J_vB - J_vA) + (e x d)^T J_wA
      orientation:  Phi = u . w    Phi_q = (u x w)^T (J_wA - J_wB)
  and the frame Jacobians J_w, J_v of a body's point from the joints on its path to the
  root (constraints.py's module docstring);
* gamma (seed 003 eqs. 14, 73, 76) from the motion pass at (q, qd, 0);
* positions (seed 003 algorithm 2): per loop group, dq_d = -Phi_d^+ Phi, damped by halving
  until max |Phi| decreases (at most 20 halvings), until max |Phi| <= tolerance, at most
  ``max_iterations`` iterations; from a start farther than ``MAX_STEP`` followed by
  continuation (``ClosedChain.approach``); a solution off the start's assembly branch
  (det(Phi_d(start)^T Phi_d) not positive, ``ClosedChain._check_branch``) refused;
* rates and accelerations (seed 003 eq. 17): qd = G qd_i, qdd = G qdd_i + g with
  G = [1; -Phi_d^+ Phi_i] and g = [0; -Phi_d^+ gamma];
* multipliers (seed 002 eq. 8, seed 003 section 5): the minimum-norm solution of
  Phi_d^T lambda = (H qdd + b)_d, the singular values above 1e-9 max(s_max, 1) kept.

Phi_d^+ is the pseudo-inverse by the singular value decomposition, here by one-sided
(Hestenes) Jacobi rotations of the columns, J V = U S, in place (numpy's is LAPACK's: the
two differ by rounding); the condition number s_max / s_min above ``condition_limit``
stops the solve as embedding.py does. Errors come back as a status (``OK`` ...
``BRANCH``) with the group and the value that :meth:`Embedding.error` turns into
embedding.py's :class:`LoopSingularityError`, word for word.

embedding.py and constraints.py stay as they are: the assembly and mobility checks of
``ClosedChain.build``, the platform motion (limbs.py), closed-chain forward dynamics and
simulation, and the reference these kernels are tested against (test_compiled_embedding).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...jit import kernel
from ...kinematics.forward import forward_kinematics_sample, to_world
from ...kinematics.jacobian import frame_jacobian_sample
from ...kinematics.motion import body_motion_sample
from ...layout import (DW, FRAME_VA, FRAME_VB, FRAME_WA, FRAME_WB, IN_WORLD, ROW_A, ROW_B, ROW_CUT,
                       ROW_KIND, ROW_ORIGIN_A, ROW_ORIGIN_B, ROW_U, ROW_W, SET_CONDITION_LIMIT,
                       SET_MAX_ITERATIONS, SET_STEP, SET_STEPS, SET_TOLERANCE, A, V, W)
from ...linalg import add, cross3, dot, mat, mat_vec, scale, sub, vec
from ...model.packed import unflat_packed
from ...model.parameters import JointType
from .embedding import MAX_STEP, MAX_STEPS, ClosedChain, LoopSingularityError

# status of a solve
OK, NON_FINITE, SINGULAR, NO_CONVERGENCE, TOO_FAR, BRANCH = 0, 1, 2, 3, 4, 5

REVOLUTE = int(JointType.REVOLUTE)
#: Jacobi sweeps at most, and the rotation threshold (relative to the columns' norms)
JACOBI_SWEEPS, JACOBI_EPS = 60, 1e-15
#: Singular values kept by the multipliers (relative to max(s_max, 1), as dynamics/closed_chain)
MULTIPLIER_RANK = 1e-9


class PackedLoops(NamedTuple):
    """A closed chain's constant arrays: its rows (layout.py's RowInt, RowVec), its loop groups
    (rows and dependent coordinates of group g at ``row_index[group_rows[g]:group_rows[g+1]]``
    and ``col_index[group_cols[g]:group_cols[g+1]]``), the coordinates and the settings."""

    row_int: np.ndarray       # (m, 4) int64
    row_vec: np.ndarray       # (m, 4, 3)
    group_rows: np.ndarray    # (ng + 1,) int64
    row_index: np.ndarray     # (rows in groups,) int64: m for a whole chain, fewer for a limb
    group_cols: np.ndarray    # (ng + 1,) int64
    col_index: np.ndarray     # (nd,) int64
    independent: np.ndarray   # (ni,) int64
    dependent: np.ndarray     # (nd,) int64, sorted
    settings: np.ndarray      # (5,) layout.LoopSetting: tolerance, iterations, condition
    #                           limit, MAX_STEP, MAX_STEPS


class EmbeddingBuffers(NamedTuple):
    """One state's results and work arrays (built once, overwritten by every call)."""

    q: np.ndarray             # (n,) the solution, its rates and accelerations
    qd: np.ndarray
    qdd: np.ndarray
    trial: np.ndarray         # (n,) Newton's damped trial
    target: np.ndarray        # (ni,) a continuation's intermediate input
    values: np.ndarray        # (nb,) forward kinematics at the last evaluation
    rotations: np.ndarray     # (nb, 2, 3, 3)
    origins: np.ndarray       # (nb, 2, 3)
    motion: np.ndarray        # (nb, 6, 3) the motion pass at (q, qd, 0)
    zeros: np.ndarray         # (n,) zero accelerations
    zero3: np.ndarray         # (3,) no base acceleration
    phi: np.ndarray           # (m,) Phi
    jacobian: np.ndarray      # (m, n) Phi_q
    gamma: np.ndarray         # (m,)
    frames: np.ndarray        # (4, 3, n) one cut's frame Jacobians (FRAME_* slots)
    work: np.ndarray          # (m, nd) Jacobi: each group's J V = U S, in its block
    reference: np.ndarray     # (m, nd) each group's Phi_d at the solve's start, in its block
    gram: np.ndarray          # (nd, nd) each group's Phi_d(start)^T Phi_d, in its block
    right: np.ndarray         # (nd, nd) V, each group's block
    sigma: np.ndarray         # (nd,) singular values, each group's entries
    step: np.ndarray          # (nd,) a Newton step
    G: np.ndarray             # (n, ni) the embedding map
    delta: np.ndarray         # (n, 1) a Newton step, then g, at the dependent coordinates
    iterations: np.ndarray    # (ng,) int64 Newton iterations of the last solve, per group
    residual: np.ndarray      # (ng,) max |Phi| at its end
    condition: np.ndarray     # (1,) largest condition number of the final solve and G


class MultiplierBuffers(NamedTuple):
    """The multipliers' results and work arrays."""

    lam: np.ndarray           # (m,)
    work: np.ndarray          # (m, nd) Phi_d V = U S of every row
    right: np.ndarray         # (nd, nd)
    sigma: np.ndarray         # (nd,)
    projected: np.ndarray     # (nd,) V^T (H qdd + b)_d


def pack_loops(chain: ClosedChain) -> PackedLoops:
    """The kernels' arrays of ``chain`` (its rows, groups and settings)."""
    rows = chain.rows
    row_int = np.column_stack([rows.kind, rows.body_a, rows.body_b, rows.cut]).astype(np.int64)
    row_vec = np.ascontiguousarray(np.stack([rows.origin_a, rows.origin_b, rows.u, rows.w],
                                            axis=1), dtype=float).reshape(-1, 4, 3)
    group_rows, group_cols = [0], [0]
    for info in chain.groups:
        group_rows.append(group_rows[-1] + len(info.rows))
        group_cols.append(group_cols[-1] + len(info.group.dependent))
    cat = lambda parts: np.array([int(v) for p in parts for v in p], dtype=np.int64)  # noqa: E731
    settings = np.array([chain.tolerance, chain.max_iterations, chain.condition_limit,
                         MAX_STEP, MAX_STEPS], dtype=float)
    return PackedLoops(row_int.reshape(-1, 4), row_vec, np.array(group_rows, dtype=np.int64),
                       cat(info.rows for info in chain.groups),
                       np.array(group_cols, dtype=np.int64),
                       cat(info.group.dependent for info in chain.groups),
                       np.asarray(chain.independent, dtype=np.int64),
                       np.asarray(chain.dependent, dtype=np.int64), settings)


# --- constraint rows --------------------------------------------------------------------

@kernel
def constraint_row(pm, lp, r, rotations, origins, frames, phi, jacobian) -> None:
    """Phi and Phi_q of row ``r`` (module docstring) on the placements; ``frames`` holds
    the row's cut's frame Jacobians (:func:`cut_frames`)."""
    a, b = lp.row_int[r, ROW_A], lp.row_int[r, ROW_B]
    pa = to_world(rotations, origins, a, vec(lp.row_vec, r, ROW_ORIGIN_A))
    pb = to_world(rotations, origins, b, vec(lp.row_vec, r, ROW_ORIGIN_B))
    u = mat_vec(mat(rotations, a, IN_WORLD), vec(lp.row_vec, r, ROW_U))
    if lp.row_int[r, ROW_KIND] == 0:
        d = sub(pb, pa)
        phi[r] = dot(u, d)
        ud = cross3(u, d)
        for c in range(jacobian.shape[1]):
            jacobian[r, c] = (u[0] * (frames[FRAME_VB, 0, c] - frames[FRAME_VA, 0, c])
                              + u[1] * (frames[FRAME_VB, 1, c] - frames[FRAME_VA, 1, c])
                              + u[2] * (frames[FRAME_VB, 2, c] - frames[FRAME_VA, 2, c])) \
                + (ud[0] * frames[FRAME_WA, 0, c] + ud[1] * frames[FRAME_WA, 1, c]
                   + ud[2] * frames[FRAME_WA, 2, c])
    else:
        w = mat_vec(mat(rotations, b, IN_WORLD), vec(lp.row_vec, r, ROW_W))
        phi[r] = dot(u, w)
        uw = cross3(u, w)
        for c in range(jacobian.shape[1]):
            jacobian[r, c] = (uw[0] * (frames[FRAME_WA, 0, c] - frames[FRAME_WB, 0, c])
                              + uw[1] * (frames[FRAME_WA, 1, c] - frames[FRAME_WB, 1, c])
                              + uw[2] * (frames[FRAME_WA, 2, c] - frames[FRAME_WB, 2, c]))


@kernel
def cut_frames(pm, lp, r, rotations, origins, frames) -> None:
    """The frame Jacobians of row ``r``'s cut points on A and B into ``frames``."""
    a, b = lp.row_int[r, ROW_A], lp.row_int[r, ROW_B]
    pa = to_world(rotations, origins, a, vec(lp.row_vec, r, ROW_ORIGIN_A))
    pb = to_world(rotations, origins, b, vec(lp.row_vec, r, ROW_ORIGIN_B))
    frame_jacobian_sample(pm.body_int, pm.body_vec, a, pa, rotations, origins,
                          frames[FRAME_WA], frames[FRAME_VA])
    frame_jacobian_sample(pm.body_int, pm.body_vec, b, pb, rotations, origins,
                          frames[FRAME_WB], frames[FRAME_VB])


@kernel
def evaluate_rows(pm, lp, q, start, stop, b):
    """Forward kinematics at ``q`` and the rows ``row_index[start:stop]`` (Phi, Phi_q);
    returns max |Phi| of those rows (NaN when one is)."""
    forward_kinematics_sample(pm.body_int, pm.body_vec, pm.body_mat, q, b.values, b.rotations,
                              b.origins)
    err, cut = 0.0, -1
    for k in range(start, stop):
        r = lp.row_index[k]
        if lp.row_int[r, ROW_CUT] != cut:          # a cut's rows share its Jacobians
            cut = lp.row_int[r, ROW_CUT]
            cut_frames(pm, lp, r, b.rotations, b.origins, b.frames)
        constraint_row(pm, lp, r, b.rotations, b.origins, b.frames, b.phi, b.jacobian)
        e = abs(b.phi[r])
        if e > err or e != e:
            err = e
    return err


@kernel
def point_motion(rotations, motion, body, local):
    """World angular velocity and acceleration of ``body`` and the velocity and acceleration
    of its point ``local`` (constraints._point_motion)."""
    R = mat(rotations, body, IN_WORLD)
    w, dw = vec(motion, body, W), vec(motion, body, DW)
    v = add(vec(motion, body, V), cross3(w, local))
    a = add(add(vec(motion, body, A), cross3(dw, local)), cross3(w, cross3(w, local)))
    return mat_vec(R, w), mat_vec(R, dw), mat_vec(R, v), mat_vec(R, a)


@kernel
def gamma_row(lp, r, rotations, origins, motion):
    """gamma of row ``r`` (module docstring) from the motion pass at (q, qd, 0)."""
    a, b = lp.row_int[r, ROW_A], lp.row_int[r, ROW_B]
    la, lb = vec(lp.row_vec, r, ROW_ORIGIN_A), vec(lp.row_vec, r, ROW_ORIGIN_B)
    wa, dwa, va, aa = point_motion(rotations, motion, a, la)
    wb, dwb, vb, ab = point_motion(rotations, motion, b, lb)
    d = sub(to_world(rotations, origins, b, lb), to_world(rotations, origins, a, la))
    u = mat_vec(mat(rotations, a, IN_WORLD), vec(lp.row_vec, r, ROW_U))
    u_d = cross3(wa, u)
    u_dd = add(cross3(dwa, u), cross3(wa, u_d))
    if lp.row_int[r, ROW_KIND] == 0:
        return dot(u_dd, d) + dot(scale(2.0, u_d), sub(vb, va)) + dot(u, sub(ab, aa))
    w = mat_vec(mat(rotations, b, IN_WORLD), vec(lp.row_vec, r, ROW_W))
    w_d = cross3(wb, w)
    w_dd = add(cross3(dwb, w), cross3(wb, w_d))
    return dot(u_dd, w) + dot(scale(2.0, u_d), w_d) + dot(u, w_dd)


# --- pseudo-inverse by one-sided Jacobi --------------------------------------------------

@kernel
def jacobi_svd(work, right, sigma, r0, r1, c0, c1) -> None:
    """The block work[r0:r1, c0:c1] = J turned in place into U S (orthogonal columns) by
    one-sided Jacobi rotations, right[c0:c1, c0:c1] = V, sigma[c0:c1] = the columns' norms
    S (unsorted): J = U S V^T."""
    for i in range(c0, c1):
        for j in range(c0, c1):
            right[i, j] = 1.0 if i == j else 0.0
    for _ in range(JACOBI_SWEEPS):
        rotated = False
        for p in range(c0, c1 - 1):
            for k in range(p + 1, c1):
                alpha = beta = g = 0.0
                for i in range(r0, r1):
                    alpha += work[i, p] * work[i, p]
                    beta += work[i, k] * work[i, k]
                    g += work[i, p] * work[i, k]
                if g == 0.0 or not abs(g) > JACOBI_EPS * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * g)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                s = c * t
                for i in range(r0, r1):
                    x, y = work[i, p], work[i, k]
                    work[i, p], work[i, k] = c * x - s * y, s * x + c * y
                for i in range(c0, c1):
                    x, y = right[i, p], right[i, k]
                    right[i, p], right[i, k] = c * x - s * y, s * x + c * y
        if not rotated:
            break
    for j in range(c0, c1):
        total = 0.0
        for i in range(r0, r1):
            total += work[i, j] * work[i, j]
        sigma[j] = math.sqrt(total)


@kernel
def group_decomposition(lp, g, b):
    """Phi_d of group ``g`` (its rows, its dependent columns) decomposed into b.work,
    b.right, b.sigma; (status, condition number): NON_FINITE for a non-finite Jacobian."""
    r0, r1 = lp.group_rows[g], lp.group_rows[g + 1]
    c0, c1 = lp.group_cols[g], lp.group_cols[g + 1]
    for k in range(r0, r1):
        r = lp.row_index[k]
        for j in range(c0, c1):
            v = b.jacobian[r, lp.col_index[j]]
            if not math.isfinite(v):
                return NON_FINITE, math.inf
            b.work[k, j] = v
    jacobi_svd(b.work, b.right, b.sigma, r0, r1, c0, c1)
    top, low = 0.0, math.inf
    for j in range(c0, c1):
        top = max(top, b.sigma[j])
        low = min(low, b.sigma[j])
    return OK, (top / low if low > 0 else math.inf)


@kernel
def group_pseudo_solve(lp, g, b, rhs, sign, out, out_column) -> None:
    """out[col_index[j], out_column] = (Phi_d^+ (sign rhs))_j for group ``g`` decomposed
    (:func:`group_decomposition`); ``rhs`` indexed by row (m,); ``out`` (n, k)."""
    r0, r1 = lp.group_rows[g], lp.group_rows[g + 1]
    c0, c1 = lp.group_cols[g], lp.group_cols[g + 1]
    for j in range(c0, c1):
        b.step[j] = 0.0
    for j in range(c0, c1):            # x = V ((U^T rhs) / s), U = work / s
        s = b.sigma[j]
        total = 0.0
        for k in range(r0, r1):
            total += (b.work[k, j] / s) * (sign * rhs[lp.row_index[k]])
        coef = total / s
        for i in range(c0, c1):
            b.step[i] += b.right[i, j] * coef
    for j in range(c0, c1):
        out[lp.col_index[j], out_column] = b.step[j]


@kernel
def finite_rows(lp, g, values) -> bool:
    for k in range(lp.group_rows[g], lp.group_rows[g + 1]):
        if not math.isfinite(values[lp.row_index[k]]):
            return False
    return True


# --- Newton-Raphson and continuation ------------------------------------------------------

@kernel
def newton_group(pm, lp, g, b, record):
    """Algorithm 2 on group ``g``'s dependent coordinates from b.q (embedding.ClosedChain.
    _newton); (status, value): the condition number (SINGULAR, NON_FINITE), max |Phi|
    (NO_CONVERGENCE) or inf (BRANCH: off the branch of b.reference). ``record``: the
    condition numbers go into b.condition, the iterations and residual into b.iterations[g],
    b.residual[g]."""
    tolerance = lp.settings[SET_TOLERANCE]
    max_iterations = int(lp.settings[SET_MAX_ITERATIONS])
    r0, r1 = lp.group_rows[g], lp.group_rows[g + 1]
    c0, c1 = lp.group_cols[g], lp.group_cols[g + 1]
    n = b.q.shape[0]
    err = evaluate_rows(pm, lp, b.q, r0, r1, b)
    step = b.delta
    for it in range(max_iterations + 1):
        if err <= tolerance:
            if it > 0 and not branch_kept(lp, g, b):
                return BRANCH, math.inf
            if record:
                b.iterations[g] = it
                b.residual[g] = err
            return OK, err
        if it == max_iterations:
            break
        if not finite_rows(lp, g, b.phi):
            return NON_FINITE, math.inf
        status, condition = group_decomposition(lp, g, b)
        if status != OK:
            return status, condition
        if record:
            b.condition[0] = max(b.condition[0], condition)
        if not condition <= lp.settings[SET_CONDITION_LIMIT]:
            return SINGULAR, condition
        group_pseudo_solve(lp, g, b, b.phi, -1.0, step, 0)   # at the dependent coordinates
        factor, accepted, new_err = 1.0, False, err
        for _ in range(20):              # damping: halve the step until |Phi| decreases
            for c in range(n):
                b.trial[c] = b.q[c]
            for j in range(c0, c1):
                col = lp.col_index[j]
                b.trial[col] = b.q[col] + factor * step[col, 0]
            new_err = evaluate_rows(pm, lp, b.trial, r0, r1, b)
            if new_err < err:            # False for NaN
                accepted = True
                break
            factor *= 0.5
        if not accepted:
            break
        for c in range(n):
            b.q[c] = b.trial[c]
        err = new_err
    return NO_CONVERGENCE, err


@kernel
def branch_kept(lp, g, b) -> bool:
    """det(Phi_d(start)^T Phi_d) > 0 for group ``g``, Phi_d in b.jacobian at the solution
    (ClosedChain._check_branch), by Gaussian elimination with partial pivoting in b.gram."""
    r0, r1 = lp.group_rows[g], lp.group_rows[g + 1]
    c0, c1 = lp.group_cols[g], lp.group_cols[g + 1]
    for i in range(c0, c1):
        for j in range(c0, c1):
            total = 0.0
            for k in range(r0, r1):
                total += b.reference[k, i] * b.jacobian[lp.row_index[k], lp.col_index[j]]
            b.gram[i, j] = total
    sign = 1.0
    for p in range(c0, c1):
        pivot = p
        for i in range(p + 1, c1):
            if abs(b.gram[i, p]) > abs(b.gram[pivot, p]):
                pivot = i
        if not b.gram[pivot, p] != 0.0:     # singular, or NaN
            return False
        if pivot != p:
            sign = -sign
            for j in range(p, c1):
                b.gram[p, j], b.gram[pivot, j] = b.gram[pivot, j], b.gram[p, j]
        if b.gram[p, p] < 0.0:
            sign = -sign
        for i in range(p + 1, c1):
            f = b.gram[i, p] / b.gram[p, p]
            for j in range(p + 1, c1):
                b.gram[i, j] -= f * b.gram[p, j]
    return sign > 0.0


@kernel
def solve_positions(pm, lp, x, b, record):
    """b.q with x at the independent coordinates solved group by group (ClosedChain.solve),
    each group's Phi_d at the start kept in b.reference; (status, group, value)."""
    evaluate_rows(pm, lp, b.q, 0, lp.row_index.shape[0], b)     # every group's rows
    for g in range(lp.group_rows.shape[0] - 1):
        for k in range(lp.group_rows[g], lp.group_rows[g + 1]):
            for j in range(lp.group_cols[g], lp.group_cols[g + 1]):
                b.reference[k, j] = b.jacobian[lp.row_index[k], lp.col_index[j]]
    for k in range(lp.independent.shape[0]):
        b.q[lp.independent[k]] = x[k]
    for g in range(lp.group_rows.shape[0] - 1):
        status, value = newton_group(pm, lp, g, b, record)
        if status != OK:
            return status, g, value
    return OK, -1, 0.0


@kernel
def positions_sample(pm, lp, x, start, follow, b):
    """Every coordinate into b.q for the independent ones ``x``, from ``start`` (n,):
    followed by continuation when ``follow`` (ClosedChain.approach, then solve), else one
    Newton solve from it; (status, group, value: the jump for TOO_FAR)."""
    ni = lp.independent.shape[0]
    for c in range(b.q.shape[0]):
        b.q[c] = start[c]
    b.condition[0] = 0.0
    if follow:
        jump, finite = 0.0, True
        for k in range(ni):
            d = abs(x[k] - start[lp.independent[k]])
            if not math.isfinite(d):
                finite = False
            elif d > jump:
                jump = d
        if finite:
            ratio = jump / lp.settings[SET_STEP]
            if ratio > lp.settings[SET_STEPS]:       # as floats: numba's ceil is an int64,
                return TOO_FAR, -1, jump             # which wraps beyond 9.2e18 (1e18 / 0.05)
            steps = int(math.ceil(ratio))
            for s in range(1, steps):
                f = s / steps
                for k in range(ni):
                    x0 = start[lp.independent[k]]
                    b.target[k] = x0 + (x[k] - x0) * f
                status, g, value = solve_positions(pm, lp, b.target, b, False)
                if status != OK:
                    return status, g, value
    return solve_positions(pm, lp, x, b, True)


@kernel
def rates_sample(pm, lp, xd, xdd, b):
    """At the solution b.q: every row's Phi and Phi_q, G, qd = G qd_i, gamma and
    qdd = G qdd_i + g (ClosedChain.state); (status, group, value)."""
    m, n, ni = lp.row_int.shape[0], b.q.shape[0], lp.independent.shape[0]
    evaluate_rows(pm, lp, b.q, 0, lp.row_index.shape[0], b)     # every group's rows
    for c in range(n):
        for k in range(ni):
            b.G[c, k] = 0.0
    for k in range(ni):
        b.G[lp.independent[k], k] = 1.0
    ng = lp.group_rows.shape[0] - 1
    for g in range(ng):
        status, condition = group_decomposition(lp, g, b)
        if status != OK:
            return status, g, condition
        for k in range(ni):                  # the right-hand side -Phi_i must be finite
            if not finite_rows(lp, g, b.jacobian[:, lp.independent[k]]):
                return NON_FINITE, g, math.inf
        b.condition[0] = max(b.condition[0], condition)
        if not condition <= lp.settings[SET_CONDITION_LIMIT]:
            return SINGULAR, g, condition
        for k in range(ni):
            group_pseudo_solve(lp, g, b, b.jacobian[:, lp.independent[k]], -1.0, b.G, k)
    for c in range(n):
        total = 0.0
        for k in range(ni):
            total += b.G[c, k] * xd[k]
        b.qd[c] = total
    body_motion_sample(pm.body_int, pm.body_vec, b.rotations, b.origins, b.qd, b.zeros,
                       b.zero3, b.motion)
    for r in range(m):
        b.gamma[r] = gamma_row(lp, r, b.rotations, b.origins, b.motion)
    bias = b.delta
    for c in range(n):
        bias[c, 0] = 0.0
    for g in range(ng):
        if not finite_rows(lp, g, b.gamma):
            return NON_FINITE, g, math.inf
        group_pseudo_solve(lp, g, b, b.gamma, -1.0, bias, 0)
    for c in range(n):
        total = 0.0
        for k in range(ni):
            total += b.G[c, k] * xdd[k]
        b.qdd[c] = total + bias[c, 0]
    return OK, -1, 0.0


@kernel
def embed_sample(pm, lp, x, xd, xdd, start, follow, b):
    """One state: positions, then rates and accelerations (inner kernel; NamedTuples)."""
    status, g, value = positions_sample(pm, lp, x, start, follow, b)
    if status != OK:
        return status, g, value
    return rates_sample(pm, lp, xd, xdd, b)


@kernel
def multipliers_sample(lp, jacobian, tree, mb):
    """The minimum-norm lambda of Phi_d^T lambda = tree_d (every row, every dependent
    coordinate) into mb.lam; ``tree`` = H qdd + b (n,)."""
    m, nd = lp.row_int.shape[0], lp.dependent.shape[0]
    for r in range(m):
        mb.lam[r] = 0.0
        for j in range(nd):
            mb.work[r, j] = jacobian[r, lp.dependent[j]]
    jacobi_svd(mb.work, mb.right, mb.sigma, 0, m, 0, nd)
    top = 1.0
    for j in range(nd):
        top = max(top, mb.sigma[j])
    for j in range(nd):                # lambda = U_r S_r^-1 V_r^T tree_d
        s = mb.sigma[j]
        if not s > MULTIPLIER_RANK * top:
            continue
        total = 0.0
        for k in range(nd):
            total += mb.right[k, j] * tree[lp.dependent[k]]
        coef = total / s
        for r in range(m):
            mb.lam[r] += (mb.work[r, j] / s) * coef


@kernel
def _embed(packed, loops, x, xd, xdd, start, follow, buffers):
    """:func:`embed_sample` called from Python (plain tuples)."""
    return embed_sample(unflat_packed(packed), PackedLoops(*loops), x, xd, xdd, start, follow,
                        EmbeddingBuffers(*buffers))


@kernel
def _positions(packed, loops, x, start, follow, buffers):
    return positions_sample(unflat_packed(packed), PackedLoops(*loops), x, start, follow,
                            EmbeddingBuffers(*buffers))


@kernel
def _multipliers(loops, jacobian, tree, buffers) -> None:
    multipliers_sample(PackedLoops(*loops), jacobian, tree, MultiplierBuffers(*buffers))


def embedding_buffers(chain: ClosedChain) -> EmbeddingBuffers:
    model = chain.model
    n, nb, m = model.n_coordinates, model.n_bodies, len(chain.rows.names)
    ni, nd, ng = len(chain.independent), len(chain.dependent), len(chain.groups)
    return EmbeddingBuffers(
        np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(ni), np.zeros(nb),
        np.zeros((nb, 2, 3, 3)), np.zeros((nb, 2, 3)), np.zeros((nb, 6, 3)), np.zeros(n),
        np.zeros(3), np.zeros(m), np.zeros((m, n)), np.zeros(m), np.zeros((4, 3, n)),
        np.zeros((m, nd)), np.zeros((m, nd)), np.zeros((nd, nd)), np.zeros((nd, nd)),
        np.zeros(nd), np.zeros(nd),
        np.zeros((n, ni)), np.zeros((n, 1)), np.zeros(ng, dtype=np.int64), np.zeros(ng),
        np.zeros(1))


def multiplier_buffers(chain: ClosedChain) -> MultiplierBuffers:
    m, nd = len(chain.rows.names), len(chain.dependent)
    return MultiplierBuffers(np.zeros(m), np.zeros((m, nd)), np.zeros((nd, nd)), np.zeros(nd),
                             np.zeros(nd))


class Embedding:
    """The compiled embedding of one :class:`ClosedChain` with its buffers (module
    docstring); the results are views of the buffers, overwritten by the next call. Not
    thread-safe."""

    def __init__(self, chain: ClosedChain) -> None:
        self.chain = chain
        self.packed = chain.model.compiled.packed_args
        self.loops = tuple(pack_loops(chain))
        self.named = embedding_buffers(chain)
        self.buffers = tuple(self.named)
        self.multiplier_named = multiplier_buffers(chain)
        self.multiplier_buffers = tuple(self.multiplier_named)

    def error(self, status: int, group: int, value: float) -> LoopSingularityError:
        """embedding.py's error for a kernel's status (the same words)."""
        chain = self.chain
        if status == TOO_FAR:
            return LoopSingularityError.too_far(
                chain.model.name, value, chain.group_labels)
        info = chain.groups[group]
        label = info.label
        if status == NON_FINITE:
            return LoopSingularityError.non_finite(label)
        names = chain.names_of(info.group.dependent)
        if status == BRANCH:
            return LoopSingularityError.branch_change(label, names)
        if status == SINGULAR:
            return LoopSingularityError.ill_conditioned(label, names, value,
                                                        chain.condition_limit)
        return LoopSingularityError.no_convergence(label, value, chain.max_iterations,
                                                   chain.tolerance)

    def start_of(self, start: np.ndarray | None) -> tuple[np.ndarray, bool]:
        """The kernels' start and whether to follow it by continuation: none given, the
        assembled configuration followed (as ``ClosedChain.solve``)."""
        if start is None:
            return self.chain.assembled, True
        return np.ascontiguousarray(start, dtype=float), False

    def state(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
              start: np.ndarray | None = None, follow: bool | None = None) -> EmbeddingBuffers:
        """``ClosedChain.state`` compiled: b.q, b.qd, b.qdd, b.G, b.phi, b.jacobian,
        b.gamma of the independent coordinates' state, Newton-Raphson from ``start`` (None:
        followed from the assembled configuration); ``follow``: by continuation from it
        (``ClosedChain.approach``; default: only when ``start`` is None)."""
        begin, followed = self.start_of(start)
        status, group, value = _embed(self.packed, self.loops, _floats(x), _floats(xd),
                                      _floats(xdd), begin,
                                      followed if follow is None else follow, self.buffers)
        if status != OK:
            raise self.error(status, group, value)
        return self.named

    def positions(self, x: np.ndarray, start: np.ndarray | None = None,
                  follow: bool | None = None) -> np.ndarray:
        """Every coordinate (a view of b.q) for the independent ones (as
        :meth:`state`, positions only)."""
        begin, followed = self.start_of(start)
        status, group, value = _positions(self.packed, self.loops, _floats(x), begin,
                                          followed if follow is None else follow, self.buffers)
        if status != OK:
            raise self.error(status, group, value)
        return self.named.q

    def multipliers(self, tree: np.ndarray) -> np.ndarray:
        """The minimum-norm multipliers at the last state (a view) for ``tree`` = H qdd + b."""
        _multipliers(self.loops, self.named.jacobian, _floats(tree), self.multiplier_buffers)
        return self.multiplier_named.lam


def _floats(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=float)


def embedding_of(chain: ClosedChain) -> Embedding:
    """The chain's :class:`Embedding`, built on first use and kept with the chain (in its
    ``__dict__``, as a cached property would: the chain is a frozen dataclass)."""
    found = chain.__dict__.get("_embedding")
    if found is None:
        found = chain.__dict__["_embedding"] = Embedding(chain)
    return found
