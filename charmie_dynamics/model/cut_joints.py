"""Closed loops of a model: cut joints between frames of two bodies of the tree,
the fundamental loops they close, and the loops' constraint rows (seed 003 appendix A).

A cut joint joins a frame on body A (``predecessor``: a point and a constant rotation of the
cut frame in A's frame) and a frame on body B (``successor``); both cut frames coincide when
the loop is assembled (a prismatic cut slides along its axis, a planar one in its plane).
Its geometric constraints are of two elementary kinds (seed 003 eqs. 54-55 and 74), every
vector in the world frame:

* position row:    e . (p_B - p_A) = 0,  e a unit vector fixed in A's cut frame     (eq. 55)
* orientation row: u . w = 0,            u fixed in A's cut frame, w in B's          (eq. 74)

and each joint type is a set of such rows (seed 003 appendix A.2), with a the joint axis and
(x, y, z) the cut frame's axes, ``perp(a)`` two unit vectors completing a to a right-handed
frame:

=========  ==========================================  ==========================
type       position rows e                             orientation rows (u, w)
=========  ==========================================  ==========================
R          x, y, z                                     (a, p1), (a, p2), p = perp(a)
P          perp(a)                                     (x, y), (y, z), (z, x)
S          x, y, z                                     none
U          x, y, z                                     (a, b): axis a on A, b on B
F (rigid)  x, y, z                                     (x, y), (y, z), (z, x)
planar     a                                           (a, p1), (a, p2)
=========  ==========================================  ==========================

The orientation rows hold the cut frames' relative orientation near alignment (the rigid
closure's three rows also admit the frames turned by half a turn about an axis: a local
description, as the Newton-Raphson solution that uses it).

Fundamental loops: each cut closes one loop, the tree path from A to B through their
deepest common ancestor; loops that share a coordinate are solved together as one *group*.
Gruebler-Kutzbach count of a group: mobility = (its coordinates) - (its constraint rows),
the number it would have were every row independent; the rank of the constraint Jacobian at
the assembled configuration (mechanisms/closed_chains) gives the true mobility, and the
difference names the redundant (over-constrained) rows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Joint types of a cut joint and their freedoms (6 minus the number of rows).
CUT_TYPES = {"R": 1, "P": 1, "S": 3, "U": 2, "F": 0, "planar": 3}


def perpendiculars(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors p1, p2 with (p1, p2, a) right-handed and orthonormal, for unit a."""
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    p1 = np.cross(helper, a)
    p1 /= np.linalg.norm(p1)
    return p1, np.cross(a, p1)


def t_needs_axis(cut_type: str) -> bool:
    """Whether a cut joint type has an axis (R, P, U, planar)."""
    return cut_type in ("R", "P", "U", "planar")


@dataclass(frozen=True)
class CutJoint:
    """A cut joint (module docstring); vectors in the cut frames, SI."""

    name: str
    type: str                      # a key of CUT_TYPES
    body_a: int                    # body A (predecessor), an index into the model's bodies
    origin_a: np.ndarray           # the cut frame's origin in A's body frame, (3,)
    body_b: int                    # body B (successor)
    origin_b: np.ndarray           # ... in B's body frame
    rotation_a: np.ndarray         # cut frame -> A's body frame, (3, 3)
    rotation_b: np.ndarray         # cut frame -> B's body frame, (3, 3)
    axis: np.ndarray               # unit joint axis a (R, P, U on A, planar normal), (3,)
    axis_b: np.ndarray             # U: unit axis b on B, perpendicular to a; else unused

    def rows(self) -> tuple[list[tuple[str, np.ndarray]], list[tuple[str, np.ndarray, np.ndarray]]]:
        """The constraint rows (module docstring's table) in the bodies' frames: position
        rows (name, e in A's body frame) and orientation rows (name, u in A's frame, w in
        B's frame)."""
        ex, ey, ez = np.eye(3)
        a = self.axis
        p1, p2 = perpendiculars(a) if t_needs_axis(self.type) else (ex, ey)
        frame = {"x": ex, "y": ey, "z": ez}
        t = self.type
        if t == "P":
            position = [("perp1", p1), ("perp2", p2)]
        elif t == "planar":
            position = [("normal", a)]
        else:
            position = list(frame.items())
        if t in ("R", "planar"):
            orientation = [("axis.perp1", a, p1), ("axis.perp2", a, p2)]
        elif t in ("P", "F"):
            orientation = [("x.y", ex, ey), ("y.z", ey, ez), ("z.x", ez, ex)]
        elif t == "U":
            orientation = [("axis.axis_b", a, self.axis_b)]
        else:
            orientation = []
        Ra, Rb = self.rotation_a, self.rotation_b
        return ([(f"{self.name}.position.{n}", Ra @ e) for n, e in position],
                [(f"{self.name}.orientation.{n}", Ra @ u, Rb @ w) for n, u, w in orientation])


@dataclass(frozen=True)
class LoopGroup:
    """Cut joints whose loops share coordinates, solved together (module docstring)."""

    cuts: tuple[int, ...]              # indices into Loops.cuts
    coordinates: tuple[int, ...]       # every coordinate of the group's loops
    independent: tuple[int, ...]       # the declared independent (actuated) ones
    dependent: tuple[int, ...]         # the rest: solved from the constraints
    n_rows: int                        # constraint rows of the group's cuts
    gruebler: int                      # len(coordinates) - n_rows

    def label(self, loops: Loops) -> str:
        return "loop " + "+".join(loops.cuts[k].name for k in self.cuts)


@dataclass(frozen=True)
class Loops:
    """A model's closed loops: cut joints, declared independent coordinates, the assembly
    guess of every coordinate (SI; 0 where the file gives none) and the loop groups."""

    cuts: tuple[CutJoint, ...]
    independent: tuple[str, ...]
    guess: np.ndarray                  # (n_coordinates,)
    groups: tuple[LoopGroup, ...]


def path_to_root(parent: np.ndarray, body: int) -> list[int]:
    """``body`` and its ancestors, child first."""
    out = []
    while body >= 0:
        out.append(body)
        body = int(parent[body])
    return out


def loop_bodies(parent: np.ndarray, a: int, b: int) -> list[int]:
    """The bodies of the fundamental loop closed by a cut between bodies a and b: both tree
    paths up to (excluding) their deepest common ancestor."""
    pa, pb = path_to_root(parent, a), path_to_root(parent, b)
    common = set(pa) & set(pb)
    return [i for i in pa if i not in common] + [i for i in pb if i not in common]


def loop_groups(coordinate_index: np.ndarray, parent: np.ndarray, cuts: tuple[CutJoint, ...],
                independent: set[int]) -> tuple[LoopGroup, ...]:
    """Group the cuts' loops by shared coordinates: union-find over cuts, each cut joined to
    the first cut that holds each of its coordinates (linear in the loops' sizes, where
    comparing every pair of cuts was quadratic in their number)."""
    coords = []
    for c in cuts:
        bodies = loop_bodies(parent, c.body_a, c.body_b)
        coords.append({int(coordinate_index[i]) for i in bodies if coordinate_index[i] >= 0})
    group_of = list(range(len(cuts)))

    def find(k: int) -> int:
        while group_of[k] != k:
            group_of[k] = group_of[group_of[k]]        # path halving: near-constant finds
            k = group_of[k]
        return k

    holder: dict[int, int] = {}                       # coordinate -> the first cut holding it
    for i, held in enumerate(coords):
        for c in held:
            j = holder.setdefault(c, i)
            root_i, root_j = find(i), find(j)
            if root_i != root_j:
                group_of[max(root_i, root_j)] = min(root_i, root_j)   # the lowest cut: root
    members_of: dict[int, list[int]] = {}
    for k in range(len(cuts)):
        members_of.setdefault(find(k), []).append(k)
    out = []
    for members in map(tuple, members_of.values()):      # in order of their first cut
        cs = sorted(set().union(*(coords[k] for k in members)))
        n_rows = sum(6 - CUT_TYPES[cuts[k].type] for k in members)
        out.append(LoopGroup(members, tuple(cs), tuple(c for c in cs if c in independent),
                             tuple(c for c in cs if c not in independent), n_rows,
                             len(cs) - n_rows))
    return tuple(out)
