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

from dataclasses import dataclass

import numpy as np

from ..kinematics.forward import Placements
from ..linalg import cross, rotate, rotate_back
from ..model.model import Balancer, JointType, Model
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


def balancer_points(model: Model, placements: Placements, bal: Balancer) -> dict[str, np.ndarray]:
    """Points of one balancer half in the world frame (seed 000 eqs. 22-27).

    Keys: ``pivot`` (F3), ``lever_end`` (B4sla), ``hanger_top`` (B4slc), ``spring_attach``
    (B4slb), ``spring_anchor``. Raises MechanismRangeError if the lever cannot reach.
    """
    pb = bal.pivot.body
    R = placements.rotation_world[..., pb, :, :]
    O = placements.origin_world[..., pb, :]
    hanger = rotate_back(R, placements.to_world(bal.hanger.body, bal.hanger.local) - O)
    pivot = np.broadcast_to(bal.pivot.local, hanger.shape)
    top_z = hanger[..., 2]                                            # eq. 22
    end_z = top_z - bal.hanger_length                                 # eq. 23
    dz = end_z - pivot[..., 2]
    reach2 = bal.lever_length ** 2 - dz * dz
    if np.any(reach2 < 0):
        raise MechanismRangeError(f"{bal.name}: the lever of length {bal.lever_length:g} m cannot "
                                  f"reach the hanger (height difference {np.max(np.abs(dz)):g} m)")
    end_x = pivot[..., 0] + bal.side * np.sqrt(reach2)                # eq. 24
    lever_end = np.stack([end_x, pivot[..., 1], end_z], axis=-1)
    hanger_top = np.stack([end_x, pivot[..., 1], top_z], axis=-1)     # eqs. 22, 25
    attach = pivot + bal.spring_attach / bal.lever_length * (lever_end - pivot)   # eqs. 26-27
    local = {"pivot": pivot, "lever_end": lever_end, "hanger_top": hanger_top,
             "spring_attach": attach,
             "spring_anchor": np.broadcast_to(bal.spring_anchor.local, hanger.shape)}
    return {k: O + rotate(R, v) for k, v in local.items()}


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
