"""The robots an environment steps: N states of one model moved by held input efforts over a
control period, in one batch (no Gymnasium here; envs/tracking.py wraps them).

* :class:`TreePlant`, a model without loops (CHARMIE, the examples' open chains): the state is
  joint-space (q, qd) of N robots; a control period is ``substeps`` calls of
  ``integrate.step`` on all N at once (simulation/integrate.py: the batch kernels of the ABA,
  the joint stops' contact and impact rules), the efforts tau = (u - f(x')) / J of the held
  input efforts u (dynamics/actuation.py), the Coulomb term smoothed as the simulator node
  smooths it (below 2 dt coulomb (H_x^-1)_ii, computed at the period's start). A step that
  raises for the batch (an actuator driven past its stroke in one robot) is taken again one
  robot at a time, so only the robots that cannot go on stop; one robot alone runs the same
  kernels on the same numbers, so the others' results do not change.
* :class:`LoopPlant`, a model with loops (the five-bar, the IRSBot-2): each robot is a
  simulation/loop_step.py state on the independent coordinates (RK4 of the embedded equations),
  stepped one after the other in Python: the embedding has no batch kernel.

Both observe in input space: the inputs' positions x (actuator lengths for CHARMIE's act4
and act5) and rates x' (qd / J), the order of ``names``.
"""
from __future__ import annotations

import math

import numpy as np

from ..dynamics.actuation import (actuator_space, friction, input_jacobians,
                                  joint_efforts_from_inputs)
from ..dynamics.inverse import InverseDynamicsData, inverse_dynamics
from ..dynamics.mass_matrix import MassMatrixData, mass_matrix
from ..kinematics.indirect import MechanismRangeError
from ..kinematics.state import resolve_state
from ..mechanisms.closed_chains import LoopSingularityError
from ..model.model import Model
from ..simulation.integrate import INTEGRATORS, StepData, check_within_limits, step
from ..simulation.loop_step import LoopStepData, loop_step
from ..trajectories import coordinate_kinds, input_kinds, motion_inputs

#: What ends one robot's simulation (its state stays the last valid one)
STEP_ERRORS = (MechanismRangeError, LoopSingularityError, np.linalg.LinAlgError)


class TreePlant:
    """N robots of a model without loops (module docstring); ``q``, ``qd`` (N, n)."""

    def __init__(self, model: Model, count: int, dt: float, substeps: int, method: str) -> None:
        if method not in INTEGRATORS:
            raise ValueError(f"integrator: got {method!r}, expected one of "
                             f"{', '.join(INTEGRATORS)}")
        self.model, self.count, self.dt, self.substeps, self.method = \
            model, count, dt, substeps, method
        self.names = tuple(model.input_names)
        self.kinds = input_kinds(model)
        n = model.n_coordinates
        self.q, self.qd = np.zeros((count, n)), np.zeros((count, n))
        self.space = actuator_space(model)
        self.effort_limit = self.space.effort_limit
        self._batch = StepData(model, (count,))
        self._one = StepData(model, (1,))
        self._mass = MassMatrixData(model, (count,))

    def place(self, rows: np.ndarray, x0: np.ndarray) -> None:
        """Robots ``rows`` at rest at the inputs x0 (len(rows), n); ValueError for a start
        outside the joint stops, ActuatorRangeError for a length outside its stroke."""
        zeros = np.zeros_like(x0)
        state = resolve_state(self.model, x0, zeros, zeros)
        check_within_limits(self.model, state.q)
        self.q[rows], self.qd[rows] = state.q, 0.0

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """x and x' (N, n) of every robot."""
        x, J, _ = input_jacobians(self.model, self.q)
        return x, self.qd / J

    def joint_positions(self, row: int, x: np.ndarray | None = None) -> np.ndarray:
        """Robot ``row``'s joint coordinates, or those at the inputs ``x`` (n,)."""
        if x is None:
            return self.q[row].copy()
        return resolve_state(self.model, x, np.zeros_like(x), np.zeros_like(x)).q

    def rigid_body(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> np.ndarray:
        """The inverse dynamics' input efforts (no friction) at inputs (..., n): the joints'
        efforts, the actuators' axial forces in their slots."""
        state = resolve_state(self.model, x, xd, xdd)
        lead = np.shape(state.q)[:-1]
        loads = inverse_dynamics(self.model, state,
                                 data=InverseDynamicsData(self.model, lead, keep="efforts"))
        return self.model.in_input_order(loads.coordinate_effort, loads.actuator_force)

    def friction(self, xd: np.ndarray) -> np.ndarray:
        """The friction (N, n) the simulation applies at the rates ``xd`` with the smoothing
        of the robots' current states (module docstring): what a feedforward adds to the
        inverse dynamics. (The dynamics node's unsmoothed sign would push the light wrist
        joints, below their smoothing velocity, with a torque the simulated robot does not
        resist.)"""
        return friction(self.space, xd, self._smoothing())

    def _smoothing(self) -> np.ndarray:
        """The Coulomb smoothing velocities (N, n) at the current states (module docstring)."""
        _, J, _ = input_jacobians(self.model, self.q)
        H = mass_matrix(self.model, self.q, data=self._mass)
        inverse = np.linalg.inv(J[:, :, None] * H * J[:, None, :])
        return np.maximum(2.0 * self.dt * self.space.coulomb
                          * np.diagonal(inverse, axis1=1, axis2=2), 1e-9)

    def advance(self, effort: np.ndarray) -> np.ndarray:
        """One control period with the efforts ``effort`` (N, n) held; the robots that could not
        take it (bool (N,)), whose state is their last valid one."""
        smoothing = self._smoothing()
        failed = np.zeros(self.count, dtype=bool)
        for _ in range(self.substeps):
            q, qd = self.q.copy(), self.qd.copy()
            if failed.any() or not self._step(self._batch, slice(None), effort, smoothing):
                for r in np.flatnonzero(~failed):
                    failed[r] = not self._step(self._one, slice(r, r + 1), effort, smoothing)
            lost = ~(np.isfinite(self.q).all(axis=1) & np.isfinite(self.qd).all(axis=1))
            self.q[lost], self.qd[lost] = q[lost], qd[lost]
            failed |= lost
        return failed

    def _step(self, data: StepData, rows: slice, effort: np.ndarray,
              smoothing: np.ndarray) -> bool:
        """One step of the robots ``rows``; False (their states unchanged) where it raises."""
        u, s = effort[rows], smoothing[rows]

        def tau(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
            return joint_efforts_from_inputs(self.model, q, qd, u, s)

        try:
            q, qd = step(self.model, 0.0, self.q[rows], self.qd[rows], tau, self.dt,
                         self.method, dynamics="aba", data=data)
            input_jacobians(self.model, q)          # raises for an actuator past its stroke
        except STEP_ERRORS:
            return False
        self.q[rows], self.qd[rows] = q, qd
        return True


class LoopPlant:
    """N robots of a model with loops (module docstring), on the independent coordinates."""

    def __init__(self, model: Model, count: int, dt: float, substeps: int) -> None:
        self.model, self.count, self.dt, self.substeps = model, count, dt, substeps
        self.robots = [LoopStepData(model) for _ in range(count)]
        self.names = motion_inputs(model)
        kinds = coordinate_kinds(model)
        self.kinds = [kinds[name] for name in self.names]
        self._reference = LoopStepData(model, self.robots[0].chain)
        limits = actuator_space(model).effort_limit
        self.effort_limit = limits[[model.input_names.index(n) for n in self.names]]

    def place(self, rows: np.ndarray, x0: np.ndarray) -> None:
        """Robots ``rows`` at rest at x0, solved from the assembled configuration;
        LoopSingularityError where the loops do not close there."""
        for r, x in zip(rows, x0):
            self.robots[r].reset(x, np.zeros_like(x))

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        return (np.array([r.x for r in self.robots]), np.array([r.v for r in self.robots]))

    def joint_positions(self, row: int, x: np.ndarray | None = None) -> np.ndarray:
        """Robot ``row``'s coordinates, or those solved at the independent ones ``x``."""
        if x is None:
            return self.robots[row].q.copy()
        self._reference.reset(x, np.zeros_like(x))
        return self._reference.q.copy()

    def friction(self, xd: np.ndarray) -> np.ndarray:
        """None applied (simulation/loop_step.py): zeros."""
        return np.zeros(np.shape(xd))

    def rigid_body(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> np.ndarray:
        """Computed torque at the references, M(x) x'' + G^T (b + H g), samples (..., n)."""
        x, xd, xdd = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in (x, xd, xdd)))
        out = np.empty(x.shape)
        flat = [a.reshape(-1, x.shape[-1]) for a in (x, xd, xdd, out)]
        for xk, vk, ak, uk in zip(*flat):
            M, bias = self._reference.dynamics(xk, vk, None)
            uk[:] = M @ ak + bias
        return out

    def advance(self, effort: np.ndarray) -> np.ndarray:
        failed = np.zeros(self.count, dtype=bool)
        for r, robot in enumerate(self.robots):
            try:
                for _ in range(self.substeps):
                    loop_step(robot, effort[r], self.dt)
            except STEP_ERRORS:
                failed[r] = True
            failed[r] |= not (np.isfinite(robot.x).all() and np.isfinite(robot.v).all())
        return failed


def finite_limits(limit: np.ndarray, names: tuple[str, ...], given: np.ndarray | None
                  ) -> np.ndarray:
    """The action's scale: the inputs' effort limits, or ``given`` (one number or one per
    input) where the model has none; ValueError naming the inputs without either."""
    if given is not None:
        scale = np.broadcast_to(np.asarray(given, dtype=float), limit.shape).copy()
        if not np.all(np.isfinite(scale) & (scale > 0.0)):
            raise ValueError(f"effort_limit: got {given!r}, expected positive finite efforts "
                             f"(one, or one per input: {', '.join(names)})")
        return np.where(np.isfinite(limit), limit, scale)
    missing = [n for n, v in zip(names, limit) if not math.isfinite(v)]
    if missing:
        raise ValueError(f"effort_limit: the model gives no effort limit for "
                         f"{', '.join(missing)}; expected effort_limit= (N or N m, one or one "
                         "per input) to scale the actions")
    return limit.copy()
