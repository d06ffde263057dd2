"""The simulator's integration step compiled whole: the robot driven by actuator efforts u
held over the step (the simulator node's zero-order hold), one state.

:func:`held_input_steps` takes up to ``steps`` steps of integrate.py's ``step`` (semi-implicit
Euler or RK4, the joint stops' contact rule in every evaluation) with the efforts of
:func:`held_efforts`, in one kernel call. Each evaluation of the accelerations is

    x, J, J'  at q                      (kinematics/indirect.py: input_jacobians_sample)
    tau = (u - f(qd / J)) / J           (actuation.py: joint_efforts_from_inputs_sample)
    u'  = ID(q, qd, 0)                  (forward.py: bias_articulated_sample, as
    qdd = ABA(q, phi = tau - u')         forward_dynamics(method="aba") runs it: seed 002
                                         eqs. 19-21), the ABA again with the held
                                         coordinates fixed while one on its stop pushes
                                         outward

each a kernel the Python path calls too, so the compiled step is that path's arithmetic in
the same order. Python keeps what is rare: a step is handed back, not taken, when its end
state needs an impact at a stop (:func:`~.integrate.stop_at_limits`: the mass matrix and a
held solve), when an actuator leaves its stroke or a balancer cannot reach its anchor in any
evaluation, when a coordinate moves no mass, or when the state after it is not finite or has
an actuator out of its stroke. :func:`held_input_steps` returns how many steps it took; the
caller takes the next one with ``integrate.step(..., held_efforts(...), dynamics="aba")``,
which applies the impact or raises the package's error, and goes on.

The compiled path runs the ABA only (``dynamics="aba"``) on models without a free-flyer whose
coupled joints share a parent (:func:`compiled_step_reason` says why not otherwise).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ..dynamics.aba import (ArticulatedBodyData, ArticulatedBodyWork, articulated_body_sample,
                            bias_articulated_sample, work_view)
from ..dynamics.actuation import (actuator_space, joint_efforts_from_inputs,
                                  joint_efforts_from_inputs_sample)
from ..dynamics.inverse import InverseDynamicsBuffers, buffers_view, inverse_dynamics_buffers
from ..flat import flatten, view1, view2, view3
from ..jit import kernel
from ..kinematics.indirect import input_jacobians_sample
from ..model.data import AlgorithmData
from ..model.model import Model
from ..model.packed import PackedModel, packed_model_view
from .integrate import INTEGRATORS, EffortFunction, coordinate_limits

EULER, RK4 = 0, 1       # the kernel's integrators, in INTEGRATORS order


class HeldStepWork(NamedTuple):
    """The work arrays of :func:`held_steps_sample` (one sample), n = coordinates."""

    x: np.ndarray           # (n,) actuator-space positions (input_jacobians_sample)
    J: np.ndarray           # (n,) dq/dx
    Jp: np.ndarray          # (n,) d2q/dx2
    tau: np.ndarray         # (n,) joint efforts of the held input
    phi: np.ndarray         # (n,) tau - u'
    zeros: np.ndarray       # (n,) the bias forces' qdd
    free: np.ndarray        # (n,) 1, or 0 for a coordinate held on its stop
    stage_qdd: np.ndarray   # (4, n) RK4's a1..a4 (Euler: a1)
    stage_qd: np.ndarray    # (3, n) the rates of a2..a4
    stage_q: np.ndarray     # (3, n) the positions of a2..a4
    q: np.ndarray           # (n,) the state after the step, before it is accepted
    qd: np.ndarray          # (n,)
    no_loads: np.ndarray    # (0,) int64: no payloads
    no_load_values: np.ndarray   # (0, 4, 3)


class HeldInput(NamedTuple):
    """The step's constants: the held efforts, the Coulomb smoothing velocities (0: the sign),
    the inputs' viscous and Coulomb coefficients, the coordinates' bounds (n,) each."""

    effort: np.ndarray
    smoothing: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


@kernel
def held_accelerations_sample(pm, tree, buffers, held, limits, q, qd, qdd) -> bool:
    """qdd at (q, qd) under the held input, with the stops' contact rule when ``limits``
    (integrate.accelerations), kernel (module docstring). ``tree``: (inertias, members) of
    the ABA; ``buffers``: (an :class:`~.inverse.InverseDynamicsBuffers` of one sample, an
    :class:`~.forward.ArticulatedBodyWork`, a :class:`HeldStepWork`); ``held``: a
    :class:`HeldInput`. False where Python must take the step (an actuator out of its
    stroke, a balancer out of range, a coordinate without mass)."""
    inertias, members = tree
    inverse, articulated, w = buffers
    if input_jacobians_sample(pm.body_int, pm.body_vec, pm.act_int, pm.act_vec, q, w.x, w.J,
                              w.Jp) >= 0:
        return False
    joint_efforts_from_inputs_sample(held.viscous, held.coulomb, w.J, qd, held.effort,
                                     held.smoothing, w.tau)
    n = q.shape[0]
    for i in range(n):
        w.free[i] = 1.0
    balancer, c = bias_articulated_sample(pm, tree, (w.no_loads, w.no_load_values), q, qd,
                                          w.zeros, inverse, 0, 0,
                                          (w.tau, w.phi, w.free, qdd, articulated))
    if balancer >= 0 or c >= 0:
        return False
    R, O = inverse.rotations[0], inverse.origins[0]
    while limits:
        pushing = False         # a free coordinate on a bound, not moving inward, pushing out
        for i in range(n):
            if w.free[i] > 0.0 and ((q[i] <= held.lower[i] and qd[i] <= 0.0 and qdd[i] < 0.0)
                                    or (q[i] >= held.upper[i] and qd[i] >= 0.0
                                        and qdd[i] > 0.0)):
                w.free[i] = 0.0
                pushing = True
        if not pushing:
            return True
        if articulated_body_sample(pm, inertias, members, R, O, w.phi, w.free, qdd,
                                   articulated) >= 0:
            return False
    return True


@kernel
def held_steps_sample(pm, tree, buffers, held, limits, stepping, q, qd) -> int:
    """Up to ``steps`` steps of integrate.step from (q, qd), written back into q and qd after
    each (kernel, module docstring); ``stepping`` = (dt, method, steps), the others as
    :func:`held_accelerations_sample`'s. Returns the number taken."""
    dt, method, steps = stepping
    w = buffers[2]
    n = q.shape[0]
    a, v, x = w.stage_qdd, w.stage_qd, w.stage_q
    h, sixth = 0.5 * dt, dt / 6.0           # integrate.step's RK4, its operations in order
    for done in range(steps):
        if not held_accelerations_sample(pm, tree, buffers, held, limits, q, qd, a[0]):
            return done
        if method == EULER:
            for i in range(n):
                w.qd[i] = qd[i] + dt * a[0, i]
                w.q[i] = q[i] + dt * w.qd[i]
        else:       # a_{s+1} at x_s = q + c_s k_s, v_s = qd + c_s a_s, k_s = qd, v_0, v_1
            for s in range(3):
                c = dt if s == 2 else h
                for i in range(n):
                    v[s, i] = qd[i] + c * a[s, i]
                    x[s, i] = q[i] + c * (qd[i] if s == 0 else v[s - 1, i])
                if not held_accelerations_sample(pm, tree, buffers, held, limits, x[s], v[s],
                                                 a[s + 1]):
                    return done
            for i in range(n):
                w.q[i] = q[i] + sixth * (qd[i] + 2.0 * v[0, i] + 2.0 * v[1, i] + v[2, i])
                w.qd[i] = qd[i] + sixth * (a[0, i] + 2.0 * a[1, i] + 2.0 * a[2, i] + a[3, i])
        for i in range(n):
            if not (np.isfinite(w.q[i]) and np.isfinite(w.qd[i])):
                return done
            if limits:              # clipped onto a bound; an outward rate needs an impact
                if w.q[i] < held.lower[i]:
                    w.q[i] = held.lower[i]
                elif w.q[i] > held.upper[i]:
                    w.q[i] = held.upper[i]
                if (w.q[i] <= held.lower[i] and w.qd[i] < 0.0) or \
                        (w.q[i] >= held.upper[i] and w.qd[i] > 0.0):
                    return done
        if input_jacobians_sample(pm.body_int, pm.body_vec, pm.act_int, pm.act_vec, w.q, w.x,
                                  w.J, w.Jp) >= 0:
            return done
        q[:] = w.q
        qd[:] = w.qd
    return steps


# the header rows (flat.py) of _held_steps' arrays, in HeldStepData's order
_INERTIAS = len(PackedModel._fields)
_MEMBERS, _INVERSE = _INERTIAS + 1, _INERTIAS + 2
_ARTICULATED = _INVERSE + len(InverseDynamicsBuffers._fields)
_WORK = _ARTICULATED + len(ArticulatedBodyWork._fields)
_HELD = _WORK + len(HeldStepWork._fields)
_STATE = _HELD + len(HeldInput._fields)


@kernel
def _held_steps(header, ints, floats, limits, stepping) -> int:
    """:func:`held_steps_sample` on the arrays of :class:`HeldStepData`, flattened (flat.py:
    one call checks 3 arrays, not 50; the kernels' convention, docs/architecture.md) and
    named here: the packed model, inertias and members, the inverse dynamics' buffers, the
    ABA's work, the step's work, the held input and the state q, qd (written back)."""
    w = held_work_view(header, ints, floats, _WORK)
    held = HeldInput(view1(floats, header, _HELD), view1(floats, header, _HELD + 1),
                     view1(floats, header, _HELD + 2), view1(floats, header, _HELD + 3),
                     view1(floats, header, _HELD + 4), view1(floats, header, _HELD + 5))
    return held_steps_sample(packed_model_view(header, ints, floats, 0),
                             (view3(floats, header, _INERTIAS), view2(ints, header, _MEMBERS)),
                             (buffers_view(header, floats, _INVERSE),
                              work_view(header, floats, _ARTICULATED), w),
                             held, limits, stepping, view1(floats, header, _STATE),
                             view1(floats, header, _STATE + 1))


@kernel(inline=True)
def held_work_view(header, ints, floats, k):
    """The :class:`HeldStepWork` flattened at the header's rows k to k + 13, as views
    (kernel)."""
    return HeldStepWork(
        view1(floats, header, k), view1(floats, header, k + 1), view1(floats, header, k + 2),
        view1(floats, header, k + 3), view1(floats, header, k + 4), view1(floats, header, k + 5),
        view1(floats, header, k + 6), view2(floats, header, k + 7), view2(floats, header, k + 8),
        view2(floats, header, k + 9), view1(floats, header, k + 10),
        view1(floats, header, k + 11), view1(ints, header, k + 12), view3(floats, header, k + 13))


def compiled_step_reason(model: Model, dynamics: str = "aba") -> Optional[str]:
    """Why :func:`held_input_steps` cannot run ``model`` with the forward-dynamics method
    ``dynamics``, or None when it can (module docstring)."""
    if dynamics != "aba":
        return f"dynamics {dynamics!r}: the compiled step runs the ABA ('aba') only"
    if model.free_flyers:
        return f"{model.name} has a free-flyer: the compiled step integrates q + qd dt only"
    return model.compiled.aba_coupling


class HeldStepData(AlgorithmData):
    """Buffers of :func:`held_input_steps` for one model (one state, ``lead`` ()), on its
    moving tree as forward_dynamics' ABA: the packed model, the bias forces' inverse
    dynamics (efforts only), the ABA's work arrays, the step's (:class:`HeldStepWork`), the
    held input (:class:`HeldInput`: ``effort`` and ``smoothing`` written at each call) and
    the state, ``q`` and ``qd`` (n,), returned as ``state``: all flattened once into
    ``header``, ``ints`` and ``floats`` (flat.py), the kernel's three arrays, of which the
    named ones are views. ValueError for a model the compiled step cannot run
    (:func:`compiled_step_reason`)."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        reason = compiled_step_reason(model)
        if reason is not None:
            raise ValueError(reason)
        if tuple(lead) != ():
            raise ValueError(f"HeldStepData: got sample shape {tuple(lead)}, expected () "
                             "(one state)")
        super().__init__(model, lead)
        n = model.n_coordinates
        tree = model.compiled.moving_tree        # the ABA's route (forward.py)
        articulated = ArticulatedBodyData(model, (), tree)
        work = HeldStepWork(
            *(np.empty(n) for _ in range(5)), np.zeros(n), np.empty(n), np.empty((4, n)),
            np.empty((3, n)), np.empty((3, n)), np.empty(n), np.empty(n),
            np.empty(0, dtype=np.int64), np.zeros((0, 4, 3)))
        space = actuator_space(model)
        held = HeldInput(np.zeros(n), np.zeros(n), np.asarray(space.viscous, dtype=float),
                         np.asarray(space.coulomb, dtype=float),
                         *(np.array(b, dtype=float) for b in coordinate_limits(model)))
        # _held_steps' arguments, flattened once (flat.py); the held input and the state are
        # views of the float buffer, written before each call
        self.header, self.ints, self.floats, views = flatten(
            [*tree.packed, tree.spatial_inertias, articulated.members,
             *inverse_dynamics_buffers(model, tree.n_bodies, 1, "efforts"), *articulated.work,
             *work, *held, np.zeros(n), np.zeros(n)])
        self.effort, self.smoothing = views[_HELD], views[_HELD + 1]
        self.q, self.qd = views[_STATE], views[_STATE + 1]
        self.state = (self.q, self.qd)


def held_efforts(model: Model, effort: np.ndarray,
                 smoothing: Optional[np.ndarray] = None) -> EffortFunction:
    """tau(t, q, qd) of the actuator efforts ``effort`` held constant (``model.input_names``
    order), friction removed with the Coulomb ``smoothing`` (actuation.friction): the
    effort function of integrate.step that :func:`held_input_steps` compiles."""
    def tau(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return joint_efforts_from_inputs(model, q, qd, effort, smoothing)
    return tau


def held_input_steps(model: Model, q: np.ndarray, qd: np.ndarray, effort: np.ndarray,
                     smoothing: Optional[np.ndarray] = None, steps: int = 1, dt: float = 1e-3,
                     method: str = "rk4", *, limits: bool = True,
                     data: Optional[HeldStepData] = None) -> int:
    """Up to ``steps`` steps of ``integrate.step(model, t, q, qd, held_efforts(model, effort,
    smoothing), dt, method, dynamics="aba", limits=limits)`` from the state q, qd (n,), in one
    kernel call; returns how many it took (fewer when the next step is one Python keeps: the
    module docstring). The state after them is ``data.state`` (the start state when none);
    q and qd may be its arrays. ``data``: buffers, reused (:class:`HeldStepData`); new ones
    when omitted. ValueError for a model it cannot run, a state of another shape or an
    unknown method."""
    if method not in INTEGRATORS:
        raise ValueError(f"method: got {method!r}, expected one of {', '.join(INTEGRATORS)}")
    data = HeldStepData.reuse(data, model, ())
    n = model.n_coordinates
    arrays = [np.asarray(a, dtype=float) for a in (q, qd, effort)]
    arrays.append(np.zeros(n) if smoothing is None else np.asarray(smoothing, dtype=float))
    if any(a.shape != (n,) for a in arrays):
        raise ValueError(f"q, qd, effort, smoothing: got shapes {[a.shape for a in arrays]}, "
                         f"expected ({n},) each ({model.name}, one state)")
    for target, a in zip((data.q, data.qd, data.effort, data.smoothing), arrays):
        if target is not a:
            target[...] = a
    return _held_steps(data.header, data.ints, data.floats, bool(limits),
                       (float(dt), INTEGRATORS.index(method), int(steps)))
