"""The model: parameters of a tree of rigid bodies and its mechanisms, and its loader."""
from .loader import model_from_dict
from .model import (Actuator, Balancer, Body, JointLimits, JointType, Model, PointRef, Spring,
                    SpringParams)
from .reader import load_model, model_from_text, read_model_file
from .validation import ModelError

__all__ = ["ModelError", "load_model", "model_from_dict", "model_from_text", "read_model_file",
           "Actuator", "Balancer", "Body", "JointLimits", "JointType", "Model", "PointRef",
           "Spring", "SpringParams"]
