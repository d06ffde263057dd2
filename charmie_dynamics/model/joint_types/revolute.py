"""The revolute joint (type R; URDF's revolute, or continuous without limits): it turns its
body about a unit axis by its value (rad), Featherstone's RBDA Table 4.1, Pinocchio's
JointModelRevoluteUnaligned (and RX/RY/RZ about a coordinate axis: ``model/joint.py``)."""
from __future__ import annotations

from typing import Optional

from ..parameters import JointType
from .joint_type import JointTypeSpec


class RevoluteType(JointTypeSpec):
    code, letter, described = JointType.REVOLUTE, "R", "a revolute joint (type R)"
    urdf_types = ("revolute", "continuous")
    in_loops = True

    def urdf_type(self, limited: bool) -> Optional[str]:
        return "revolute" if limited else "continuous"


REVOLUTE = RevoluteType()
