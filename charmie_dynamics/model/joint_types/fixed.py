"""The fixed joint (type F; URDF's fixed): the body moves with its parent, no coordinate."""
from __future__ import annotations

from typing import Mapping

from ..parameters import JointType
from ..validation import FieldReader
from .joint_type import JointFields, JointTypeSpec


class FixedType(JointTypeSpec):
    code, letter, described = JointType.FIXED, "F", "a fixed joint (type F)"
    urdf_types = ("fixed",)
    in_loops = True

    def read(self, r: FieldReader, joint: Mapping, where: str, parent: str) -> JointFields:
        self.refuse_fields(r, joint, where, set(), "none")
        return JointFields()


FIXED = FixedType()
