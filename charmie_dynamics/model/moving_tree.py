"""The tree of the moving bodies: every body on a fixed joint merged into its parent, built
once per model (``model.compiled.moving_tree``) for the articulated-body algorithm's route
(dynamics/forward.py, simulation/actuated_step.py), as Pinocchio merges fixed joints into
their parents' frames.

A body f on a fixed joint (no coordinate) moves with its parent: its placement T_f =
(R_f, B_f) in the parent is constant. Walking the bodies parents first, f joins its
nearest kept ancestor a (the world where there is none) with the composed placement
T_{a f} = T_{a p} T_f, so a kept child i of f hangs from a with the constant part of its
placement composed the same way,

    R_c' = R_{a f} R_c,   B' = r_{a f} + R_{a f} B       (the joint then moves as before:
                                                          model/joint.py's R_c R_J, B + R_c t_J)

and f's mass joins a's (a body merged into the world carries nothing that moves). With
c_k the centre of mass of each merged body k in a's frame (r_{a k} + R_{a k} c_k), the
merged body has

    m = sum_k m_k,   c = sum_k m_k c_k / m,
    I_C = sum_k R_{a k} I_Ck R_{a k}^T + m_k (d_k.d_k 1 - d_k d_k^T),   d_k = c_k - c

(the parallel-axis theorem), so its spatial inertia is the sum of the merged bodies' (seed
002 eq. 6). The joint accelerations of the merged tree are those of the whole tree: the
bodies on fixed joints add no degree of freedom and their inertia moves with a.

Kept as they are, even on a fixed joint: the bodies an actuator, a spring or a balancer is
attached to and the parents of actuator-driven joints, so the mechanisms' kernels read the
same points in the same frames (their placements in the world are those of the whole
tree). Coordinates, configuration entries, actuators, springs and balancers keep their
indices; the bodies are renumbered in order (``bodies``: the model's index of each).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..layout import (A_BASE_BODY, A_DRIVES, A_END_BODY, COM, COORD, INERTIA, KIND, M_BODY_A,
                      M_BODY_B, MASS, ORIGIN, PARENT, ROTATION, SCALARS)
from .joint import FIXED_KIND
from .packed import PackedModel


@dataclass(frozen=True)
class Tree:
    """A tree for the kernels: its packed arrays, the spatial inertias of its bodies about
    their origins (nb, 6, 6), the bodies each coordinate moves (in its numbering) and the
    model's index of each of its bodies (nb,)."""

    packed: PackedModel
    spatial_inertias: np.ndarray
    coordinate_bodies: tuple[tuple[int, ...], ...]
    bodies: np.ndarray

    @property
    def n_bodies(self) -> int:
        return int(self.bodies.shape[0])


def attached_bodies(pm: PackedModel) -> set[int]:
    """The bodies the mechanisms name (module docstring): actuators' driven joints, their
    parents and both ends, the two bodies of every mechanism of the table (a spring's ends, a
    balancer's pivot and hanger bodies)."""
    parent = pm.body_int[:, PARENT]
    drives = pm.act_int[:, A_DRIVES]
    named = [drives, parent[drives], pm.act_int[:, A_BASE_BODY], pm.act_int[:, A_END_BODY],
             pm.mech_int[:, M_BODY_A], pm.mech_int[:, M_BODY_B]]
    return {int(i) for i in np.concatenate(named) if i >= 0}


def moving_tree(pm: PackedModel, coordinate_bodies: tuple[tuple[int, ...], ...],
                spatial_inertias) -> Tree:
    """The tree of ``pm`` with its bodies on fixed joints merged (module docstring);
    ``spatial_inertias``: the function of (mass, com, inertia) arrays that gives the bodies'
    spatial inertias (model/compiled.py)."""
    nb = pm.body_int.shape[0]
    keep = attached_bodies(pm)
    parent = pm.body_int[:, PARENT].tolist()
    anchor = [-1] * nb              # the kept body (or -1, the world) each body moves with
    R_to = np.empty((nb, 3, 3))     # each body's frame in its anchor's (world: the root's)
    r_to = np.empty((nb, 3))
    kept: list[int] = []
    # the merged bodies' masses and centres of mass and inertias in their anchors' frames
    parts: dict[int, list[tuple[float, np.ndarray, np.ndarray]]] = {}
    body_vec, body_mat = pm.body_vec.copy(), pm.body_mat.copy()
    for i in range(nb):
        p = parent[i]
        R_c, B = pm.body_mat[i, ROTATION], pm.body_vec[i, ORIGIN]
        if p >= 0 and anchor[p] != p:               # compose the merged parent's placement
            R_c, B = R_to[p] @ R_c, r_to[p] + R_to[p] @ B
        fixed = pm.body_int[i, KIND] == FIXED_KIND and pm.body_int[i, COORD] < 0
        if fixed and i not in keep:
            a = anchor[p] if p >= 0 else -1
            anchor[i], R_to[i], r_to[i] = a, R_c, B
            if a >= 0:
                parts[a].append((float(pm.body_vec[i, SCALARS, MASS]),
                                 B + R_c @ pm.body_vec[i, COM],
                                 R_c @ pm.body_mat[i, INERTIA] @ R_c.T))
            continue
        anchor[i], R_to[i], r_to[i] = i, np.eye(3), np.zeros(3)
        body_mat[i, ROTATION], body_vec[i, ORIGIN] = R_c, B
        parts[i] = [(float(pm.body_vec[i, SCALARS, MASS]), pm.body_vec[i, COM].copy(),
                     pm.body_mat[i, INERTIA].copy())]
        kept.append(i)
    for a, members in parts.items():
        mass = sum(m for m, _, _ in members)
        com = sum(m * c for m, c, _ in members) / mass if mass > 0.0 else members[0][1]
        inertia = sum(I + m * (np.dot(c - com, c - com) * np.eye(3) - np.outer(c - com, c - com))
                      for m, c, I in members)
        body_vec[a, SCALARS, MASS], body_vec[a, COM], body_mat[a, INERTIA] = mass, com, inertia
    bodies = np.array(kept, dtype=np.int64)
    number = {b: k for k, b in enumerate(kept)}
    body_int = pm.body_int[bodies].copy()
    body_int[:, PARENT] = [number[anchor[p]] if p >= 0 and anchor[p] >= 0 else -1
                           for p in body_int[:, PARENT].tolist()]
    act_int, mech_int = pm.act_int.copy(), pm.mech_int.copy()
    for array, columns in ((act_int, (A_DRIVES, A_BASE_BODY, A_END_BODY)),
                           (mech_int, (M_BODY_A, M_BODY_B))):
        for col in columns:
            array[:, col] = [number[b] for b in array[:, col].tolist()]
    packed = pm._replace(body_int=body_int, body_vec=np.ascontiguousarray(body_vec[bodies]),
                         body_mat=np.ascontiguousarray(body_mat[bodies]),
                         subspace=np.ascontiguousarray(pm.subspace[bodies]),
                         act_int=act_int, mech_int=mech_int)
    groups = tuple(tuple(number[b] for b in group) for group in coordinate_bodies)
    v = packed.body_vec
    return Tree(packed,
                spatial_inertias(v[:, SCALARS, MASS], v[:, COM], packed.body_mat[:, INERTIA]),
                groups, bodies)
