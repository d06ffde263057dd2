"""Between motions, logs and the regressor: a log made from a model along a motion
(:func:`record`), and the joint-space states and efforts read back from a log
(:func:`measured_states`).

:func:`record` evaluates the model's inverse dynamics along the prescribed motion (the
trajectory's positions, velocities and accelerations), plus the friction a motor overcomes,
rather than integrating the forward dynamics under a controller: the efforts are then exactly
those that produce the logged motion (no tracking error, no integration error of RK4 at its
step), the accelerations are the trajectory's own, and a 20 s log takes a fraction of a
second instead of minutes of simulation. It is what a robot tracking the motion perfectly
would log; sensor noise is added as stated (Gaussian, standard deviations in SI units, on the
positions and on the efforts; the velocities are logged exact, as from a tachometer).
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from scipy.signal import savgol_filter

from ..kinematics.state import JointSpaceState, resolve_state
from ..model.model import Model
from ..trajectories import Trajectory
from .logs import Log, LogError
from .regressor import input_efforts

#: Savitzky-Golay window (samples) and polynomial order of the differentiation of the logged
#: velocities (positions where no velocity is logged): 21 samples, 0.2 s at 100 Hz
WINDOW, ORDER = 21, 3
#: Largest relative spread of the sample period accepted by the differentiation
PERIOD_SPREAD = 0.01


def record(model: Model, traj: Trajectory, position_noise: float = 0.0,
           effort_noise: float = 0.0, seed: int = 0) -> Log:
    """The log of ``model`` moving along ``traj`` (module docstring)."""
    state = resolve_state(model, traj.x, traj.xd, traj.xdd)
    effort = input_efforts(model, state)
    rng = np.random.default_rng(seed)
    return Log(traj.t.copy(), traj.x + rng.normal(0.0, position_noise, traj.x.shape),
               traj.xd.copy(), effort + rng.normal(0.0, effort_noise, effort.shape))


def measured_states(model: Model, log: Log, source: str = "log", window: int = WINDOW,
                    ) -> tuple[JointSpaceState, np.ndarray, np.ndarray]:
    """Joint-space states, efforts and times of a log's samples: velocities as logged (or the
    Savitzky-Golay derivative of the positions), accelerations the Savitzky-Golay derivative
    of the velocities; ``window // 2`` samples are dropped at each end, where the filter's
    polynomial is extrapolated. Raises :class:`LogError` for a log too short or not sampled
    at a regular period."""
    t = log.t
    if len(t) < 2 * window:
        raise LogError(f"{source}: {len(t)} samples, expected at least {2 * window} (the "
                       f"differentiation's window is {window})")
    dt = np.diff(t)
    period = float(np.median(dt))
    if np.max(np.abs(dt - period)) > PERIOD_SPREAD * period:
        raise LogError(f"{source}: sample periods from {dt.min():g} to {dt.max():g} s, expected "
                       f"a regular period (within {PERIOD_SPREAD:.0%}) for the differentiation")

    def derivative(v: np.ndarray) -> np.ndarray:
        return savgol_filter(v, window, ORDER, deriv=1, delta=period, axis=0)
    xd: Optional[np.ndarray] = log.xd if log.xd is not None else derivative(log.x)
    xdd = derivative(xd)
    keep = slice(window // 2, len(t) - window // 2)
    state = resolve_state(model, log.x[keep], xd[keep], xdd[keep])
    return state, log.effort[keep], t[keep]
