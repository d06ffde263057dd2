"""Base parameters: the combinations of pi that the input efforts determine.

The regressor's columns are linearly dependent (a body's parameters lumped into its parent's
through a fixed or a parallel-axis joint, parameters that never act: the inertia of a body
about an axis it cannot turn about, ...). QR with column pivoting of the regressor stacked
over many random states, W P = Q R, splits the columns into r independent ones (the first r
of P, with |R_kk| > tolerance * |R_00|) and the others, which are combinations of them:

    W_2 = W_1 K,  K = R_11^-1 R_12,   so  W pi = W_1 (pi_1 + K pi_2) = W_1 beta.

beta = pi_1 + K pi_2 are the base parameters (Gautier 1990's numerical method); each is named
by its leading parameter and printed as that sum.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr, solve_triangular

from ..kinematics.limits import InputLimits
from ..kinematics.state import JointSpaceState, resolve_state
from ..model.model import Model
from ..trajectories import input_kinds
from .regressor import regressor

#: Relative tolerance on the diagonal of R (|R_kk| / |R_00|) below which a column counts as
#: dependent. The diagonal of CHARMIE's regressor drops from 5e-5 to 6e-16 relative at its
#: rank (184 of 298), PUMA's from 1.4e-2 to 5e-16 (48 of 72), on 2,000 random states, so any
#: tolerance in between gives the same split (test_identification_regressor checks the gap).
TOLERANCE = 1e-9
#: Coefficients of an expression smaller than this are left out when printed.
PRINT_THRESHOLD = 1e-10

#: Ranges of a random state where the model gives no limit: position (rad, m), velocity
#: (per s)
_FREE_RANGE = {"angular": (np.pi, 2.0), "linear": (0.5, 0.5), "actuator": (0.1, 0.05)}


def input_ranges(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lowest and highest position and largest speed of each input: the model's position
    limits and actuator strokes, its velocity limits, and _FREE_RANGE where it gives none."""
    limits = InputLimits.of(model)
    strokes = {a.name: a.stroke for a in model.actuators}
    n = len(model.input_names)
    lo, hi, vmax = np.empty(n), np.empty(n), np.empty(n)
    for k, (name, kind) in enumerate(zip(model.input_names, input_kinds(model))):
        position, velocity = _FREE_RANGE[kind]
        lo[k], hi[k] = strokes.get(name, (limits.lower.get(name, -position),
                                          limits.upper.get(name, position)))
        vmax[k] = limits.velocity.get(name, velocity)
    return lo, hi, vmax


def random_inputs(model: Model, samples: int, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random inputs (samples, n_inputs) within :func:`input_ranges`, accelerations up to
    ten times the velocity limit per second."""
    lo, hi, vmax = input_ranges(model)
    n = len(lo)
    x = rng.uniform(lo, hi, (samples, n))
    xd = rng.uniform(-vmax, vmax, (samples, n))
    xdd = rng.uniform(-10 * vmax, 10 * vmax, (samples, n))
    return x, xd, xdd


def random_states(model: Model, samples: int, seed: int = 0) -> JointSpaceState:
    """:func:`random_inputs` resolved to joint space."""
    return resolve_state(model, *random_inputs(model, samples, np.random.default_rng(seed)))


@dataclass(frozen=True)
class BaseParameters:
    """beta = pi[independent] + K pi[dependent] (module docstring)."""

    names: tuple[str, ...]          # the full parameters' names (parameter_layout)
    independent: np.ndarray         # (r,) indices into pi
    dependent: np.ndarray           # (p - r,)
    K: np.ndarray                   # (r, p - r)
    tolerance: float
    diagonal: np.ndarray            # |R_kk| / |R_00| of the pivoted QR, (p,)

    @property
    def rank(self) -> int:
        return len(self.independent)

    @property
    def base_names(self) -> tuple[str, ...]:
        return tuple(self.names[i] for i in self.independent)

    @property
    def projection(self) -> np.ndarray:
        """P (r, p) with beta = P pi."""
        P = np.zeros((self.rank, len(self.names)))
        P[np.arange(self.rank), self.independent] = 1.0
        P[:, self.dependent] = self.K
        return P

    def of(self, pi: np.ndarray) -> np.ndarray:
        """beta of full parameters pi (..., p)."""
        return pi[..., self.independent] + pi[..., self.dependent] @ self.K.T

    def columns(self, Y: np.ndarray) -> np.ndarray:
        """The base regressor: Y pi = Y[..., independent] beta."""
        return Y[..., self.independent]

    def expressions(self) -> list[str]:
        """Each base parameter as the sum of the full parameters it stands for."""
        out = []
        for k, i in enumerate(self.independent):
            terms = [self.names[i]] + [
                f"{'+' if c > 0 else '-'} {abs(c):.6g}*{self.names[j]}"
                for c, j in zip(self.K[k], self.dependent) if abs(c) > PRINT_THRESHOLD]
            out.append(" ".join(terms))
        return out


def base_parameters(model: Model, names: tuple[str, ...], samples: int = 2000, seed: int = 0,
                    tolerance: float = TOLERANCE) -> BaseParameters:
    """The base parameters of ``model`` from ``samples`` random states (module docstring)."""
    Y = regressor(model, random_states(model, samples, seed))
    return base_of(Y.reshape(-1, Y.shape[-1]), names, tolerance)


def base_of(W: np.ndarray, names: tuple[str, ...], tolerance: float = TOLERANCE
            ) -> BaseParameters:
    """The base parameters of the stacked regressor ``W`` (rows, p)."""
    _, R, perm = qr(W, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    diagonal = np.zeros(W.shape[1])
    diagonal[:len(d)] = d / d[0]
    r = int(np.count_nonzero(diagonal > tolerance))
    K = solve_triangular(R[:r, :r], R[:r, r:])
    order = np.argsort(perm[:r])           # base parameters in the layout's order
    return BaseParameters(names, perm[:r][order], perm[r:], K[order], tolerance, diagonal)
