"""The floating joint (type ``floating``; URDF's floating), Pinocchio's JointModelFreeFlyer:
six degrees of freedom, only on a root body (``model/joint.py`` gives its configuration,
velocity and motion terms). Its one ``coordinate`` names its entries (NAME.x ... NAME.qw,
NAME.vx ... NAME.wz: ``parameters.FREE_FLYER_CONFIGURATION``, ``FREE_FLYER_VELOCITIES``)."""
from __future__ import annotations

from typing import Mapping

from ..parameters import JointType
from ..validation import FieldReader, show
from .joint_type import JointFields, JointTypeSpec


class FreeFlyerType(JointTypeSpec):
    code, letter = JointType.FLOATING, "floating"
    described = "a floating joint (free-flyer)"
    urdf_types = ("floating",)

    def read(self, r: FieldReader, joint: Mapping, where: str, parent: str) -> JointFields:
        self.refuse_fields(r, joint, where, {"coordinate"}, "only type and coordinate")
        if parent != "world":
            raise r.fail(f"{where}.type", f"{self.described} on a body whose parent is "
                                          f"{show(parent)}, expected it only on a body whose "
                                          "parent is world (the root joint)")
        return JointFields(coordinate=r.name(r.get(joint, "coordinate", where),
                                             f"{where}.coordinate", dotted=True))


FREE_FLYER = FreeFlyerType()
