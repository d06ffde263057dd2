"""Forces of the passive auxiliary bodies, as external wrenches on the tree's bodies:
springs (seed 000 eq. 35) and the static balancing mechanism (eqs. 39-41).

Sign convention: a spring's force is its tension, ``T = k (L - L0) + F0`` (positive pulls the
two ends together). Seed 000 eq. 35 is written ``k (L0 - L) + F0``; with the pretension F0
of an extension spring adding to the extension force, the tension form is the consistent one.
The law is linear for all L (an extension spring shorter than L0 is outside its use).

Balancer (one half; massless lever, hanger and spring; planar in the pivot body's xz-plane):
the spring pulls the lever at S towards the anchor A; the vertical hanger carries a force h
(pivot-body z) between the lever end E and the sliding body. Moment balance of the lever
about the pivot P (y axis) gives eq. 40's third row,

    (S - P)_z f_s,x - (S - P)_x f_s,z  =  (E - P)_x h          (a5 = r_x h, eqs. 40-41),

and the first two rows give the pivot reaction. The sliding body receives -h (pivot-body z)
at the hanger's top; the pivot body receives the lever's pivot load and the spring's anchor
load. All of these are internal to the pair of bodies, so they change how loads flow inside
the loop, not the robot's reaction on the ground.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..jit import kernel
from ..kinematics.forward import Placements, to_world
from ..linalg import accumulate, add, cross3, mat, mat_t_vec, mat_vec, norm, scale, sub, vec
from ..model.model import Model, SpringParams
from ..model.packed import (B_HANGER_BODY, B_LAW, B_PIVOT_BODY, S_END, S_END_BODY, S_LAW, S_START,
                            S_START_BODY)
from ..slots import F, N
from .auxiliary import balancer_local_points, balancer_range_error


@dataclass(frozen=True)
class PassiveForces:
    """Spring tensions and the external wrenches they put on the tree's bodies."""

    spring_names: tuple[str, ...]
    spring_tension: np.ndarray      # (..., n_springs) N, springs then balancer springs
    external: np.ndarray            # (..., nb, 2, 3): wrench [n; f] on each body, body
                                    # frame, about the body origin (slots N, F)
    hanger_force: np.ndarray        # (..., n_balancers) N: force on the sliding body along
                                    # the pivot body's +z (the balancing force)

    @property
    def external_force(self) -> np.ndarray:
        return self.external[..., F, :]

    @property
    def external_torque(self) -> np.ndarray:
        return self.external[..., N, :]


@kernel
def spring_tension(law, length):
    """Tension (N) of a spring with ``law`` = (stiffness, free length, preload) at ``length``."""
    return law[0] * (length - law[1]) + law[2]


def spring_energy(params: SpringParams, length: np.ndarray) -> np.ndarray:
    """Potential energy (J) whose derivative w.r.t. the length is :func:`spring_tension`."""
    s = length - params.free_length
    return 0.5 * params.stiffness * s * s + params.preload * s


@kernel
def add_point_force(external, rotations, origins, body, point_world, force_world) -> None:
    """Accumulate a world-frame force applied at a world point on ``body`` (one sample)."""
    R = mat(rotations, body, 1)
    f = mat_t_vec(R, force_world)
    r = mat_t_vec(R, sub(point_world, vec(origins, body, 1)))
    accumulate(external, body, F, f)
    accumulate(external, body, N, cross3(r, f))


@kernel
def passive_forces_sample(spring_int, spring_vec, bal_int, bal_vec, rotations, origins,
                          tension, hanger_force, external) -> int:
    """Spring and balancer forces of one sample (kernel), added to ``external``; returns
    the index of a balancer whose lever cannot reach its hanger, or -1."""
    failed = -1
    ns = spring_int.shape[0]
    for k in range(ns):
        a = to_world(rotations, origins, spring_int[k, S_START_BODY], vec(spring_vec, k, S_START))
        b = to_world(rotations, origins, spring_int[k, S_END_BODY], vec(spring_vec, k, S_END))
        d = sub(b, a)
        length = norm(d)
        T = spring_tension(vec(spring_vec, k, S_LAW), length)                 # eq. 35
        pull = scale(T / length, d)                                           # on the start body
        add_point_force(external, rotations, origins, spring_int[k, S_START_BODY], a, pull)
        add_point_force(external, rotations, origins, spring_int[k, S_END_BODY], b,
                        scale(-1.0, pull))
        tension[k] = T
    for k in range(bal_int.shape[0]):
        reachable, P, E, top, S, A = balancer_local_points(bal_int, bal_vec, k, rotations,
                                                           origins)
        if not reachable:
            failed = k
        pb = bal_int[k, B_PIVOT_BODY]
        R = mat(rotations, pb, 1)
        d = sub(A, S)
        length = norm(d)
        T = spring_tension(vec(bal_vec, k, B_LAW), length)
        f_s = scale(T / length, d)                                            # spring on the lever
        SP, EP = sub(S, P), sub(E, P)
        h = (SP[2] * f_s[0] - SP[0] * f_s[2]) / EP[0]                          # eqs. 40-41
        z = (R[0][2], R[1][2], R[2][2])
        f_s_world = mat_vec(R, f_s)
        # the sliding body gets -h along z at the hanger top; the pivot body the rest
        add_point_force(external, rotations, origins, bal_int[k, B_HANGER_BODY],
                        to_world(rotations, origins, pb, top), scale(-h, z))
        add_point_force(external, rotations, origins, pb, to_world(rotations, origins, pb, P),
                        add(f_s_world, scale(h, z)))
        add_point_force(external, rotations, origins, pb, to_world(rotations, origins, pb, A),
                        scale(-1.0, f_s_world))
        tension[ns + k] = T
        hanger_force[k] = -h
    return failed


@kernel
def _passive_forces_batch(spring_int, spring_vec, bal_int, bal_vec, rotations, origins,
                          tension, hanger_force, external) -> int:
    failed = -1
    for s in range(rotations.shape[0]):
        external[s] = 0.0
        k = passive_forces_sample(spring_int, spring_vec, bal_int, bal_vec, rotations[s],
                                  origins[s], tension[s], hanger_force[s], external[s])
        if k >= 0:
            failed = k
    return failed


def spring_names(model: Model) -> tuple[str, ...]:
    """Names of the tensions of :class:`PassiveForces`: springs, then balancer springs."""
    return tuple(s.name for s in model.springs) + tuple(f"{b.name}_spring"
                                                        for b in model.balancers)


def passive_forces(model: Model, placements: Placements) -> PassiveForces:
    lead, nb = placements.lead, model.n_bodies
    pm = model.compiled.packed
    rotations, origins = placements.per_sample(model)
    n = rotations.shape[0]
    tension = np.empty((n, len(model.springs) + len(model.balancers)))
    hanger = np.empty((n, len(model.balancers)))
    external = np.empty((n, nb, 2, 3))
    failed = _passive_forces_batch(pm.spring_int, pm.spring_vec, pm.bal_int, pm.bal_vec,
                                   rotations, origins, tension, hanger, external)
    if failed >= 0:
        raise balancer_range_error(model.balancers[failed])
    return PassiveForces(spring_names(model), tension.reshape(lead + tension.shape[-1:]),
                         external.reshape(lead + (nb, 2, 3)), hanger.reshape(lead + hanger.shape[-1:]))
