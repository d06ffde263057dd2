"""Small vector helpers broadcasting over leading (sample) axes; faster than np.cross on 3-vectors."""
from __future__ import annotations

import numpy as np


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross product of (..., 3) arrays."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def rotate(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R @ v`` for (..., 3, 3) and (..., 3)."""
    return np.einsum("...ij,...j->...i", R, v)


def rotate_back(R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``R.T @ v`` for (..., 3, 3) and (..., 3)."""
    return np.einsum("...ji,...j->...i", R, v)
