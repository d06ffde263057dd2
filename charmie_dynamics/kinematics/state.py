"""The state of a model addressed by name, and its joint-space form.

Inputs are ``model.input_names``: the joint coordinates, except that a coordinate driven by
an actuator (CHARMIE's d4 and theta5) is replaced by the actuator's length (act4, act5).
:func:`resolve_state` turns inputs into joint coordinates with their exact derivatives.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

from ..jit import kernel
from ..layout import (A_BRANCH, A_DRIVES, A_PERP2, A_SOLVE, A_STROKE, CONFIG, COORD, JOINT,
                      MULTIPLIER, SCALARS)
from ..linalg import vec
from ..model.joint import REVOLUTE
from ..model.model import Model
from ..model.packed import unflat_packed
from .indirect import check_length, solve_joint

#: the dtype of every array the kernels take (``a.dtype is FLOAT``: a cheap exact test)
FLOAT = np.dtype(np.float64)


class StateError(ValueError):
    """A state that names unknown coordinates or holds non-finite values."""


@dataclass(frozen=True)
class JointSpaceState:
    """Joint coordinates and actuator lengths with their rates; arrays (..., n)."""

    q: np.ndarray                 # (..., nq): n_coordinates, a free-flyer 7 entries for 6
    qd: np.ndarray
    qdd: np.ndarray
    actuator_length: np.ndarray   # (..., n_actuators), m
    actuator_velocity: np.ndarray
    actuator_acceleration: np.ndarray
    actuator_jacobian: np.ndarray  # (..., n_actuators): d(coordinate)/d(length)

    def __getstate__(self) -> dict:
        """The fields only, for copies and pickles: what is cached on a state (the kernels'
        views of its arrays, :func:`state_samples`; that :func:`resolve_state` allocated
        them) holds for its own arrays, not for a copy's."""
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


def inputs_from_dict(model: Model, positions: Optional[Mapping[str, float]] = None,
                     velocities: Optional[Mapping[str, float]] = None,
                     accelerations: Optional[Mapping[str, float]] = None,
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Input arrays in ``model.input_names`` order from name -> value mappings.

    Missing coordinates are 0; a missing actuator length is the actuator's
    ``default_length`` (its velocity and acceleration 0).
    """
    names = model.input_names
    driven = model.driven_coordinates
    defaults = {a.name: a.default_length for a in model.actuators}
    out = []
    for label, given in (("positions", positions), ("velocities", velocities),
                         ("accelerations", accelerations)):
        values = np.array([defaults.get(n, 0.0) if label == "positions" else 0.0 for n in names])
        for key, value in (given or {}).items():
            if key in driven:
                raise StateError(f"{label}.{key}: {key} is driven by actuator {driven[key]}; "
                                 f"give {driven[key]} instead")
            if key not in names:
                raise StateError(f"{label}.{key}: unknown name, expected one of "
                                 f"{', '.join(names)}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise StateError(f"{label}.{key}: got {value!r}, expected a finite number")
            values[names.index(key)] = float(value)
        out.append(values)
    return out[0], out[1], out[2]


@kernel
def resolve_state_sample(pm, x, xd, xdd, state, s) -> int:
    """Joint-space state of one sample (kernel): the inputs x, xd, xdd (one sample each) into
    sample ``s`` of ``state``, the seven (samples, k) arrays of :func:`state_samples`; ``pm``
    a :class:`~..model.packed.PackedModel`. Returns the index of the first actuator whose
    length is outside its stroke (or not a number), or -1."""
    body_int, body_vec, act_int, act_vec = pm.body_int, pm.body_vec, pm.act_int, pm.act_vec
    q, qd, qdd, length, velocity, acceleration, jacobian = state[0][s], state[1][s], \
        state[2][s], state[3][s], state[4][s], state[5][s], state[6][s]
    q[:] = x
    qd[:] = xd
    qdd[:] = xdd
    bad = -1
    for k in range(act_int.shape[0]):
        i = act_int[k, A_DRIVES]
        c = body_int[i, COORD]      # the input slot of the actuator is its coordinate's slot
        iq = body_int[i, CONFIG]    # and its configuration entry's
        L, Ld, Ldd = x[iq], xd[c], xdd[c]
        if not (act_vec[k, A_STROKE, 0] <= L <= act_vec[k, A_STROKE, 1]):
            if bad < 0:
                bad = k
            L = act_vec[k, A_STROKE, 0]                 # any valid length: the result is refused
        value, d1, d2 = solve_joint(body_int[i, JOINT] == REVOLUTE, act_int[k, A_BRANCH],
                                    vec(act_vec, k, A_SOLVE), act_vec[k, A_PERP2, 0], L)
        m = body_vec[i, SCALARS, MULTIPLIER]
        q[iq] = value / m
        qd[c] = d1 * Ld / m
        qdd[c] = (d1 * Ldd + d2 * Ld * Ld) / m
        length[k], velocity[k], acceleration[k], jacobian[k] = L, Ld, Ldd, d1 / m
    return bad


@kernel
def _resolve_state_batch(packed, x, xd, xdd, state) -> int:
    """Every sample of :func:`resolve_state_sample`; ``packed``: the packed model flattened
    (``model.compiled.packed_args``)."""
    pm = unflat_packed(packed)
    bad = -1
    for s in range(x.shape[0]):
        k = resolve_state_sample(pm, x[s], xd[s], xdd[s], state, s)
        if k >= 0 and (bad < 0 or k < bad):
            bad = k
    return bad


def samples(a: np.ndarray, lead: tuple[int, ...], n: int) -> np.ndarray:
    """``a`` (broadcast to ``lead + (n,)``) as a C-contiguous (samples, n) float array: a
    view when it already is one, as the kernels take it."""
    shape = lead + (n,)
    # the common case, an array as the kernels take it, needs none of the conversions
    if not (type(a) is np.ndarray and a.shape == shape and a.dtype is FLOAT
            and a.flags.c_contiguous):
        a = np.asarray(a, dtype=float)
        if a.shape != shape:
            a = np.broadcast_to(a, shape)
        a = np.ascontiguousarray(a)
    return a.reshape(math.prod(lead), n)


def state_samples(state: JointSpaceState) -> tuple[np.ndarray, ...]:
    """The state's seven arrays as (samples, k) views, for the kernels. Cached on the state
    (frozen: its fields stay these arrays; a copy or a pickle leaves the cache behind,
    ``__getstate__``) when every array is C-contiguous float64, so that a state reused with
    ``out=`` costs nothing here; otherwise contiguous copies, not cached."""
    cached = state.__dict__.get("_samples")
    if cached is not None:
        return cached
    arrays = (state.q, state.qd, state.qdd, state.actuator_length, state.actuator_velocity,
              state.actuator_acceleration, state.actuator_jacobian)
    lead = np.shape(state.q)[:-1]
    views = tuple(samples(a, lead, np.shape(a)[-1]) for a in arrays)
    if all(v.base is a for v, a in zip(views, arrays)):
        object.__setattr__(state, "_samples", views)
    return views


#: ``out``'s fields checked by :func:`resolve_state`, each with its width: 0 nq, 1 n, 2 na
_OUT_FIELDS = (("q", 0), ("qd", 1), ("qdd", 1), ("actuator_length", 2),
               ("actuator_velocity", 2), ("actuator_acceleration", 2), ("actuator_jacobian", 2))


def _allocated_samples(state: JointSpaceState, sizes: tuple) -> Optional[tuple[np.ndarray, ...]]:
    """The kernel views of ``state`` when :func:`resolve_state` allocated its arrays for
    ``sizes`` = (sample shape, nq, nv, actuators) and they are still its fields: arrays it
    made itself are writable, C-contiguous float64 of those shapes by construction, so
    they need none of the checks of ``out``. None for any other state (a state built from
    the caller's arrays, a copy, one for other sizes): those take the checks."""
    if state.__dict__.get("_allocated") != sizes:
        return None
    return state_samples(state)


def resolve_state(model: Model, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                  out: Optional[JointSpaceState] = None) -> JointSpaceState:
    """Joint-space state from inputs (..., n_inputs) in ``model.input_names`` order.

    With a free-flyer (nq != nv) the positions ``x`` are (..., nq), the free-flyer's 7
    configuration entries in place of its 6 coordinates (``model.configuration_names``
    order), and ``xd``, ``xdd`` (..., nv).
    ``out``: a state of the same shape returned by an earlier call, whose arrays are
    overwritten and returned (no allocation): its own arrays go to the kernel unchecked; a
    state of other arrays (``JointSpaceState(...)``, ``dataclasses.replace``, a copy) has
    each checked (writable, C-contiguous float64, the shape), ``StateError`` otherwise.
    Raises ``ActuatorRangeError`` for an actuator length outside its valid range.
    """
    x = np.asarray(x, dtype=float)
    lead, n, nq, na = x.shape[:-1], model.n_coordinates, model.nq, len(model.actuators)
    if x.shape != lead + (nq,):
        raise StateError(f"inputs of shape {x.shape}, expected (..., {nq})")
    inputs = samples(x, lead, nq), samples(xd, lead, n), samples(xdd, lead, n)
    sizes = (lead, nq, n, na)
    if out is None:
        out = JointSpaceState(*(np.empty(lead + (k,)) for k in (nq, n, n)),
                              *(np.empty(lead + (na,)) for _ in range(4)))
        object.__setattr__(out, "_allocated", sizes)      # the arrays are its own
        views = state_samples(out)
    elif (views := _allocated_samples(out, sizes)) is None:
        shapes = (lead + (nq,), lead + (n,), lead + (na,))
        for name, k in _OUT_FIELDS:
            a = getattr(out, name)
            if not (isinstance(a, np.ndarray) and a.shape == shapes[k] and a.dtype == FLOAT
                    and (flags := a.flags).c_contiguous and flags.writeable):
                raise StateError(f"out.{name}: expected a writable C-contiguous float64 array "
                                 f"of shape {shapes[k]} (a state from resolve_state)")
        views = state_samples(out)
    bad = _resolve_state_batch(model.compiled.packed_args, *inputs, views)
    if bad >= 0:
        check_length(model.compiled.indirect_joints[bad], inputs[0][:, model.configuration_index[
            model.actuators[bad].drives]])
    return out
