"""The prismatic joint (type P; URDF's prismatic): it slides its body along a unit axis by
its value (m), RBDA Table 4.1, Pinocchio's JointModelPrismaticUnaligned."""
from __future__ import annotations

from ..parameters import JointType
from .joint_type import JointTypeSpec


class PrismaticType(JointTypeSpec):
    code, letter, described = JointType.PRISMATIC, "P", "a prismatic joint (type P)"
    urdf_types = ("prismatic",)
    in_loops = True


PRISMATIC = PrismaticType()
