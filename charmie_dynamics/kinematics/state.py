"""The state of a model addressed by name, and its joint-space form.

Inputs are ``model.input_names``: the joint coordinates, except that a coordinate driven by
an actuator (CHARMIE's d4 and theta5) is replaced by the actuator's length (act4, act5).
:func:`resolve_state` turns inputs into joint coordinates with their exact derivatives.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

from ..mechanisms.indirect import indirect_joints, joint_from_length
from ..model.model import Model


class StateError(ValueError):
    """A state that names unknown coordinates or holds non-finite values."""


@dataclass(frozen=True)
class JointSpaceState:
    """Joint coordinates and actuator lengths with their rates; arrays (..., n)."""

    q: np.ndarray                 # (..., n_coordinates), rad or m
    qd: np.ndarray
    qdd: np.ndarray
    actuator_length: np.ndarray   # (..., n_actuators), m
    actuator_velocity: np.ndarray
    actuator_acceleration: np.ndarray
    actuator_jacobian: np.ndarray  # (..., n_actuators): d(coordinate)/d(length)


def inputs_from_dict(model: Model, positions: Optional[Mapping[str, float]] = None,
                     velocities: Optional[Mapping[str, float]] = None,
                     accelerations: Optional[Mapping[str, float]] = None,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Input arrays in ``model.input_names`` order from name -> value mappings.

    Missing coordinates are 0; a missing actuator length is the actuator's
    ``default_length`` (its velocity and acceleration 0).
    """
    names = model.input_names
    driven = model.driven_coordinates
    defaults = {a.name: a.default_length for a in model.actuators}
    out = []
    for label, given in (("positions", positions), ("velocities", velocities),
                         ("accelerations", accelerations)):
        values = np.array([defaults.get(n, 0.0) if label == "positions" else 0.0 for n in names])
        for key, value in (given or {}).items():
            if key in driven:
                raise StateError(f"{label}.{key}: {key} is driven by actuator {driven[key]}; "
                                 f"give {driven[key]} instead")
            if key not in names:
                raise StateError(f"{label}.{key}: unknown name, expected one of "
                                 f"{', '.join(names)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise StateError(f"{label}.{key}: got {value!r}, expected a finite number")
            values[names.index(key)] = float(value)
        out.append(values)
    return out[0], out[1], out[2]


def resolve_state(model: Model, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray
                  ) -> JointSpaceState:
    """Joint-space state from inputs (..., n_inputs) in ``model.input_names`` order.

    Raises ``ActuatorRangeError`` for an actuator length outside its valid range.
    """
    x, xd, xdd = (np.asarray(v, dtype=float) for v in (x, xd, xdd))
    q, qd, qdd = x.copy(), xd.copy(), xdd.copy()
    lead = x.shape[:-1]
    na = len(model.actuators)
    length, velocity, acceleration, jac = (np.zeros(lead + (na,)) for _ in range(4))
    for k, joint in enumerate(indirect_joints(model)):
        c = joint.coordinate       # the input slot of the actuator is its coordinate's slot
        L, Ld, Ldd = x[..., c], xd[..., c], xdd[..., c]
        value, d1, d2 = joint_from_length(joint, L)
        m = joint.multiplier
        q[..., c] = value / m
        qd[..., c] = d1 * Ld / m
        qdd[..., c] = (d1 * Ldd + d2 * Ld * Ld) / m
        length[..., k], velocity[..., k], acceleration[..., k] = L, Ld, Ldd
        jac[..., k] = d1 / m
    return JointSpaceState(q, qd, qdd, length, velocity, acceleration, jac)
