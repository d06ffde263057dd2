"""Recursive forward kinematics (seed 000 section 4.2, eqs. 15-19; seed 001 section 3).

One outward loop over the bodies, parents first. For body i with parent p, joint value
q_i = multiplier_i * coordinate + offset_i and the joint's motion (R_J, t_J) (model/joint.py:
Rot(axis_i, q_i) for a revolute joint, q_i axis_i for a prismatic one), the joint transform
gives

    R^{p}_{i} = R_c,i R_J                             (eq. 16's R^{i-1}_i, eq. 18)
    r^{p}_{i} = B_i + R_c,i t_J                       (seed 001 eq. 1: B'_{i-1} = D'_{i-1} + d_i v)
    R^0_i = R^0_p R^{p}_{i}                           (eq. 16)
    O_i   = O_p + R^0_p r^{p}_{i}                     (eqs. 15 and 19)

A free-flyer (root joint) reads its configuration (x, y, z, qx, qy, qz, qw) at its
``configuration_index`` (model/joint.py); q then has ``model.nq`` entries, its quaternions
unit (StateError otherwise: kinematics/configuration.py).

Every array has optional leading sample axes: q of shape (..., nq) (nq = n_coordinates
without a free-flyer).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .. import jit
from ..flat import as_shape
from ..jit import kernel
from ..layout import (CONFIG, IN_PARENT, IN_WORLD, KIND, MULTIPLIER, OFFSET, ORIGIN, PARENT,
                      ROTATION, SCALARS)
from ..linalg import add, mat, mat_mul, mat_vec, rotate, store, store_mat, vec
from ..model.data import AlgorithmData
from ..model.joint import FREE_KIND, joint_transform
from ..model.model import Model
from ..model.packed import joint_parameters
from .configuration import check_configuration
from .state import FLOAT


@dataclass(frozen=True)
class Placements:
    """Result of forward kinematics (body index in ``model.body_names`` order).

    ``rotations`` (..., nb, 2, 3, 3) holds R^{parent}_i and R^0_i, ``origins`` (..., nb, 2, 3)
    the origin of i in the parent frame and in the world frame (m): the kernels' layout.
    """

    joint_values: np.ndarray      # (..., nb): q_i of each joint (0 for fixed and
    #                               free-flyer), rad or m: multiplier * coordinate + offset
    rotations: np.ndarray
    origins: np.ndarray

    @property
    def rotation_parent(self) -> np.ndarray:
        """R^{parent}_i, (..., nb, 3, 3)."""
        return self.rotations[..., IN_PARENT, :, :]

    @property
    def rotation_world(self) -> np.ndarray:
        """R^0_i, (..., nb, 3, 3)."""
        return self.rotations[..., IN_WORLD, :, :]

    @property
    def origin_parent(self) -> np.ndarray:
        """Origin of i in its parent's frame, (..., nb, 3)."""
        return self.origins[..., IN_PARENT, :]

    @property
    def origin_world(self) -> np.ndarray:
        """O_i, (..., nb, 3)."""
        return self.origins[..., IN_WORLD, :]

    @property
    def lead(self) -> tuple[int, ...]:
        """Leading sample axes."""
        return self.joint_values.shape[:-1]

    def per_sample(self, model: Model) -> tuple[np.ndarray, np.ndarray]:
        """``rotations`` and ``origins`` with the sample axes flattened, for the kernels;
        ValueError unless these are placements of ``model``'s bodies."""
        nb = model.n_bodies
        if self.rotations.shape[-4:] != (nb, 2, 3, 3) or self.origins.shape[-3:] != (nb, 2, 3):
            raise ValueError(f"placements of {self.rotations.shape[-4]} bodies, expected the "
                             f"{nb} bodies of {model.name}")
        return (np.ascontiguousarray(self.rotations).reshape(-1, nb, 2, 3, 3),
                np.ascontiguousarray(self.origins).reshape(-1, nb, 2, 3))

    def to_world(self, body: int, local: np.ndarray) -> np.ndarray:
        """World coordinates of a point given in body ``body``'s frame (eqs. 15 and 19)."""
        return self.origin_world[..., body, :] + rotate(self.rotation_world[..., body, :, :], local)


@kernel
def to_world(rotations, origins, body, local):
    """World coordinates of a point given in ``body``'s frame, one sample (kernel; eqs. 15
    and 19)."""
    return add(vec(origins, body, IN_WORLD), mat_vec(mat(rotations, body, IN_WORLD), local))


@kernel
def forward_kinematics_sample(body_int, body_vec, body_mat, q, values, rotations, origins
                              ) -> None:
    """Forward kinematics of one sample (kernel): per body i, ``rotations[i, IN_PARENT]`` =
    R^{parent}_i, ``rotations[i, IN_WORLD]`` = R^0_i, ``origins[i, IN_PARENT]`` =
    r^{parent}_i, ``origins[i, IN_WORLD]`` = O_i."""
    for i in range(body_int.shape[0]):
        iq, kind = body_int[i, CONFIG], body_int[i, KIND]
        value = 0.0 if iq < 0 or kind == FREE_KIND else \
            body_vec[i, SCALARS, MULTIPLIER] * q[iq] + body_vec[i, SCALARS, OFFSET]
        values[i] = value
        R_par, r, _, _ = joint_transform(kind, joint_parameters(body_vec, i), value, q, iq,
                                         mat(body_mat, i, ROTATION), vec(body_vec, i, ORIGIN))
        store_mat(rotations, i, IN_PARENT, R_par)
        store(origins, i, IN_PARENT, r)
        p = body_int[i, PARENT]
        if p < 0:
            store_mat(rotations, i, IN_WORLD, R_par)
            store(origins, i, IN_WORLD, r)
        else:
            R_p = mat(rotations, p, IN_WORLD)
            store_mat(rotations, i, IN_WORLD, mat_mul(R_p, R_par))
            store(origins, i, IN_WORLD, add(vec(origins, p, IN_WORLD), mat_vec(R_p, r)))


# a ForwardKinematicsData's buffer, per (sample, body) m = samples * nb: the values in
# [0, m), the rotations in [ROTATIONS_AT * m, ORIGINS_AT * m), the origins up to ENTRIES * m
ROTATIONS_AT, ORIGINS_AT, ENTRIES = 1, 1 + 18, 1 + 18 + 6


@kernel
def _forward_kinematics_flat(q, body_int, body_vec, body_mat, out) -> None:
    """:func:`forward_kinematics_sample` sample by sample (kernel). ``out``: a
    :class:`ForwardKinematicsData`'s buffer, the values (samples, nb), rotations (samples,
    nb, 2, 3, 3) and origins (samples, nb, 2, 3) one after the other: five arrays to unbox
    at each call instead of seven. ``q`` has the data's samples, or none (its callers make
    sure): the views trust that, unchecked, as flat.py's do."""
    n, nb = q.shape[0], body_int.shape[0]
    m = n * nb
    values, rotations, origins = as_shape(out[:ROTATIONS_AT * m], (n, nb)), \
        as_shape(out[ROTATIONS_AT * m:ORIGINS_AT * m], (n, nb, 2, 3, 3)), \
        as_shape(out[ORIGINS_AT * m:ENTRIES * m], (n, nb, 2, 3))
    for s in range(n):
        forward_kinematics_sample(body_int, body_vec, body_mat, q[s], values[s], rotations[s],
                                  origins[s])


class ForwardKinematicsData(AlgorithmData):
    """Buffers of :func:`forward_kinematics` for one model and sample shape ``lead``;
    ``placements`` is returned by every call, its arrays overwritten by the next."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        super().__init__(model, lead)
        n, nb, pm = self.samples, model.n_bodies, model.compiled.packed
        # the kernel's buffer (_forward_kinematics_flat: values, rotations, origins one
        # after the other), the (samples, ...) views of its parts and the placements' views
        m = n * nb
        out = np.empty(ENTRIES * m)
        self.values, self.rotations, self.origins = out[:ROTATIONS_AT * m].reshape(n, nb), \
            out[ROTATIONS_AT * m:ORIGINS_AT * m].reshape(n, nb, 2, 3, 3), \
            out[ORIGINS_AT * m:].reshape(n, nb, 2, 3)
        self.block = (pm.body_int, pm.body_vec, pm.body_mat, out)
        self.placements = Placements(self.values.reshape(self.lead + (nb,)),
                                     self.rotations.reshape(self.lead + (nb, 2, 3, 3)),
                                     self.origins.reshape(self.lead + (nb, 2, 3)))
        # per call, a q of exactly this shape, float64, C-contiguous and aligned goes to the
        # kernel as a (samples, nq) view with no further check (forward_kinematics)
        self.q_shape = self.lead + (model.nq,)
        self.q_samples = (self.samples, model.nq)
        #: the kernel's entry point for ``block`` and a q as forward_kinematics takes it
        #: without conversion (jit.fixed_entry), taken at the first such call
        self.entry = None


def forward_kinematics(model: Model, q: np.ndarray, *,
                       data: ForwardKinematicsData | None = None) -> Placements:
    """Placement of every body for the configuration ``q`` (..., nq): the joint coordinates,
    a free-flyer's 7 entries with a unit quaternion (StateError otherwise).

    ``data``: buffers for ``q``'s sample shape, reused (see :class:`ForwardKinematicsData`);
    new ones when omitted.
    """
    # the common case, the data's own model and a q already as the kernel takes it, needs
    # none of the general path's conversions (its checks would all pass), nor numba's
    # dispatch (the data's entry point for exactly these types: 0.5 us of a 2.5 us call)
    ready = (type(data) is ForwardKinematicsData and data.model is model
             and type(q) is np.ndarray and q.shape == data.q_shape and q.dtype is FLOAT)
    if ready:
        flags = q.flags
        ready = flags.c_contiguous and flags.aligned
    if ready and data.entry is not None:
        data.entry(q.reshape(data.q_samples), *data.block)
        return data.placements
    if ready and not model.free_flyers:             # computes, and takes the entry point
        data.entry = jit.fixed_entry(_forward_kinematics_flat, q.reshape(data.q_samples),
                                     *data.block)
        return data.placements
    if not ready:
        q = np.asarray(q, dtype=float)
        if q.shape[-1:] != (model.nq,):
            raise ValueError(f"coordinates of shape {q.shape}, expected (..., {model.nq}) "
                             f"for {model.name}")
    if model.free_flyers:
        check_configuration(model, q)
    if not ready:
        data = ForwardKinematicsData.reuse(data, model, q.shape[:-1])
        q = np.ascontiguousarray(q)
    _forward_kinematics_flat(q.reshape(data.q_samples), *data.block)
    return data.placements


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
