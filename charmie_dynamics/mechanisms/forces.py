"""Forces of the passive auxiliary bodies, as external wrenches on the tree's bodies:
springs (seed 000 eq. 35), the static balancing mechanism (eqs. 39-41), torsion springs and
cables (a spring that only pulls: model/kinds/cable.py),
one kernel over the mechanism table (model/packed.py) dispatching on each row's kind.

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

Torsion spring (a start body A, an end body B, a unit axis u fixed in A that B carries as the
same axis: across a revolute joint or a chain of revolute joints with parallel axes): its
angle is that of B's reference direction r_B from A's r_A about u, both in A's frame,

    theta = atan2(u . (r_A x r_B), r_A . r_B)      in (-pi, pi],

positive when B turns about +u from A, and its torque the law of eq. 35 in the angle,
``tau = k (theta - theta0) + tau0`` (N m/rad, rad, N m), signed as the tension: positive
turns B back towards smaller theta, the couple -tau u on B and +tau u on A (equal and
opposite, internal to the pair). Its energy is ``spring_energy`` of the angle,
1/2 k (theta - theta0)^2 + tau0 (theta - theta0), whose derivative is tau: the couples' power
-tau u.(w_B - w_A) = -tau dtheta/dt. The angle wraps at +-pi: the references are chosen so
that the motion stays short of half a turn from them. A component of r_B along u does not
count (atan2 of its projection on the plane of r_A).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..jit import kernel
from ..kinematics.forward import Placements, to_world
from ..layout import (BALANCER, CABLE, IN_WORLD, M_BODY_A, M_BODY_B, M_ITEM, M_KIND, M_LAW, S_END,
                      S_START, SPRING, T_AXIS, T_END_REFERENCE, T_START_REFERENCE, TORSION_SPRING,
                      F, N)
from ..linalg import accumulate, add, cross3, dot, mat, mat_t_vec, mat_vec, norm, scale, sub, vec
from ..model.kinds import MECHANISM_KINDS, items
from ..model.kinds.kind import linear_law_energy
from ..model.model import Model, SpringParams
from .auxiliary import balancer_local_points, balancer_range_error


@dataclass(frozen=True)
class PassiveForces:
    """Spring tensions and the external wrenches they put on the tree's bodies."""

    spring_names: tuple[str, ...]
    spring_tension: np.ndarray      # (..., n_springs) N, in spring_names' order (torsion
                                    # springs' torques in N m)
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


#: the potential energy (J) whose derivative w.r.t. the length is :func:`spring_tension`
spring_energy = linear_law_energy


@kernel
def add_point_force(external, rotations, origins, body, point_world, force_world) -> None:
    """Accumulate a world-frame force applied at a world point on ``body`` (one sample)."""
    R = mat(rotations, body, IN_WORLD)
    f = mat_t_vec(R, force_world)
    r = mat_t_vec(R, sub(point_world, vec(origins, body, IN_WORLD)))
    accumulate(external, body, F, f)
    accumulate(external, body, N, cross3(r, f))


@kernel
def _spring_ends(mech_int, mech_vec, j, rotations, origins):
    """The world points of the spring of mech row ``j``: (start, end)."""
    return (to_world(rotations, origins, mech_int[j, M_BODY_A], vec(mech_vec, j, S_START)),
            to_world(rotations, origins, mech_int[j, M_BODY_B], vec(mech_vec, j, S_END)))


@kernel
def _spring_forces(mech_int, mech_vec, j, rotations, origins, external, pulls_only) -> float:
    """The forces of the spring (a cable where ``pulls_only``: its tension clamped at zero,
    model/kinds/cable.py) of mech row ``j`` added to ``external``; its tension."""
    a, b = _spring_ends(mech_int, mech_vec, j, rotations, origins)
    d = sub(b, a)
    length = norm(d)
    T = spring_tension(vec(mech_vec, j, M_LAW), length)                       # eq. 35
    if pulls_only and T < 0.0:
        T = 0.0
    pull = scale(T / length, d)                                               # on the start body
    add_point_force(external, rotations, origins, mech_int[j, M_BODY_A], a, pull)
    add_point_force(external, rotations, origins, mech_int[j, M_BODY_B], b, scale(-1.0, pull))
    return T


@kernel
def _balancer_forces(mech_int, mech_vec, j, rotations, origins, external):
    """The forces of the balancer half of mech row ``j`` added to ``external``:
    (reachable, its spring's tension, the hanger force on the sliding body)."""
    reachable, P, E, top, S, A = balancer_local_points(mech_int, mech_vec, j, rotations,
                                                       origins)
    pb = mech_int[j, M_BODY_A]
    R = mat(rotations, pb, IN_WORLD)
    d = sub(A, S)
    length = norm(d)
    T = spring_tension(vec(mech_vec, j, M_LAW), length)
    f_s = scale(T / length, d)                                                # spring on the lever
    SP, EP = sub(S, P), sub(E, P)
    h = (SP[2] * f_s[0] - SP[0] * f_s[2]) / EP[0]                              # eqs. 40-41
    z = (R[0][2], R[1][2], R[2][2])
    f_s_world = mat_vec(R, f_s)
    # the sliding body gets -h along z at the hanger top; the pivot body the rest
    add_point_force(external, rotations, origins, mech_int[j, M_BODY_B],
                    to_world(rotations, origins, pb, top), scale(-h, z))
    add_point_force(external, rotations, origins, pb, to_world(rotations, origins, pb, P),
                    add(f_s_world, scale(h, z)))
    add_point_force(external, rotations, origins, pb, to_world(rotations, origins, pb, A),
                    scale(-1.0, f_s_world))
    return reachable, T, -h


@kernel
def _torsion_angle(mech_int, mech_vec, j, rotations) -> float:
    """The angle (rad) of the torsion spring of mech row ``j`` (module docstring)."""
    R_a, R_b = mat(rotations, mech_int[j, M_BODY_A], 1), mat(rotations, mech_int[j, M_BODY_B], 1)
    u, r_a = vec(mech_vec, j, T_AXIS), vec(mech_vec, j, T_START_REFERENCE)
    r_b = mat_t_vec(R_a, mat_vec(R_b, vec(mech_vec, j, T_END_REFERENCE)))
    return math.atan2(dot(u, cross3(r_a, r_b)), dot(r_a, r_b))


@kernel
def _torsion_forces(mech_int, mech_vec, j, rotations, external) -> float:
    """The couples of the torsion spring of mech row ``j`` added to ``external``; its torque."""
    T = spring_tension(vec(mech_vec, j, M_LAW), _torsion_angle(mech_int, mech_vec, j, rotations))
    a, b = mech_int[j, M_BODY_A], mech_int[j, M_BODY_B]
    u = vec(mech_vec, j, T_AXIS)
    accumulate(external, a, N, scale(T, u))
    u_b = mat_t_vec(mat(rotations, b, IN_WORLD), mat_vec(mat(rotations, a, IN_WORLD), u))
    accumulate(external, b, N, scale(-T, u_b))
    return T


@kernel
def passive_forces_sample(mech_int, mech_vec, rotations, origins, tension, hanger_force,
                          external) -> int:
    """The forces of every mechanism of the table (model/packed.py) of one sample (kernel),
    added to ``external``, dispatched on each row's kind; ``tension`` has a slot per row,
    ``hanger_force`` per balancer. Returns the index of a balancer whose lever cannot reach
    its hanger, or -1."""
    failed = -1
    for j in range(mech_int.shape[0]):
        kind = mech_int[j, M_KIND]
        if kind == SPRING or kind == CABLE:
            tension[j] = _spring_forces(mech_int, mech_vec, j, rotations, origins, external,
                                        kind == CABLE)
        elif kind == BALANCER:
            reachable, T, h = _balancer_forces(mech_int, mech_vec, j, rotations, origins,
                                               external)
            item = mech_int[j, M_ITEM]
            tension[j] = T
            if not reachable:
                failed = item
            hanger_force[item] = h
        elif kind == TORSION_SPRING:
            tension[j] = _torsion_forces(mech_int, mech_vec, j, rotations, external)
    return failed


@kernel
def _passive_forces_batch(mech_int, mech_vec, rotations, origins, tension, hanger_force,
                          external) -> int:
    failed = -1
    for s in range(rotations.shape[0]):
        external[s] = 0.0
        k = passive_forces_sample(mech_int, mech_vec, rotations[s], origins[s], tension[s],
                                  hanger_force[s], external[s])
        if k >= 0:
            failed = k
    return failed


@kernel
def _law_arguments_batch(mech_int, mech_vec, rotations, origins, out) -> int:
    """The argument of every row's law, sample by sample (kernel): a spring's length, a
    balancer spring's length (from its world points, as its auxiliary segment measures
    it), a torsion spring's angle. Returns a balancer whose lever cannot reach, or -1."""
    failed = -1
    for s in range(rotations.shape[0]):
        R, O = rotations[s], origins[s]
        for j in range(mech_int.shape[0]):
            kind = mech_int[j, M_KIND]
            if kind == SPRING or kind == CABLE:
                a, b = _spring_ends(mech_int, mech_vec, j, R, O)
                out[s, j] = norm(sub(b, a))
            elif kind == BALANCER:
                reachable, _, _, _, S, A = balancer_local_points(mech_int, mech_vec, j, R, O)
                if not reachable:
                    failed = mech_int[j, M_ITEM]
                pb = mech_int[j, M_BODY_A]
                out[s, j] = norm(sub(to_world(R, O, pb, A), to_world(R, O, pb, S)))
            elif kind == TORSION_SPRING:
                out[s, j] = _torsion_angle(mech_int, mech_vec, j, R)
    return failed


def spring_names(model: Model) -> tuple[str, ...]:
    """Names of the tensions of :class:`PassiveForces`: every mechanism's, by kind in the
    registry's order (model/kinds/: springs, balancer springs, torsion springs, cables), the
    rows of the mechanism table (model/packed.py)."""
    return tuple(kind.law_name(item) for kind in MECHANISM_KINDS for item in items(model, kind))


def spring_laws(model: Model) -> tuple[SpringParams, ...]:
    """The law of each tension of :class:`PassiveForces`, in :func:`spring_names` order."""
    return tuple(kind.law(item) for kind in MECHANISM_KINDS for item in items(model, kind))


def mechanism_energy(model: Model, arguments: np.ndarray) -> np.ndarray:
    """(...): the mechanisms' potential energy at their laws' arguments (``law_arguments``),
    each by its kind's energy."""
    total = np.zeros(arguments.shape[:-1])
    rows = [(kind, item) for kind in MECHANISM_KINDS for item in items(model, kind)]
    for j, (kind, item) in enumerate(rows):
        total = total + kind.energy(kind.law(item), arguments[..., j])
    return total


def law_arguments(model: Model, placements: Placements) -> np.ndarray:
    """(..., n_springs): the argument of each law of :func:`spring_laws` at the placements
    (a length, m, or a torsion spring's angle, rad), whose :func:`spring_energy` is the
    springs' potential energy."""
    pm = model.compiled.packed
    rotations, origins = placements.per_sample(model)
    out = np.empty((rotations.shape[0], pm.mech_int.shape[0]))
    failed = _law_arguments_batch(pm.mech_int, pm.mech_vec, rotations, origins, out)
    if failed >= 0:
        raise balancer_range_error(model.balancers[failed])
    return out.reshape(placements.lead + out.shape[-1:])


def passive_forces(model: Model, placements: Placements) -> PassiveForces:
    lead, nb = placements.lead, model.n_bodies
    pm = model.compiled.packed
    rotations, origins = placements.per_sample(model)
    n = rotations.shape[0]
    tension = np.empty((n, pm.mech_int.shape[0]))
    hanger = np.empty((n, len(model.balancers)))
    external = np.empty((n, nb, 2, 3))
    failed = _passive_forces_batch(pm.mech_int, pm.mech_vec, rotations, origins, tension, hanger,
                                   external)
    if failed >= 0:
        raise balancer_range_error(model.balancers[failed])
    return PassiveForces(spring_names(model), tension.reshape(lead + tension.shape[-1:]),
                         external.reshape(lead + (nb, 2, 3)),
                         hanger.reshape(lead + hanger.shape[-1:]))
