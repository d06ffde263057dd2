"""The model's constants packed into a few arrays for the compiled kernels.

A kernel call pays for every array argument (numba checks its type), so the parameters the
recursions read are grouped by what they belong to: bodies, actuators, and the mechanisms
(springs, balancers, torsion springs) as one table with a kind column, which one kernel
dispatches on (mechanisms/forces.py) as the joint transform does on the joint kind (joint.py).
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


class MechKind(IntEnum):
    """The kinds of mechanism of the mech table, in the order of its rows (each kind's rows
    follow the previous kind's): linear springs, balancer halves, torsion springs."""

    SPRING = 0
    BALANCER = 1
    TORSION_SPRING = 2


class MechInt(IntEnum):
    """mech_int columns: the kind (MechKind), the two bodies it joins (a spring's or a torsion
    spring's start and end, a balancer's pivot and hanger body), ITEM its index among its
    kind's (a balancer's in ``model.balancers``: hanger_force, balancer_couple), and a
    balancer's SIDE and SHARES (the actuator whose joint's couple it shares, -1: none; -1 for
    the other kinds)."""

    M_KIND = 0
    M_BODY_A = 1
    M_BODY_B = 2
    M_ITEM = 3
    M_SIDE = 4
    M_SHARES = 5


class MechVec(IntEnum):
    """mech_vec slot shared by every kind: LAW = (stiffness, free value, preload) of its
    linear law (mechanisms/forces.py); the kinds' own slots follow (SpringVec, BalVec,
    TorsionVec)."""

    M_LAW = 0


class SpringVec(IntEnum):
    """A spring's mech_vec slots: its end points in their bodies' frames."""

    S_START = 1
    S_END = 2


class BalVec(IntEnum):
    """A balancer's mech_vec slots: points in their bodies' frames; SIZES = (lever, hanger,
    spring attach)."""

    B_PIVOT = 1
    B_HANGER = 2
    B_ANCHOR = 3
    B_SIZES = 4


class TorsionVec(IntEnum):
    """A torsion spring's mech_vec slots: its axis and reference direction in the start
    body's frame, the end body's reference direction in its frame."""

    T_AXIS = 1
    T_START_REFERENCE = 2
    T_END_REFERENCE = 3


# the members' values under their own names, as the kernels read them: plain ints, which
# every numba version folds as compile-time constants (numba 0.57, the floor, refuses an
# IntEnum member as an array index; 0.68 accepts it: bench_named_arguments.py measures both)
PARENT, JOINT, COORD, DRIVEN_BY, KIND, CONFIG = map(int, BodyInt)
AXIS, ORIGIN, COM, S_W, S_V, SCALARS, PITCH = map(int, BodyVec)
ROTATION, INERTIA = map(int, BodyMat)
A_DRIVES, A_BASE_BODY, A_END_BODY, A_BRANCH, A_SHARING = map(int, ActInt)
A_BASE, A_END, A_SOLVE, A_PERP2, A_STROKE, A_JOINT_BASE = map(int, ActVec)
SPRING, BALANCER, TORSION_SPRING = map(int, MechKind)
M_KIND, M_BODY_A, M_BODY_B, M_ITEM, M_SIDE, M_SHARES = map(int, MechInt)
M_LAW, = map(int, MechVec)
S_START, S_END = map(int, SpringVec)
B_PIVOT, B_HANGER, B_ANCHOR, B_SIZES = map(int, BalVec)
T_AXIS, T_START_REFERENCE, T_END_REFERENCE = map(int, TorsionVec)
MECH_SLOTS = 1 + max(len(SpringVec), len(BalVec), len(TorsionVec))


class PackedModel(NamedTuple):
    """Constant arrays of a model, in the layout of the column and slot names above."""

    body_int: np.ndarray      # (nb, 6) int64
    body_vec: np.ndarray      # (nb, 7, 3)
    body_mat: np.ndarray      # (nb, 2, 3, 3)
    subspace: np.ndarray      # (nb, 6): [S_W; S_V] of body_vec, for the 6-vector kernels
    base_acceleration: np.ndarray   # (3,): -gravity, folds gravity into the accelerations
    act_int: np.ndarray       # (na, 5) int64
    act_vec: np.ndarray       # (na, 6, 3)
    mech_int: np.ndarray      # (nm, 6) int64: springs, balancers, torsion springs
    mech_vec: np.ndarray      # (nm, MECH_SLOTS, 3)


@kernel(inline=True)
def joint_parameters(body_vec, i):
    """Body i's joint parameter row (a_x, a_y, a_z, pitch), as the joint transform
    (joint.py) takes it (kernel)."""
    return (body_vec[i, AXIS, 0], body_vec[i, AXIS, 1], body_vec[i, AXIS, 2],
            body_vec[i, PITCH, 0])


def mechanism_table(model: ModelParameters, shares: dict[int, int]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(mech_int, mech_vec) of the model's mechanisms, a row each in MechKind order (the
    order of mechanisms/forces.spring_names); ``shares``: balancer -> the actuator whose
    couple it shares."""
    rows = [([SPRING, s.start.body, s.end.body, k, 0, -1], s.params,
             [s.start.local, s.end.local]) for k, s in enumerate(model.springs)]
    rows += [([BALANCER, b.pivot.body, b.hanger.body, k, b.side, shares.get(k, -1)], b.spring,
              [b.pivot.local, b.hanger.local, b.spring_anchor.local,
               [b.lever_length, b.hanger_length, b.spring_attach]])
             for k, b in enumerate(model.balancers)]
    rows += [([TORSION_SPRING, t.start, t.end, k, 0, -1], t.params,
              [t.axis, t.start_reference, t.end_reference])
             for k, t in enumerate(model.torsion_springs)]
    mech_int = np.array([ints for ints, _, _ in rows], dtype=np.int64).reshape(-1, len(MechInt))
    mech_vec = np.zeros((len(rows), MECH_SLOTS, 3))
    for j, (_, law, slots) in enumerate(rows):
        mech_vec[j, M_LAW] = law.stiffness, law.free_length, law.preload
        mech_vec[j, 1:1 + len(slots)] = slots
    return mech_int, mech_vec


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
    shares = {b: k for k, bs in sharing.items() for b in bs}
    mech_int, mech_vec = mechanism_table(model, shares)
    subspace = np.ascontiguousarray(body_vec[:, S_W:S_V + 1].reshape(nb, 6))
    return PackedModel(body_int.astype(np.int64), body_vec, body_mat, subspace,
                       -np.array(model.gravity, dtype=float), act_int, act_vec,
                       mech_int, mech_vec)


@kernel(inline=True)
def packed_model_view(header, ints, floats, k):
    """The PackedModel flattened (``flatten(tuple(packed))``, flat.py) at the header's rows
    k to k + 8, as views (kernel)."""
    return PackedModel(view2(ints, header, k), view3(floats, header, k + 1),
                       view4(floats, header, k + 2), view2(floats, header, k + 3),
                       view1(floats, header, k + 4), view2(ints, header, k + 5),
                       view3(floats, header, k + 6), view2(ints, header, k + 7),
                       view3(floats, header, k + 8))
