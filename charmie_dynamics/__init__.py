"""charmie_dynamics: multibody kinematics and dynamics of the CHARMIE mobile manipulator.

The numerical core (model, kinematics, mechanisms) imports numpy and PyYAML only::

    from charmie_dynamics import load_model, inputs_from_dict, resolve_state, forward_kinematics
    model = load_model("config/charmie.yaml")
    state = resolve_state(model, *inputs_from_dict(model, {"act4": 0.42, "theta8a": 0.3}))
    frames = forward_kinematics(model, state.q)
"""
from .kinematics import (BodyMotion, JointSpaceState, Placements, StateError, body_motion,
                         forward_kinematics, inputs_from_dict, point_positions, resolve_state)
from .kinematics.indirect import ActuatorRangeError, MechanismRangeError
from .mechanisms.auxiliary import Segment, auxiliary_segments
from .model import Model, ModelError, load_model, model_from_dict
from .model.actuator_geometry import indirect_joints
from .resources import bundled_model

__all__ = ["BodyMotion", "JointSpaceState", "Placements", "StateError", "body_motion",
           "forward_kinematics", "inputs_from_dict", "point_positions", "resolve_state",
           "Segment", "auxiliary_segments", "ActuatorRangeError", "MechanismRangeError",
           "indirect_joints", "Model", "ModelError", "load_model", "model_from_dict",
           "bundled_model"]
