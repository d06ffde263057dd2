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
"""
from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from ..model.actuator_geometry import IndirectJoint
from ..model.rotations import axis_rotation


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


def length_from_joint(joint: IndirectJoint, value: np.ndarray) -> np.ndarray:
    """Actuator length for a joint value (the direct, non-inverted relation)."""
    value = np.asarray(value, dtype=float)
    if joint.revolute:
        moved = axis_rotation(joint.axis, value) @ joint.end
    else:
        moved = joint.end + value[..., None] * joint.axis
    return np.linalg.norm(moved - joint.base, axis=-1)
