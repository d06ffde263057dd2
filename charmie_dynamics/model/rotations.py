"""Rotation matrices used by the model: intrinsic ZXZ Euler angles and joint rotations.

Notation of seed 000 section 4.2: ``R^{i-1}_i`` is the orientation of body i in the frame
of its predecessor, composed as ``R^0_i = R^0_{i-1} R^{i-1}_i`` (eq. 16).
"""
from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from ..linalg import store_mat

AXES = {"x": 0, "y": 1, "z": 2}


def zxz_euler(z1: float, x2: float, z3: float) -> np.ndarray:
    """Rotation matrix of intrinsic ZXZ Euler angles, seed 000 eq. 17 (seed 001 eq. 2).

    Equals ``Rz(z1) @ Rx(x2) @ Rz(z3)``.
    """
    c1, s1 = np.cos(z1), np.sin(z1)
    c2, s2 = np.cos(x2), np.sin(x2)
    c3, s3 = np.cos(z3), np.sin(z3)
    return np.array([
        [c1 * c3 - s1 * c2 * s3, -c1 * s3 - s1 * c2 * c3, s1 * s2],
        [s1 * c3 + c1 * c2 * s3, c1 * c2 * c3 - s1 * s3, -c1 * s2],
        [s2 * s3, s2 * c3, c2],
    ])


@kernel
def axis_rotation_rows(axis, angle):
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues' formula), as rows.

    For the coordinate axes this is the true rotation of seed 000 eq. 18 (for y:
    ZXZEuler(pi/2, q, -pi/2), not seed 001 eq. 3's ZXZEuler(pi/2, q, 0)).
    """
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    x, y, z = axis
    return ((c + t * x * x, t * x * y - s * z, t * x * z + s * y),
            (t * x * y + s * z, c + t * y * y, t * y * z - s * x),
            (t * x * z - s * y, t * y * z + s * x, c + t * z * z))


@kernel
def _axis_rotations(axis, angles, out) -> None:
    for k in range(angles.shape[0]):
        store_mat(out, k, 0, axis_rotation_rows(axis, angles[k]))


def axis_rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation by ``angle`` (any shape) about the unit vector ``axis`` (3,): (..., 3, 3)."""
    angle = np.asarray(angle, dtype=float)
    out = np.empty(angle.shape + (3, 3))
    _axis_rotations((float(axis[0]), float(axis[1]), float(axis[2])), angle.reshape(-1),
                    out.reshape(-1, 1, 3, 3))
    return out
