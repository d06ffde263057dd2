"""The joint-space equations of motion of the open tree, tau = H(q) qdd + u'(q, qd)
(seed 002 eq. 16a: I qdd + h = tau; seed 004 eqs. 2-3 and 34: H and the bias vector u',
which holds the external forces too).

* :func:`mass_matrix`: H by the composite-rigid-body algorithm on the tree. With
  M^c_i = M_i + sum_{children j} A_j^T M^c_j A_j, the composite inertia of body i and its
  subtree, the joint-space entry of joint i and its ancestor k is

      H_ik = p_k^T (A_{k..i})^T M^c_i p_i                       (seed 002: I = N^T M N, eq. 16a)

  i.e. the wrench F = M^c_i p_i carried down to each ancestor's joint by A^T. A coordinate
  moving several joints (``multiplier``) gets H = S^T H_joint S with S_ic = multiplier_i
  when joint i is moved by coordinate c, so the entries of joints that share a coordinate add
  up. A free-flyer (a root) has the 6 columns S e_d of model/joint.py's FREE_COLUMNS: its
  block is S^T M^c_i S and its entries with a descendant's joint are the components of F.
* :func:`bias_forces`: u' = ID(q, qd, 0), the recursive Newton-Euler algorithm with zero
  accelerations (seed 002 section 2.4.2 input item 4; seed 004 eq. 36): Coriolis, centrifugal and
  gravity terms and the springs and balancers of the model as external wrenches, one call of
  the kernel of :func:`~charmie_dynamics.dynamics.inverse.inverse_dynamics` with qdd = 0, so
  that H qdd + u' is its ``coordinate_effort`` (forward_dynamics takes its u' from here).
* :func:`mass_matrix_from_inverse_dynamics`: H e_k = ID(q, 0, e_k) - ID(q, 0, 0), the
  columns of H from the inverse dynamics. Seed 004 section III carries the coefficients of
  every qdd_k through one modified RNEA pass (eqs. 12-35); here the n unit accelerations
  travel as n samples of one batched pass. It is the reference the tests hold the
  composite-rigid-body algorithm to.

The actuators of the closed loops play no part: the driven joints are joints of the tree.
Arrays have optional leading sample axes: q of shape (..., nq) (model/parameters.py; nq =
n_coordinates without a free-flyer), H (..., n_coordinates, n_coordinates).
"""
from __future__ import annotations

from functools import cached_property
from typing import NamedTuple, Optional

import numpy as np

from ..jit import kernel
from ..kinematics.configuration import check_configuration
from ..kinematics.forward import ForwardKinematicsData, Placements, forward_kinematics
from ..kinematics.motion import body_motion
from ..kinematics.state import samples
from ..layout import COORD, KIND, MULTIPLIER, PARENT, SCALARS
from ..mechanisms.forces import passive_forces
from ..model.data import AlgorithmData
from ..model.joint import FREE_COLUMNS, FREE_KIND
from ..model.model import Model
from ..model.packed import unflat_packed
from .inverse import InverseDynamicsData, Loads, run_inverse_dynamics
from .rnea import joint_efforts, tree_backward_pass
from .spatial import add_force_to_parent, add_inertia_to_parent, parent_transform_into


class MassMatrixError(np.linalg.LinAlgError):
    """H(q) is singular (a coordinate moves no mass) or not positive definite: no qdd."""


def no_mass(model: Model, c: int) -> MassMatrixError:
    return MassMatrixError(f"coordinate {model.coordinate_names[c]!r} moves no mass: the mass "
                           "matrix is singular, expected it to move a body with mass")


class MassMatrixWork(NamedTuple):
    """The work arrays of :func:`mass_matrix_sample`, for one sample at a time."""

    A: np.ndarray           # (nb, 6, 6): the parent transforms
    composite: np.ndarray   # (nb, 6, 6): M^c of every body
    scratch: np.ndarray     # (6, 6)
    F: np.ndarray           # (6,)
    G: np.ndarray           # (6,)


def mass_matrix_work(nb: int) -> MassMatrixWork:
    """The work arrays of :func:`mass_matrix_sample` for a tree of ``nb`` bodies."""
    return MassMatrixWork(A=np.empty((nb, 6, 6)), composite=np.empty((nb, 6, 6)),
                          scratch=np.empty((6, 6)), F=np.empty(6), G=np.empty(6))


@kernel
def mass_matrix_sample(pm, inertias, rotations, origins, work, H) -> None:
    """H of one sample (kernel, module docstring); ``pm``: a
    :class:`~..model.packed.PackedModel`, ``work``: a :class:`MassMatrixWork`."""
    body_int, body_vec, subspaces = pm.body_int, pm.body_vec, pm.subspace
    A, composite, scratch, F, G = work.A, work.composite, work.scratch, work.F, work.G
    nb = body_int.shape[0]
    for i in range(nb):
        parent_transform_into(rotations, origins, i, A[i])
        composite[i] = inertias[i]
    for i in range(nb - 1, -1, -1):
        if body_int[i, PARENT] >= 0:
            add_inertia_to_parent(A[i], composite[i], scratch, composite[body_int[i, PARENT]])
    H[:, :] = 0.0
    for i in range(nb):
        ci = body_int[i, COORD]
        if ci < 0:
            continue
        if body_int[i, KIND] == FREE_KIND:         # a root: S^T M^c_i S, no ancestor
            for d in range(6):
                for e in range(6):
                    H[ci + d, ci + e] = composite[i, FREE_COLUMNS[d], FREE_COLUMNS[e]]
            continue
        m_i = body_vec[i, SCALARS, MULTIPLIER]
        for a in range(6):                                   # M^c_i p_i
            acc = 0.0
            for k in range(6):
                acc += composite[i, a, k] * subspaces[i, k]
            F[a] = m_i * acc
        H[ci, ci] += m_i * np.dot(F, subspaces[i])
        j = i
        while body_int[j, PARENT] >= 0:
            G[:] = 0.0
            add_force_to_parent(A[j], F, G)
            F[:] = G
            j = body_int[j, PARENT]
            cj = body_int[j, COORD]
            if cj >= 0 and body_int[j, KIND] == FREE_KIND:     # F . S e_d, each column
                for d in range(6):
                    h = F[FREE_COLUMNS[d]]
                    H[ci, cj + d] += h
                    H[cj + d, ci] += h
            elif cj >= 0:
                h = body_vec[j, SCALARS, MULTIPLIER] * np.dot(F, subspaces[j])
                H[ci, cj] += h
                H[cj, ci] += h


@kernel
def _mass_matrix_batch(model, inertias, rotations, origins, work, H) -> None:
    """:func:`mass_matrix_sample` sample by sample. ``model``: the packed model flattened
    (``model.compiled.packed_args``), ``work``: the arrays of :class:`MassMatrixWork` as a
    plain tuple (the dispatch cost: see inverse.py's kernel); named here."""
    pm, w = unflat_packed(model), MassMatrixWork(*work)
    for s in range(rotations.shape[0]):
        mass_matrix_sample(pm, inertias, rotations[s], origins[s], w, H[s])


class MassMatrixData(AlgorithmData):
    """Buffers of :func:`mass_matrix` for one model and sample shape ``lead``: H, the CRBA's
    work arrays and, built on first use, forward kinematics for calls without placements.
    ``mass_matrix`` is returned by every call, overwritten by the next."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        super().__init__(model, lead)
        n, nb = model.n_coordinates, model.n_bodies
        self.H = np.empty((self.samples, n, n))
        self.work = tuple(mass_matrix_work(nb))   # a plain tuple: the kernel's dispatch is faster
        self.mass_matrix = self.H.reshape(self.lead + (n, n))

    @cached_property
    def kinematics(self) -> ForwardKinematicsData:
        return ForwardKinematicsData(self.model, self.lead)


def mass_matrix(model: Model, q: np.ndarray, placements: Optional[Placements] = None, *,
                data: Optional[MassMatrixData] = None) -> np.ndarray:
    """H(q), (..., n, n), symmetric positive definite (kg m^2, kg m, kg).

    ``placements``: forward kinematics of ``q`` when already computed. ``data``: buffers
    for the sample shape, reused (see :class:`MassMatrixData`); new ones when omitted.
    """
    lead = np.shape(q)[:-1] if placements is None else placements.lead
    data = MassMatrixData.reuse(data, model, lead)
    fk = forward_kinematics(model, q, data=data.kinematics) if placements is None else placements
    rotations, origins = fk.per_sample(model)
    compiled = model.compiled
    _mass_matrix_batch(compiled.packed_args, compiled.spatial_inertias, rotations, origins,
                       data.work, data.H)
    return data.mass_matrix


def _coordinate_efforts(model: Model, placements: Placements, qd: np.ndarray,
                        qdd: np.ndarray) -> np.ndarray:
    """Inverse dynamics of the tree with the passive forces: ``coordinate_effort``."""
    motion = body_motion(model, placements, qd, qdd, base_acceleration=-model.gravity)
    passive = passive_forces(model, placements)
    tree = tree_backward_pass(model, placements, motion, passive.external_force,
                              passive.external_torque)
    return joint_efforts(model, tree)


class BiasForcesData(AlgorithmData):
    """Buffers of :func:`bias_forces` for one model and sample shape ``lead``: those of the
    inverse dynamics it runs with qdd = 0 (``inverse``, whose placements are those of q).
    ``bias_forces`` (..., n) is returned by every call, overwritten by the next."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        super().__init__(model, lead)
        self.inverse = InverseDynamicsData(model, lead)
        self.bias_forces = self.inverse.loads.coordinate_effort


def bias_loads(model: Model, q: np.ndarray, qd: np.ndarray, data: BiasForcesData) -> Loads:
    """The inverse dynamics with qdd = 0 of (samples, n) arrays checked against ``data`` by
    the caller: u' is its ``coordinate_effort``, ``placements`` those of q."""
    return run_inverse_dynamics(model, q, qd, data.inverse.zeros, data.inverse)


def bias_forces(model: Model, q: np.ndarray, qd: np.ndarray, *,
                data: Optional[BiasForcesData] = None) -> np.ndarray:
    """u'(q, qd) = ID(q, qd, 0), (..., n): N m (revolute) or N (prismatic); leading axes of q
    and qd broadcast. ``data``: buffers for the broadcast sample shape, reused (see
    :class:`BiasForcesData`); new ones when omitted.
    """
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    n = model.n_coordinates
    if q.shape[-1:] != (model.nq,) or qd.shape[-1:] != (n,):
        raise ValueError(f"q, qd: got last axes {q.shape[-1:]}, {qd.shape[-1:]}, expected "
                         f"({n},) coordinates of {model.name} (q: ({model.nq},) "
                         "configuration entries)")
    lead = np.broadcast_shapes(q.shape[:-1], qd.shape[:-1])
    if model.free_flyers:
        check_configuration(model, q)
    data = BiasForcesData.reuse(data, model, lead)
    bias_loads(model, samples(q, lead, model.nq), samples(qd, lead, n), data)
    return data.bias_forces


def mass_matrix_from_inverse_dynamics(model: Model, q: np.ndarray) -> np.ndarray:
    """H(q) column by column, H e_k = ID(q, 0, e_k) - ID(q, 0, 0), (..., n, n).

    The n + 1 accelerations (0, e_1, ..., e_n) are one batch on an extra axis before the last.
    """
    q = np.asarray(q, dtype=float)
    n = model.n_coordinates
    qdd = np.concatenate([np.zeros((1, n)), np.eye(n)])
    qs = np.broadcast_to(q[..., None, :], q.shape[:-1] + (n + 1, model.nq))
    rates = q.shape[:-1] + (n + 1, n)
    efforts = _coordinate_efforts(model, forward_kinematics(model, qs), np.zeros(rates),
                                  np.broadcast_to(qdd, rates))
    return np.swapaxes(efforts[..., 1:, :] - efforts[..., :1, :], -1, -2)
