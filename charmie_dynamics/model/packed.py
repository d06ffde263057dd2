"""The model's constants packed into a few arrays for the compiled kernels.

A kernel call pays for every array argument (numba checks its type), so the parameters the
recursions read are grouped by what they belong to: bodies, actuators, springs, balancers.
Columns and slots are named by the constants below; the arrays are built once per model and
held by it (``model.compiled.packed``, compiled.py).
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np

from ..flat import view1, view2, view3, view4
from ..jit import kernel
from .joint import joint_kind, joint_transform
from .actuator_geometry import IndirectJoint
from .parameters import ModelParameters



class BodyInt(IntEnum):
    """body_int columns. COORD: the joint's (first) velocity coordinate, CONFIG: its
    (first) configuration entry (they differ after a free-flyer: parameters.py), -1 for a
    fixed joint; DRIVEN_BY: the actuator that drives the joint, or -1; KIND: the kind of
    joint transform (model/joint.py)."""

    PARENT = 0
    JOINT = 1
    COORD = 2
    DRIVEN_BY = 3
    KIND = 4
    CONFIG = 5


class BodyVec(IntEnum):
    """body_vec slots (3-vectors): the unit joint axis, the placement's origin B, the centre
    of mass, the motion subspace [S_W; S_V] (joint.py; adjacent: read as one 6-vector),
    SCALARS = (multiplier, mass, offset): joint value = multiplier * coordinate + offset,
    and PITCH = (pitch, 0, 0): a helical joint's slide per radian (m/rad), 0 otherwise.
    AXIS and PITCH are the joint's parameter row (:func:`joint_parameters`)."""

    AXIS = 0
    ORIGIN = 1
    COM = 2
    S_W = 3
    S_V = 4
    SCALARS = 5
    PITCH = 6


class BodyMat(IntEnum):
    """body_mat slots."""

    ROTATION = 0
    INERTIA = 1


class ActInt(IntEnum):
    """act_int columns."""

    A_DRIVES = 0
    A_BASE_BODY = 1
    A_END_BODY = 2
    A_BRANCH = 3
    A_SHARING = 4


class ActVec(IntEnum):
    """act_vec slots: anchors in their bodies' frames; SOLVE = (c0, alpha, beta) and
    PERP2 = (perp2, 0, 0) of the indirect joint's solution; STROKE = (shortest, longest, 0);
    JOINT_BASE: the base anchor in the driven joint's frame (p of actuator_geometry.py)."""

    A_BASE = 0
    A_END = 1
    A_SOLVE = 2
    A_PERP2 = 3
    A_STROKE = 4
    A_JOINT_BASE = 5


class SpringInt(IntEnum):
    """spring_int columns."""

    S_START_BODY = 0
    S_END_BODY = 1


class SpringVec(IntEnum):
    """spring_vec slots; LAW = (stiffness, free length, preload)."""

    S_START = 0
    S_END = 1
    S_LAW = 2


class BalInt(IntEnum):
    """bal_int columns: the pivot body, the sliding (hanger) body, the side, the actuator
    whose joint's couple the balancer shares (-1: none)."""

    B_PIVOT_BODY = 0
    B_HANGER_BODY = 1
    B_SIDE = 2
    B_SHARES = 3


class BalVec(IntEnum):
    """bal_vec slots: points in their bodies' frames; SIZES = (lever, hanger, spring
    attach)."""

    B_PIVOT = 0
    B_HANGER = 1
    B_ANCHOR = 2
    B_SIZES = 3
    B_LAW = 4


# the members' values under their own names, as the kernels read them: plain ints, which
# every numba version folds as compile-time constants (numba 0.57, the floor, refuses an
# IntEnum member as an array index; 0.68 accepts it: bench_named_arguments.py measures both)
PARENT, JOINT, COORD, DRIVEN_BY, KIND, CONFIG = map(int, BodyInt)
AXIS, ORIGIN, COM, S_W, S_V, SCALARS, PITCH = map(int, BodyVec)
ROTATION, INERTIA = map(int, BodyMat)
A_DRIVES, A_BASE_BODY, A_END_BODY, A_BRANCH, A_SHARING = map(int, ActInt)
A_BASE, A_END, A_SOLVE, A_PERP2, A_STROKE, A_JOINT_BASE = map(int, ActVec)
S_START_BODY, S_END_BODY = map(int, SpringInt)
S_START, S_END, S_LAW = map(int, SpringVec)
B_PIVOT_BODY, B_HANGER_BODY, B_SIDE, B_SHARES = map(int, BalInt)
B_PIVOT, B_HANGER, B_ANCHOR, B_SIZES, B_LAW = map(int, BalVec)


class PackedModel(NamedTuple):
    """Constant arrays of a model, in the layout of the column and slot names above."""

    body_int: np.ndarray      # (nb, 6) int64
    body_vec: np.ndarray      # (nb, 7, 3)
    body_mat: np.ndarray      # (nb, 2, 3, 3)
    subspace: np.ndarray      # (nb, 6): [S_W; S_V] of body_vec, for the 6-vector kernels
    base_acceleration: np.ndarray   # (3,): -gravity, folds gravity into the accelerations
    act_int: np.ndarray       # (na, 5) int64
    act_vec: np.ndarray       # (na, 6, 3)
    spring_int: np.ndarray    # (ns, 2) int64
    spring_vec: np.ndarray    # (ns, 3, 3)
    bal_int: np.ndarray       # (nbal, 4) int64
    bal_vec: np.ndarray       # (nbal, 5, 3)


@kernel(inline=True)
def joint_parameters(body_vec, i):
    """Body i's joint parameter row (a_x, a_y, a_z, pitch), as the joint transform
    (joint.py) takes it (kernel)."""
    return (body_vec[i, AXIS, 0], body_vec[i, AXIS, 1], body_vec[i, AXIS, 2],
            body_vec[i, PITCH, 0])


def _law(params) -> list[float]:
    return [params.stiffness, params.free_length, params.preload]


def pack_model(model: ModelParameters, joints: tuple[IndirectJoint, ...]) -> PackedModel:
    """The kernel arrays of a model whose indirect joints are ``joints``
    (actuator_geometry.indirect_joints). Left writable: numba's call costs more for
    read-only arrays; the model holds them privately and nothing writes them."""
    nb = model.n_bodies
    driven_by = np.full(nb, -1)
    for k, act in enumerate(model.actuators):
        driven_by[act.drives] = k
    kinds = [joint_kind(t, a) for t, a in zip(model.joint_type.tolist(), model.axis)]
    body_int = np.column_stack([model.parent, model.joint_type, model.coordinate_index,
                                driven_by, kinds, model.configuration_index]).reshape(nb, 6)
    body_vec = np.zeros((nb, len(BodyVec), 3))
    body_vec[:, AXIS] = model.axis
    body_vec[:, ORIGIN] = model.origin
    body_vec[:, COM] = model.com
    body_vec[:, PITCH, 0] = model.pitch
    identity, zero = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), (0.0, 0.0, 0.0)
    neutral = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])     # a free-flyer's, at rest
    for i in range(nb):
        _, _, body_vec[i, S_W], body_vec[i, S_V] = joint_transform(
            kinds[i], joint_parameters(body_vec, i), 0.0, neutral, 0, identity, zero)
    body_vec[:, SCALARS, 0] = model.multiplier
    body_vec[:, SCALARS, 1] = model.mass
    body_vec[:, SCALARS, 2] = model.offset
    body_mat = np.stack([model.rotation, model.inertia], axis=1)

    sharing = {k: [b for b, bal in enumerate(model.balancers)
                   if bal.hanger.body == act.drives and bal.pivot.body == model.parent[act.drives]]
               for k, act in enumerate(model.actuators)}
    act_int = np.zeros((len(model.actuators), 5), dtype=np.int64)
    act_vec = np.zeros((len(model.actuators), len(ActVec), 3))
    for k, (act, joint) in enumerate(zip(model.actuators, joints)):
        act_int[k] = act.drives, act.base.body, act.end.body, act.branch, len(sharing[k])
        act_vec[k] = act.base.local, act.end.local, (joint.c0, joint.alpha, joint.beta), \
            (joint.perp2, 0.0, 0.0), (*joint.stroke, 0.0), joint.base
    spring_int = np.array([[s.start.body, s.end.body] for s in model.springs],
                          dtype=np.int64).reshape(-1, 2)
    spring_vec = np.array([[s.start.local, s.end.local, _law(s.params)] for s in model.springs],
                          dtype=float).reshape(-1, 3, 3)
    shares = {b: k for k, bs in sharing.items() for b in bs}
    bal_int = np.array([[b.pivot.body, b.hanger.body, b.side, shares.get(j, -1)]
                        for j, b in enumerate(model.balancers)], dtype=np.int64).reshape(-1, 4)
    bal_vec = np.array([[b.pivot.local, b.hanger.local, b.spring_anchor.local,
                         [b.lever_length, b.hanger_length, b.spring_attach], _law(b.spring)]
                        for b in model.balancers], dtype=float).reshape(-1, 5, 3)
    subspace = np.ascontiguousarray(body_vec[:, S_W:S_V + 1].reshape(nb, 6))
    return PackedModel(body_int.astype(np.int64), body_vec, body_mat, subspace,
                       -np.array(model.gravity, dtype=float), act_int, act_vec,
                       spring_int, spring_vec, bal_int, bal_vec)


@kernel(inline=True)
def packed_model_view(header, ints, floats, k):
    """The PackedModel flattened (``flatten(tuple(packed))``, flat.py) at the header's rows
    k to k + 10, as views (kernel)."""
    return PackedModel(view2(ints, header, k), view3(floats, header, k + 1),
                       view4(floats, header, k + 2), view2(floats, header, k + 3),
                       view1(floats, header, k + 4), view2(ints, header, k + 5),
                       view3(floats, header, k + 6), view2(ints, header, k + 7),
                       view3(floats, header, k + 8), view2(ints, header, k + 9),
                       view3(floats, header, k + 10))
