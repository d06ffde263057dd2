"""Model-file fields that several sections read: a direction, a named point, a spring's
linear law (SI at load; the file's units through the :class:`FieldReader`)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..linalg import direction_and_length
from .parameters import ModelParameters, PointRef, SpringParams
from .validation import MAX_EFFORT, MAX_STIFFNESS, MIN_DIRECTION, FieldReader, show


def read_direction(r: FieldReader, value: Any, where: str, n: int) -> np.ndarray:
    """A list of ``n`` numbers, normalised; refused when shorter than MIN_DIRECTION."""
    direction, length = direction_and_length(r.vector(value, where, n))
    if not length > MIN_DIRECTION:
        raise r.fail(where, f"got {show(value)} of length {length:g}, expected a nonzero "
                            f"vector (length > {MIN_DIRECTION:g}), normalised at load")
    return direction


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
