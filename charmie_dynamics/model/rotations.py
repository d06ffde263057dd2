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
def _turn_row(a, k, c, s):
    """A row of ``M @ Rot(e_k, angle)`` from the row ``a`` of M (c, s: cos, sin of the angle)."""
    if k == 0:
        return (a[0], c * a[1] + s * a[2], c * a[2] - s * a[1])
    if k == 1:
        return (c * a[0] - s * a[2], a[1], c * a[2] + s * a[0])
    return (c * a[0] + s * a[1], c * a[1] - s * a[0], a[2])


@kernel
def turn_about_coordinate_axis(M, k, angle):
    """``M @ Rot(e_k, angle)`` for the coordinate axis e_k (k = 0, 1, 2: x, y, z), rows.

    Rot is the true rotation of seed 000 eq. 18 (for y: ZXZEuler(pi/2, q, -pi/2), not seed
    001 eq. 3's ZXZEuler(pi/2, q, 0)); a joint about -e_k turns by -angle.
    """
    c, s = math.cos(angle), math.sin(angle)
    return (_turn_row(M[0], k, c, s), _turn_row(M[1], k, c, s), _turn_row(M[2], k, c, s))


@kernel
def _axis_rotations(k, angles, out) -> None:
    identity = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    for n in range(angles.shape[0]):
        store_mat(out, n, 0, turn_about_coordinate_axis(identity, k, angles[n]))


def coordinate_axis(axis: np.ndarray) -> tuple[int, float]:
    """(k, sign) of a joint axis ``sign * e_k``; ValueError for any other vector."""
    axis = np.asarray(axis, dtype=float)
    k = int(np.argmax(np.abs(axis)))
    if not (abs(axis[k]) == 1.0 and np.count_nonzero(axis) == 1):
        raise ValueError(f"joint axis {axis.tolist()} is not +-x, +-y or +-z")
    return k, float(axis[k])


def axis_rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation by ``angle`` (any shape) about the joint axis ``axis`` (+-x, +-y or +-z):
    (..., 3, 3)."""
    k, sign = coordinate_axis(axis)
    angle = np.asarray(angle, dtype=float)
    out = np.empty(angle.shape + (3, 3))
    _axis_rotations(k, np.ascontiguousarray(sign * angle).reshape(-1), out.reshape(-1, 1, 3, 3))
    return out


@kernel
def quaternion_of(M):
    """Unit quaternion (x, y, z, w) of a rotation matrix given as rows, by Shepperd's method
    (stable for every rotation): from the largest of 1 + trace and 1 + 2 M_kk - trace."""
    t = M[0][0] + M[1][1] + M[2][2]
    a21, a02, a10 = M[2][1] - M[1][2], M[0][2] - M[2][0], M[1][0] - M[0][1]
    b01, b02, b12 = M[0][1] + M[1][0], M[0][2] + M[2][0], M[1][2] + M[2][1]
    if t >= M[0][0] and t >= M[1][1] and t >= M[2][2]:
        s = 2.0 * math.sqrt(1.0 + t)
        return (a21 / s, a02 / s, a10 / s, 0.25 * s)
    if M[0][0] >= M[1][1] and M[0][0] >= M[2][2]:
        s = 2.0 * math.sqrt(1.0 + 2.0 * M[0][0] - t)
        return (0.25 * s, b01 / s, b02 / s, a21 / s)
    if M[1][1] >= M[2][2]:
        s = 2.0 * math.sqrt(1.0 + 2.0 * M[1][1] - t)
        return (b01 / s, 0.25 * s, b12 / s, a02 / s)
    s = 2.0 * math.sqrt(1.0 + 2.0 * M[2][2] - t)
    return (b02 / s, b12 / s, 0.25 * s, a10 / s)


@kernel
def _quaternions(R, out) -> None:
    for k in range(R.shape[0]):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = quaternion_of(
            ((R[k, 0, 0], R[k, 0, 1], R[k, 0, 2]), (R[k, 1, 0], R[k, 1, 1], R[k, 1, 2]),
             (R[k, 2, 0], R[k, 2, 1], R[k, 2, 2])))


def quaternions(R: np.ndarray) -> np.ndarray:
    """Unit quaternions (x, y, z, w) of rotation matrices (..., 3, 3): (..., 4)."""
    R = np.ascontiguousarray(R, dtype=float)
    out = np.empty(R.shape[:-2] + (4,))
    _quaternions(R.reshape(-1, 3, 3), out.reshape(-1, 4))
    return out
