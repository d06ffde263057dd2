"""The identification regressor: input efforts u = Y(q, qd, qdd) pi, linear in the stacked
dynamic parameters pi, through the tree, the springs, the balancer and the closed loops.

Parameters (:class:`ParameterLayout`, SI):

* 10 per massive body, Pinocchio's order: m, m c (3), and the inertia about the body frame
  origin I_O = I_C + m (c.c 1 - c c^T) (seed 002 eq. 6, model/compiled.py), as
  (xx, xy, yy, xz, yz, zz);
* 2 per spring (springs, balancer springs, torsion springs): the stiffness k (N/m) and the
  tension at zero length t0 = F0 - k L0 (N), since the tension k (L - L0) + F0
  (mechanisms/forces.py) is k L + t0; a torsion spring's the same in its angle (N m/rad,
  N m);
* 2 per input of ``model.input_names``: viscous and Coulomb friction (seed 004 eq. 43).

Why it is linear. The wrench of body i about its origin, body frame (seed 000 eqs. 33-34,
dynamics/rnea.py, with a the origin's acceleration including -g) is

    f_i = m a + dw x h + w x (w x h),   n_i = I_O dw + w x (I_O w) + h x a,   h = m c,

linear in (m, h, I_O); spring forces are linear in (k, t0) and the balancer's hanger force in
its spring's tension (eqs. 40-41); the backward pass, the projection on the joint axes and the
split at the actuator-driven joints (eqs. 36-38, 42-43, mechanisms/loops.py) are linear in
the wrenches; friction is added in input space. So column j of Y is the input efforts of a
massless robot loaded by parameter j's unit wrench.

Construction (exact, no differencing): per sample, the model's own kernels run the forward
kinematics and the velocity pass once; then for each parameter the unit wrench above (or the
spring forces of the spring kernel with the law (k, L0, F0) = (1, 0, 0) or (0, 0, 1), every
other spring's law zero) is applied as an external load to the tree of zero inertias, and
the model's backward pass, joint projection and loop split give the column, as the inverse
dynamics does: Y pi_model equals ``inverse_dynamics`` (plus friction) to rounding.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from ..dynamics.actuation import friction, input_jacobians
from ..dynamics.inverse import InverseDynamicsData, run_inverse_dynamics
from ..dynamics.rnea import joint_efforts_sample, tree_backward_pass_sample
from ..jit import kernel
from ..kinematics.forward import forward_kinematics_sample
from ..kinematics.motion import body_motion_sample
from ..kinematics.state import JointSpaceState, state_samples
from ..layout import COM, DW, INERTIA, M_LAW, MASS, SCALARS, A, F, N, W
from ..linalg import add, cross3, vec
from ..mechanisms.auxiliary import balancer_range_error
from ..mechanisms.forces import passive_forces_sample, spring_laws, spring_names
from ..mechanisms.loops import distribute_sample
from ..model.kinds import MECHANISM_KINDS, items
from ..model.model import Friction, Model, SpringParams
from ..model.packed import flat_packed, unflat_packed

#: Names of a body's 10 inertial parameters, Pinocchio's order (I about the body origin).
INERTIAL = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
#: (row, column) of the inertia entries of INERTIAL[4:]
_INERTIA_ENTRIES = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))
SPRING = ("k", "t0")
FRICTION = ("fv", "fc")


@dataclass(frozen=True)
class ParameterLayout:
    """Where each parameter of pi sits: ``names`` "BODY.m", "SPRING.k", "INPUT.fv", ...;
    ``bodies`` the massive bodies' indices (10 columns each, from 0), then 2 columns per
    spring of ``springs`` (mechanisms/forces.spring_names order), then 2 per input."""

    names: tuple[str, ...]
    bodies: tuple[int, ...]
    springs: tuple[str, ...]
    inputs: tuple[str, ...]

    @property
    def n_inertial(self) -> int:
        return 10 * len(self.bodies)

    @property
    def spring_start(self) -> int:
        return self.n_inertial

    @property
    def friction_start(self) -> int:
        return self.n_inertial + 2 * len(self.springs)

    def __len__(self) -> int:
        return len(self.names)


def parameter_layout(model: Model) -> ParameterLayout:
    """The parameters of ``model``: its non-virtual bodies, springs and inputs."""
    bodies = tuple(i for i, b in enumerate(model.bodies) if not b.virtual)
    springs = spring_names(model)
    names = tuple(f"{model.body_names[i]}.{p}" for i in bodies for p in INERTIAL) \
        + tuple(f"{s}.{p}" for s in springs for p in SPRING) \
        + tuple(f"{u}.{p}" for u in model.input_names for p in FRICTION)
    return ParameterLayout(names, bodies, springs, model.input_names)


def inertial_parameters(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """(m, m c, I_O entries) of one body from its mass, com and inertia about the com."""
    c = np.asarray(com, dtype=float)
    I_O = np.asarray(inertia_com) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate([[mass], mass * c, [I_O[r, k] for r, k in _INERTIA_ENTRIES]])


def inertia_matrix(entries: np.ndarray) -> np.ndarray:
    """The symmetric (3, 3) matrix of the 6 entries (xx, xy, yy, xz, yz, zz)."""
    out = np.empty((3, 3))
    for value, (r, k) in zip(entries, _INERTIA_ENTRIES):
        out[r, k] = out[k, r] = value
    return out


def model_parameters(model: Model) -> np.ndarray:
    """pi of ``model`` in :func:`parameter_layout` order."""
    layout = parameter_layout(model)
    laws = spring_laws(model)
    space = model.compiled.actuator_space
    return np.concatenate(
        [inertial_parameters(model.mass[i], model.com[i], model.inertia[i])
         for i in layout.bodies]
        + [[p.stiffness, p.preload - p.stiffness * p.free_length] for p in laws]
        + [np.column_stack([space.viscous, space.coulomb]).ravel()])


@kernel
def _unit_wrench(k, w, dw, a):
    """The wrench (n, f), torque first (charmie_dynamics.layout), of inertial parameter k
    (INERTIAL order) with value 1 (module docstring)."""
    zero = (0.0, 0.0, 0.0)
    if k == 0:
        return zero, a
    if k < 4:
        e = (1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0, 1.0 if k == 3 else 0.0)
        return cross3(e, a), add(cross3(dw, e), cross3(w, cross3(w, e)))
    # the unit symmetric matrix E of entry (r, c): n = E dw + w x (E w)
    r = (0, 0, 1, 0, 1, 2)[k - 4]
    c = (0, 1, 1, 2, 2, 2)[k - 4]
    Edw = [0.0, 0.0, 0.0]
    Ew = [0.0, 0.0, 0.0]
    Edw[r] += dw[c]
    Ew[r] += w[c]
    if r != c:
        Edw[c] += dw[r]
        Ew[c] += w[r]
    return add((Edw[0], Edw[1], Edw[2]), cross3(w, (Ew[0], Ew[1], Ew[2]))), zero


class RegressorWork(NamedTuple):
    """The regressor kernel's work buffers, one sample's: forward kinematics, the motion
    pass, the unit wrenches and their tree pass, the passive forces, the efforts and the
    loops' split."""

    values: np.ndarray
    rotations: np.ndarray
    origins: np.ndarray
    motion: np.ndarray
    external: np.ndarray
    wrenches: np.ndarray
    tension: np.ndarray
    hanger: np.ndarray
    tau: np.ndarray
    axial: np.ndarray
    loops: np.ndarray
    couple: np.ndarray


@kernel
def _input_efforts(pm, rotations, origins, wrenches, actuator_slots, w, out, column) -> None:
    """Joint projection and loop split of one wrench distribution into out[:, column]
    (kernel; ``w``: a :class:`RegressorWork`)."""
    tau, axial = w.tau, w.axial
    joint_efforts_sample(pm.body_int, pm.body_vec, wrenches, tau)
    distribute_sample(pm, rotations, origins, wrenches, axial, w.loops, w.couple)
    for c in range(tau.shape[0]):
        out[c, column] = tau[c]
    for k in range(axial.shape[0]):
        out[actuator_slots[k], column] = axial[k]


@kernel
def _regressor_batch(packed, massless, columns, q, qd, qdd, work, out) -> int:
    """Columns of the tree and spring parameters, sample by sample (module docstring);
    returns the index of a balancer that cannot reach, or -1. ``packed``: the packed model
    flattened (packed.flat_packed), ``massless``: the same without masses and inertias (the
    wrenches of unit parameters only), ``columns`` = (the massive bodies, the actuators'
    input slots, the unit spring laws), ``work``: a :class:`RegressorWork`; plain tuples,
    named here."""
    pm, buffers = unflat_packed(packed), RegressorWork(*work)
    unit = unflat_packed(massless)
    massive, actuator_slots, mech_laws = columns
    values, rotations, origins, motion = buffers.values, buffers.rotations, buffers.origins, \
        buffers.motion
    external, wrenches = buffers.external, buffers.wrenches
    failed = -1
    for s in range(q.shape[0]):
        forward_kinematics_sample(pm.body_int, pm.body_vec, pm.body_mat, q[s], values, rotations,
                                  origins)
        body_motion_sample(pm.body_int, pm.body_vec, rotations, origins, qd[s], qdd[s],
                           pm.base_acceleration, motion)
        column = 0
        for j in range(massive.shape[0]):
            b = massive[j]
            w, dw, a = vec(motion, b, W), vec(motion, b, DW), vec(motion, b, A)
            for k in range(10):
                external[:] = 0.0
                n, f = _unit_wrench(k, w, dw, a)
                # the backward pass subtracts external loads: the body's own wrench is -external
                for d in range(3):
                    external[b, N, d] = -n[d]
                    external[b, F, d] = -f[d]
                tree_backward_pass_sample(unit.body_int, unit.body_vec, unit.body_mat,
                                          rotations, origins, motion, external, wrenches)
                _input_efforts(unit, rotations, origins, wrenches, actuator_slots, buffers, out[s],
                               column)
                column += 1
        for j in range(mech_laws.shape[0]):
            external[:] = 0.0
            k = passive_forces_sample(pm.mech_int, mech_laws[j], rotations, origins,
                                      buffers.tension, buffers.hanger, external)
            if k >= 0:
                failed = k
            tree_backward_pass_sample(unit.body_int, unit.body_vec, unit.body_mat, rotations,
                                      origins, motion, external, wrenches)
            _input_efforts(unit, rotations, origins, wrenches, actuator_slots, buffers, out[s],
                           column)
            column += 1
    return failed


def _unit_spring_laws(model: Model) -> np.ndarray:
    """Per spring column, the mechanism table's mech_vec (model/packed.py: a row per spring of
    spring_names, in order) with every law zero but one: (k, L0, F0) = (1, 0, 0) for a ``k``
    column, (0, 0, 1) for a ``t0`` column."""
    mech_vec = model.compiled.packed.mech_vec
    n = mech_vec.shape[0]
    laws = np.repeat(mech_vec[None], 2 * n, axis=0)
    laws[:, :, M_LAW] = 0.0
    for j in range(n):
        for p, law in enumerate(((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))):
            laws[2 * j + p, j, M_LAW] = law
    return laws


def friction_columns(model: Model, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """(samples, n_inputs, 2 n_inputs): viscous x' and Coulomb sign(x') of each input, x' the
    input velocity (dynamics/actuation.py: x' = qd / J)."""
    _, J, _ = input_jacobians(model, q)
    xd = qd / J
    n = xd.shape[-1]
    out = np.zeros(xd.shape[:-1] + (n, 2 * n))
    idx = np.arange(n)
    out[..., idx, 2 * idx] = xd
    out[..., idx, 2 * idx + 1] = np.sign(xd)
    return out


def regressor(model: Model, state: JointSpaceState) -> np.ndarray:
    """Y of every sample of ``state`` (leading axes kept): (..., n_inputs, n_parameters) with
    input efforts (model.input_names order: joint efforts, actuators' axial forces) = Y pi,
    pi in :func:`parameter_layout` order (module docstring)."""
    layout = parameter_layout(model)
    pm = model.compiled.packed
    q, qd, qdd = state_samples(state)[:3]
    S, n, nb = q.shape[0], model.n_coordinates, model.n_bodies
    massless_vec = pm.body_vec.copy()
    massless_vec[:, COM] = 0.0
    massless_vec[:, SCALARS, MASS] = 0.0
    massless_mat = pm.body_mat.copy()
    massless_mat[:, INERTIA] = 0.0
    laws = _unit_spring_laws(model)
    na, nbal = len(model.actuators), len(model.balancers)
    tree_columns = layout.friction_start
    out = np.zeros((S, n, len(layout)))
    block = np.zeros((S, n, tree_columns))
    slots = np.array([model.input_names.index(a) for a in model.actuator_names], dtype=np.int64)
    massless = flat_packed(pm._replace(body_vec=massless_vec, body_mat=massless_mat))
    work = RegressorWork(np.empty(nb), np.empty((nb, 2, 3, 3)), np.empty((nb, 2, 3)),
                         np.empty((nb, 6, 3)), np.empty((nb, 2, 3)), np.empty((nb, 2, 3)),
                         np.empty(pm.mech_int.shape[0]), np.empty(nbal), np.empty(n),
                         np.empty(na), np.empty((na, 4, 3)), np.empty(nbal))
    failed = _regressor_batch(model.compiled.packed_args, massless,
                              (np.array(layout.bodies, dtype=np.int64), slots, laws), q, qd, qdd,
                              tuple(work), block)
    if failed >= 0:
        raise balancer_range_error(model.balancers[failed])
    out[..., :tree_columns] = block
    out[..., tree_columns:] = friction_columns(model, q, qd)
    return out.reshape(np.shape(state.q)[:-1] + (n, len(layout)))


def input_efforts(model: Model, state: JointSpaceState) -> np.ndarray:
    """The input efforts of the model's inverse dynamics plus friction, (..., n_inputs): what
    Y pi_model reproduces (the dynamics node's efforts, with the friction a motor adds)."""
    q, qd, qdd = state_samples(state)[:3]
    loads = run_inverse_dynamics(model, q, qd, qdd,
                                 InverseDynamicsData(model, (q.shape[0],), keep="efforts"))
    u = model.in_input_order(loads.coordinate_effort, loads.actuator_force)
    _, J, _ = input_jacobians(model, q)
    u += friction(model.compiled.actuator_space, qd / J)
    return u.reshape(np.shape(state.q))


def with_parameters(model: Model, pi: np.ndarray) -> Model:
    """A copy of ``model`` whose masses, centres of mass, inertias (about the com: I_C =
    I_O - m (c.c 1 - c c^T)), springs (stiffness k, preload t0 + k L0 at the same free
    length) and friction (an input's: its actuator's or its coordinate's first joint's) are
    those of ``pi``; a body of zero mass keeps its centre of mass."""
    layout = parameter_layout(model)
    bodies = list(model.bodies)
    for k, i in enumerate(layout.bodies):
        p = pi[10 * k:10 * k + 10]
        m = float(p[0])
        c = p[1:4] / m if m != 0.0 else np.array(model.com[i])
        I_C = inertia_matrix(p[4:]) - m * (c @ c * np.eye(3) - np.outer(c, c))
        bodies[i] = replace(bodies[i], mass=m, com=c, inertia=I_C)
    laws = {}
    for k, name in enumerate(layout.springs):
        stiffness, t0 = pi[layout.spring_start + 2 * k:layout.spring_start + 2 * k + 2]
        laws[name] = (float(stiffness), float(t0))

    def law(name: str, old: SpringParams) -> SpringParams:
        stiffness, t0 = laws[name]
        return SpringParams(stiffness, old.free_length, t0 + stiffness * old.free_length)
    friction = {name: Friction(*map(float, pi[layout.friction_start + 2 * k:
                                              layout.friction_start + 2 * k + 2]))
                for k, name in enumerate(layout.inputs)}
    first = {}
    for i, b in enumerate(bodies):
        if b.coordinate in friction and b.coordinate not in first:
            first[b.coordinate] = i
            bodies[i] = replace(b, friction=friction[b.coordinate])
    actuators = tuple(replace(a, friction=friction[a.name]) for a in model.actuators)
    mechanisms = {kind.section: tuple(kind.with_law(item, law(kind.law_name(item),
                                                              kind.law(item)))
                                      for item in items(model, kind))
                  for kind in MECHANISM_KINDS if items(model, kind)}
    return Model(name=model.name, source=model.source, gravity=model.gravity,
                 bodies=tuple(bodies), actuators=actuators, mechanisms=mechanisms)
