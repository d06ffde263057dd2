"""What a joint type is, Python side (issue 39 item 1; Pinocchio's joint-collection.hpp lists
its joint models the same way): one module per type holds how a model file and a URDF write
it, which fields its joint takes and how they are read (SI at load), and what the closed
chains and the URDF export make of it, behind this interface; the registry
(``joint_types.JOINT_TYPES``) is what the loader, the URDF import and export and the closed
chains iterate.

Kernel side a type is its code (:class:`JointType`, the KIND column of ``body_int``) and one
branch in each of ``model/joint.py``'s ``joint_transform`` and ``joint_motion`` (numba
cannot iterate a table of functions, so the dispatch is one ``if`` per type, as the
mechanism kinds' laws are in ``mechanisms/forces.py``). A joint the loader writes as two
bodies (the cylindrical joint, ``cylindrical.py``) is no type of its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Optional

import numpy as np

from ..fields import NO_FRICTION, read_axis, read_friction
from ..parameters import Friction, JointLimits, JointType
from ..validation import (MAX_ANGLE_RAD, MAX_ANGULAR_VELOCITY, MAX_EFFORT, MAX_LENGTH_M,
                          MAX_LINEAR_VELOCITY, MAX_PITCH, MULTIPLIER_RANGE, UNITS_HINT, FieldReader,
                          show)

NO_LIMITS = JointLimits()           # frozen: one for every joint without any
#: the fields a body's ``joint`` may hold (each type takes some of them)
JOINT_KEYS = frozenset({"type", "axis", "coordinate", "multiplier", "offset", "limits",
                        "friction", "pitch"})


@dataclass(frozen=True)
class JointFields:
    """A joint's own fields, read (SI): what :class:`~..parameters.Body` takes from them."""

    axis: np.ndarray = field(default_factory=lambda: np.zeros(3))
    coordinate: Optional[str] = None
    multiplier: float = 1.0
    offset: float = 0.0
    pitch: float = 0.0
    limits: JointLimits = NO_LIMITS
    friction: Friction = NO_FRICTION


class JointTypeSpec:
    """One joint type (a subclass per type module, one instance in the registry)."""

    #: its code: ``Body.joint_type``, the kernels' branch
    code: ClassVar[JointType]
    #: ``joint.type`` in a model file, and its name in messages ("a helical joint (type H)")
    letter: ClassVar[str]
    described: ClassVar[str]
    #: the URDF ``<joint type=...>`` read as this type (model/urdf.py), in the order written
    urdf_types: ClassVar[tuple[str, ...]] = ()
    #: the closed chains are built and tested on it (mechanisms/closed_chains)
    in_loops: ClassVar[bool] = False
    #: it takes a ``pitch`` (the one field only one type takes)
    takes_pitch: ClassVar[bool] = False

    def fields(self, r: FieldReader, joint: Mapping, where: str, parent: str) -> JointFields:
        """The joint's fields (``where``: its field path, ``parent``: its body's parent): a
        pitch refused on every type but the one that takes it, then its own :meth:`read`."""
        if "pitch" in joint and not self.takes_pitch:
            raise r.fail(f"{where}.pitch", f"got {show(joint['pitch'])} on a "
                         f"{show(joint['type'])} joint ({self.code.name.lower()}), expected "
                         f"pitch only on a helical joint (type H): a number, |pitch| <= "
                         f"{MAX_PITCH:g} m/rad")
        return self.read(r, joint, where, parent)

    def read(self, r: FieldReader, joint: Mapping, where: str, parent: str) -> JointFields:
        """The fields of a joint of one coordinate (revolute, prismatic, helical), read in
        this order: an axis, its coordinate, the coupling (multiplier, offset), a pitch where
        the type takes one (:meth:`read_pitch`), limits (checked by :meth:`check_limits`) and
        friction."""
        angular = self.code.angular
        axis = read_axis(r, r.get(joint, "axis", where), f"{where}.axis")
        coordinate = r.name(r.get(joint, "coordinate", where), f"{where}.coordinate",
                            dotted=True)
        multiplier = r.number(r.get(joint, "multiplier", where, 1.0), f"{where}.multiplier")
        if multiplier == 0:
            raise r.fail(f"{where}.multiplier", "got 0, expected a non-zero number")
        low, high = MULTIPLIER_RANGE
        if not low <= abs(multiplier) <= high:
            raise r.fail(f"{where}.multiplier", f"got {show(multiplier)}, expected "
                                                f"{low:g} <= |multiplier| <= {high:g}")
        offset = 0.0
        if "offset" in joint:       # in the joint value's unit, like its limits
            offset = (r.magnitude(joint["offset"], f"{where}.offset", MAX_ANGLE_RAD, "angle",
                                  "rad", r.angle) if angular else
                      r.length_value(joint["offset"], f"{where}.offset"))
        pitch = self.read_pitch(r, joint, where)
        limits = read_limits(r, joint.get("limits"), angular, f"{where}.limits")
        self.check_limits(r, joint, where, limits, pitch)
        return JointFields(axis=axis, coordinate=coordinate, multiplier=multiplier,
                           offset=offset, pitch=pitch, limits=limits,
                           friction=read_friction(r, joint.get("friction"), self.code.linear,
                                                  f"{where}.friction"))

    def read_pitch(self, r: FieldReader, joint: Mapping, where: str) -> float:
        """Its pitch (m/rad): 0 but for the type that takes one."""
        return 0.0

    def check_limits(self, r: FieldReader, joint: Mapping, where: str, limits: JointLimits,
                     pitch: float) -> None:
        """What its limits must meet beyond :func:`read_limits`' checks (nothing here)."""

    def urdf_type(self, limited: bool) -> Optional[str]:
        """The URDF joint type it is written as (``limited``: it has a lower or an upper
        limit); None where URDF has none."""
        return self.urdf_types[0] if self.urdf_types else None

    def refuse_fields(self, r: FieldReader, joint: Mapping, where: str, allowed: set[str],
                      expected: str) -> None:
        """A joint of this type given fields it does not take (``allowed``: those it takes
        besides ``type``)."""
        extra = sorted(set(joint) - allowed - {"type"})
        if extra:
            raise r.fail(where, f"got {', '.join(extra)} for {self.described}, "
                                f"expected {expected}")


def read_limits(r: FieldReader, value: Any, angular: bool, where: str) -> JointLimits:
    """A joint's limits: an angle's (rad, rad/s, N m) or a length's (m, m/s, N)."""
    if value is None:
        return NO_LIMITS
    value = r.mapping(value, where)
    r.check_keys(value, {"lower", "upper", "velocity", "effort"}, where)
    if angular:
        pos, units = r.angle, {"position": (MAX_ANGLE_RAD, "rad"), "effort": (MAX_EFFORT, "N m"),
                               "velocity": (MAX_ANGULAR_VELOCITY, "rad/s")}
    else:
        pos, units = r.length, {"position": (MAX_LENGTH_M, "m"), "effort": (MAX_EFFORT, "N"),
                                "velocity": (MAX_LINEAR_VELOCITY, "m/s")}
    out = {}
    for key, what, scale in (("lower", "position", pos), ("upper", "position", pos),
                             ("velocity", "velocity", pos), ("effort", "effort", 1.0)):
        if key in value:
            limit, unit = units[what]
            out[key] = r.magnitude(value[key], f"{where}.{key}", limit, what, unit, scale,
                                   "" if angular or key == "effort" else UNITS_HINT,
                                   positive=key in ("velocity", "effort"))
    if "lower" in out and "upper" in out and out["lower"] >= out["upper"]:
        raise r.fail(where, f"lower {show(value['lower'])} >= upper {show(value['upper'])}, "
                     "expected lower < upper")
    return JointLimits(**out)
