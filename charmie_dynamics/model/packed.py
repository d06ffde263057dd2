"""The model's constants packed into a few arrays for the compiled kernels.

A kernel call pays for every array argument (numba checks its type), so the parameters the
recursions read are grouped by what they belong to: bodies, actuators, and the mechanisms
(springs, balancers, torsion springs) as one table with a kind column, which one kernel
dispatches on (mechanisms/forces.py) as the joint transform does on the joint kind (joint.py).
Their columns and slots are named once, in layout.py; the arrays are built once per model
and held by it (``model.compiled.packed``, compiled.py).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..flat import flatten, view1, view2, view3, view4
from ..jit import kernel
from ..layout import (AXIS, COM, M_LAW, MASS, MECH_SLOTS, MULTIPLIER, OFFSET, ORIGIN, PITCH, S_V,
                      S_W, SCALARS, ActVec, BodyVec, MechInt)
from .actuator_geometry import IndirectJoint
from .joint import joint_kind, joint_transform
from .kinds import MECHANISM_KINDS, items
from .parameters import ModelParameters


class PackedModel(NamedTuple):
    """Constant arrays of a model, in the layouts of layout.py."""

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
    rows = [kind.row(item, k, shares) for kind in MECHANISM_KINDS
            for k, item in enumerate(items(model, kind))]
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
    body_vec[:, SCALARS, MULTIPLIER] = model.multiplier
    body_vec[:, SCALARS, MASS] = model.mass
    body_vec[:, SCALARS, OFFSET] = model.offset
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


def flat_packed(pm: PackedModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``pm`` flattened (flat.py): (header, ints, floats), the form in which a kernel called
    from Python takes the packed model: numba checks 3 arrays at each call instead of 9
    (docs/architecture.md, the kernels' convention)."""
    header, ints, floats, _ = flatten(tuple(pm))
    return header, ints, floats


@kernel(inline=True)
def unflat_packed(flat):
    """The :class:`PackedModel` of :func:`flat_packed`'s arrays, as views (kernel)."""
    header, ints, floats = flat
    return packed_model_view(header, ints, floats, 0)
