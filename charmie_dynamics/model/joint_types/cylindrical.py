"""The cylindrical joint (type C): loader sugar over a virtual body, as RBDL's
AddBodyMultiDofJoint writes a multi-DoF joint. ``joint: {type: C, axis, coordinate: c}``
becomes a virtual body ``NAME_slide`` on the joint's frame, prismatic along the axis
(coordinate ``c.slide``, m), then the body, revolute about the same axis (``c.turn``, rad),
with its mass and points; neither takes limits, friction, a multiplier or an offset. So it is
no joint type of the kernels: two bodies of the types it is made of."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from ..parameters import Body, JointType
from ..validation import MAX_NAME, FieldReader

LETTER = "C"
SLIDE_SUFFIX = "_slide"


def is_cylindrical(data: Any) -> bool:
    """A body entry whose joint is cylindrical (its entry unread yet)."""
    joint = data.get("joint") if isinstance(data, Mapping) else None
    return isinstance(joint, Mapping) and joint.get("type") == LETTER


def cylindrical_bodies(r: FieldReader, data: Mapping, k: int,
                       read_body: Callable[[Mapping], Body]) -> list[Body]:
    """Body entry ``k``'s two bodies (module docstring); ``read_body`` reads an entry as
    the loader reads one body."""
    where = f"bodies[{k}]"
    joint = data["joint"]
    extra = sorted(set(joint) - {"type", "axis", "coordinate"})
    if extra:
        raise r.fail(f"{where}.joint", f"got {', '.join(extra)} for a cylindrical joint (C), "
                                       "expected only type, axis and coordinate")
    coordinate = r.name(r.get(joint, "coordinate", f"{where}.joint"),
                        f"{where}.joint.coordinate", dotted=True)
    # the names the loader makes (NAME_slide, COORD.slide, COORD.turn) keep the bound on names
    longest = MAX_NAME - len(SLIDE_SUFFIX)
    for field, value, made in (("name", data.get("name"), f"NAME{SLIDE_SUFFIX}"),
                               ("joint.coordinate", coordinate, "COORD.slide")):
        if isinstance(value, str) and len(value) > longest:
            raise r.fail(f"{where}.{field}", f"got a name of {len(value)} characters on a "
                         f"cylindrical joint, expected at most {longest} (the loader also "
                         f"names {made}, at most {MAX_NAME} characters)")
    turn = read_body({**data, "joint": {"type": "R",
                                        "axis": r.get(joint, "axis", f"{where}.joint"),
                                        "coordinate": f"{coordinate}.turn"}})
    slide = replace(turn, name=f"{turn.name}{SLIDE_SUFFIX}", joint_type=JointType.PRISMATIC,
                    coordinate=f"{coordinate}.slide", mass=0.0, com=np.zeros(3),
                    inertia=np.zeros((3, 3)), points={}, virtual=True)
    return [slide, replace(turn, parent=slide.name, origin=np.zeros(3), rotation=np.eye(3))]
