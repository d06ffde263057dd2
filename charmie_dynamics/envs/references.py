"""What a tracking environment's robots follow, sampled at the control instants t_k = k T:
a motion shared by every robot (a bundled motion, a trajectory CSV) or a ramp of each robot's
own from a random start to a random target (seed 002 eq. 22a, ``trajectories.sine_ramp``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..identification.base import input_ranges
from ..model.model import Model
from ..trajectories import LOOP_REFERENCES, MOTIONS, Trajectory, from_csv, motion_inputs, sine_ramp

#: The ``reference`` that draws a start and a target for every episode
RANDOM = "random"
#: The fastest a random ramp moves an input, as a fraction of its velocity limit
PEAK_RATE = 0.8


@dataclass
class SharedMotion:
    """One motion for every robot: x, xd, xdd (steps + 1, n) at the control instants."""

    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray

    drawn = False           # one start for every episode

    @property
    def steps(self) -> int:
        return self.x.shape[0] - 1

    def draw(self, row: int, rng: np.random.Generator) -> None:
        """Nothing: every episode starts at the motion's start."""

    def ends(self, row: int) -> tuple[np.ndarray, ...]:
        """The points robot ``row`` must be able to take, its start last."""
        return (self.x[0],)

    def at(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The references (N, n) of robots at the control steps ``k`` (N,)."""
        return self.x[k], self.xd[k], self.xdd[k]


@dataclass
class RandomRamps:
    """Each robot's ramp from ``origin`` to ``target`` (N, n) over ``steps`` control periods
    of ``period`` s; ``lower``/``upper`` the range the ends are drawn from, ``velocity`` the
    inputs' velocity limits."""

    origin: np.ndarray
    target: np.ndarray
    steps: int
    period: float
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray

    drawn = True            # a start and a target drawn for each episode

    def draw(self, row: int, rng: np.random.Generator) -> None:
        """A new start and target for robot ``row`` from ``rng``, the target pulled towards
        the start where the ramp's peak rate, 2 |target - start| / duration, would pass
        :data:`PEAK_RATE` of the input's velocity limit (a reference a robot cannot follow)."""
        self.origin[row] = rng.uniform(self.lower, self.upper)
        reach = 0.5 * PEAK_RATE * self.velocity * self.steps * self.period
        self.target[row] = self.origin[row] + np.clip(
            rng.uniform(self.lower, self.upper) - self.origin[row], -reach, reach)

    def ends(self, row: int) -> tuple[np.ndarray, ...]:
        return self.target[row], self.origin[row]

    def at(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return sine_ramp((k * self.period)[:, None], self.origin, self.target,
                         self.steps * self.period)


def resampled(trajectory: Trajectory, period: float) -> SharedMotion:
    """``trajectory`` at the instants k ``period`` within its time span (linear between its
    samples; a one-sample motion stays that sample)."""
    t = trajectory.t - trajectory.t[0]
    steps = int(math.floor(t[-1] / period + 1e-9))
    instants = period * np.arange(steps + 1)
    return SharedMotion(*(np.stack([np.interp(instants, t, column) for column in a.T], axis=1)
                          for a in (trajectory.x, trajectory.xd, trajectory.xdd)))


def shared_motion(model: Model, reference: str, period: float) -> SharedMotion:
    """A bundled motion's name (``trajectories.MOTIONS``, or ``LOOP_REFERENCES`` for a model
    with loops) or a trajectory CSV's path, at the control instants; the package's
    InputError (naming the motion or the file) otherwise."""
    motions = MOTIONS if model.loops is None else LOOP_REFERENCES
    if reference in motions:
        trajectory = motions[reference](model, min(period, 0.01))
    elif reference.endswith(".csv") or Path(reference).exists():
        trajectory = from_csv(model, reference, columns=motion_inputs(model))
    else:
        raise ValueError(f"reference: got {reference!r}, expected one of "
                         f"{', '.join(motions)}, {RANDOM!r} (a tree) or a trajectory CSV")
    return resampled(trajectory, period)


def random_ramps(model: Model, count: int, steps: int, period: float,
                 span: float) -> RandomRamps:
    """Ramps between points drawn in the middle ``span`` (0, 1] of each input's range
    (identification.base.input_ranges: the limits and strokes, a default range where the
    model gives none); ValueError for a model with loops (its inputs' ranges are not where
    its loops close) or a span outside (0, 1]."""
    if model.loops is not None:
        raise ValueError(f"reference {RANDOM!r}: {model.name} has loops, whose closing range "
                         f"is not known ahead; expected a motion ({', '.join(LOOP_REFERENCES)}) "
                         "or a trajectory CSV")
    if not 0.0 < span <= 1.0:
        raise ValueError(f"target_span: got {span!r}, expected a fraction in (0, 1]")
    lo, hi, vmax = input_ranges(model)
    middle, half = 0.5 * (lo + hi), 0.5 * span * (hi - lo)
    n = len(model.input_names)
    return RandomRamps(np.zeros((count, n)), np.zeros((count, n)), steps, period,
                       middle - half, middle + half, vmax)
