"""The simulator's step of a model with loops: the embedded equations of motion on the
independent coordinates (dynamics/closed_chain.py, seed 002 section 3; seed 003 section 5),
integrated by classical Runge-Kutta 4 under held efforts.

Every stage solves the state from the independent coordinates (x, v) in one call of the
compiled embedding with the tree's inverse dynamics (mechanisms/closed_chains/compiled.py,
``EmbeddedInverseDynamics``): the dependent coordinates by Newton-Raphson warm-started from
the solution at the step's start, to the embedding's tolerance (max |Phi| <= 1e-12: no
drift to correct, no Baumgarte term), their rates qd = G v, and at zero independent
acceleration qdd = g, so that the tree's inverse dynamics gives b + H g; H by the CRBA
(dynamics/mass_matrix.py). Then

    (G^T H G) qdd_i = tau - G^T (b + H g)         (the embedded equations of motion)

solved by numpy (the embedded mass matrix M = G^T H G is small: one row per independent
coordinate), by closed_chain.embedded_equations and embedded_accelerations, as
closed_chain.forward_dynamics on the numpy state. The state at the end of a step is solved
once and kept (it is the next step's first stage). The dynamics at the current state
(M, G^T (b + H g)) are kept too, for a controller (computed torque: tau = M a + G^T (b + H g)
gives qdd_i = a).

Joint stops: an independent coordinate's bounds (``model.compiled.coordinate_limits``) are
inelastic stops as integrate.py's: clipped to the bound and, for the set K of coordinates on
a bound moving outward, qd+_K = 0 by an impulse that leaves the others' momentum unchanged,
(M (v+ - v))_f = 0 for f not in K. A bound on a dependent coordinate would be a unilateral
constraint on the embedded system (not written): :class:`LoopStepData` refuses such a model
with :class:`DependentStopError`.
"""
from __future__ import annotations

import math

import numpy as np

from ..dynamics.closed_chain import (EmbeddedInverseDynamics, embedded_accelerations,
                                     embedded_equations)
from ..dynamics.forward import held_solve
from ..dynamics.mass_matrix import MassMatrixData, mass_matrix
from ..mechanisms.closed_chains import ClosedChain
from ..model.model import Model
from .integrate import coordinate_limits


class DependentStopError(ValueError):
    """A model with loops whose dependent coordinates have joint limits (stops)."""


class LoopStepData:
    """The simulation state of a model with loops and the buffers of its steps: the
    independent coordinates ``x``, ``v``; every coordinate ``q``, ``qd`` solved at them;
    ``M`` and ``bias`` (G^T (b + H g)) there (module docstring)."""

    def __init__(self, model: Model, chain: ClosedChain | None = None) -> None:
        self.model = model
        self.chain = chain = ClosedChain.build(model) if chain is None else chain
        lower, upper = coordinate_limits(model)
        bounded = [model.coordinate_names[c] for c in chain.dependent
                   if math.isfinite(lower[c]) or math.isfinite(upper[c])]
        if bounded:
            raise DependentStopError(
                f"{model.name}: the dependent coordinate(s) {', '.join(bounded)} have joint "
                "limits: stops on coordinates solved from the loops are not simulated (only "
                "the independent coordinates' stops are), expected limits on "
                f"{', '.join(chain.independent_names)} only")
        self.work = EmbeddedInverseDynamics.of(chain)
        self.mass = MassMatrixData(model)
        self.lower, self.upper = lower[chain.independent], upper[chain.independent]
        ni = len(chain.independent)
        self.zeros = np.zeros(ni)
        self.x, self.v = np.zeros(ni), np.zeros(ni)
        self.q, self.qd = chain.assembled.copy(), np.zeros(model.n_coordinates)
        self.M, self.bias = np.eye(ni), np.zeros(ni)

    @property
    def names(self) -> tuple[str, ...]:
        """The independent coordinates' names, the order of ``x``, ``v`` and the efforts."""
        return self.chain.independent_names

    def dynamics(self, x: np.ndarray, v: np.ndarray, start: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(M, G^T (b + H g)) at (x, v), the state solved into the embedding's buffers from
        ``start`` (None: followed from the assembled configuration)."""
        work = self.work
        work.solve(x, v, self.zeros, start)
        b = work.embedding.named
        return embedded_equations(mass_matrix(self.model, b.q, data=self.mass), b.G, work.tree)

    def reset(self, x: np.ndarray, v: np.ndarray, start: np.ndarray | None = None) -> None:
        """The state at (x, v), solved from ``start`` (None: followed from the assembled
        configuration, the model's branch); raises ``LoopSingularityError``."""
        self.M, self.bias = self.dynamics(x, v, start)
        b = self.work.embedding.named
        self.x, self.v = np.array(x, float), np.array(v, float)
        self.q, self.qd = b.q.copy(), b.qd.copy()

    def accelerations(self, x: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """qdd_i under ``tau`` at (x, v), warm-started from the current state."""
        return embedded_accelerations(*self.dynamics(x, v, self.q), tau)


def loop_step(data: LoopStepData, tau: np.ndarray, dt: float) -> None:
    """One RK4 step of ``dt`` under the held efforts ``tau`` (at ``data.names``), then the
    independent coordinates' stops; advances ``data`` (module docstring). Raises
    ``LoopSingularityError`` (the loops do not close, or singular: ``data`` is left at the
    step's start) and ``numpy.linalg.LinAlgError``."""
    x, v = data.x, data.v
    a1 = embedded_accelerations(data.M, data.bias, tau)   # the kept first stage
    x2, v2 = x + 0.5 * dt * v, v + 0.5 * dt * a1
    a2 = data.accelerations(x2, v2, tau)
    x3, v3 = x + 0.5 * dt * v2, v + 0.5 * dt * a2
    a3 = data.accelerations(x3, v3, tau)
    x4, v4 = x + dt * v3, v + dt * a3
    a4 = data.accelerations(x4, v4, tau)
    x_new = x + dt / 6.0 * (v + 2 * v2 + 2 * v3 + v4)
    v_new = v + dt / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
    clipped = np.clip(x_new, data.lower, data.upper)
    stopped = ((clipped <= data.lower) & (v_new < 0.0)) | ((clipped >= data.upper) & (v_new > 0.0))
    if np.any(stopped):
        M, _ = data.dynamics(clipped, v_new, data.q)
        v_new = _stop(M, v_new, clipped, data.lower, data.upper, stopped)
    data.reset(clipped, v_new, data.q)


def _stop(M: np.ndarray, v: np.ndarray, x: np.ndarray, lower: np.ndarray, upper: np.ndarray,
          stopped: np.ndarray) -> np.ndarray:
    """The velocities after the inelastic impact at the stops (module docstring): as
    integrate.stop_at_limits, with the embedded mass matrix."""
    while True:
        jump = np.where(stopped, -v, 0.0)
        after = v + jump + held_solve(M, -(M @ jump), stopped)
        more = (((x <= lower) & (after < 0.0)) | ((x >= upper) & (after > 0.0))) & ~stopped
        if not np.any(more):
            return after
        stopped = stopped | more
