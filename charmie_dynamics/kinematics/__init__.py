"""Kinematics: joint-space state from actuator lengths, forward kinematics, the frame Jacobian
and its time derivative, motion pass, the configuration space of free-flyers."""
from .configuration import check_configuration, integrate_configuration, neutral_configuration
from .forward import Placements, forward_kinematics, point_positions
from .jacobian import frame_jacobian, frame_jacobian_derivative
from .motion import BodyMotion, body_motion
from .state import JointSpaceState, StateError, inputs_from_dict, resolve_state

__all__ = ["Placements", "forward_kinematics", "point_positions", "frame_jacobian",
           "frame_jacobian_derivative", "BodyMotion", "body_motion",
           "JointSpaceState", "StateError", "inputs_from_dict", "resolve_state",
           "check_configuration", "integrate_configuration", "neutral_configuration"]
