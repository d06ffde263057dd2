"""The model's limits on its inputs, and the one check of inputs against them.

Used by the dynamics node (one measurement, rejected as ``beyond_limits``) and by the CLI
(a state file, every sample of a trajectory). Pure numpy, no ROS.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

import numpy as np
from numpy.typing import ArrayLike

from ..model.model import Model

#: Largest magnitude of a position, velocity or acceleration taken where the model gives no
#: limit (m, rad, per s, per s^2): a base 1,000 km away, a joint turning 160,000 times a
#: second or accelerating at 100,000 g is a bad input, not a motion; and of an effort
#: command to the simulator (N or N m)
PLAUSIBLE = 1e6
#: The dynamics node's defaults (``position_limit_tolerance``, ``velocity_limit_tolerance``):
#: rad or m beyond a joint limit, and the fraction above a velocity limit, still accepted
POSITION_TOLERANCE = 0.01
VELOCITY_TOLERANCE = 0.1

_UNITS = {"position": "m or rad", "velocity": "m/s or rad/s", "acceleration": "m/s^2 or rad/s^2"}


@dataclass(frozen=True)
class Violation:
    """The first input beyond a limit: ``name`` (a model input), ``quantity`` (position,
    velocity or acceleration), ``sample`` (index along the samples; 0 for one state),
    ``value`` and ``why`` (the bound it breaks)."""

    name: str
    quantity: str
    sample: int
    value: float
    why: str

    def __str__(self) -> str:
        return f"{self.name} {self.quantity} {self.value:.6g} {self.why}"


def _first(bad: np.ndarray) -> Optional[tuple[int, int]]:
    """(sample, column) of the earliest True of ``bad`` (columns, ...samples), or None."""
    hits = np.argwhere(np.atleast_2d(bad.T))
    return None if hits.size == 0 else (int(hits[0][0]), int(hits[0][1]))


def _violation(quantity: str, names: list[str], v: np.ndarray, hit: tuple[int, int],
               message: Callable[[str], str]) -> "Violation":
    """The Violation at ``hit`` = (sample, column) of ``v`` (columns, ...samples); ``message``
    of the input's name."""
    name = names[hit[1]]
    return Violation(name, quantity, hit[0], float(v[hit[1]].flat[hit[0]]), message(name))


@dataclass(frozen=True)
class InputLimits:
    """The model's limits on each input (``model.input_names``), in the input's own units.

    A coordinate's joints move by ``multiplier * coordinate + offset``: its position range is
    the intersection of its joints' ranges less their offsets divided by their multipliers,
    its velocity limit the
    smallest ``velocity / |multiplier|``. An actuator's velocity limit is its
    ``velocity_limit``; its stroke is checked where its length is solved (``out_of_range`` on
    the node, ``ActuatorRangeError`` in the core). Inputs without a limit are absent.
    """

    lower: dict[str, float]
    upper: dict[str, float]
    velocity: dict[str, float]

    @classmethod
    def of(cls, model: Model) -> "InputLimits":
        lower: dict[str, float] = {}
        upper: dict[str, float] = {}
        velocity: dict[str, float] = {}
        for body in model.bodies:
            c, m, lim = body.coordinate, body.multiplier, body.limits
            if c is None or c not in model.input_names or m == 0.0:
                continue
            if lim.lower is not None or lim.upper is not None:
                a = (-math.inf if lim.lower is None else lim.lower - body.offset) / m
                b = (math.inf if lim.upper is None else lim.upper - body.offset) / m
                lower[c] = max(lower.get(c, -math.inf), min(a, b))
                upper[c] = min(upper.get(c, math.inf), max(a, b))
            if lim.velocity is not None:
                velocity[c] = min(velocity.get(c, math.inf), lim.velocity / abs(m))
        for a in model.actuators:
            if a.velocity_limit is not None:
                velocity[a.name] = a.velocity_limit
        return cls(lower, upper, velocity)

    def violation(self, positions: Mapping[str, ArrayLike], velocities: Mapping[str, ArrayLike],
                  position_tolerance: float, velocity_tolerance: float,
                  accelerations: Optional[Mapping[str, ArrayLike]] = None) -> Optional[Violation]:
        """The first value beyond :data:`PLAUSIBLE` (positions, velocities, accelerations in
        turn), else the first position beyond its range by more than ``position_tolerance``
        (rad or m; ``math.inf``: not checked), else the first speed above its limit by more
        than the fraction ``velocity_tolerance``; None when every value is within.

        Values are numbers (one state) or equally long arrays of samples; "first" is the
        earliest sample, then the name's order in the mapping. NaN counts as beyond."""
        given = [(q, list(m), np.asarray(list(m.values()), dtype=float))
                 for q, m in (("position", positions), ("velocity", velocities),
                              ("acceleration", accelerations or {})) if m]
        for quantity, names, v in given:
            hit = _first(~(np.abs(v) <= PLAUSIBLE))             # NaN fails too
            if hit:
                return _violation(quantity, names, v, hit, lambda n: (
                    f"is implausible, expected a magnitude of at most {PLAUSIBLE:g} "
                    f"({_UNITS[quantity]})"))
        for quantity, names, v in given:
            if quantity == "position" and math.isfinite(position_tolerance):
                lo, hi = (self._bound(names, v, d, s * math.inf)
                          for d, s in ((self.lower, -1), (self.upper, 1)))
                hit = _first(~(lo - position_tolerance <= v) | ~(v <= hi + position_tolerance))
                if hit:
                    return _violation(quantity, names, v, hit, lambda n: (
                        f"outside its limits [{self.lower[n]:.6g}, {self.upper[n]:.6g}] "
                        f"(tolerance {position_tolerance:g})"))
            if quantity == "velocity":
                limit = self._bound(names, v, self.velocity, math.inf)
                hit = _first(~(np.abs(v) <= limit * (1.0 + velocity_tolerance)))
                if hit:
                    return _violation(quantity, names, v, hit, lambda n: (
                        f"beyond its limit {self.velocity[n]:.6g} (tolerance "
                        f"{velocity_tolerance:.0%})"))
        return None

    @staticmethod
    def _bound(names: list[str], v: np.ndarray, bounds: dict[str, float], none: float
               ) -> np.ndarray:
        """Each name's bound (``none`` where the model gives none), shaped to broadcast over
        ``v`` (names, ...samples)."""
        b = np.array([bounds.get(n, none) for n in names])
        return b.reshape(b.shape + (1,) * (v.ndim - 1))
