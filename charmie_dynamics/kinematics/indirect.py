"""Indirectly actuated joints solved in closed form: the joint value from the length L of
the linear actuator between the joint's parent and child (seed 001 section 4.2, seed 000
section 4.1), with the constants of :mod:`charmie_dynamics.model.actuator_geometry`.

* Prismatic joint: ``d = -(w.a) + s sqrt(L^2 - |w_perp|^2)``. Seed 001 eq. 14 is this with
  s = -1 (for CHARMIE's joint 4: ``d4 = F4z - E3z + D3z - sqrt(act4^2 - (F3y - E3y)^2)``).
* Revolute joint: ``theta = atan2(beta, alpha) + s acos(K / rho)``, ``K = (c0 - L^2)/2``,
  ``rho = hypot(alpha, beta)``. This is seed 001 eqs. 15-23 (intersection of two circles)
  without their transcription errors: eqs. 22-23 as extracted add an offset that is not
  perpendicular to the line of centres, and seed 000 eq. 9 names alpha_5 for alpha_4.

s is the assembly branch (``branch`` in the model file). First and second derivatives
w.r.t. L are exact, so ``qd = J Ld`` and ``qdd = J Ldd + J' Ld^2``.

The direct relation, the length at a joint value (:func:`joint_length`): L = |Rot(a, theta) q - p|
(revolute) or |q + d a - p| (prismatic), with p the base anchor in the joint frame and q the
end anchor in the child frame. :func:`input_jacobians_sample` gives a whole state in actuator
space: each driven coordinate's actuator length L with J = dq/dL and J' = d2q/dL2 (of the
coordinate: the joint's derivatives over its multiplier), the other coordinates as they are
(J = 1, J' = 0); dynamics/actuation.py and the simulator's compiled step call it.
"""
from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from ..layout import (A_BRANCH, A_DRIVES, A_END, A_JOINT_BASE, A_PERP2, A_SOLVE, A_STROKE, AXIS,
                      COORD, JOINT, MULTIPLIER, SCALARS)
from ..linalg import add, mat_vec, norm, scale, sub, vec
from ..model.actuator_geometry import IndirectJoint
from ..model.joint import REVOLUTE
from ..model.rotations import rotation_about


class MechanismRangeError(ValueError):
    """A configuration in which a mechanism cannot be assembled."""


class ActuatorRangeError(MechanismRangeError):
    """An actuator length outside its valid range (stroke, inside the assembly range)."""


def check_length(joint: IndirectJoint, length: np.ndarray) -> None:
    """Raise :class:`ActuatorRangeError` naming the actuator, the value and the valid range."""
    lo, hi = joint.stroke       # accepted lengths (the loader checked it assembles there)
    length = np.asarray(length, dtype=float)
    bad = ~((length >= lo) & (length <= hi))
    if np.any(bad):
        value = float(length[bad].flat[0]) if length.ndim else float(length)
        raise ActuatorRangeError(f"{joint.actuator}: length {value!r} m is outside the valid range "
                                 f"[{lo:.6g}, {hi:.6g}] m")


@kernel
def solve_joint(revolute, branch, solve, perp2, length):
    """Joint value, d(value)/dL and d2(value)/dL2 at one actuator length (kernel).

    ``solve`` = (c0, alpha, beta) and ``perp2`` are the joint's constants (IndirectJoint)."""
    c0, alpha, beta = solve
    s = branch
    L = length
    if revolute:
        rho2 = alpha * alpha + beta * beta
        K = 0.5 * (c0 - L * L)
        root = math.sqrt(rho2 - K * K)
        value = math.atan2(beta, alpha) + s * math.acos(K / math.sqrt(rho2))
        value = (value + math.pi) % (2.0 * math.pi) - math.pi
        return value, s * L / root, s * (rho2 - K * K - K * L * L) / root ** 3
    root = math.sqrt(L * L - perp2)
    return c0 + s * root, s * L / root, -s * perp2 / root ** 3


@kernel
def _solve_joint_batch(revolute, branch, solve, perp2, lengths, out) -> None:
    for k in range(lengths.shape[0]):
        out[k, 0], out[k, 1], out[k, 2] = solve_joint(revolute, branch, solve, perp2, lengths[k])


def joint_from_length(joint: IndirectJoint, length: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                         np.ndarray]:
    """Joint value, d(value)/dL and d2(value)/dL2 for actuator lengths (any shape).

    Values are of the joint (theta or d), before the coordinate multiplier.
    """
    check_length(joint, length)
    L = np.asarray(length, dtype=float)
    out = np.empty((L.size, 3))
    _solve_joint_batch(joint.revolute, joint.branch, (joint.c0, joint.alpha, joint.beta),
                       joint.perp2, np.ascontiguousarray(L.reshape(-1)), out)
    return tuple(out[:, k].reshape(L.shape) for k in range(3))


@kernel
def joint_length(revolute, axis, base, end, value):
    """Actuator length at the joint value ``value`` (theta or d, before the coordinate
    multiplier), kernel: the direct relation of the module docstring; ``axis``, ``base`` (p,
    joint frame) and ``end`` (q, child frame) are 3-vectors."""
    if revolute:
        moved = mat_vec(rotation_about(axis, value), end)
    else:
        moved = add(end, scale(value, axis))
    return norm(sub(moved, base))


@kernel
def _joint_length_batch(revolute, axis, base, end, values, out) -> None:
    for k in range(values.shape[0]):
        out[k] = joint_length(revolute, axis, base, end, values[k])


def length_from_joint(joint: IndirectJoint, value: np.ndarray) -> np.ndarray:
    """Actuator length for a joint value (the direct, non-inverted relation), any shape."""
    value = np.asarray(value, dtype=float)
    out = np.empty(value.shape)
    _joint_length_batch(joint.revolute, *(tuple(map(float, v)) for v in
                                          (joint.axis, joint.base, joint.end)),
                        np.ascontiguousarray(value).reshape(-1), out.reshape(-1))
    return out


@kernel
def input_jacobians_sample(body_int, body_vec, act_int, act_vec, q, x, J, Jp) -> int:
    """Actuator-space positions x, J = dq/dx and J' = d2q/dx2 of one sample of joint
    coordinates q (n,) (kernel, module docstring). Returns the first actuator whose length is
    outside its stroke (or not a number; its x is the length), or -1."""
    x[:] = q
    J[:] = 1.0
    Jp[:] = 0.0
    for k in range(act_int.shape[0]):
        i = act_int[k, A_DRIVES]
        c = body_int[i, COORD]
        m = body_vec[i, SCALARS, MULTIPLIER]
        revolute = body_int[i, JOINT] == REVOLUTE
        L = joint_length(revolute, vec(body_vec, i, AXIS), vec(act_vec, k, A_JOINT_BASE),
                         vec(act_vec, k, A_END), q[c] * m)
        x[c] = L
        if not (act_vec[k, A_STROKE, 0] <= L <= act_vec[k, A_STROKE, 1]):
            return k
        _, d1, d2 = solve_joint(revolute, act_int[k, A_BRANCH], vec(act_vec, k, A_SOLVE),
                                act_vec[k, A_PERP2, 0], L)
        J[c], Jp[c] = d1 / m, d2 / m
    return -1


@kernel
def input_jacobians_batch(body_int, body_vec, act_int, act_vec, q, x, J, Jp) -> int:
    """:func:`input_jacobians_sample` over (samples, n) arrays; returns the lowest actuator
    out of its stroke in any sample, or -1."""
    bad = -1
    for s in range(q.shape[0]):
        k = input_jacobians_sample(body_int, body_vec, act_int, act_vec, q[s], x[s], J[s],
                                   Jp[s])
        if k >= 0 and (bad < 0 or k < bad):
            bad = k
    return bad
