"""Excitation trajectories: a finite Fourier series per input (Swevers, Ganseman, Tukel,
De Schutter and Van Brussel 1997, eq. 7), its coefficients optimised for the condition
number of the base regressor along it, within the position, velocity and acceleration
limits (the actuators' strokes are their position limits).

For input k with base pulsation w = 2 pi / period and H harmonics,

    x_k(t)   = x0_k + sum_l a_kl / (w l) sin(w l t) - b_kl / (w l) cos(w l t)
    x'_k(t)  = sum_l a_kl cos(w l t) + b_kl sin(w l t)
    x''_k(t) = sum_l w l (b_kl cos(w l t) - a_kl sin(w l t)),

periodic, and at rest at t = 0 (and every period) where sum_l a_kl = 0 and sum_l l b_kl = 0:
the last harmonic's a and b are set from the others, so the motion starts and ends at rest
and a robot can play it from standstill. Each input's series is then scaled (and x0 chosen
to centre it) so that its position range, speed and acceleration stay within 95 % of the
limits; the accelerations' limit is ``acceleration_ratio`` times the velocity limit per
second (the models give no acceleration limits).

The objective is the condition number of the base regressor on a grid of the period with its
columns scaled to unit norm (the plain condition number mixes the parameters' units: kg,
kg m, kg m^2, N/m...), minimised by scipy's Powell method (derivative-free: the condition
number is not smooth where two singular values cross) within a budget of evaluations.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ..kinematics.state import resolve_state
from ..model.model import Model
from ..trajectories import Trajectory
from .base import BaseParameters, input_ranges
from .regressor import regressor

#: Fraction of each limit the scaled series may use
MARGIN = 0.95


@dataclass(frozen=True)
class FourierSeries:
    """x0 (n,), a and b (n, harmonics) of the module docstring; ``period`` s."""

    period: float
    x0: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def sample(self, t: np.ndarray) -> Trajectory:
        """Positions, velocities and accelerations at times ``t`` (N,)."""
        w = 2.0 * np.pi / self.period
        l = np.arange(1, self.a.shape[1] + 1)
        phase = w * np.asarray(t)[:, None, None] * l                 # (N, 1, H)
        sin, cos = np.sin(phase), np.cos(phase)
        x = self.x0 + np.sum((self.a * sin - self.b * cos) / (w * l), axis=-1)
        xd = np.sum(self.a * cos + self.b * sin, axis=-1)
        xdd = np.sum(w * l * (self.b * cos - self.a * sin), axis=-1)
        return Trajectory(np.asarray(t, dtype=float), x, xd, xdd)


def at_rest(free: np.ndarray, n: int, harmonics: int) -> tuple[np.ndarray, np.ndarray]:
    """a, b (n, harmonics) from the free coefficients (2 n (harmonics - 1),), the last
    harmonic's set for rest at t = 0 (module docstring)."""
    free = free.reshape(2, n, harmonics - 1)
    l = np.arange(1, harmonics)
    a = np.column_stack([free[0], -free[0].sum(axis=1)])
    b = np.column_stack([free[1], -(free[1] * l).sum(axis=1) / harmonics])
    return a, b


def within_limits(model: Model, a: np.ndarray, b: np.ndarray, period: float,
                  acceleration_ratio: float, grid: int = 400) -> FourierSeries:
    """The series of coefficients a, b scaled per input and centred within the limits."""
    lo, hi, vmax = input_ranges(model)
    amax = acceleration_ratio * vmax
    zero = FourierSeries(period, np.zeros(len(lo)), a, b).sample(
        np.linspace(0.0, period, grid, endpoint=False))
    span = zero.x.max(axis=0) - zero.x.min(axis=0)
    tiny = np.finfo(float).tiny
    scale = MARGIN * np.min([(hi - lo) / np.maximum(span, tiny),
                             vmax / np.maximum(np.abs(zero.xd).max(axis=0), tiny),
                             amax / np.maximum(np.abs(zero.xdd).max(axis=0), tiny)], axis=0)
    centre = 0.5 * (zero.x.max(axis=0) + zero.x.min(axis=0)) * scale
    return FourierSeries(period, 0.5 * (lo + hi) - centre, a * scale[:, None],
                         b * scale[:, None])


def condition_number(model: Model, base: BaseParameters, series: FourierSeries,
                     samples: int) -> float:
    """cond of the column-normalised base regressor on ``samples`` times of a period."""
    traj = series.sample(np.linspace(0.0, series.period, samples, endpoint=False))
    W = base.columns(regressor(model, resolve_state(model, traj.x, traj.xd, traj.xdd)))
    W = W.reshape(-1, W.shape[-1])
    W = W / np.maximum(np.linalg.norm(W, axis=0), np.finfo(float).tiny)
    s = np.linalg.svd(W, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else np.inf


@dataclass(frozen=True)
class Excitation:
    series: FourierSeries
    initial_condition: float     # of the random starting series
    final_condition: float
    evaluations: int


def optimise(model: Model, base: BaseParameters, period: float = 10.0, harmonics: int = 5,
             acceleration_ratio: float = 2.0, evaluations: int = 400, samples: int = 60,
             seed: int = 0) -> Excitation:
    """The series of lowest condition number found from a random start (module docstring)."""
    n = len(model.input_names)
    rng = np.random.default_rng(seed)

    def series_of(free: np.ndarray) -> FourierSeries:
        return within_limits(model, *at_rest(free, n, harmonics), period, acceleration_ratio)

    def objective(free: np.ndarray) -> float:
        return float(np.log(condition_number(model, base, series_of(free), samples)))

    start = rng.normal(size=2 * n * (harmonics - 1))
    initial = objective(start)
    result = minimize(objective, start, method="Powell",
                      options={"maxfev": evaluations, "xtol": 1e-3, "ftol": 1e-4})
    best = result.x if result.fun <= initial else start
    return Excitation(series_of(best), float(np.exp(initial)),
                      float(np.exp(min(result.fun, initial))), int(result.nfev))


def write_trajectory(path: str, model: Model, series: FourierSeries, dt: float,
                     periods: int = 1) -> Trajectory:
    """The series sampled every ``dt`` over ``periods`` periods (the last sample at rest,
    where the first is), as a trajectory CSV (trajectories.from_csv: time, NAME,
    NAME.velocity, NAME.acceleration); returns the samples."""
    steps = int(round(periods * series.period / dt))
    traj = series.sample(dt * np.arange(steps + 1))
    header = ["time"] + [f"{name}{suffix}" for name in model.input_names
                         for suffix in ("", ".velocity", ".acceleration")]
    columns = [traj.t[:, None]] + [np.stack([traj.x[:, k], traj.xd[:, k], traj.xdd[:, k]], 1)
                                   for k in range(len(model.input_names))]
    np.savetxt(path, np.hstack(columns), delimiter=",", header=",".join(header), comments="",
               fmt="%.10g")
    return traj
