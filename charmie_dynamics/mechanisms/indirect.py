"""Indirectly actuated joints, under the name the README and earlier releases use: their
constants and the loader's stroke check are the model's (:mod:`..model.actuator_geometry`),
their closed-form solution is kinematics (:mod:`..kinematics.indirect`); both lie below the
mechanisms, which build on them."""
from ..kinematics.indirect import (ActuatorRangeError, MechanismRangeError, check_length,
                                   joint_from_length, length_from_joint, solve_joint)
from ..model.actuator_geometry import (IndirectJoint, check_actuator_geometry, indirect_joint,
                                       indirect_joints)

__all__ = ["ActuatorRangeError", "MechanismRangeError", "check_length", "joint_from_length",
           "length_from_joint", "solve_joint", "IndirectJoint", "check_actuator_geometry",
           "indirect_joint", "indirect_joints"]
