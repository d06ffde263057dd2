"""A design's named outputs over its load cases and its constraints' margins.

Outputs (over every load case): ``ACT.peak_force``, ``ACT.rms_force``, ``ACT.peak_speed``
per actuator (|axial force| N, m/s); ``COORD.peak_effort``, ``COORD.rms_effort``,
``COORD.peak_speed`` per coordinate (N m or N, rad/s or m/s); ``SPRING.min_tension``,
``SPRING.peak_tension`` per spring and balancer spring (N); ``energy_per_cycle``: the largest
over the cases of the integral of the inputs' absolute mechanical power (J).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics import Payload
from ..mechanisms.forces import spring_names
from ..model import Model
from ..trajectories import Trajectory

#: A constraint is active when its margin is within this fraction of its scale.
ACTIVE = 0.01


def output_names(model: Model) -> list[str]:
    """Every output of a design of ``model`` (the module's list), in the tables' order."""
    return ([f"{a}.{q}" for a in model.actuator_names
             for q in ("peak_force", "rms_force", "peak_speed")]
            + [f"{c}.{q}" for c in model.coordinate_names
               for q in ("peak_effort", "rms_effort", "peak_speed")]
            + [f"{s}.{q}" for s in spring_names(model) for q in ("min_tension", "peak_tension")]
            + ["energy_per_cycle"])


@dataclass(frozen=True)
class Case:
    """A motion with one set of payloads."""

    label: str
    trajectory: Trajectory
    payloads: tuple[Payload, ...]


@dataclass(frozen=True)
class CaseLoads:
    """One case's state and loads (the workspace's arrays copied)."""

    case: Case
    speeds: np.ndarray              # (samples, inputs): qd, or the actuator's velocity
    efforts: np.ndarray             # (samples, inputs): effort, or the actuator's force
    actuator_length: np.ndarray
    spring_tension: np.ndarray
    coordinate_effort: np.ndarray
    qd: np.ndarray
    actuator_force: np.ndarray


def summarise(model: Model, loads: list[CaseLoads]) -> dict[str, float]:
    """The outputs (module docstring) over every case."""
    def pooled(attribute: str) -> np.ndarray:
        return np.concatenate([getattr(c, attribute) for c in loads])
    force, effort, qd = pooled("actuator_force"), pooled("coordinate_effort"), pooled("qd")
    speed = np.concatenate([c.speeds for c in loads])
    tension = pooled("spring_tension")
    out: dict[str, float] = {}
    for k, a in enumerate(model.actuator_names):
        out[f"{a}.peak_force"] = float(np.max(np.abs(force[:, k])))
        out[f"{a}.rms_force"] = float(np.sqrt(np.mean(force[:, k] ** 2)))
        out[f"{a}.peak_speed"] = float(np.max(np.abs(speed[:, model.input_names.index(a)])))
    for c, name in enumerate(model.coordinate_names):
        out[f"{name}.peak_effort"] = float(np.max(np.abs(effort[:, c])))
        out[f"{name}.rms_effort"] = float(np.sqrt(np.mean(effort[:, c] ** 2)))
        out[f"{name}.peak_speed"] = float(np.max(np.abs(qd[:, c])))
    for k, s in enumerate(spring_names(model)):
        out[f"{s}.min_tension"] = float(np.min(tension[:, k]))
        out[f"{s}.peak_tension"] = float(np.max(tension[:, k]))
    # the inputs' power: a driven coordinate's is its actuator's, counted once
    out["energy_per_cycle"] = max(_work(c) for c in loads)
    return out


def _work(case: CaseLoads) -> float:
    """The integral of the inputs' absolute power over a motion (trapezoids; 0 for the
    static samples, whose speeds are zero)."""
    power = np.sum(np.abs(case.efforts * case.speeds), axis=1)
    t = case.case.trajectory.t
    return float(np.sum(0.5 * (power[1:] + power[:-1]) * np.diff(t)))


def constraint_margins(model: Model, loads: list[CaseLoads], outputs: dict[str, float]
                       ) -> dict[str, float]:
    """Distance of each constraint from its limit (negative: violated): ``stroke.ACT``
    (m), ``effort_limit.INPUT`` (N or N m), ``spring_tension.SPRING`` (N)."""
    margins: dict[str, float] = {}
    length = np.concatenate([c.actuator_length for c in loads])
    for k, a in enumerate(model.actuators):
        lo, hi = a.stroke
        margins[f"stroke.{a.name}"] = float(min(np.min(length[:, k]) - lo,
                                                hi - np.max(length[:, k])))
        if a.force_limit is not None:
            margins[f"effort_limit.{a.name}"] = a.force_limit - outputs[f"{a.name}.peak_force"]
    driven = model.driven_coordinates
    for body in model.bodies:
        c = body.coordinate
        if c is not None and c not in driven and body.limits.effort is not None \
                and f"effort_limit.{c}" not in margins:
            margins[f"effort_limit.{c}"] = body.limits.effort - outputs[f"{c}.peak_effort"]
    for name in spring_names(model):
        margins[f"spring_tension.{name}"] = outputs[f"{name}.min_tension"]
    return margins


def active_constraints(margins: dict[str, float], outputs: dict[str, float], model: Model
                       ) -> list[str]:
    """Constraints within :data:`ACTIVE` of their limit (a spring's tension: of its peak)."""
    scale = {f"stroke.{a.name}": a.stroke[1] - a.stroke[0] for a in model.actuators}
    scale.update({f"effort_limit.{a.name}": a.force_limit for a in model.actuators
                  if a.force_limit is not None})
    for body in model.bodies:
        if body.coordinate is not None and body.limits.effort is not None:
            scale.setdefault(f"effort_limit.{body.coordinate}", body.limits.effort)
    out = []
    for name, margin in margins.items():
        s = scale.get(name) or max(outputs.get(
            name.replace("spring_tension.", "") + ".peak_tension", 1.0), 1.0)
        if margin <= ACTIVE * s:
            out.append(name)
    return out
