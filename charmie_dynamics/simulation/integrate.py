"""Simulation of the open tree in joint coordinates: fixed-step integration of
qdd = FD(q, qd, tau(t, q, qd)) (forward.py), joint position limits, and the mechanical energy.

Integrators (step dt, default 1 ms):

* ``"euler"``: semi-implicit (symplectic) Euler, qd' = qd + dt qdd(t, q, qd), q' = q + dt qd'.
* ``"rk4"``: the classical fourth-order Runge-Kutta method on the state (q, qd).

**Joint position limits** (``limits=True``) are inelastic stops. The bounds of a coordinate
are those of its joints (``body.limits`` lower/upper limit the joint value multiplier *
coordinate + offset), less the offset, divided by the multiplier (bounds swapped when it is
negative) and intersected
over the coordinate's joints (:func:`coordinate_limits`, built once per model); unbounded
sides are infinite.

* Impact (:func:`stop_at_limits`, after every step): a coordinate past a bound is put back on
  it, and if it moves outward its velocity becomes zero through an impulse at the stop, the
  plastic impact of rigid bodies: the other rates change by the impulse's effect too,
  qd+ = qd + H^-1 e_k lambda (H the mass matrix; coordinates that the impulse would push
  outward through their own bound join the impact). Kinetic energy is lost, never gained;
  an inward velocity is kept (no bounce).
* Contact (inside every evaluation of the dynamics, RK4 stages included): a coordinate on or
  past a bound, not moving inward, whose acceleration points outward is held
  (``forward_dynamics(..., held=...)``: zero acceleration, the stop carrying whatever force
  that takes, so a joint resting on its stop passes the load to its parent: the torso feels
  gravity when d4 rests on its end stop). The set grows until no free coordinate on a bound
  accelerates outward; it is decided afresh at every evaluation, so a coordinate pulled away
  from its stop is released.

The initial state must be within the limits.

**Free-flyers** (nq != nv: kinematics/configuration.py): q (..., nq) moves by
``integrate_configuration``, q (+) v dt, the exponential of SE(3) with the quaternion
normalised, in place of q + v dt; RK4 is then the Runge-Kutta-Munthe-Kaas method, its
stages q (+) xi_k with the tangent rates K_k = dexp^-1_{xi_k}(v_k) (``tangent_rate``) and
q' = q (+) dt/6 (K_1 + 2 K_2 + 2 K_3 + K_4): fourth order like the classical method, which it
is for the other coordinates. A free-flyer has no position limits; the stops compare each
other coordinate's configuration entry (``model.coordinate_configuration``) with its bounds.

**Workspaces** (``data=``, as the other algorithms): :class:`StepData` for :func:`step` and
:func:`stop_at_limits` (forward dynamics' buffers, the four RK4 stage results, the state
after the step), :class:`SimulationData` for :func:`simulate` (a StepData and the whole
motion, for one number of steps).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, NamedTuple, Optional

import numpy as np

from ..dynamics.forward import ForwardDynamicsData, forward_dynamics, held_solve
from ..dynamics.mass_matrix import MassMatrixData, mass_matrix
from ..kinematics.configuration import integrate_configuration, tangent_rate
from ..kinematics.forward import forward_kinematics
from ..kinematics.motion import body_motion
from ..mechanisms.forces import law_arguments, mechanism_energy
from ..model.data import AlgorithmData
from ..model.model import Model

#: tau(t, q, qd) -> generalized efforts (..., n): N m (revolute) or N (prismatic)
EffortFunction = Callable[[float, np.ndarray, np.ndarray], np.ndarray]

INTEGRATORS = ("euler", "rk4")


class Simulation(NamedTuple):
    """A simulated motion; unpacks as ``t, q, qd = simulate(...)``."""

    t: np.ndarray     # (steps + 1,) s
    q: np.ndarray     # (steps + 1, ..., nq) rad or m
    qd: np.ndarray    # (steps + 1, ..., n) rad/s or m/s


@dataclass(frozen=True)
class Energy:
    """Mechanical energy (J), arrays with the state's leading axes."""

    kinetic: np.ndarray
    gravitational: np.ndarray   # -sum m_i g . c_i, zero at the world origin
    spring: np.ndarray          # springs and balancer springs

    @property
    def total(self) -> np.ndarray:
        return self.kinetic + self.gravitational + self.spring


def coordinate_limits(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper position bounds of every coordinate (n,), -inf/+inf where none
    (read-only; held by the model: model/compiled.py)."""
    return model.compiled.coordinate_limits


class StepData(AlgorithmData):
    """Buffers of :func:`step` and :func:`stop_at_limits` for one model and sample shape
    ``lead``: forward dynamics' (``forward``), the coordinate limits (``lower``, ``upper``),
    the RK4 stages (``stage_qdd``: the four accelerations a1..a4, ``stage_qd`` and
    ``stage_q``: the rates and positions at which a2..a4 are evaluated), zero efforts (no
    ``tau_fn``), the mass matrix of the stops' impulses (built on first use) and the state
    after the step, ``q`` (..., nq) and ``qd`` (..., n), returned by every call as the tuple
    ``state`` and overwritten by the next."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        super().__init__(model, lead)
        shape, q_shape = self.lead + (model.n_coordinates,), self.lead + (model.nq,)
        self.forward = ForwardDynamicsData(model, lead)
        self.lower, self.upper = coordinate_limits(model)
        self.stage_qdd = np.empty((4,) + shape)
        self.stage_qd = np.empty((3,) + shape)
        self.stage_q = np.empty((3,) + q_shape)
        self.zeros = np.zeros(shape)
        self.q = np.empty(q_shape)
        self.qd = np.empty(shape)
        self.state = (self.q, self.qd)

    @cached_property
    def mass(self) -> MassMatrixData:
        return MassMatrixData(self.model, self.lead)


def _state(model: Model, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q (..., nq) and qd (..., n) as float arrays of one broadcast sample shape."""
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    if q.shape[-1:] != (model.nq,) or qd.shape[-1:] != (model.n_coordinates,):
        raise ValueError(f"q, qd: got last axes {q.shape[-1:]}, {qd.shape[-1:]}, expected "
                         f"({model.n_coordinates},) coordinates of {model.name} (q: "
                         f"({model.nq},) configuration entries)")
    lead = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
    return np.broadcast_to(q, lead + (model.nq,)), np.broadcast_to(qd, lead + qd.shape[-1:])


def _positions(model: Model, q: np.ndarray) -> np.ndarray:
    """Each coordinate's configuration entry of q (..., n): q itself without a free-flyer."""
    return q[..., model.coordinate_configuration] if model.free_flyers else q


def stop_at_limits(model: Model, q: np.ndarray, qd: np.ndarray, *,
                   data: Optional[StepData] = None) -> tuple[np.ndarray, np.ndarray]:
    """The inelastic stops of the module docstring: (q, qd) after an impact, arrays (..., n).

    Coordinates past a bound are clipped to it; the set K of coordinates on a bound moving
    outward gets qd+_K = 0 from an impulse at the stops, which leaves the momentum of the
    others unchanged: (H (qd+ - qd))_f = 0 for every coordinate f not in K. ``data``: buffers
    for the sample shape, reused (the result is its ``state``; q and qd may be its arrays);
    new ones when omitted.
    """
    q, qd = _state(model, q, qd)
    data = StepData.reuse(data, model, q.shape[:-1])
    lower, upper = data.lower, data.upper
    if model.free_flyers:           # the bounds are those of the coordinates' entries of q
        np.copyto(data.q, q)
        data.q[..., model.coordinate_configuration] = np.clip(_positions(model, q), lower,
                                                              upper)
    else:
        np.clip(q, lower, upper, out=data.q)
    np.copyto(data.qd, qd)
    q, qd = data.q, data.qd
    position = _positions(model, q)
    stopped = _outward(position, qd, lower, upper)
    if not np.any(stopped):
        return data.state
    rows = _some_rows(stopped)
    if rows is None:
        qd[...] = _impact(model, q, qd, stopped, position, lower, upper, data.mass)
    else:       # only the samples at a stop: their mass matrices are the cost
        qd[rows] = _impact(model, q[rows], qd[rows], stopped[rows], position[rows], lower,
                           upper, None)
    return data.state


def _some_rows(flags: np.ndarray) -> Optional[tuple[np.ndarray, ...]]:
    """The samples of a batch of flags (..., n) with a flag set, where some samples have
    none; None for one sample, or when every sample has one (the workspace's buffers fit
    those). A subset is computed in buffers of its own, each sample as it would be alone."""
    if flags.ndim == 1:
        return None
    rows = np.nonzero(flags.any(axis=-1))
    return None if len(rows[0]) == flags[..., 0].size else rows


def _outward(position: np.ndarray, v: np.ndarray, lower: np.ndarray, upper: np.ndarray
             ) -> np.ndarray:
    """The coordinates on a bound whose rate v points out of it."""
    return ((position <= lower) & (v < 0.0)) | ((position >= upper) & (v > 0.0))


def _impact(model: Model, q: np.ndarray, qd: np.ndarray, stopped: np.ndarray,
            position: np.ndarray, lower: np.ndarray, upper: np.ndarray,
            mass: Optional[MassMatrixData]) -> np.ndarray:
    """qd after the stops' impulse (:func:`stop_at_limits`): ``stopped``, the coordinates on
    a bound moving outward, and those the impulse sends outward in turn, stopped."""
    H = mass_matrix(model, q, data=mass)
    while True:
        jump = np.where(stopped, -qd, 0.0)                  # qd+_K - qd_K
        rest = held_solve(H, -np.einsum("...ij,...j->...i", H, jump), stopped)
        after = qd + jump + rest
        more = _outward(position, after, lower, upper) & ~stopped
        if not np.any(more):
            return after
        stopped = stopped | more


def mechanical_energy(model: Model, q: np.ndarray, qd: np.ndarray) -> Energy:
    """Kinetic, gravitational and spring energy of joint-space states (..., n).

    Kinetic: sum over bodies of m v_C^2 / 2 + omega^T I_C omega / 2 from the velocity pass
    (seed 000 eqs. 29-32); spring: each mechanism's energy by its kind
    (mechanisms/forces.mechanism_energy) at its law's argument (a length, seed 000 eqs. 20,
    35, or an angle), whose derivative is the tension the dynamics apply.
    """
    qd = np.asarray(qd, dtype=float)
    fk = forward_kinematics(model, q)
    motion = body_motion(model, fk, qd, np.zeros_like(qd))
    v, w = motion.com_velocity, motion.angular_velocity
    kinetic = 0.5 * (np.einsum("b,...bi,...bi->...", model.mass, v, v)
                     + np.einsum("...bi,bij,...bj->...", w, model.inertia, w))
    com = fk.origin_world + np.einsum("...bij,bj->...bi", fk.rotation_world, model.com)
    gravitational = -np.einsum("b,...bi,i->...", model.mass, com, model.gravity)
    spring = mechanism_energy(model, law_arguments(model, fk)) + np.zeros_like(kinetic)
    return Energy(kinetic, gravitational, spring)


def accelerations(model: Model, t: float, q: np.ndarray, qd: np.ndarray,
                  tau_fn: Optional[EffortFunction], dynamics: str, limits: bool,
                  data: StepData, out: np.ndarray) -> np.ndarray:
    """qdd at (t, q, qd) (..., n) with the stops' contact rule of the module docstring,
    written into ``out`` (a stage of ``data``)."""
    tau = data.zeros if tau_fn is None else tau_fn(t, q, qd)
    out[...] = forward_dynamics(model, q, qd, tau, method=dynamics, data=data.forward)
    if not limits:
        return out
    lower, upper = data.lower, data.upper
    position = _positions(model, q)
    at_lower, at_upper = (position <= lower) & (qd <= 0.0), (position >= upper) & (qd >= 0.0)
    held = np.zeros(qd.shape, dtype=bool)
    while True:
        pushing = ((at_lower & (out < 0.0)) | (at_upper & (out > 0.0))) & ~held
        if not np.any(pushing):
            return out
        held = held | pushing
        rows = _some_rows(pushing)
        if rows is None:
            out[...] = forward_dynamics(model, q, qd, tau, method=dynamics, held=held,
                                        data=data.forward)
        else:       # only the samples that push
            out[rows] = forward_dynamics(model, q[rows], qd[rows],
                                         np.broadcast_to(tau, qd.shape)[rows],
                                         method=dynamics, held=held[rows])


def step(model: Model, t: float, q: np.ndarray, qd: np.ndarray,
         tau_fn: Optional[EffortFunction], dt: float = 1e-3, method: str = "rk4", *,
         dynamics: str = "cholesky", limits: bool = True,
         data: Optional[StepData] = None) -> tuple[np.ndarray, np.ndarray]:
    """One integration step from (t, q, qd) (..., n): the state at t + dt (stops applied).

    ``data``: buffers for the sample shape, reused (see :class:`StepData`; the result is its
    ``state``, whose arrays may be passed back as the next step's q and qd); new ones when
    omitted.
    """
    if method not in INTEGRATORS:
        raise ValueError(f"method: got {method!r}, expected one of {', '.join(INTEGRATORS)}")
    q, qd = _state(model, q, qd)
    data = StepData.reuse(data, model, q.shape[:-1])
    a, v, x = data.stage_qdd, data.stage_qd, data.stage_q

    def accel(k: int, tk: float, qk: np.ndarray, qdk: np.ndarray) -> np.ndarray:
        return accelerations(model, tk, qk, qdk, tau_fn, dynamics, limits, data, a[k])

    def move(xi: np.ndarray, out: np.ndarray) -> None:      # out = q (+) xi (module docstring)
        if model.free_flyers:
            out[...] = integrate_configuration(model, q, xi)
        else:
            np.add(q, xi, out=out)

    def rate(xi: np.ndarray, vk: np.ndarray) -> np.ndarray:  # K_k; v_k without a free-flyer
        return tangent_rate(model, xi, vk) if model.free_flyers else vk

    if method == "euler":
        accel(0, t, q, qd)
        np.add(qd, dt * a[0], out=data.qd)
        move(dt * data.qd, data.q)
    else:
        accel(0, t, q, qd)
        np.add(qd, 0.5 * dt * a[0], out=v[0])
        move(0.5 * dt * qd, x[0])
        accel(1, t + 0.5 * dt, x[0], v[0])
        k2 = rate(0.5 * dt * qd, v[0])
        np.add(qd, 0.5 * dt * a[1], out=v[1])
        move(0.5 * dt * k2, x[1])
        accel(2, t + 0.5 * dt, x[1], v[1])
        k3 = rate(0.5 * dt * k2, v[1])
        np.add(qd, dt * a[2], out=v[2])
        move(dt * k3, x[2])
        accel(3, t + dt, x[2], v[2])
        k4 = rate(dt * k3, v[2])
        # q before qd: q and qd may be data.q and data.qd (the previous step's results)
        move(dt / 6.0 * (qd + 2.0 * k2 + 2.0 * k3 + k4), data.q)
        np.add(qd, dt / 6.0 * (a[0] + 2.0 * a[1] + 2.0 * a[2] + a[3]), out=data.qd)
    if limits:
        stop_at_limits(model, data.q, data.qd, data=data)
    return data.state


def check_within_limits(model: Model, q: np.ndarray) -> None:
    """Raise ValueError naming the first coordinate of q outside its position limits."""
    lower, upper = coordinate_limits(model)
    position = _positions(model, np.asarray(q))
    outside = (position < lower) | (position > upper)
    if np.any(outside):
        c = int(np.flatnonzero(np.any(outside.reshape(-1, lower.size), axis=0))[0])
        raise ValueError(f"q0: coordinate {model.coordinate_names[c]!r} is outside its limits "
                         f"[{lower[c]:g}, {upper[c]:g}]")


class SimulationData(AlgorithmData):
    """Buffers of :func:`simulate` for one model, sample shape ``lead`` and number of
    ``steps``: a :class:`StepData` (``step``) and the motion, ``simulation`` (t (steps + 1,),
    q (steps + 1, ..., nq) and qd (steps + 1, ..., n)), returned by every call and
    overwritten by the next."""

    def __init__(self, model: Model, lead: tuple[int, ...] = (), steps: int = 1) -> None:
        super().__init__(model, lead)
        self.steps = int(steps)
        self.step = StepData(model, lead)
        shape = (self.steps + 1,) + self.lead
        self.simulation = Simulation(np.empty(self.steps + 1), np.empty(shape + (model.nq,)),
                                     np.empty(shape + (model.n_coordinates,)))

    def sizes(self) -> dict[str, int]:
        return {"steps": self.steps}


def simulate(model: Model, q0: np.ndarray, qd0: np.ndarray,
             tau_fn: Optional[EffortFunction], duration: float, dt: float = 1e-3,
             method: str = "rk4", *, dynamics: str = "cholesky", limits: bool = True,
             data: Optional[SimulationData] = None) -> Simulation:
    """Integrate the motion from (q0, qd0) (..., nq), (..., n) for ``duration`` seconds.

    ``tau_fn(t, q, qd)``: coordinate efforts, None for none (free motion under gravity,
    springs and balancers). ``method``: "euler" (semi-implicit) or "rk4". ``dynamics``: the
    forward-dynamics method, "cholesky" (any model) or "aba" (coupled joints must be siblings;
    faster on CHARMIE: benchmarks/bench_forward_dynamics.py). ``limits``: stop the coordinates
    at their position limits (module docstring). ``duration`` must be a whole number of steps.
    ``data``: buffers for the sample shape and number of steps, reused (see
    :class:`SimulationData`); new ones when omitted.
    """
    if method not in INTEGRATORS:
        raise ValueError(f"method: got {method!r}, expected one of {', '.join(INTEGRATORS)}")
    if not dt > 0.0:
        raise ValueError(f"dt: got {dt!r}, expected a number > 0")
    steps = int(round(duration / dt))
    if steps < 1 or abs(steps * dt - duration) > 1e-9 * max(1.0, duration):
        raise ValueError(f"duration: got {duration!r}, expected a positive multiple of "
                         f"dt = {dt!r}")
    q, qd = _state(model, q0, qd0)
    data = SimulationData.reuse(data, model, q.shape[:-1], steps=steps)
    if limits:
        check_within_limits(model, q)
    t, q_out, qd_out = data.simulation
    np.multiply(dt, np.arange(steps + 1), out=t)
    q_out[0], qd_out[0] = q, qd
    for k in range(steps):
        q, qd = step(model, t[k], q, qd, tau_fn, dt, method, dynamics=dynamics, limits=limits,
                     data=data.step)
        q_out[k + 1], qd_out[k + 1] = q, qd
    return data.simulation
