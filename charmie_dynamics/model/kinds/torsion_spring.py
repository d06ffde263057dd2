"""A torsion spring between two bodies about an axis fixed in the start body, carried by the
end body as the same axis (its couples and angle: mechanisms/forces.py): the model file's
``torsion_springs``."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np

from ...layout import MechKind
from ..fields import read_direction
from ..parameters import JointType, ModelParameters, PointRef, SpringParams
from ..validation import (MAX_ANGLE_RAD, MAX_EFFORT, MAX_STIFFNESS, ROTATION_TOLERANCE, FieldReader,
                          show)
from .kind import MechanismKind


@dataclass(frozen=True)
class TorsionSpring:
    """A torsion spring between a start and an end body about an axis fixed in the start
    body, carried by the end body as the same axis (mechanisms/forces.py); directions are
    unit vectors, the references perpendicular to the axis."""

    name: str
    start: int                     # body index
    end: int                       # body index
    axis: np.ndarray               # in the start body's frame, (3,)
    start_reference: np.ndarray    # the angle's zero direction in the start body's frame, (3,)
    end_reference: np.ndarray      # the end body's direction measured from it, its frame, (3,)
    params: SpringParams           # torque = stiffness (angle - free angle) + preload


def torsion_end_axis(r: FieldReader, tree: ModelParameters, start: int, end: int, axis: np.ndarray,
                      where: str) -> np.ndarray:
    """The torsion spring's axis in the end body's frame, after checking that the end body
    turns relative to the start body about that axis only: every moving joint on the tree
    path between them revolute about an axis parallel to it. Each joint turns about an axis
    parallel to ``axis``, so the check holds at any configuration if it holds with the joints
    at zero (a turn about ``axis`` leaves it and every parallel axis unchanged), and the
    axis's image in the end body's frame is that configuration's."""
    def ancestors(body: int) -> list[int]:
        chain = []
        while body >= 0:
            chain.append(body)
            body = int(tree.parent[body])
        return chain

    up, down = ancestors(start), ancestors(end)
    # every body's rotation in the world at zero, from the root down: one product a body
    # (linear in the depth), R_b = R_parent(b) rotation_b
    world: dict[int, np.ndarray] = {-1: np.eye(3)}
    for body in reversed(up + down):
        if body not in world:
            world[body] = world[int(tree.parent[body])] @ tree.rotation[body]
    common = set(up) & set(down)
    path = [b for b in up + down if b not in common]       # the joints between the bodies
    u = world[start] @ axis
    for b in path:
        body = tree.bodies[b]
        if body.joint_type == JointType.FIXED:
            continue
        joint_axis = world[b] @ tree.axis[b]
        if body.joint_type != JointType.REVOLUTE \
                or np.linalg.norm(np.cross(joint_axis, u)) > ROTATION_TOLERANCE:
            raise r.fail(f"{where}.between",
                         f"the joint of {body.name} ({body.joint_type.name.lower()}, "
                         f"axis {np.round(joint_axis, 6).tolist()} in the world at zero) lies "
                         f"between the two bodies, expected only revolute joints about axes "
                         f"parallel to the spring's ({np.round(u, 6).tolist()})")
    return world[end].T @ u



class TorsionSpringKind(MechanismKind):
    section, label, code = "torsion_springs", "torsion springs", int(MechKind.TORSION_SPRING)
    output, unit = "torque", "N m"

    def load(self, r: FieldReader, tree: ModelParameters, data: Any, k: int) -> TorsionSpring:
        """Two bodies, the axis and the start body's reference direction in the start body's
        frame, the end body's in its own."""
        data, name, where = r.named_entry(data, f"torsion_springs[{k}]", {
            "name", "between", "axis", "start_reference", "end_reference", "stiffness",
            "free_angle", "preload"})
        between = r.get(data, "between", where)
        if not isinstance(between, (list, tuple)) or len(between) != 2:
            raise r.fail(f"{where}.between",
                         f"got {show(between)}, expected [START_BODY, END_BODY]")
        bodies = []
        for i, body in enumerate(between):
            try:
                bodies.append(tree.body_index(body))
            except KeyError:
                raise r.fail(f"{where}.between[{i}]", f"got {show(body)}, expected a body name") \
                    from None
        if bodies[0] == bodies[1]:
            raise r.fail(f"{where}.between",
                         f"got {show(between)}, expected two different bodies")
        axis = read_direction(r, r.get(data, "axis", where), f"{where}.axis", 3)
        start_reference = read_direction(r, r.get(data, "start_reference", where),
                                         f"{where}.start_reference", 3)
        end_reference = read_direction(r, r.get(data, "end_reference", where),
                                       f"{where}.end_reference", 3)
        if abs(axis @ start_reference) > ROTATION_TOLERANCE:
            raise r.fail(f"{where}.start_reference", f"got {show(data['start_reference'])}, at "
                         f"cos {axis @ start_reference:.3g} to the axis, expected a direction "
                         f"perpendicular to the axis (|cos| <= {ROTATION_TOLERANCE:g})")
        end_axis = torsion_end_axis(r, tree, bodies[0], bodies[1], axis, where)
        if abs(end_axis @ end_reference) > ROTATION_TOLERANCE:
            raise r.fail(f"{where}.end_reference", f"got {show(data['end_reference'])}, at cos "
                         f"{end_axis @ end_reference:.3g} to the axis (in {between[1]}'s frame: "
                         f"{np.round(end_axis, 6).tolist()}), expected a direction perpendicular "
                         f"to it (|cos| <= {ROTATION_TOLERANCE:g})")
        law = SpringParams(
            stiffness=r.magnitude(r.get(data, "stiffness", where), f"{where}.stiffness",
                                  MAX_STIFFNESS, "stiffness", "N m/rad", 1.0 / r.angle,
                                  nonnegative=True),
            free_length=r.magnitude(r.get(data, "free_angle", where, 0.0), f"{where}.free_angle",
                                    MAX_ANGLE_RAD, "angle", "rad", r.angle),
            preload=r.magnitude(r.get(data, "preload", where, 0.0), f"{where}.preload", MAX_EFFORT,
                                "preload", "N m"))
        return TorsionSpring(name=name, start=bodies[0], end=bodies[1], axis=axis,
                             start_reference=start_reference, end_reference=end_reference,
                             params=law)

    def row(self, item: TorsionSpring, k: int, shares: Mapping[int, int]):
        return ([self.code, item.start, item.end, k, 0, -1], item.params,
                [item.axis, item.start_reference, item.end_reference])

    def with_law(self, item: TorsionSpring, law: SpringParams) -> TorsionSpring:
        return replace(item, params=law)

    def overlay_entry(self, item: TorsionSpring, point: Callable[[PointRef], str],
                      link: Callable[[int], str]) -> dict:
        return {"name": item.name, "between": [link(item.start), link(item.end)],
                "axis": item.axis.tolist(), "start_reference": item.start_reference.tolist(),
                "end_reference": item.end_reference.tolist(),
                "stiffness": item.params.stiffness, "free_angle": item.params.free_length,
                "preload": item.params.preload}

    def stiffness_scale(self, length: float, angle: float) -> float:
        return angle


TORSION_SPRING = TorsionSpringKind()
