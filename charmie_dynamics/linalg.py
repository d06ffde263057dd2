"""Small linear-algebra helpers: ``rotate`` for arrays with leading sample axes, and the
scalar helpers of the compiled kernels."""
from __future__ import annotations

import math

import numpy as np

from .jit import kernel


def direction_and_length(v: np.ndarray) -> tuple[np.ndarray, float]:
    """v / |v| and |v| for a finite vector, without the overflow of |v| for entries beyond
    about 1e154 (scaled by the largest entry first): [0, 0, 1e200] is the z axis, not
    [0, 0, 0]. The direction is NaN where |v| is 0."""
    peak = float(np.max(np.abs(v), initial=0.0))
    if not peak > 0:
        return np.full(np.shape(v), np.nan), 0.0
    scaled = np.asarray(v, dtype=float) / peak
    norm = float(np.linalg.norm(scaled))
    return scaled / norm, peak * norm


def rotate(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R @ v`` for (..., 3, 3) and (..., 3)."""
    return np.einsum("...ij,...j->...i", R, v)


# Scalar helpers for the compiled kernels (charmie_dynamics.jit). Vectors are 3-tuples of
# floats and matrices 3-tuples of rows, which numba keeps in registers; arrays of them are laid
# out (count, slots, 3) and (count, slots, 3, 3) and addressed by (item, slot), so the
# recursions neither allocate nor create array views.

@kernel
def vec3(a):
    """A (3,) array as a 3-tuple."""
    return (a[0], a[1], a[2])


@kernel
def vec(a, i, k):
    """The 3-vector ``a[i, k]`` of an (n, slots, 3) array."""
    return (a[i, k, 0], a[i, k, 1], a[i, k, 2])


@kernel
def store(a, i, k, v) -> None:
    a[i, k, 0] = v[0]
    a[i, k, 1] = v[1]
    a[i, k, 2] = v[2]


@kernel
def accumulate(a, i, k, v) -> None:
    a[i, k, 0] += v[0]
    a[i, k, 1] += v[1]
    a[i, k, 2] += v[2]


@kernel
def mat(a, i, k):
    """The 3x3 matrix ``a[i, k]`` of an (n, slots, 3, 3) array, as rows."""
    return ((a[i, k, 0, 0], a[i, k, 0, 1], a[i, k, 0, 2]),
            (a[i, k, 1, 0], a[i, k, 1, 1], a[i, k, 1, 2]),
            (a[i, k, 2, 0], a[i, k, 2, 1], a[i, k, 2, 2]))


@kernel
def store_mat(a, i, k, M) -> None:
    for r in range(3):
        a[i, k, r, 0] = M[r][0]
        a[i, k, r, 1] = M[r][1]
        a[i, k, r, 2] = M[r][2]


@kernel
def column(M, c):
    """Column ``c`` of a matrix of rows."""
    return (M[0][c], M[1][c], M[2][c])


@kernel
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@kernel
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@kernel
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@kernel
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@kernel
def cross3(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@kernel
def reciprocal(v):
    """1 / v, and +-inf for +-0 as a compiled kernel gives it (numba's numpy error model):
    a kernel run as plain Python would raise ZeroDivisionError there instead."""
    return 1.0 / v if v != 0.0 else math.copysign(math.inf, v)


@kernel
def norm(a):
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@kernel
def mat_vec(M, v):
    """``M @ v``."""
    return (dot(M[0], v), dot(M[1], v), dot(M[2], v))


@kernel
def mat_t_vec(M, v):
    """``M.T @ v``."""
    return (M[0][0] * v[0] + M[1][0] * v[1] + M[2][0] * v[2],
            M[0][1] * v[0] + M[1][1] * v[1] + M[2][1] * v[2],
            M[0][2] * v[0] + M[1][2] * v[1] + M[2][2] * v[2])


@kernel
def mat_mul(A, B):
    """``A @ B``."""
    Bt = ((B[0][0], B[1][0], B[2][0]), (B[0][1], B[1][1], B[2][1]), (B[0][2], B[1][2], B[2][2]))
    return ((dot(A[0], Bt[0]), dot(A[0], Bt[1]), dot(A[0], Bt[2])),
            (dot(A[1], Bt[0]), dot(A[1], Bt[1]), dot(A[1], Bt[2])),
            (dot(A[2], Bt[0]), dot(A[2], Bt[1]), dot(A[2], Bt[2])))
