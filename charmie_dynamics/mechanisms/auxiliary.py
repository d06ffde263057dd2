"""Kinematics of the auxiliary (massless) bodies: linear actuators, springs and the static
balancing mechanism (seed 000 section 4.3, eqs. 20-27).

Each element is a straight segment from ``start`` to ``end`` (world frame) with its length
(eq. 20) and a full orientation: z along the segment, x the element's pin axis (the driven
joint's axis for an actuator, the pivot body's y axis for the balancer's lever and hanger,
the start body's x axis for a spring) made perpendicular to z, y = z x x. This replaces the
single angle of eq. 21 (which, as extracted, is the cosine of that angle) by the rotation
that TF needs.

The balancer follows eqs. 22-27 in the pivot body's frame, with two corrections of the
extracted text: eq. 25 (``B4slc x = B4slc x``, a tautology) is read as ``B4slc x = B4sla x``
(the hanger is vertical), and eq. 24's minus sign is the left side's ``side = -1``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..jit import kernel
from ..kinematics.forward import Placements, to_world
from ..kinematics.indirect import MechanismRangeError
from ..layout import (A_BASE, A_BASE_BODY, A_DRIVES, A_END, A_END_BODY, AXIS, B_ANCHOR, B_HANGER,
                      B_PIVOT, B_SIZES, BALANCER, IN_WORLD, JOINT, M_BODY_A, M_BODY_B, M_ITEM,
                      M_KIND, M_SIDE, S_END, S_START, SPRING)
from ..linalg import (add, column, cross3, dot, mat, mat_t_vec, mat_vec, norm, reciprocal, scale,
                      store, store_mat, sub, vec)
from ..model.data import AlgorithmData
from ..model.joint import REVOLUTE
from ..model.model import Balancer, Model
from ..model.packed import unflat_packed


@dataclass(frozen=True)
class Segment:
    """One auxiliary body, arrays with the placements' leading sample axes."""

    name: str
    kind: str              # "actuator", "spring", "lever" or "hanger"
    body: int              # body the segment's start is attached to (its TF parent)
    start: np.ndarray      # (..., 3) world
    end: np.ndarray        # (..., 3) world
    length: np.ndarray     # (...,) m
    rotation: np.ndarray   # (..., 3, 3) world orientation, z along start -> end


@kernel
def balancer_local_points(mech_int, mech_vec, b, rotations, origins):
    """Points of the balancer half of mech row ``b`` (model/packed.py) in its pivot body's frame
    (seed 000 eqs. 22-27), for one
    sample (kernel): ``(reachable, pivot F3, lever end B4sla, hanger top B4slc, spring attach
    B4slb, spring anchor)``. Where the lever cannot reach, ``reachable`` is False."""
    pb, hb, side = mech_int[b, M_BODY_A], mech_int[b, M_BODY_B], mech_int[b, M_SIDE]
    hanger_world = to_world(rotations, origins, hb, vec(mech_vec, b, B_HANGER))
    hanger = mat_t_vec(mat(rotations, pb, IN_WORLD), sub(hanger_world, vec(origins, pb, IN_WORLD)))
    pivot = vec(mech_vec, b, B_PIVOT)
    lever, hanger_length, attach = vec(mech_vec, b, B_SIZES)
    top_z = hanger[2]                                                 # eq. 22
    end_z = top_z - hanger_length                                     # eq. 23
    dz = end_z - pivot[2]
    reach2 = lever * lever - dz * dz
    end_x = pivot[0] + side * math.sqrt(max(reach2, 0.0))             # eq. 24
    lever_end = (end_x, pivot[1], end_z)
    hanger_top = (end_x, pivot[1], top_z)                             # eqs. 22, 25
    attach_point = add(pivot, scale(attach / lever, sub(lever_end, pivot)))   # eqs. 26-27
    return (reach2 >= 0.0, pivot, lever_end, hanger_top, attach_point,
            vec(mech_vec, b, B_ANCHOR))


def balancer_range_error(bal: Balancer) -> MechanismRangeError:
    return MechanismRangeError(f"{bal.name}: the lever of length {bal.lever_length:g} m cannot "
                               f"reach the hanger of length {bal.hanger_length:g} m")


@kernel
def segment_frame(start, end, pin):
    """Length and world orientation (rows) of a segment: z along start -> end, x the pin axis
    made perpendicular to z, y = z x x (module docstring)."""
    d = sub(end, start)
    length = norm(d)
    z = scale(reciprocal(length), d)        # a segment of no length: not finite, not raised
    x = sub(pin, scale(dot(pin, z), z))
    x = scale(reciprocal(norm(x)), x)
    y = cross3(z, x)
    return length, ((x[0], y[0], z[0]), (x[1], y[1], z[1]), (x[2], y[2], z[2]))


@kernel
def _store_segment(k, start, end, pin, ends, lengths, frames) -> None:
    length, R = segment_frame(start, end, pin)
    store(ends, k, 0, start)
    store(ends, k, 1, end)
    lengths[k] = length
    store_mat(frames, k, 0, R)


@kernel
def auxiliary_segments_sample(pm, rotations, origins, ends, lengths, frames) -> int:
    """Every auxiliary segment of one sample (kernel), in the order of
    :func:`auxiliary_segments`; ``pm``: a :class:`~..model.packed.PackedModel`, ``ends``
    (n, 2, 3) start and end, ``lengths`` (n,), ``frames`` (n, 1, 3, 3). Returns a balancer
    whose lever cannot reach, or -1."""
    body_int, body_vec, act_int, act_vec, mech_int, mech_vec = pm.body_int, pm.body_vec, \
        pm.act_int, pm.act_vec, pm.mech_int, pm.mech_vec
    k = 0
    for a in range(act_int.shape[0]):
        i = act_int[a, A_DRIVES]
        base_body = act_int[a, A_BASE_BODY]
        if body_int[i, JOINT] == REVOLUTE:
            pin = mat_vec(mat(rotations, i, IN_WORLD), vec(body_vec, i, AXIS))
        else:
            pin = column(mat(rotations, base_body, IN_WORLD), 0)
        _store_segment(k, to_world(rotations, origins, base_body, vec(act_vec, a, A_BASE)),
                       to_world(rotations, origins, act_int[a, A_END_BODY], vec(act_vec, a, A_END)),
                       pin, ends, lengths, frames)
        k += 1
    failed = -1
    for j in range(mech_int.shape[0]):
        kind = mech_int[j, M_KIND]
        if kind == SPRING:
            start_body = mech_int[j, M_BODY_A]
            _store_segment(k, to_world(rotations, origins, start_body, vec(mech_vec, j, S_START)),
                           to_world(rotations, origins, mech_int[j, M_BODY_B],
                                    vec(mech_vec, j, S_END)),
                           column(mat(rotations, start_body, IN_WORLD), 0), ends, lengths, frames)
            k += 1
        elif kind == BALANCER:
            reachable, P, E, top, S, A = balancer_local_points(mech_int, mech_vec, j, rotations,
                                                               origins)
            if not reachable:
                failed = mech_int[j, M_ITEM]
            pb = mech_int[j, M_BODY_A]
            pin = column(mat(rotations, pb, IN_WORLD), 1)
            P, E, top = (to_world(rotations, origins, pb, P), to_world(rotations, origins, pb, E),
                         to_world(rotations, origins, pb, top))
            S, A = to_world(rotations, origins, pb, S), to_world(rotations, origins, pb, A)
            _store_segment(k, P, E, pin, ends, lengths, frames)            # lever
            _store_segment(k + 1, E, top, pin, ends, lengths, frames)      # hanger
            _store_segment(k + 2, S, A, pin, ends, lengths, frames)        # spring
            k += 3
    return failed


@kernel
def _auxiliary_segments_batch(packed, rotations, origins, ends, lengths, frames) -> int:
    """Every sample of :func:`auxiliary_segments_sample`; ``packed``: the packed model
    flattened (``model.compiled.packed_args``)."""
    pm = unflat_packed(packed)
    failed = -1
    for s in range(rotations.shape[0]):
        b = auxiliary_segments_sample(pm, rotations[s], origins[s], ends[s], lengths[s],
                                      frames[s])
        if b >= 0:
            failed = b
    return failed


def segment_names(model: Model) -> list[tuple[str, str, int]]:
    """(name, kind, body its start is attached to) of every auxiliary segment, in order."""
    out = [(a.name, "actuator", a.base.body) for a in model.actuators]
    out += [(s.name, "spring", s.start.body) for s in model.springs]
    for bal in model.balancers:
        out += [(f"{bal.name}_{part}", kind, bal.pivot.body) for part, kind in
                (("lever", "lever"), ("hanger", "hanger"), ("spring", "spring"))]
    return out


class SegmentsData(AlgorithmData):
    """Buffers of :func:`auxiliary_segments` for one model and sample shape ``lead``;
    ``segments`` is returned by every call, its arrays overwritten by the next."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        super().__init__(model, lead)
        names = segment_names(model)
        self.ends, self.lengths, self.frames = (np.empty((self.samples, len(names)) + tail)
                                                for tail in ((2, 3), (), (1, 3, 3)))
        # views: splitting the sample axis into ``lead`` never copies
        self.segments = [Segment(name, kind, body, self.ends[:, k, 0].reshape(self.lead + (3,)),
                                 self.ends[:, k, 1].reshape(self.lead + (3,)),
                                 self.lengths[:, k].reshape(self.lead),
                                 self.frames[:, k, 0].reshape(self.lead + (3, 3)))
                         for k, (name, kind, body) in enumerate(names)]


def auxiliary_segments(model: Model, placements: Placements, *,
                       data: SegmentsData | None = None) -> list[Segment]:
    """Every auxiliary body of the model: actuators, springs, balancer levers/hangers/springs.

    ``data``: buffers for the placements' sample shape, reused (see :class:`SegmentsData`);
    new ones when omitted.
    """
    data = SegmentsData.reuse(data, model, placements.lead)
    rotations, origins = placements.per_sample(model)
    failed = _auxiliary_segments_batch(model.compiled.packed_args, rotations, origins,
                                       data.ends, data.lengths, data.frames)
    if failed >= 0:
        raise balancer_range_error(model.balancers[failed])
    return data.segments
