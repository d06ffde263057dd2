"""The constants a model's algorithms derive from its parameters, built once per model and
held by it as ``model.compiled`` (model.py): the kernels' arrays (packed.py, with the joints'
motion subspaces), the bodies' spatial inertias, the indirect joints' solved constants and
the actuator space, the coordinates' position bounds (the joint stops of
simulation/integrate.py), the bodies each coordinate moves and whether the ABA can reduce them, and
the tree of the
moving bodies that the ABA's route runs on (moving_tree.py). They
replace per-module caches keyed by model: one place builds them, and
they live exactly as long as the model.

Spatial inertia of body i about its origin, in its frame (seed 002 eq. 6; dynamics/spatial.py
uses it in CRBA and ABA), with c the centre of mass and [.]x the cross-product matrix:

    M_i = [[I_Ci + m (c.c 1 - c c^T), m [c]x], [m [c]x^T, m 1]]
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import numpy as np

from .actuator_geometry import IndirectJoint, indirect_joints
from .moving_tree import Tree, moving_tree
from .packed import PackedModel, flat_packed, pack_model
from .parameters import JointType, ModelParameters


@dataclass(frozen=True)
class ActuatorSpace:
    """Limits and friction of every input of ``model.input_names`` (SI), a coordinate's
    from its first joint, an actuator's from the actuator (dynamics/actuation.py)."""

    names: tuple[str, ...]
    effort_limit: np.ndarray     # N m or N; inf where unknown
    viscous: np.ndarray
    coulomb: np.ndarray


def skew(v: np.ndarray) -> np.ndarray:
    """Cross-product matrices [v]x of (..., 3) vectors: (..., 3, 3)."""
    out = np.zeros(v.shape + (3,))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def spatial_inertias(mass: np.ndarray, com: np.ndarray, inertia: np.ndarray) -> np.ndarray:
    """M_i about the origin in the body frame (module docstring) of bodies of masses (nb,),
    centres of mass (nb, 3) and inertias about them (nb, 3, 3): (nb, 6, 6), kg and kg m^2,
    read-only."""
    m = mass[:, None, None]
    c = com
    cx = skew(c)
    out = np.empty((mass.shape[0], 6, 6))
    out[:, :3, :3] = inertia + m * (np.einsum("bi,bi->b", c, c)[:, None, None] * np.eye(3)
                                    - c[:, :, None] * c[:, None, :])
    out[:, :3, 3:] = m * cx
    out[:, 3:, :3] = m * np.swapaxes(cx, -1, -2)
    out[:, 3:, 3:] = m * np.eye(3)
    out.flags.writeable = False
    return out


def actuator_space(model: ModelParameters) -> ActuatorSpace:
    """The model's actuator limits and friction, in ``model.input_names`` order."""
    n = len(model.input_names)
    limit, viscous, coulomb = np.full(n, np.inf), np.zeros(n), np.zeros(n)
    actuators = {a.name: a for a in model.actuators}
    first_body = {}                 # a free-flyer's: its body (no limits, no friction)
    for i, b in enumerate(model.bodies):
        c = int(model.coordinate_index[i])
        for name in model.coordinate_names[c:c + (6 if b.joint_type == JointType.FLOATING
                                                  else 1)] if c >= 0 else ():
            first_body.setdefault(name, b)
    for k, name in enumerate(model.input_names):
        if name in actuators:
            a = actuators[name]
            limit[k] = np.inf if a.force_limit is None else a.force_limit
            viscous[k], coulomb[k] = a.friction.viscous, a.friction.coulomb
        else:
            body = first_body[name]
            if body.limits.effort is not None:
                limit[k] = body.limits.effort
            viscous[k], coulomb[k] = body.friction.viscous, body.friction.coulomb
    return ActuatorSpace(model.input_names, limit, viscous, coulomb)


def coordinate_limits(model: ModelParameters) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper position bounds of every coordinate (n,), -inf/+inf where none,
    read-only: the bounds of its joints (``body.limits`` lower/upper limit the joint value
    multiplier * coordinate + offset) less the offset, divided by the multiplier (swapped
    when it is negative), intersected over the coordinate's joints."""
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
    lower.flags.writeable = upper.flags.writeable = False
    return lower, upper


@dataclass(frozen=True)
class CompiledModel:
    """A model's derived constants (module docstring); nothing writes them."""

    packed: PackedModel                           # the kernels' arrays
    spatial_inertias: np.ndarray                  # (nb, 6, 6), read-only
    indirect_joints: tuple[IndirectJoint, ...]    # in ``model.actuators`` order
    actuator_space: ActuatorSpace
    coordinate_limits: tuple[np.ndarray, np.ndarray]   # lower, upper (n,), read-only
    coordinate_bodies: tuple[tuple[int, ...], ...]    # bodies each coordinate moves
    aba_coupling: Optional[str]                   # why the ABA cannot run, or None
    tree: Tree                                    # packed, spatial_inertias, coordinate_bodies
    moving_tree: Tree                             # the same with fixed joints merged

    @cached_property
    def packed_args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``packed`` flattened (packed.flat_packed): the model argument of a kernel called
        from Python, named inside (``unflat_packed(packed_args)``)."""
        return flat_packed(self.packed)

    @classmethod
    def build(cls, model: ModelParameters) -> CompiledModel:
        joints = indirect_joints(model)
        groups = coordinate_bodies(model)
        packed = pack_model(model, joints)
        inertias = spatial_inertias(model.mass, model.com, model.inertia)
        return cls(packed, inertias, joints, actuator_space(model), coordinate_limits(model),
                   groups, aba_coupling(model, groups),
                   Tree(packed, inertias, groups, np.arange(model.n_bodies)),
                   moving_tree(packed, groups, spatial_inertias))


def coordinate_bodies(model: ModelParameters) -> tuple[tuple[int, ...], ...]:
    """Bodies moved by each coordinate, in ``model.coordinate_names`` order."""
    groups: list[list[int]] = [[] for _ in range(model.n_coordinates)]
    for i, c in enumerate(model.coordinate_index.tolist()):
        if c >= 0:
            groups[c].append(i)
    return tuple(tuple(members) for members in groups)


def aba_coupling(model: ModelParameters, groups: tuple[tuple[int, ...], ...]) -> Optional[str]:
    """Why the articulated-body algorithm (dynamics/forward.py) cannot reduce the coordinates'
    ``groups`` of bodies, or None when every coordinate's joints share a parent."""
    parent = model.parent.tolist()
    for c, members in enumerate(groups):
        if len({parent[i] for i in members}) > 1:
            names = ", ".join(model.body_names[i] for i in members)
            return (f"coordinate {model.coordinate_names[c]!r} moves the joints of {names}, "
                    "which have different parents; the ABA handles a coordinate's joints "
                    "only when they share a parent")
    return None
