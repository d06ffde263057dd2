"""Model-file fields that several sections read: a direction, a joint axis, a named point,
friction, a spring's linear law (SI at load; the file's units through the
:class:`FieldReader`)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..linalg import direction_and_length
from .parameters import Friction, ModelParameters, PointRef, SpringParams
from .rotations import AXES
from .validation import MAX_EFFORT, MAX_STIFFNESS, MAX_VISCOUS, MIN_DIRECTION, FieldReader, show

JOINT_AXES = ("x", "y", "z", "-x", "-y", "-z")
NO_FRICTION = Friction()            # frozen: one for every joint and actuator without any


def read_direction(r: FieldReader, value: Any, where: str, n: int) -> np.ndarray:
    """A list of ``n`` numbers, normalised; refused when shorter than MIN_DIRECTION."""
    direction, length = direction_and_length(r.vector(value, where, n))
    if not length > MIN_DIRECTION:
        raise r.fail(where, f"got {show(value)} of length {length:g}, expected a nonzero "
                            f"vector (length > {MIN_DIRECTION:g}), normalised at load")
    return direction


def read_axis(r: FieldReader, value: Any, where: str) -> np.ndarray:
    """A joint axis: "x", "-y", ... or a list of 3 numbers (any direction)."""
    if isinstance(value, str):
        name = r.choice(value, JOINT_AXES, where)
        axis = np.zeros(3)
        axis[AXES[name[-1]]] = -1.0 if name.startswith("-") else 1.0
        return axis
    if not isinstance(value, (list, tuple)):
        raise r.fail(where, f"got {show(value)}, expected {', '.join(JOINT_AXES[:-1])} or "
                            f"{JOINT_AXES[-1]}, or a list of 3 numbers")
    return read_direction(r, value, where, 3)


def read_friction(r: FieldReader, value: Any, linear: bool, where: str) -> Friction:
    """Viscous (per length unit when linear) and Coulomb coefficients, both >= 0."""
    if value is None:
        return NO_FRICTION
    value = r.mapping(value, where)
    r.check_keys(value, {"viscous", "coulomb"}, where)
    viscous = r.magnitude(value.get("viscous", 0.0), f"{where}.viscous", MAX_VISCOUS, "viscous",
                          "N s/m" if linear else "N m s/rad", 1.0 / r.length if linear else 1.0,
                          nonnegative=True)
    coulomb = r.magnitude(value.get("coulomb", 0.0), f"{where}.coulomb", MAX_EFFORT, "coulomb",
                          "N" if linear else "N m", nonnegative=True)
    return Friction(viscous, coulomb)


def read_point(r: FieldReader, model: ModelParameters, value: Any, where: str) -> PointRef:
    """``BODY.POINT``: a named point of one of ``model``'s bodies."""
    if not isinstance(value, str) or "." not in value:
        raise r.fail(where, f"got {show(value)}, expected BODY.POINT")
    try:
        return model.point(value)
    except KeyError as exc:
        raise r.fail(where, exc.args[0]) from None


def read_spring_law(r: FieldReader, data: Mapping, where: str) -> SpringParams:
    """A linear spring's ``stiffness``, ``free_length`` and ``preload`` (N/m, m, N)."""
    return SpringParams(
        stiffness=r.magnitude(r.get(data, "stiffness", where), f"{where}.stiffness",
                              MAX_STIFFNESS, "stiffness", "N/m", 1.0 / r.length, nonnegative=True),
        free_length=r.length_value(r.get(data, "free_length", where), f"{where}.free_length",
                                   positive=True),
        preload=r.magnitude(r.get(data, "preload", where, 0.0), f"{where}.preload", MAX_EFFORT,
                            "preload", "N"))


def spring_law_fields(law: SpringParams) -> dict:
    """A linear spring's law as the model file and the overlay write it (SI)."""
    return {"stiffness": law.stiffness, "free_length": law.free_length,
            "preload": law.preload}
