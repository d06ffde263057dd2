"""The helical joint (type H): it turns its body about a unit axis by its value (rad) and
slides it along the axis by ``pitch`` (m/rad) times the value, RBDA Table 4.1, Pinocchio's
JointModelHelicalUnaligned. URDF has no helical joint (not exported), and the closed chains
are not built on it."""
from __future__ import annotations

from typing import Mapping

from ..parameters import JointLimits, JointType
from ..validation import MAX_LENGTH_M, MAX_PITCH, UNITS_HINT, FieldReader, show
from .joint_type import JointTypeSpec


class HelicalType(JointTypeSpec):
    code, letter, described = JointType.HELICAL, "H", "a helical joint (type H)"
    takes_pitch = True

    def read_pitch(self, r: FieldReader, joint: Mapping, where: str) -> float:
        # length per radian: the file's length unit per rad
        return r.magnitude(r.get(joint, "pitch", where), f"{where}.pitch", MAX_PITCH, "pitch",
                           "m/rad", r.length, UNITS_HINT)

    def check_limits(self, r: FieldReader, joint: Mapping, where: str, limits: JointLimits,
                     pitch: float) -> None:
        for key in ("lower", "upper"):      # its slide, pitch x angle, bounded as a length is
            angle = getattr(limits, key)
            if angle is not None and abs(pitch * angle) > MAX_LENGTH_M:
                raise r.fail(f"{where}.limits.{key}",
                             f"got {show(joint['limits'][key])} with pitch "
                             f"{show(joint['pitch'])}: a slide of {abs(pitch * angle):.6g} m, "
                             f"expected |pitch x limit| <= {MAX_LENGTH_M:g} m (the bound on "
                             "every length)")


HELICAL = HelicalType()
