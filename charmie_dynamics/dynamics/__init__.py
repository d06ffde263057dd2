"""Inverse dynamics: recursive Newton-Euler on the tree plus the closed loops."""
from .inverse import ExternalWrench, Loads, Payload, inverse_dynamics
from .rnea import TreeWrenches, joint_efforts, tree_backward_pass

__all__ = ["ExternalWrench", "Loads", "Payload", "inverse_dynamics", "TreeWrenches",
           "joint_efforts", "tree_backward_pass"]
