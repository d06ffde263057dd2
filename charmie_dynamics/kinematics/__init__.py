"""Kinematics: joint-space state from actuator lengths, forward kinematics, motion pass, the
configuration space of free-flyers."""
from .configuration import check_configuration, integrate_configuration, neutral_configuration
from .forward import Placements, forward_kinematics, point_positions
from .motion import BodyMotion, body_motion
from .state import JointSpaceState, StateError, inputs_from_dict, resolve_state

__all__ = ["Placements", "forward_kinematics", "point_positions", "BodyMotion", "body_motion",
           "JointSpaceState", "StateError", "inputs_from_dict", "resolve_state",
           "check_configuration", "integrate_configuration", "neutral_configuration"]
