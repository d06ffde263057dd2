"""The loop constraints of a model's cut joints, their Jacobian and its time-derivative term
(seed 003 eqs. 12-14, appendix A), evaluated on the tree's placements and motion pass.

For the rows of model/cut_joints.py, with p_A, p_B the cut frames' origins, d = p_B - p_A,
e and u fixed in body A, w fixed in body B, omega and alpha the bodies' angular velocity and
acceleration (world frame) and J_w, J_v the bodies' frame Jacobians (world frame, the point's
linear velocity), one row each:

    position:     Phi = e . d        Phi_q = e^T (J_vB - J_vA) + (e x d)^T J_wA      (eqs. 55, 72)
    orientation:  Phi = u . w        Phi_q = (u x w)^T (J_wA - J_wB)                  (eqs. 74-75)

and the acceleration constraint Phi_q qdd + gamma = 0 with gamma the second time derivative
of Phi at qdd = 0 (seed 003 eqs. 14, 73, 76), from the motion pass at (q, qd, 0):

    position:     gamma = e_dd . d + 2 e_d . d_d + e . d_dd
    orientation:  gamma = u_dd . w + 2 u_d . w_d + u . w_dd
    with  e_d = omega_A x e,  e_dd = alpha_A x e + omega_A x (omega_A x e)   (alpha at qdd = 0)

The frame Jacobians are kinematics/jacobian.py's (the one for every joint type, also
compiled.py's). Everything else here is plain numpy on one sample. compiled.py evaluates the
same rows in numba kernels for the dynamics node, ``analyze`` and
``closed_chain.inverse_dynamics``; this module is their reference in the tests
(test_compiled_embedding.py) and serves the assembly checks, the limbs of a parallel
mechanism (limbs.py) and closed-chain forward dynamics.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...kinematics.forward import Placements, forward_kinematics
from ...kinematics.jacobian import frame_jacobian
from ...kinematics.motion import BodyMotion, body_motion
from ...linalg import cross3
from ...model.joint_types import JOINT_TYPES, joint_type_spec
from ...model.model import Model
from ...model.validation import either


@dataclass(frozen=True)
class ConstraintRows:
    """Every cut joint's rows (model/cut_joints.py) in model order, body frames."""

    names: tuple[str, ...]
    kind: np.ndarray        # (m,) 0 position, 1 orientation
    body_a: np.ndarray      # (m,) body A of the row's cut joint
    body_b: np.ndarray
    origin_a: np.ndarray    # (m, 3) cut origin on A (A's frame)
    origin_b: np.ndarray    # (m, 3)
    u: np.ndarray           # (m, 3) e (position) or u (orientation), A's frame
    w: np.ndarray           # (m, 3) w (orientation) in B's frame; 0 for position rows
    cut: np.ndarray         # (m,) index of the cut joint

    @classmethod
    def of(cls, model: Model) -> ConstraintRows:
        names, kind, rows = [], [], []
        for k, c in enumerate(model.loops.cuts):
            position, orientation = c.rows()
            for name, e in position:
                names.append(name)
                kind.append(0)
                rows.append((c.body_a, c.body_b, c.origin_a, c.origin_b, e, np.zeros(3), k))
            for name, u, w in orientation:
                names.append(name)
                kind.append(1)
                rows.append((c.body_a, c.body_b, c.origin_a, c.origin_b, u, w, k))
        cols = list(zip(*rows))
        return cls(tuple(names), np.array(kind, dtype=int), np.array(cols[0], dtype=int),
                   np.array(cols[1], dtype=int), np.array(cols[2]), np.array(cols[3]),
                   np.array(cols[4]), np.array(cols[5]), np.array(cols[6], dtype=int))

    def take(self, index: np.ndarray) -> ConstraintRows:
        """The rows ``index`` only (a loop group's), each evaluated as among all rows."""
        return ConstraintRows(tuple(self.names[i] for i in index), self.kind[index],
                              self.body_a[index], self.body_b[index], self.origin_a[index],
                              self.origin_b[index], self.u[index], self.w[index],
                              self.cut[index])


IN_LOOPS = either(f"{s.code.name.lower()} ({s.letter})" for s in JOINT_TYPES if s.in_loops)


def check_joint_types(model: Model) -> None:
    """ValueError for a joint type the closed chains are not built for."""
    for b in model.bodies:
        spec = joint_type_spec(b.joint_type)
        if not spec.in_loops:
            raise ValueError(f"{model.source}: body {b.name}: joint.type: {spec.described} in "
                             f"a model with loops, expected {IN_LOOPS} joints only (the closed "
                             "chains are built and tested on those)")


@dataclass(frozen=True)
class ConstraintValues:
    """Phi (m,), Phi_q (m, n) and, when rates were given, gamma (m,) at one configuration."""

    residual: np.ndarray
    jacobian: np.ndarray
    gamma: np.ndarray | None
    placements: Placements


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of two 3-vectors (np.cross costs 30 times more on single vectors)."""
    return np.array(cross3(a, b))


def _world(placements: Placements, body: int, local: np.ndarray) -> np.ndarray:
    return placements.rotation_world[body] @ local


def _point_motion(placements: Placements, motion: BodyMotion, body: int, local: np.ndarray
                  ) -> tuple[np.ndarray, ...]:
    """World angular velocity and acceleration of ``body`` and the velocity and acceleration
    of its point ``local`` (seed 000 eqs. 29-32 with the body frame turned to the world)."""
    R = placements.rotation_world[body]
    w, dw = motion.angular_velocity[body], motion.angular_acceleration[body]
    v = motion.linear_velocity[body] + _cross(w, local)
    a = motion.linear_acceleration[body] + _cross(dw, local) + _cross(w, _cross(w, local))
    return R @ w, R @ dw, R @ v, R @ a


def evaluate(model: Model, rows: ConstraintRows, q: np.ndarray,
             qd: np.ndarray | None = None) -> ConstraintValues:
    """The constraints at coordinates ``q`` (n,), and gamma when ``qd`` is given (module
    docstring)."""
    fk = forward_kinematics(model, q)
    m = len(rows.names)
    phi, J = np.empty(m), np.empty((m, model.n_coordinates))
    per_cut: dict[int, tuple] = {}      # the cut's points and Jacobians, shared by its rows
    for r in range(m):
        a, b, k = int(rows.body_a[r]), int(rows.body_b[r]), int(rows.cut[r])
        if k not in per_cut:
            pa, pb = fk.to_world(a, rows.origin_a[r]), fk.to_world(b, rows.origin_b[r])
            per_cut[k] = (pa, pb) + frame_jacobian(model, fk, a, pa) \
                + frame_jacobian(model, fk, b, pb)
        pa, pb, Jwa, Jva, Jwb, Jvb = per_cut[k]
        u = _world(fk, a, rows.u[r])
        if rows.kind[r] == 0:
            d = pb - pa
            phi[r] = u @ d
            J[r] = u @ (Jvb - Jva) + _cross(u, d) @ Jwa
        else:
            w = _world(fk, b, rows.w[r])
            phi[r] = u @ w
            J[r] = _cross(u, w) @ (Jwa - Jwb)
    values = ConstraintValues(phi, J, None, fk)
    return values if qd is None else with_gamma(model, rows, values, qd)


def with_gamma(model: Model, rows: ConstraintRows, values: ConstraintValues, qd: np.ndarray
               ) -> ConstraintValues:
    """``values`` with gamma at the rates ``qd`` (module docstring), from the motion pass at
    (q, qd, 0) on the same placements."""
    fk = values.placements
    motion = body_motion(model, fk, qd, np.zeros_like(qd))
    gamma = np.empty(len(rows.names))
    per_cut: dict[int, tuple] = {}      # the cut points' motion and d, shared by its rows
    for r in range(len(rows.names)):
        a, b, k = int(rows.body_a[r]), int(rows.body_b[r]), int(rows.cut[r])
        if k not in per_cut:
            per_cut[k] = (_point_motion(fk, motion, a, rows.origin_a[r])
                          + _point_motion(fk, motion, b, rows.origin_b[r])
                          + (fk.to_world(b, rows.origin_b[r]) - fk.to_world(a, rows.origin_a[r]),))
        wa, dwa, va, aa, wb, dwb, vb, ab, d = per_cut[k]
        u = _world(fk, a, rows.u[r])
        u_d = _cross(wa, u)
        u_dd = _cross(dwa, u) + _cross(wa, u_d)
        if rows.kind[r] == 0:
            gamma[r] = u_dd @ d + 2.0 * u_d @ (vb - va) + u @ (ab - aa)
        else:
            w = _world(fk, b, rows.w[r])
            w_d = _cross(wb, w)
            w_dd = _cross(dwb, w) + _cross(wb, w_d)
            gamma[r] = u_dd @ w + 2.0 * u_d @ w_d + u @ w_dd
    return ConstraintValues(values.residual, values.jacobian, gamma, fk)
