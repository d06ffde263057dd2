"""Simulation of the open tree in joint coordinates: fixed-step integration of
qdd = FD(q, qd, tau(t, q, qd)) (forward.py), joint position limits, and the mechanical energy.

Integrators (step dt, default 1 ms):

* ``"euler"``: semi-implicit (symplectic) Euler, qd' = qd + dt qdd(t, q, qd), q' = q + dt qd'.
* ``"rk4"``: the classical fourth-order Runge-Kutta method on the state (q, qd).

**Joint position limits** (``limits=True``) are inelastic stops. The bounds of a coordinate
are those of its joints (``body.limits`` lower/upper limit the joint value multiplier *
coordinate + offset), less the offset, divided by the multiplier (bounds swapped when it is
negative) and intersected
over the coordinate's joints (:func:`coordinate_limits`); unbounded sides are infinite.

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
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional

import numpy as np

from ..kinematics.configuration import integrate_configuration, tangent_rate
from ..kinematics.forward import forward_kinematics
from ..kinematics.motion import body_motion
from ..mechanisms.auxiliary import auxiliary_segments
from ..mechanisms.forces import spring_energy
from ..model.model import Model
from .forward import forward_dynamics, held_solve
from .mass_matrix import mass_matrix

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
    """Lower and upper position bounds of every coordinate (n,), -inf/+inf where none."""
    lower = np.full(model.n_coordinates, -np.inf)
    upper = np.full(model.n_coordinates, np.inf)
    for i, body in enumerate(model.bodies):
        c = model.coordinate_index[i]
        if c < 0:
            continue
        m, offset = body.multiplier, body.offset
        lo, hi = (body.limits.lower, body.limits.upper) if m > 0 else \
            (body.limits.upper, body.limits.lower)
        if lo is not None:
            lower[c] = max(lower[c], (lo - offset) / m)
        if hi is not None:
            upper[c] = min(upper[c], (hi - offset) / m)
    return lower, upper


def stop_at_limits(model: Model, q: np.ndarray, qd: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The inelastic stops of the module docstring: (q, qd) after an impact, arrays (..., n).

    Coordinates past a bound are clipped to it; the set K of coordinates on a bound moving
    outward gets qd+_K = 0 from an impulse at the stops, which leaves the momentum of the
    others unchanged: (H (qd+ - qd))_f = 0 for every coordinate f not in K.
    """
    lower, upper = coordinate_limits(model)
    at = model.coordinate_configuration
    q = np.array(q, dtype=float)
    q[..., at] = position = np.clip(q[..., at], lower, upper)
    qd = np.asarray(qd, dtype=float)

    def outward(v: np.ndarray) -> np.ndarray:
        return ((position <= lower) & (v < 0.0)) | ((position >= upper) & (v > 0.0))

    stopped = outward(qd)
    if not np.any(stopped):
        return q, qd
    H = mass_matrix(model, q)
    while True:
        jump = np.where(stopped, -qd, 0.0)                  # qd+_K - qd_K
        rest = held_solve(H, -np.einsum("...ij,...j->...i", H, jump), stopped)
        after = qd + jump + rest
        more = outward(after) & ~stopped
        if not np.any(more):
            return q, after
        stopped = stopped | more


def mechanical_energy(model: Model, q: np.ndarray, qd: np.ndarray) -> Energy:
    """Kinetic, gravitational and spring energy of joint-space states (..., n).

    Kinetic: sum over bodies of m v_C^2 / 2 + omega^T I_C omega / 2 from the velocity pass
    (seed 000 eqs. 29-32); spring: ``spring_energy`` of each spring and balancer spring at its
    length (seed 000 eqs. 20, 35), whose derivative is the tension the dynamics apply.
    """
    qd = np.asarray(qd, dtype=float)
    fk = forward_kinematics(model, q)
    motion = body_motion(model, fk, qd, np.zeros_like(qd))
    v, w = motion.com_velocity, motion.angular_velocity
    kinetic = 0.5 * (np.einsum("b,...bi,...bi->...", model.mass, v, v)
                     + np.einsum("...bi,bij,...bj->...", w, model.inertia, w))
    com = fk.origin_world + np.einsum("...bij,bj->...bi", fk.rotation_world, model.com)
    gravitational = -np.einsum("b,...bi,i->...", model.mass, com, model.gravity)
    lengths = {s.name: s.length for s in auxiliary_segments(model, fk) if s.kind == "spring"}
    spring = np.zeros_like(kinetic)
    for s in model.springs:
        spring = spring + spring_energy(s.params, lengths[s.name])
    for b in model.balancers:
        spring = spring + spring_energy(b.spring, lengths[f"{b.name}_spring"])
    return Energy(kinetic, gravitational, spring)


def accelerations(model: Model, t: float, q: np.ndarray, qd: np.ndarray,
                  tau_fn: Optional[EffortFunction], dynamics: str = "cholesky",
                  limits: bool = True) -> np.ndarray:
    """qdd at (t, q, qd) with the stops' contact rule of the module docstring."""
    tau = np.zeros_like(qd) if tau_fn is None else tau_fn(t, q, qd)
    qdd = forward_dynamics(model, q, qd, tau, method=dynamics)
    if not limits:
        return qdd
    lower, upper = coordinate_limits(model)
    position = q[..., model.coordinate_configuration]
    at_lower, at_upper = (position <= lower) & (qd <= 0.0), (position >= upper) & (qd >= 0.0)
    held = np.zeros(qd.shape, dtype=bool)
    while True:
        pushing = ((at_lower & (qdd < 0.0)) | (at_upper & (qdd > 0.0))) & ~held
        if not np.any(pushing):
            return qdd
        held = held | pushing
        qdd = forward_dynamics(model, q, qd, tau, method=dynamics, held=held)


def step(model: Model, t: float, q: np.ndarray, qd: np.ndarray,
         tau_fn: Optional[EffortFunction], dt: float = 1e-3, method: str = "rk4", *,
         dynamics: str = "cholesky", limits: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """One integration step from (t, q, qd): the state at t + dt (stops applied)."""
    if method not in INTEGRATORS:
        raise ValueError(f"method: got {method!r}, expected one of {', '.join(INTEGRATORS)}")

    def accel(tk: float, qk: np.ndarray, qdk: np.ndarray) -> np.ndarray:
        return accelerations(model, tk, qk, qdk, tau_fn, dynamics, limits)

    def move(xi: np.ndarray) -> np.ndarray:            # q (+) xi (module docstring)
        return integrate_configuration(model, q, xi) if model.free_flyers else q + xi

    def rate(xi: np.ndarray, v: np.ndarray) -> np.ndarray:
        return tangent_rate(model, xi, v) if model.free_flyers else v

    if method == "euler":
        qd = qd + dt * accel(t, q, qd)
        q = move(dt * qd)
    else:
        a1 = accel(t, q, qd)
        v2 = qd + 0.5 * dt * a1
        k2 = rate(0.5 * dt * qd, v2)
        a2 = accel(t + 0.5 * dt, move(0.5 * dt * qd), v2)
        v3 = qd + 0.5 * dt * a2
        k3 = rate(0.5 * dt * k2, v3)
        a3 = accel(t + 0.5 * dt, move(0.5 * dt * k2), v3)
        v4 = qd + dt * a3
        k4 = rate(dt * k3, v4)
        a4 = accel(t + dt, move(dt * k3), v4)
        q = move(dt / 6.0 * (qd + 2.0 * k2 + 2.0 * k3 + k4))
        qd = qd + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    return stop_at_limits(model, q, qd) if limits else (q, qd)


def check_within_limits(model: Model, q: np.ndarray) -> None:
    """Raise ValueError naming the first coordinate of q outside its position limits."""
    lower, upper = coordinate_limits(model)
    position = np.asarray(q)[..., model.coordinate_configuration]
    outside = (position < lower) | (position > upper)
    if np.any(outside):
        c = int(np.flatnonzero(np.any(outside.reshape(-1, lower.size), axis=0))[0])
        raise ValueError(f"q0: coordinate {model.coordinate_names[c]!r} is outside its limits "
                         f"[{lower[c]:g}, {upper[c]:g}]")


def simulate(model: Model, q0: np.ndarray, qd0: np.ndarray,
             tau_fn: Optional[EffortFunction], duration: float, dt: float = 1e-3,
             method: str = "rk4", *, dynamics: str = "cholesky", limits: bool = True
             ) -> Simulation:
    """Integrate the motion from (q0, qd0) (..., nq), (..., n) for ``duration`` seconds.

    ``tau_fn(t, q, qd)``: coordinate efforts, None for none (free motion under gravity,
    springs and balancers). ``method``: "euler" (semi-implicit) or "rk4". ``dynamics``: the
    forward-dynamics method, "cholesky" (any model) or "aba" (coupled joints must be siblings;
    faster on CHARMIE: benchmarks/bench_forward_dynamics.py). ``limits``: stop the coordinates
    at their position limits (module docstring). ``duration`` must be a whole number of steps.
    """
    if method not in INTEGRATORS:
        raise ValueError(f"method: got {method!r}, expected one of {', '.join(INTEGRATORS)}")
    if not dt > 0.0:
        raise ValueError(f"dt: got {dt!r}, expected a number > 0")
    steps = int(round(duration / dt))
    if steps < 1 or abs(steps * dt - duration) > 1e-9 * max(1.0, duration):
        raise ValueError(f"duration: got {duration!r}, expected a positive multiple of "
                         f"dt = {dt!r}")
    q, qd = np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)
    lead = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
    q, qd = np.broadcast_to(q, lead + q.shape[-1:]), np.broadcast_to(qd, lead + qd.shape[-1:])
    if limits:
        check_within_limits(model, q)
    t = dt * np.arange(steps + 1)
    q_out = np.empty((steps + 1,) + q.shape)
    qd_out = np.empty((steps + 1,) + qd.shape)
    q_out[0], qd_out[0] = q, qd
    for k in range(steps):
        q, qd = step(model, t[k], q, qd, tau_fn, dt, method, dynamics=dynamics, limits=limits)
        q_out[k + 1], qd_out[k + 1] = q, qd
    return Simulation(t, q_out, qd_out)
