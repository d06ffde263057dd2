"""Indirectly actuated joints: a linear actuator of length L between the joint's parent and
child determines the joint coordinate (seed 001 section 4.2, seed 000 section 4.1).

Derived in closed form for any axis, in the joint frame J (the parent frame after the
constant rotation, origin at the joint point B). With ``p`` the actuator's base anchor and
``q`` its end anchor (child frame), L is the distance between ``p`` and the moved ``q``.

* Prismatic joint (d along the unit axis a), w = q - p:
  ``L^2 = |w + d a|^2``  =>  ``d = -(w.a) + s sqrt(L^2 - |w_perp|^2)``.
  Seed 001 eq. 14 is this with s = -1 (for CHARMIE's joint 4: ``d4 = F4z - E3z + D3z -
  sqrt(act4^2 - (F3y - E3y)^2)``).
* Revolute joint (theta about a): ``L^2 = c0 - 2 (alpha cos theta + beta sin theta)`` with
  ``alpha = p_perp.q_perp``, ``beta = p.(a x q)``, ``c0 = |p|^2 + |q|^2 - 2 (a.p)(a.q)``, so
  ``theta = atan2(beta, alpha) + s acos(K / rho)``, ``K = (c0 - L^2)/2``,
  ``rho = hypot(alpha, beta)``. This is seed 001 eqs. 15-23 (intersection of two circles)
  without their transcription errors: eqs. 22-23 as extracted add an offset that is not
  perpendicular to the line of centres, and seed 000 eq. 9 names alpha_5 for alpha_4.

s is the assembly branch (``branch`` in the model file). First and second derivatives
w.r.t. L are exact, so ``qd = J Ld`` and ``qdd = J Ldd + J' Ld^2``.
"""
from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np

from ..jit import kernel
from ..model.model import Actuator, JointType, Model
from ..model.rotations import axis_rotation


class MechanismRangeError(ValueError):
    """A configuration in which a mechanism cannot be assembled."""


class ActuatorRangeError(MechanismRangeError):
    """An actuator length outside its valid range (stroke, inside the assembly range)."""


@dataclass(frozen=True)
class IndirectJoint:
    """Precomputed constants of one actuator-driven joint (see the module docstring)."""

    actuator: str
    body: int
    coordinate: int
    revolute: bool
    branch: int
    multiplier: float
    axis: np.ndarray
    base: np.ndarray      # p, joint frame
    end: np.ndarray       # q, child frame
    c0: float             # revolute: |p|^2+|q|^2-2(a.p)(a.q);  prismatic: -(w.a)
    alpha: float          # revolute only
    beta: float           # revolute only
    perp2: float          # prismatic: |w_perp|^2
    geometric_range: tuple[float, float]   # open interval of L where the solution is regular
    stroke: tuple[float, float]


def _build(model: Model, act: Actuator) -> IndirectJoint:
    i = act.drives
    a = model.axis[i]
    p = model.rotation[i].T @ (act.base.local - model.origin[i])
    q = np.array(act.end.local)
    revolute = model.joint_type[i] == JointType.REVOLUTE
    if revolute:
        ap, aq = a @ p, a @ q
        alpha = p @ q - ap * aq
        beta = p @ np.cross(a, q)
        c0 = p @ p + q @ q - 2.0 * ap * aq
        rho = np.hypot(alpha, beta)
        lo2, hi2 = c0 - 2.0 * rho, c0 + 2.0 * rho
        geo = (float(np.sqrt(max(lo2, 0.0))), float(np.sqrt(hi2)))
        perp2 = 0.0
    else:
        w = q - p
        alpha = beta = 0.0
        c0 = -(w @ a)
        perp2 = w @ w - (w @ a) ** 2
        geo = (float(np.sqrt(max(perp2, 0.0))), float("inf"))
    return IndirectJoint(
        actuator=act.name, body=i, coordinate=int(model.coordinate_index[i]), revolute=bool(revolute),
        branch=act.branch, multiplier=float(model.multiplier[i]), axis=a, base=p, end=q,
        c0=float(c0), alpha=float(alpha), beta=float(beta), perp2=float(perp2),
        geometric_range=geo, stroke=act.stroke)


_CACHE: "weakref.WeakKeyDictionary[Model, tuple[IndirectJoint, ...]]" = weakref.WeakKeyDictionary()


def indirect_joints(model: Model) -> tuple[IndirectJoint, ...]:
    """The model's actuator-driven joints, in ``model.actuators`` order (cached per model)."""
    if model not in _CACHE:
        _CACHE[model] = tuple(_build(model, a) for a in model.actuators)
    return _CACHE[model]


def check_actuator_geometry(model: Model, act: Actuator) -> None:
    """Raise ValueError unless the actuator's stroke lies inside the assembly range."""
    geo = _build(model, act).geometric_range
    if not (geo[0] < act.stroke[0] and act.stroke[1] < geo[1]):
        raise ValueError(f"stroke [{act.stroke[0]:.6g}, {act.stroke[1]:.6g}] m, expected a range "
                         f"inside ({geo[0]:.6g}, {geo[1]:.6g}) m where the mechanism assembles")


def valid_range(joint: IndirectJoint) -> tuple[float, float]:
    """Actuator lengths accepted: the stroke (which the loader checked lies in the assembly range)."""
    return joint.stroke


def check_length(joint: IndirectJoint, length: np.ndarray) -> None:
    """Raise :class:`ActuatorRangeError` naming the actuator, the value and the valid range."""
    lo, hi = valid_range(joint)
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
