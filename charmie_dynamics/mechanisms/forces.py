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

from ..kinematics.forward import Placements
from ..linalg import cross, rotate, rotate_back
from ..model.model import Model, SpringParams
from .auxiliary import balancer_points


@dataclass(frozen=True)
class PassiveForces:
    """Spring tensions and the external wrenches they put on the tree's bodies."""

    spring_names: tuple[str, ...]
    spring_tension: np.ndarray      # (..., n_springs) N, springs then balancer springs
    external_force: np.ndarray      # (..., nb, 3) body frame
    external_torque: np.ndarray     # (..., nb, 3) body frame, about the body origin
    hanger_force: np.ndarray        # (..., n_balancers) N: force on the sliding body along
                                    # the pivot body's +z (the balancing force)


def tension(params: SpringParams, length: np.ndarray) -> np.ndarray:
    """Spring tension (N) at ``length`` (m)."""
    return params.stiffness * (length - params.free_length) + params.preload


def spring_energy(params: SpringParams, length: np.ndarray) -> np.ndarray:
    """Potential energy (J) whose derivative w.r.t. the length is :func:`tension`."""
    s = length - params.free_length
    return 0.5 * params.stiffness * s * s + params.preload * s


def add_point_force(force: np.ndarray, torque: np.ndarray, placements: Placements, body: int,
                    point_world: np.ndarray, force_world: np.ndarray) -> None:
    """Accumulate a world-frame force applied at a world point on ``body`` (in place)."""
    R = placements.rotation_world[..., body, :, :]
    f = rotate_back(R, force_world)
    r = rotate_back(R, point_world - placements.origin_world[..., body, :])
    force[..., body, :] += f
    torque[..., body, :] += cross(r, f)


def passive_forces(model: Model, placements: Placements) -> PassiveForces:
    lead = placements.origin_world.shape[:-2]
    ext_f = np.zeros(lead + (model.n_bodies, 3))
    ext_n = np.zeros_like(ext_f)
    names, tensions = [], []
    for spring in model.springs:
        a = placements.to_world(spring.start.body, spring.start.local)
        b = placements.to_world(spring.end.body, spring.end.local)
        length = np.linalg.norm(b - a, axis=-1)
        T = tension(spring.params, length)
        pull = T[..., None] * (b - a) / length[..., None]          # on the start body
        add_point_force(ext_f, ext_n, placements, spring.start.body, a, pull)
        add_point_force(ext_f, ext_n, placements, spring.end.body, b, -pull)
        names.append(spring.name)
        tensions.append(T)
    hanger = []
    for bal in model.balancers:
        world = balancer_points(model, placements, bal)
        pb = bal.pivot.body
        R = placements.rotation_world[..., pb, :, :]
        O = placements.origin_world[..., pb, :]
        P, E, S, A = (rotate_back(R, world[k] - O) for k in
                      ("pivot", "lever_end", "spring_attach", "spring_anchor"))
        length = np.linalg.norm(A - S, axis=-1)
        T = tension(bal.spring, length)
        f_s = T[..., None] * (A - S) / length[..., None]             # spring on the lever
        h = ((S - P)[..., 2] * f_s[..., 0] - (S - P)[..., 0] * f_s[..., 2]) / (E - P)[..., 0]
        z = R[..., :, 2]
        # the sliding body gets -h along z at the hanger top; the pivot body the rest
        add_point_force(ext_f, ext_n, placements, bal.hanger.body, world["hanger_top"],
                        -h[..., None] * z)
        add_point_force(ext_f, ext_n, placements, pb, world["pivot"],
                        rotate(R, f_s) + h[..., None] * z)
        add_point_force(ext_f, ext_n, placements, pb, world["spring_anchor"], -rotate(R, f_s))
        names.append(f"{bal.name}_spring")
        tensions.append(T)
        hanger.append(-h)
    stack = (lambda xs: np.stack(xs, axis=-1) if xs else np.zeros(lead + (0,)))
    return PassiveForces(tuple(names), stack(tensions), ext_f, ext_n, stack(hanger))
