"""Exports of a model to other formats (pure Python: numpy and the package's core only)."""
from ..model.rotations import rpy_to_matrix
from .urdf import matrix_to_rpy, urdf_from_model

__all__ = ["matrix_to_rpy", "rpy_to_matrix", "urdf_from_model"]
