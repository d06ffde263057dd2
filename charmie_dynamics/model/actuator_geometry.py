"""Constants of the indirectly actuated joints: a linear actuator of length L between the
joint's parent and child determines the joint coordinate (seed 001 section 4.2, seed 000
section 4.1). Derived from the parameters only, so the loader can check an actuator's stroke
against the range where its mechanism assembles; the solution L -> joint value that uses them
is :mod:`charmie_dynamics.kinematics.indirect`.

In the joint frame J (the parent frame after the constant rotation, origin at the joint point
B), with ``p`` the actuator's base anchor and ``q`` its end anchor (child frame):

* Prismatic joint (d along the unit axis a), w = q - p: ``L^2 = |w + d a|^2``, constants
  ``c0 = -(w.a)`` and ``perp2 = |w_perp|^2``; it assembles for ``L > sqrt(perp2)``.
* Revolute joint (theta about a): ``L^2 = c0 - 2 (alpha cos theta + beta sin theta)`` with
  ``alpha = p_perp.q_perp``, ``beta = p.(a x q)``, ``c0 = |p|^2 + |q|^2 - 2 (a.p)(a.q)``; it
  assembles for ``c0 - 2 rho < L^2 < c0 + 2 rho``, ``rho = hypot(alpha, beta)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .parameters import Actuator, ModelParameters


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


def indirect_joint(model: ModelParameters, act: Actuator) -> IndirectJoint:
    """The constants of the joint that ``act`` drives."""
    i = act.drives
    a = model.axis[i]
    p = model.rotation[i].T @ (act.base.local - model.origin[i])
    q = np.array(act.end.local)
    revolute = model.bodies[i].joint_type.angular
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
        actuator=act.name, body=i, coordinate=int(model.coordinate_index[i]),
        revolute=bool(revolute),
        branch=act.branch, multiplier=float(model.multiplier[i]), axis=a, base=p, end=q,
        c0=float(c0), alpha=float(alpha), beta=float(beta), perp2=float(perp2),
        geometric_range=geo, stroke=act.stroke)


def indirect_joints(model: ModelParameters) -> tuple[IndirectJoint, ...]:
    """The model's actuator-driven joints, in ``model.actuators`` order, computed; a model
    holds them as ``model.compiled.indirect_joints``."""
    return tuple(indirect_joint(model, a) for a in model.actuators)


def check_actuator_geometry(model: ModelParameters, act: Actuator) -> None:
    """Raise ValueError unless the actuator's stroke lies inside the assembly range."""
    geo = indirect_joint(model, act).geometric_range
    if not (geo[0] < act.stroke[0] and act.stroke[1] < geo[1]):
        raise ValueError(f"stroke [{act.stroke[0]:.6g}, {act.stroke[1]:.6g}] m, expected a range "
                         f"inside ({geo[0]:.6g}, {geo[1]:.6g}) m where the mechanism assembles")
