"""The robot in actuator space, and the accelerations its actuators can achieve
(seed 004 sections II and V).

Actuator space is ``model.input_names``: the joint coordinates, except that CHARMIE's d4 and
theta5 are replaced by the lengths of act4 and act5. With the diagonal Jacobian
J = dq/dx (1 for a directly driven coordinate, the indirect joint's exact dq/dL otherwise)
and J' = d2q/dx2, q' = J x', q'' = J x'' + J' x'^2, and virtual work (u = J tau per
coordinate) turns tau = H q'' + u'(q, q') into

    H_x x'' + b_x + f(x') = u,   H_x = J H J,   b_x = J (H J' x'^2 + u'),

with the friction of seed 004 eq. 43, f = viscous x' + coulomb sign(x') (no static friction
at x' = 0). Effort limits are the joints' ``limits.effort`` and the actuators' ``force_limit``
(infinite where the model gives none).

Achievable accelerations (seed 004 section V): the efforts the desired x'' need are computed;
an effort beyond its limit is clamped; the mixed problem (saturated: effort known,
acceleration unknown; the others: acceleration kept, effort unknown)

    H_SS x''_S = u_S - b_S - f_S - H_SK x''_K,   u_K = H_KK x''_K + H_KS x''_S + b_K + f_K

is solved, and repeated while it saturates further actuators (an actuator that saturates
only through this coupling reports the effort the mixed problem asked of it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..jit import kernel
from ..kinematics.indirect import check_length, input_jacobians_batch
from ..kinematics.state import samples
from ..model.compiled import ActuatorSpace
from ..model.model import Model
from .mass_matrix import bias_forces, mass_matrix


def actuator_space(model: Model) -> ActuatorSpace:
    """The model's actuator limits and friction (held by the model: model/compiled.py)."""
    return model.compiled.actuator_space


def input_jacobians(model: Model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Actuator positions x, J = dq/dx and J' = d2q/dx2 at joint coordinates q, (..., n)
    (kinematics/indirect.py's kernel). Raises ActuatorRangeError for an actuator length
    outside its stroke."""
    q = np.asarray(q, dtype=float)
    lead, n = q.shape[:-1], q.shape[-1]
    x, J, Jp = (np.empty(q.shape) for _ in range(3))
    pm = model.compiled.packed
    bad = input_jacobians_batch(pm.body_int, pm.body_vec, pm.act_int, pm.act_vec,
                                samples(q, lead, n), *(a.reshape(-1, n) for a in (x, J, Jp)))
    if bad >= 0:
        joint = model.compiled.indirect_joints[bad]
        check_length(joint, x[..., joint.coordinate])
    return x, J, Jp


@kernel
def friction_force(viscous, coulomb, xd, smoothing):
    """Seed 004 eq. 43 for one input (kernel): viscous x' + coulomb sign(x'), sign(x')
    replaced by clip(x' / smoothing, -1, 1) where ``smoothing`` > 0 (see :func:`friction`)."""
    if smoothing > 0.0:
        sign = xd / smoothing
        if sign > 1.0:
            sign = 1.0
        elif sign < -1.0:
            sign = -1.0
    elif xd > 0.0:
        sign = 1.0
    elif xd < 0.0:
        sign = -1.0
    else:
        sign = xd                                   # 0, or nan as numpy's sign
    return viscous * xd + coulomb * sign


@kernel
def _friction_batch(viscous, coulomb, xd, smoothing, out) -> None:
    for s in range(xd.shape[0]):
        for i in range(xd.shape[1]):
            out[s, i] = friction_force(viscous[i], coulomb[i], xd[s, i], smoothing[s, i])


def friction(space: ActuatorSpace, xd: np.ndarray,
             smoothing: Optional[np.ndarray] = None) -> np.ndarray:
    """Seed 004 eq. 43: viscous x' + coulomb sign(x'), (..., n_inputs).

    ``smoothing`` (velocities, one per input): sign(x') becomes clip(x' / smoothing, -1, 1)
    (where the smoothing is > 0), for explicit time integration, where a discontinuous
    Coulomb term near x' = 0 makes light bodies chatter (no static friction is modelled).
    """
    xd = np.asarray(xd, dtype=float)
    lead, n = xd.shape[:-1], xd.shape[-1]
    out = np.empty(xd.shape)
    _friction_batch(space.viscous, space.coulomb, samples(xd, lead, n),
                    samples(0.0 if smoothing is None else smoothing, lead, n),
                    out.reshape(-1, n))
    return out


@kernel
def joint_efforts_from_inputs_sample(viscous, coulomb, J, qd, effort, smoothing, tau) -> None:
    """tau = (u - f(x')) / J with x' = qd / J, one sample (kernel): the joint efforts of
    actuator efforts ``effort`` (module docstring's virtual work, friction removed)."""
    for i in range(tau.shape[0]):
        tau[i] = (effort[i] - friction_force(viscous[i], coulomb[i], qd[i] / J[i],
                                             smoothing[i])) / J[i]


@kernel
def _joint_efforts_batch(viscous, coulomb, J, qd, effort, smoothing, tau) -> None:
    for s in range(tau.shape[0]):
        joint_efforts_from_inputs_sample(viscous, coulomb, J[s], qd[s], effort[s], smoothing[s],
                                         tau[s])


def input_space_dynamics(model: Model, q: np.ndarray, qd: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """H_x, b_x and x' at one joint-space state (see the module docstring)."""
    _, J, Jp = input_jacobians(model, q)
    H = mass_matrix(model, q)
    xd = qd / J
    b = J * (H @ (Jp * xd * xd) + bias_forces(model, q, qd))
    return J[:, None] * H * J[None, :], b, xd


@dataclass(frozen=True)
class Achievable:
    """Result of :func:`achievable_accelerations`, in ``model.input_names`` order."""

    xdd: np.ndarray          # achievable accelerations
    qdd: np.ndarray          # the same in joint coordinates
    effort: np.ndarray       # efforts applied (the limit where saturated)
    required: np.ndarray     # efforts the desired accelerations need
    saturated: np.ndarray    # bool
    excess: np.ndarray       # by how much the demand exceeded the limit where saturated, else 0

    def saturated_names(self, model: Model) -> list[str]:
        return [n for n, s in zip(model.input_names, self.saturated) if s]


def achievable_accelerations(model: Model, q: np.ndarray, qd: np.ndarray,
                             xdd_desired: np.ndarray) -> Achievable:
    """Accelerations the actuators can give for desired input accelerations (one state)."""
    space = actuator_space(model)
    Hx, b, xd = input_space_dynamics(model, q, qd)
    f = friction(space, xd)
    xdd_desired = np.asarray(xdd_desired, dtype=float)
    required = Hx @ xdd_desired + b + f
    limit = space.effort_limit
    saturated = np.abs(required) > limit
    effort = required.copy()
    xdd = xdd_desired.copy()
    sign = np.sign(required)
    demand = required.copy()   # the effort an actuator was asked for when it saturated
    while True:
        S, K = saturated, ~saturated
        effort[S] = sign[S] * limit[S]
        xdd = xdd_desired.copy()
        if S.any():
            rhs = effort[S] - b[S] - f[S] - Hx[np.ix_(S, K)] @ xdd_desired[K]
            xdd[S] = np.linalg.solve(Hx[np.ix_(S, S)], rhs)
        effort[K] = Hx[K] @ xdd + b[K] + f[K]
        newly = K & (np.abs(effort) > limit)
        if not newly.any():
            break
        sign[newly] = np.sign(effort[newly])
        demand[newly] = effort[newly]
        saturated = saturated | newly
    _, J, Jp = input_jacobians(model, q)
    excess = np.where(saturated, np.abs(demand) - limit, 0.0)
    return Achievable(xdd, J * xdd + Jp * xd * xd, effort, required, saturated, excess)


def joint_efforts_from_inputs(model: Model, q: np.ndarray, qd: np.ndarray, effort: np.ndarray,
                              smoothing: Optional[np.ndarray] = None) -> np.ndarray:
    """Joint-space efforts tau from actuator efforts u, friction removed: tau = (u - f) / J,
    (..., n); ``smoothing`` as in :func:`friction`."""
    _, J, _ = input_jacobians(model, q)
    space = actuator_space(model)
    lead = np.broadcast_shapes(J.shape[:-1], np.shape(qd)[:-1], np.shape(effort)[:-1])
    n = J.shape[-1]
    tau = np.empty(lead + (n,))
    _joint_efforts_batch(space.viscous, space.coulomb,
                         *(samples(a, lead, n) for a in (J, qd, effort, 0.0 if smoothing is None
                                                         else smoothing)),
                         tau.reshape(-1, n))
    return tau
