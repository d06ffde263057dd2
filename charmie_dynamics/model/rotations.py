"""Rotation matrices used by the model: intrinsic ZXZ Euler angles and joint rotations.

Notation of seed 000 section 4.2: ``R^{i-1}_i`` is the orientation of body i in the frame
of its predecessor, composed as ``R^0_i = R^0_{i-1} R^{i-1}_i`` (eq. 16).
"""
from __future__ import annotations

import numpy as np

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


def axis_rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation by ``angle`` (shape (N,)) about the unit vector ``axis`` (shape (3,)).

    Rodrigues' formula, vectorised over the angles; returns shape (N, 3, 3). For the
    coordinate axes this is the true rotation of seed 000 eq. 18 (for y:
    ZXZEuler(pi/2, q, -pi/2), not seed 001 eq. 3's ZXZEuler(pi/2, q, 0)).
    """
    angle = np.asarray(angle, dtype=float)
    c = np.cos(angle)[..., None, None]
    s = np.sin(angle)[..., None, None]
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)
