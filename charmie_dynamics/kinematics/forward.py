"""Recursive forward kinematics (seed 000 section 4.2, eqs. 15-19; seed 001 section 3).

One outward loop over the bodies, parents first. For body i with parent p:

    R^{p}_{i} = R_c,i Rot(axis_i, q_i)               (eq. 16's R^{i-1}_i, eq. 18)
    r^{p}_{i} = B_i + d_i R_c,i axis_i               (seed 001 eq. 1: B'_{i-1} = D'_{i-1} + d_i v)
    R^0_i = R^0_p R^{p}_{i}                           (eq. 16)
    O_i   = O_p + R^0_p r^{p}_{i}                     (eqs. 15 and 19)

Every array has optional leading sample axes: q of shape (..., n_coordinates).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from ..linalg import rotate
from ..model.model import JointType, Model

REVOLUTE, PRISMATIC = int(JointType.REVOLUTE), int(JointType.PRISMATIC)
from ..model.rotations import axis_rotation


@dataclass(frozen=True)
class Placements:
    """Result of forward kinematics; body index on axis -3 / -2 (``model.body_names`` order)."""

    joint_values: np.ndarray      # (..., nb): q_i of each joint (0 for fixed), rad or m
    rotation_parent: np.ndarray   # (..., nb, 3, 3): R^{parent}_i
    origin_parent: np.ndarray     # (..., nb, 3): origin of i in the parent frame, m
    rotation_world: np.ndarray    # (..., nb, 3, 3): R^0_i
    origin_world: np.ndarray      # (..., nb, 3): O_i in the world frame, m

    def to_world(self, body: int, local: np.ndarray) -> np.ndarray:
        """World coordinates of a point given in body ``body``'s frame (eqs. 15 and 19)."""
        return self.origin_world[..., body, :] + rotate(self.rotation_world[..., body, :, :], local)


def joint_values(model: Model, q: np.ndarray) -> np.ndarray:
    """Per-body joint values ``multiplier * q[coordinate]`` (0 for fixed joints), (..., nb)."""
    q = np.asarray(q, dtype=float)
    moving = model.coordinate_index >= 0
    values = np.zeros(q.shape[:-1] + (model.n_bodies,))
    values[..., moving] = q[..., model.coordinate_index[moving]] * model.multiplier[moving]
    return values


def forward_kinematics(model: Model, q: np.ndarray) -> Placements:
    """Placement of every body for joint coordinates ``q`` (..., n_coordinates)."""
    values = joint_values(model, q)
    lead = values.shape[:-1]
    nb = model.n_bodies
    R_par = np.empty(lead + (nb, 3, 3))
    r_par = np.empty(lead + (nb, 3))
    R_w = np.empty(lead + (nb, 3, 3))
    O_w = np.empty(lead + (nb, 3))
    types = model.joint_type.tolist()         # plain ints: cheap comparisons in the loop
    for i in range(nb):
        Rc = model.rotation[i]
        jt = types[i]
        if jt == REVOLUTE:
            R_par[..., i, :, :] = Rc @ axis_rotation(model.axis[i], values[..., i])
        else:
            R_par[..., i, :, :] = Rc
        if jt == PRISMATIC:
            r_par[..., i, :] = model.origin[i] + values[..., i, None] * (Rc @ model.axis[i])
        else:
            r_par[..., i, :] = model.origin[i]
        p = model.parent[i]
        if p < 0:
            R_w[..., i, :, :] = R_par[..., i, :, :]
            O_w[..., i, :] = r_par[..., i, :]
        else:
            R_w[..., i, :, :] = R_w[..., p, :, :] @ R_par[..., i, :, :]
            O_w[..., i, :] = O_w[..., p, :] + rotate(R_w[..., p, :, :], r_par[..., i, :])
    return Placements(values, R_par, r_par, R_w, O_w)


def point_positions(model: Model, placements: Placements,
                    refs: Iterable[str] | None = None) -> dict[str, np.ndarray]:
    """World coordinates of named points ``BODY.POINT`` (all named points by default)."""
    if refs is None:
        refs = [f"{b.name}.{p}" for b in model.bodies for p in b.points]
    out = {}
    for ref in refs:
        point = model.point(ref)
        out[ref] = placements.to_world(point.body, point.local)
    return out
