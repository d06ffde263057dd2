"""Dynamics of the tree: recursive Newton-Euler inverse dynamics with the closed loops; mass
matrix, bias forces and forward dynamics in joint coordinates (the algorithms; their users,
the simulation and the node's evaluators, are rooms of their own above this one)."""
from .forward import MassMatrixError, forward_dynamics
from .inverse import ExternalWrench, Loads, Payload, inverse_dynamics
from .mass_matrix import bias_forces, mass_matrix, mass_matrix_from_inverse_dynamics
from .rnea import TreeWrenches, joint_efforts, tree_backward_pass

__all__ = ["ExternalWrench", "Loads", "Payload", "inverse_dynamics", "TreeWrenches",
           "joint_efforts", "tree_backward_pass", "bias_forces", "mass_matrix",
           "mass_matrix_from_inverse_dynamics", "forward_dynamics", "MassMatrixError"]
