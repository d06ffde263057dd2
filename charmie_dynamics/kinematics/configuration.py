"""The configuration space of a model with free-flyers (nq != nv, as Pinocchio).

A free-flyer's configuration is (x, y, z, qx, qy, qz, qw) (model/parameters.py,
FREE_FLYER_CONFIGURATION) and its velocity v = [v; w], the velocity of the body origin and
the angular velocity, both in the body frame (model/joint.py). Every other coordinate has
one configuration entry and one velocity entry.

* :func:`check_configuration`: the quaternions of a q must be unit within
  QUATERNION_TOLERANCE; the algorithms refuse others (StateError) rather than normalise
  them silently, since a non-unit quaternion is a caller's error (an unnormalised sum, a
  wrong slice) that normalising would hide.
* :func:`integrate_configuration`: q (+) v dt. A free-flyer moves by the exponential of
  SE(3), M' = M exp(v dt), as Pinocchio's ``integrate``: with w = w dt, theta = |w|,

      R' = R exp([w]x),   p' = p + R V(w) v dt,
      V(w) = 1 + (1 - cos theta) / theta^2 [w]x + (theta - sin theta) / theta^3 [w]x^2,

  the quaternion q' = q (x) (sin(theta/2) w/theta, cos(theta/2)), normalised after the
  product; the other coordinates move by v dt.
* :func:`tangent_rate`: d xi/dt for q(t) = q0 (+) xi(t) when the body velocity is v, the
  inverse of SE(3)'s right Jacobian to second order, dexp^-1_xi(v) = v + 1/2 ad_xi v +
  1/12 ad_xi^2 v + O(|xi|^4) (the Runge-Kutta-Munthe-Kaas method; the next term is
  1/720 ad^4: the truncation keeps a fourth-order integrator fourth-order), with
  ad_xi eta = [w_xi x v_eta + v_xi x w_eta; w_xi x w_eta] in the [v; w] order.
"""
from __future__ import annotations

import numpy as np

from ..model.model import Model
from .state import StateError

#: |norm - 1| allowed for a free-flyer's quaternion in a configuration
QUATERNION_TOLERANCE = 1e-9


def _blocks(model: Model) -> tuple[list[int], list[int]]:
    """The configuration and velocity index of each free-flyer's first entry."""
    iq = [int(model.configuration_index[i]) for i in model.free_flyers]
    iv = [int(model.coordinate_index[i]) for i in model.free_flyers]
    return iq, iv


def neutral_configuration(model: Model) -> np.ndarray:
    """q (nq,) with every coordinate 0 and every free-flyer's quaternion the identity."""
    q = np.zeros(model.nq)
    for iq in _blocks(model)[0]:
        q[iq + 6] = 1.0
    return q


def check_configuration(model: Model, q: np.ndarray) -> None:
    """StateError unless every free-flyer quaternion of q (..., nq) is unit within
    QUATERNION_TOLERANCE (module docstring)."""
    for iq in _blocks(model)[0]:
        norm = np.linalg.norm(np.asarray(q)[..., iq + 3:iq + 7], axis=-1)
        bad = np.abs(norm - 1.0) > QUATERNION_TOLERANCE
        if np.any(bad) or not np.all(np.isfinite(norm)):
            names = model.configuration_names
            worst = float(np.max(np.where(np.isfinite(norm), np.abs(norm - 1.0), np.inf)))
            raise StateError(f"q[{iq + 3}:{iq + 7}] ({names[iq + 3]} .. {names[iq + 6]}): a "
                             f"quaternion of norm 1 +- {worst:.3g}, expected a unit "
                             f"quaternion (|norm - 1| <= {QUATERNION_TOLERANCE:g}); normalise "
                             "it or move q with integrate_configuration")


def _quaternion_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a (x) b of (..., 4) quaternions (x, y, z, w)."""
    va, wa, vb, wb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([wa * vb + wb * va + np.cross(va, vb),
                           wa * wb - np.sum(va * vb, axis=-1, keepdims=True)], axis=-1)


def _rotate(quaternion: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R(quaternion) v for (..., 4) unit quaternions and (..., 3) vectors."""
    u, w = quaternion[..., :3], quaternion[..., 3:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def integrate_configuration(model: Model, q: np.ndarray, v: np.ndarray,
                            dt: float = 1.0) -> np.ndarray:
    """q (+) v dt (module docstring): q (..., nq), v (..., nv), broadcast; a new array."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float) * dt
    lead = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    out = np.array(np.broadcast_to(q, lead + q.shape[-1:]))
    v = np.broadcast_to(v, lead + v.shape[-1:])
    if not model.free_flyers:
        return out + v
    scalar = np.ones(model.nv, dtype=bool)          # the coordinates that move by v dt
    for iq, iv in zip(*_blocks(model)):
        scalar[iv:iv + 6] = False
        lin, ang = v[..., iv:iv + 3], v[..., iv + 3:iv + 6]
        theta = np.linalg.norm(ang, axis=-1, keepdims=True)
        small = theta < 1e-4
        t2 = theta * theta
        safe = np.where(small, 1.0, theta)
        a = np.where(small, 0.5 - t2 / 24.0, (1.0 - np.cos(safe)) / (safe * safe))
        b = np.where(small, 1.0 / 6.0 - t2 / 120.0, (safe - np.sin(safe)) / safe ** 3)
        half = np.where(small, 0.5 - t2 / 48.0, np.sin(0.5 * safe) / safe)
        wv = np.cross(ang, lin)
        step = lin + a * wv + b * np.cross(ang, wv)                       # V(w) v dt
        quaternion = out[..., iq + 3:iq + 7]
        out[..., iq:iq + 3] += _rotate(quaternion, step)
        turn = np.concatenate([half * ang, np.cos(0.5 * theta)], axis=-1)
        product = _quaternion_product(quaternion, turn)
        out[..., iq + 3:iq + 7] = product / np.linalg.norm(product, axis=-1, keepdims=True)
    out[..., model.coordinate_configuration[scalar]] += v[..., scalar]
    return out


def tangent_rate(model: Model, xi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """dexp^-1_xi(v) (module docstring): v with each free-flyer's 6 entries corrected,
    xi and v (..., nv); the other coordinates' entries are v's."""
    out = np.array(np.broadcast_to(v, np.broadcast_shapes(np.shape(xi), np.shape(v))),
                   dtype=float)
    for iv in _blocks(model)[1]:
        x = np.asarray(xi)[..., iv:iv + 6]
        eta = out[..., iv:iv + 6].copy()

        def ad(e: np.ndarray) -> np.ndarray:
            return np.concatenate([np.cross(x[..., 3:], e[..., :3])
                                   + np.cross(x[..., :3], e[..., 3:]),
                                   np.cross(x[..., 3:], e[..., 3:])], axis=-1)

        once = ad(eta)
        out[..., iv:iv + 6] = eta + 0.5 * once + ad(once) / 12.0
    return out
