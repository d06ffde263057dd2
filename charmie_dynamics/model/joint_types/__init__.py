"""The joint types, one module each (joint_type.py says what a type holds), registered in
:data:`JOINT_TYPES` in the order a model file's ``joint.type`` lists them: what the loader,
the URDF import and export and the closed chains iterate. The cylindrical joint
(``cylindrical.py``) is the loader's sugar over two of them."""
from __future__ import annotations

from ..parameters import JointType
from .cylindrical import LETTER as CYLINDRICAL
from .fixed import FIXED
from .free_flyer import FREE_FLYER
from .helical import HELICAL
from .joint_type import JOINT_KEYS, JointFields, JointTypeSpec
from .prismatic import PRISMATIC
from .revolute import REVOLUTE

JOINT_TYPES: tuple[JointTypeSpec, ...] = (REVOLUTE, PRISMATIC, HELICAL, FIXED, FREE_FLYER)
_BY_CODE = {spec.code: spec for spec in JOINT_TYPES}
_BY_LETTER = {spec.letter: spec for spec in JOINT_TYPES}
#: ``joint.type`` in a model file: each type's letter, then the loader's sugar
LETTERS = tuple(spec.letter for spec in JOINT_TYPES) + (CYLINDRICAL,)


def joint_type_spec(code: JointType) -> JointTypeSpec:
    """The joint type of a body's ``joint_type``."""
    return _BY_CODE[JointType(code)]


def by_letter(letter: str) -> JointTypeSpec:
    """The joint type a model file's ``joint.type`` names (KeyError for the sugar's, C, or
    another letter)."""
    return _BY_LETTER[letter]


__all__ = ["JOINT_KEYS", "JOINT_TYPES", "LETTERS", "JointFields", "JointTypeSpec", "by_letter",
           "joint_type_spec"]
