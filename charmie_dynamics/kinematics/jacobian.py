"""The frame Jacobian of a point fixed on a body, and its time derivative, for every joint type
from the packed motion subspace (issue 39 item 2; Pinocchio's jacobian.hxx computes one column
per degree of freedom the same way).

For a world point p fixed on body e, and each body j on the tree path from e to the root,
with R^0_j its world rotation, O_j its world origin, m its multiplier and [s_w; s_v] its
joint's motion subspace in its own frame (model/joint.py: [a; 0] revolute, [0; a] prismatic,
[a; h a] helical with pitch h), the column of its coordinate c gains

    z = m R^0_j s_w,   u = m R^0_j s_v:   J_w[:, c] += z,   J_v[:, c] += u + z x (p - O_j)

(a free-flyer: its six velocity coordinates, the unit twists of model/joint.FREE_COLUMNS, no
multiplier). J_w maps the coordinate rates to the world angular velocity of e, J_v to the
world velocity of p (Pinocchio's LOCAL_WORLD_ALIGNED frame Jacobian, angular and linear
parts swapped). Coupled joints (a coordinate on several bodies of the path) add up.

Its time derivative along the rates qd, with omega_j and v_j the world angular velocity of
body j and velocity of its origin (kinematics/motion.py's pass, turned to the world) and v_p
that of p: z and u turn with body j, p - O_j changes at v_p - v_j, so

    dJ_w[:, c] += omega_j x z,
    dJ_v[:, c] += omega_j x u + (omega_j x z) x (p - O_j) + z x (v_p - v_j).

Both are kernels on one sample (the closed chains' constraint rows call them, compiled.py)
with Python wrappers for a placement of one sample.
"""
from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..layout import COORD, IN_WORLD, KIND, MULTIPLIER, PARENT, S_V, S_W, SCALARS, V, W
from ..linalg import add, cross3, mat, mat_vec, scale, sub, vec
from ..model.joint import FREE_COLUMNS, FREE_KIND
from ..model.model import Model
from .forward import Placements
from .motion import BodyMotion


@kernel
def _unit(k):
    """The unit 3-vector e_k, k in 0..2."""
    return (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)


@kernel
def _dof_columns(body_int, body_vec, R, j, d):
    """z = m R s_w and u = m R s_v of body j's degree of freedom d (R: its world rotation;
    the multiplier applied after the rotation, as the motion pass scales the rate)."""
    zero = (0.0, 0.0, 0.0)
    if body_int[j, KIND] == FREE_KIND:
        k = FREE_COLUMNS[d]
        return (mat_vec(R, _unit(k)), zero) if k < 3 else (zero, mat_vec(R, _unit(k - 3)))
    m = body_vec[j, SCALARS, MULTIPLIER]
    return (scale(m, mat_vec(R, vec(body_vec, j, S_W))),
            scale(m, mat_vec(R, vec(body_vec, j, S_V))))


@kernel
def _clear(a, b) -> None:
    """Zeros into two (3, n) arrays."""
    for k in range(3):
        for c in range(a.shape[1]):
            a[k, c] = 0.0
            b[k, c] = 0.0


@kernel
def _path_columns(body_int, body_vec, body, point, placements, motion, v_point, derivative,
                  out_w, out_v) -> None:
    """J (``derivative`` false) or dJ/dt along ``motion``'s rates (``v_point``: the point's
    world velocity) of the world point ``point`` fixed on ``body`` into ``out_w``, ``out_v``
    (3, n): one walk of the tree path for both (module docstring); ``placements``: the
    (rotations, origins) of forward_kinematics_sample."""
    rotations, origins = placements
    _clear(out_w, out_v)
    j = body
    while j >= 0:
        c = body_int[j, COORD]
        if c >= 0:
            R = mat(rotations, j, IN_WORLD)
            arm = sub(point, vec(origins, j, IN_WORLD))
            w_j, arm_rate = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
            if derivative:
                w_j = mat_vec(R, vec(motion, j, W))
                arm_rate = sub(v_point, mat_vec(R, vec(motion, j, V)))
            for d in range(6 if body_int[j, KIND] == FREE_KIND else 1):
                z, u = _dof_columns(body_int, body_vec, R, j, d)
                if derivative:
                    angular = cross3(w_j, z)
                    linear = add(add(cross3(w_j, u), cross3(angular, arm)),
                                 cross3(z, arm_rate))
                else:
                    angular, linear = z, add(u, cross3(z, arm))
                for k in range(3):
                    out_w[k, c + d] += angular[k]
                    out_v[k, c + d] += linear[k]
        j = body_int[j, PARENT]


@kernel
def frame_jacobian_sample(body_int, body_vec, body, point, rotations, origins, jw, jv) -> None:
    """J_w and J_v (3, n) of the world point ``point`` fixed on ``body`` into ``jw``, ``jv``
    (module docstring; one sample, kernel)."""
    # origins stands in for the motion buffer, which the Jacobian does not read
    _path_columns(body_int, body_vec, body, point, (rotations, origins), origins,
                  (0.0, 0.0, 0.0), False, jw, jv)


@kernel
def frame_jacobian_derivative_sample(body_int, body_vec, body, point, rotations, origins,
                                     motion, djw, djv) -> None:
    """dJ_w/dt and dJ_v/dt (3, n) of the world point ``point`` fixed on ``body`` along the
    rates of ``motion`` (the motion pass's buffer, body frames) into ``djw``, ``djv``
    (module docstring; one sample, kernel)."""
    R_e = mat(rotations, body, IN_WORLD)
    w_e = mat_vec(R_e, vec(motion, body, W))
    v_point = add(mat_vec(R_e, vec(motion, body, V)),
                  cross3(w_e, sub(point, vec(origins, body, IN_WORLD))))
    _path_columns(body_int, body_vec, body, point, (rotations, origins), motion, v_point, True,
                  djw, djv)


def _one_sample(model: Model, placements: Placements, body: int
                ) -> tuple[np.ndarray, np.ndarray]:
    if not 0 <= body < model.n_bodies:      # the kernels index without bounds checks
        raise ValueError(f"body: got {body}, expected 0 to {model.n_bodies - 1} (a body of "
                         f"{model.name})")
    rotations, origins = placements.per_sample(model)
    if len(rotations) != 1:
        raise ValueError(f"placements of {len(rotations)} samples, expected one")
    return rotations[0], origins[0]


def _one_motion(model: Model, motion: BodyMotion) -> np.ndarray:
    buffer = np.ascontiguousarray(motion.buffer)
    if buffer.shape[-3:] != (model.n_bodies, 6, 3) or buffer.size != model.n_bodies * 18:
        raise ValueError(f"motion of shape {buffer.shape}, expected one sample of the "
                         f"{model.n_bodies} bodies of {model.name}")
    return buffer.reshape(model.n_bodies, 6, 3)


def _point(point: np.ndarray) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in np.asarray(point, dtype=float).reshape(3))
    return x, y, z


def frame_jacobian(model: Model, placements: Placements, body: int, point: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(J_w, J_v), each (3, n_coordinates): the world angular velocity of ``body`` and the
    world velocity of its world point ``point`` per coordinate rate, at the placements of
    one sample (module docstring)."""
    rotations, origins = _one_sample(model, placements, int(body))
    pm = model.compiled.packed
    jw, jv = np.empty((3, model.n_coordinates)), np.empty((3, model.n_coordinates))
    frame_jacobian_sample(pm.body_int, pm.body_vec, int(body), _point(point), rotations,
                          origins, jw, jv)
    return jw, jv


def frame_jacobian_derivative(model: Model, placements: Placements, motion: BodyMotion,
                              body: int, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dJ_w/dt, dJ_v/dt), each (3, n_coordinates), along the rates of ``motion`` (the
    motion pass at the placements' configuration, one sample; its accelerations unused)."""
    rotations, origins = _one_sample(model, placements, int(body))
    pm = model.compiled.packed
    djw, djv = np.empty((3, model.n_coordinates)), np.empty((3, model.n_coordinates))
    frame_jacobian_derivative_sample(pm.body_int, pm.body_vec, int(body), _point(point),
                                     rotations, origins, _one_motion(model, motion), djw, djv)
    return djw, djv
