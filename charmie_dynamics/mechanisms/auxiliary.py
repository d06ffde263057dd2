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
from ..kinematics.forward import Placements
from ..linalg import add, cross, mat, mat_t_vec, mat_vec, rotate, scale, store, sub, vec
from ..model.model import Balancer, JointType, Model
from ..model.packed import (B_ANCHOR, B_HANGER, B_HANGER_BODY, B_PIVOT, B_PIVOT_BODY, B_SIDE,
                            B_SIZES, packed)
from .indirect import MechanismRangeError


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


def _segment(name: str, kind: str, body: int, start: np.ndarray, end: np.ndarray,
             pin_axis: np.ndarray) -> Segment:
    d = end - start
    length = np.linalg.norm(d, axis=-1)
    z = d / length[..., None]
    x = pin_axis - np.sum(pin_axis * z, axis=-1)[..., None] * z
    x = x / np.linalg.norm(x, axis=-1)[..., None]
    rotation = np.stack([x, cross(z, x), z], axis=-1)
    return Segment(name, kind, body, start, end, length, rotation)


@kernel
def balancer_local_points(bal_int, bal_vec, b, rotations, origins):
    """Points of balancer half ``b`` in its pivot body's frame (seed 000 eqs. 22-27), for one
    sample (kernel): ``(reachable, pivot F3, lever end B4sla, hanger top B4slc, spring attach
    B4slb, spring anchor)``. Where the lever cannot reach, ``reachable`` is False."""
    pb, hb, side = bal_int[b, B_PIVOT_BODY], bal_int[b, B_HANGER_BODY], bal_int[b, B_SIDE]
    R = mat(rotations, pb, 1)
    hanger_world = add(vec(origins, hb, 1), mat_vec(mat(rotations, hb, 1), vec(bal_vec, b, B_HANGER)))
    hanger = mat_t_vec(R, sub(hanger_world, vec(origins, pb, 1)))
    pivot = vec(bal_vec, b, B_PIVOT)
    lever, hanger_length, attach = vec(bal_vec, b, B_SIZES)
    top_z = hanger[2]                                                 # eq. 22
    end_z = top_z - hanger_length                                     # eq. 23
    dz = end_z - pivot[2]
    reach2 = lever * lever - dz * dz
    end_x = pivot[0] + side * math.sqrt(max(reach2, 0.0))             # eq. 24
    lever_end = (end_x, pivot[1], end_z)
    hanger_top = (end_x, pivot[1], top_z)                             # eqs. 22, 25
    attach_point = add(pivot, scale(attach / lever, sub(lever_end, pivot)))   # eqs. 26-27
    return (reach2 >= 0.0, pivot, lever_end, hanger_top, attach_point,
            vec(bal_vec, b, B_ANCHOR))


@kernel
def _balancer_points_batch(bal_int, bal_vec, b, rotations, origins, out) -> int:
    failed = -1
    for s in range(rotations.shape[0]):
        pts = balancer_local_points(bal_int, bal_vec, b, rotations[s], origins[s])
        if not pts[0] and failed < 0:
            failed = s
        R = mat(rotations[s], bal_int[b, B_PIVOT_BODY], 1)
        O = vec(origins[s], bal_int[b, B_PIVOT_BODY], 1)
        store(out, s, 0, add(O, mat_vec(R, pts[1])))
        store(out, s, 1, add(O, mat_vec(R, pts[2])))
        store(out, s, 2, add(O, mat_vec(R, pts[3])))
        store(out, s, 3, add(O, mat_vec(R, pts[4])))
        store(out, s, 4, add(O, mat_vec(R, pts[5])))
    return failed


BALANCER_POINTS = ("pivot", "lever_end", "hanger_top", "spring_attach", "spring_anchor")


def balancer_points(model: Model, placements: Placements, bal: Balancer) -> dict[str, np.ndarray]:
    """Points of one balancer half in the world frame (seed 000 eqs. 22-27).

    Keys: ``pivot`` (F3), ``lever_end`` (B4sla), ``hanger_top`` (B4slc), ``spring_attach``
    (B4slb), ``spring_anchor``. Raises MechanismRangeError if the lever cannot reach.
    """
    pm = packed(model)
    rotations, origins = placements.per_sample()
    out = np.empty((rotations.shape[0], 5, 3))
    if _balancer_points_batch(pm.bal_int, pm.bal_vec, model.balancers.index(bal), rotations,
                              origins, out) >= 0:
        raise balancer_range_error(bal)
    out = out.reshape(placements.lead + (5, 3))
    return {name: out[..., k, :] for k, name in enumerate(BALANCER_POINTS)}


def balancer_range_error(bal: Balancer) -> MechanismRangeError:
    return MechanismRangeError(f"{bal.name}: the lever of length {bal.lever_length:g} m cannot "
                               f"reach the hanger of length {bal.hanger_length:g} m")


def auxiliary_segments(model: Model, placements: Placements) -> list[Segment]:
    """Every auxiliary body of the model: actuators, springs, balancer levers/hangers/springs."""
    out = []
    for act in model.actuators:
        start = placements.to_world(act.base.body, act.base.local)
        end = placements.to_world(act.end.body, act.end.local)
        i = act.drives
        pin = rotate(placements.rotation_world[..., i, :, :], model.axis[i]) \
            if model.joint_type[i] == JointType.REVOLUTE else \
            placements.rotation_world[..., act.base.body, :, 0]
        out.append(_segment(act.name, "actuator", act.base.body, start, end, pin))
    for spring in model.springs:
        start = placements.to_world(spring.start.body, spring.start.local)
        end = placements.to_world(spring.end.body, spring.end.local)
        out.append(_segment(spring.name, "spring", spring.start.body, start, end,
                            placements.rotation_world[..., spring.start.body, :, 0]))
    for bal in model.balancers:
        pts = balancer_points(model, placements, bal)
        pin = placements.rotation_world[..., bal.pivot.body, :, 1]
        b = bal.pivot.body
        out.append(_segment(f"{bal.name}_lever", "lever", b, pts["pivot"], pts["lever_end"], pin))
        out.append(_segment(f"{bal.name}_hanger", "hanger", b, pts["lever_end"], pts["hanger_top"],
                            pin))
        out.append(_segment(f"{bal.name}_spring", "spring", b, pts["spring_attach"],
                            pts["spring_anchor"], pin))
    return out
