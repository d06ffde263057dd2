"""Rotation matrices used by the model: the file's constant rotations (intrinsic ZXZ Euler
angles, URDF roll-pitch-yaw, quaternions) and rotations about a joint axis.

Notation of seed 000 section 4.2: ``R^{i-1}_i`` is the orientation of body i in the frame
of its predecessor, composed as ``R^0_i = R^0_{i-1} R^{i-1}_i`` (eq. 16).
"""
from __future__ import annotations

import math

import numpy as np

from ..jit import kernel
from ..linalg import mat_mul, mat_vec, store_mat

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
def rotation_about(axis, angle):
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues: c 1 + s [a]x +
    (1 - c) a a^T), rows. About a coordinate axis it is exactly the elementary rotation
    (the zero products vanish), seed 000 eq. 18's true rotation for y."""
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    x, y, z = axis[0], axis[1], axis[2]
    return ((t * x * x + c, t * x * y - s * z, t * x * z + s * y),
            (t * x * y + s * z, t * y * y + c, t * y * z - s * x),
            (t * x * z - s * y, t * y * z + s * x, t * z * z + c))


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
    """``M @ Rot(e_k, angle)`` for the coordinate axis e_k (k = 0, 1, 2: x, y, z), rows:
    :func:`rotation_about` e_k composed with M in 12 products."""
    c, s = math.cos(angle), math.sin(angle)
    return (_turn_row(M[0], k, c, s), _turn_row(M[1], k, c, s), _turn_row(M[2], k, c, s))


@kernel
def _axis_rotations(axis, angles, out) -> None:
    for n in range(angles.shape[0]):
        store_mat(out, n, 0, rotation_about(axis, angles[n]))


def axis_rotation(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotation by ``angle`` (any shape) about the unit vector ``axis``: (..., 3, 3)."""
    angle = np.asarray(angle, dtype=float)
    out = np.empty(angle.shape + (3, 3))
    a = np.asarray(axis, dtype=float)
    _axis_rotations((float(a[0]), float(a[1]), float(a[2])),
                    np.ascontiguousarray(angle).reshape(-1), out.reshape(-1, 1, 3, 3))
    return out


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


@kernel(inline=True)
def quaternion_rows(x, y, z, w):
    """Rotation matrix of the unit quaternion (x, y, z, w), rows (kernel)."""
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
            (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
            (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))


def quaternion_matrix(x: float, y: float, z: float, w: float) -> np.ndarray:
    """Rotation matrix of the unit quaternion (x, y, z, w)."""
    return np.array(quaternion_rows(x, y, z, w))


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


@kernel(hold_gil=True)
def turn_poses(turn, translations, quaternions_xyzw, parents, children) -> None:
    """Poses (translations (n, 3), quaternions (n, 4) x y z w) changed in place by a fixed
    rotation ``turn`` (3, 3) of one frame: those at ``parents`` (int64 indices), whose parent
    it is, premultiplied (t <- turn t, R <- turn R); those at ``children``, whose child it
    is, postmultiplied by its transpose (R <- R turn^T). One call for a whole message (the
    dynamics node's REP 103 base_link on /tf); keeps the GIL (a thread's microseconds)."""
    T = ((turn[0, 0], turn[0, 1], turn[0, 2]), (turn[1, 0], turn[1, 1], turn[1, 2]),
         (turn[2, 0], turn[2, 1], turn[2, 2]))
    Tt = ((T[0][0], T[1][0], T[2][0]), (T[0][1], T[1][1], T[2][1]), (T[0][2], T[1][2], T[2][2]))
    q = quaternions_xyzw
    for j in range(parents.shape[0]):
        k = parents[j]
        translations[k, 0], translations[k, 1], translations[k, 2] = mat_vec(
            T, (translations[k, 0], translations[k, 1], translations[k, 2]))
        q[k, 0], q[k, 1], q[k, 2], q[k, 3] = quaternion_of(
            mat_mul(T, quaternion_rows(q[k, 0], q[k, 1], q[k, 2], q[k, 3])))
    for j in range(children.shape[0]):
        k = children[j]
        q[k, 0], q[k, 1], q[k, 2], q[k, 3] = quaternion_of(
            mat_mul(quaternion_rows(q[k, 0], q[k, 1], q[k, 2], q[k, 3]), Tt))
