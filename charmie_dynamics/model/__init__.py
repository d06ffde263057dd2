"""The model: parameters of a tree of rigid bodies and its mechanisms, and its loader."""
from .loader import ModelError, load_model, model_from_dict
from .model import (Actuator, Balancer, Body, JointLimits, JointType, Model, PointRef, Spring,
                    SpringParams)

__all__ = ["ModelError", "load_model", "model_from_dict", "Actuator", "Balancer", "Body",
           "JointLimits", "JointType", "Model", "PointRef", "Spring", "SpringParams"]
