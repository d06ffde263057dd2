"""Forward dynamics of the open tree: the joint accelerations qdd for given joint efforts,
H(q) qdd = phi,  phi = tau - u'(q, qd)  (seed 002 eqs. 16a and 18).

u' (Coriolis, centrifugal, gravity, springs and balancers as external wrenches) comes from the
inverse dynamics with qdd = 0 (its kernel, as :func:`~.mass_matrix.bias_forces` runs it;
seed 002 section 2.4.2, input item 4): its outward pass gives the velocities and
velocity-product accelerations with -g at the base (eq. 17), its inward pass the bias
wrenches of every subtree and phi. Two solvers of the same equations follow. With
``method="aba"`` the bias pass, phi and the recursion of a batch run in one kernel call
(:func:`~.aba.bias_articulated_sample`, which the simulator's compiled step in actuated_step.py
runs too) on the model's tree of moving bodies (model/moving_tree.py: bodies on fixed joints
merged into their parents, as Pinocchio does), whose qdd is the whole tree's; it computes
u' and phi, not the loop loads, joint wrenches or placements that the inverse dynamics also
gives and qdd does not need.

``method="cholesky"`` (O(n^3)): H from the composite-rigid-body algorithm, H = L L^T by
``numpy.linalg.cholesky``, then L y = phi and L^T qdd = y by forward and back substitution
(seed 002 section 2.4.2, first paragraph; Walker and Orin).

The ABA (``method="aba"``, O(n)) is :mod:`.aba`'s: seed 002 eqs. 18-21 on the tree, with
coupled coordinates and the free-flyer.

**No mass, no acceleration.** A coordinate that moves no mass (a model of massless bodies
only, say) leaves H singular and qdd undefined: both methods raise :class:`MassMatrixError`
naming it. A model without coordinates has qdd of length 0.

**Held coordinates** (``held``, the joint stops of integrate.py): qdd = 0 for them, the others
solve H_ff qdd_f = phi_f. Cholesky: the held rows and columns of H become the identity's;
ABA: a held coordinate's joints act as fixed joints (its psi^ terms drop out of eqs. 19b, d).
"""
from __future__ import annotations

import logging
import math
import threading
import weakref
from functools import cached_property
from typing import Optional

import numpy as np

from ..flat import flatten, view1, view2, view3
from ..jit import kernel
from ..kinematics.configuration import check_configuration
from ..kinematics.state import FLOAT, samples
from ..mechanisms.auxiliary import balancer_range_error
from ..model.data import AlgorithmData
from ..model.model import Model
from ..model.packed import PackedModel, packed_model_view
from .aba import ArticulatedBodyData, ArticulatedBodyWork, bias_articulated_sample, work_view
from .inverse import (NO_LOADS, InverseDynamicsBuffers, buffers_view, inverse_dynamics_buffers,
                      tree_efforts_sample)
from .mass_matrix import (BiasForcesData, MassMatrixData, MassMatrixError, MassMatrixWork,
                          bias_loads, mass_matrix, mass_matrix_sample, mass_matrix_work, no_mass)

METHODS = ("cholesky", "aba")

_LOG = logging.getLogger(__name__)
# models whose ABA fell back to Cholesky, so the reason is logged once per model
_FELL_BACK: "weakref.WeakSet[Model]" = weakref.WeakSet()
#: Calls without ``data=`` of at most this many samples reuse their thread's last buffers
#: (building them was 90 % of one state's call on CHARMIE); larger ones build their own.
CACHED_SAMPLES = 64
_LAST_DATA = threading.local()      # .data: the thread's last ForwardDynamicsData


def _cached_data(model: Model, lead: tuple[int, ...]) -> ForwardDynamicsData:
    """The thread's last buffers when they are for ``model`` and ``lead``, else new ones
    kept in their place (so one model at most is held alive per thread)."""
    data = getattr(_LAST_DATA, "data", None)
    if data is None or data.model is not model or data.lead != lead:
        data = _LAST_DATA.data = ForwardDynamicsData(model, lead)
    return data


def _not_finite(model: Model, q: np.ndarray) -> Optional[MassMatrixError]:
    """The error for a configuration holding NaN or inf (its mass matrix is not a number, and
    no coordinate is to blame), or None."""
    if np.isfinite(q).all():
        return None
    return MassMatrixError(f"q: NaN or infinite configuration of {model.name}, expected finite "
                           "numbers: no mass matrix")


def _singular(model: Model, H: np.ndarray) -> MassMatrixError:
    """The error for an H (..., n, n) that numpy's Cholesky refused, naming a coordinate
    whose diagonal entry (its own inertia) is not positive where there is one."""
    diagonal = np.diagonal(H, axis1=-2, axis2=-1).reshape(-1, model.n_coordinates)
    empty = np.flatnonzero(np.any(diagonal <= 0.0, axis=0))
    if empty.size:
        return no_mass(model, int(empty[0]))
    return MassMatrixError(f"the mass matrix of {model.name} is not positive definite: its "
                           "coordinates do not move independent inertias")


class ForwardDynamicsData(AlgorithmData):
    """Buffers of :func:`forward_dynamics` for one model and sample shape ``lead``: the bias
    forces' inverse dynamics (with the placements), phi and qdd, and, built on first use by
    a method, the mass matrix (Cholesky) or the ABA's buffers. ``qdd`` is returned by every
    call, overwritten by the next. The Cholesky method's factor and substitutions are
    numpy's, allocated at each call."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        super().__init__(model, lead)
        n = model.n_coordinates
        self.coupling = model.compiled.aba_coupling    # why the ABA cannot run, or None
        self.phi = np.empty(self.lead + (n,))
        self.qdd = np.empty(self.lead + (n,))

    @cached_property
    def bias(self) -> BiasForcesData:
        return BiasForcesData(self.model, self.lead)

    @cached_property
    def mass(self) -> MassMatrixData:
        return MassMatrixData(self.model, self.lead)

    @cached_property
    def cholesky_arguments(self) -> tuple:
        """The arguments of :func:`_forward_cholesky_batch` but the state, built once:
        flattened (flat.py), the model's packed tree and inertias, no applied loads, the bias
        pass's buffers (one sample's per-body rows), the CRBA's work, zeros (the bias pass's
        qdd) and the factor's work; then phi, H (samples, n, n) and qdd."""
        model, S, n = self.model, self.samples, self.model.n_coordinates
        compiled = model.compiled
        buffers = inverse_dynamics_buffers(model, model.n_bodies, S, "efforts")
        header, ints, floats, _ = flatten([
            *compiled.packed, compiled.spatial_inertias, *NO_LOADS, *buffers,
            *mass_matrix_work(model.n_bodies), np.zeros(n), np.empty((n, n))])
        return (header, ints, floats, self.phi.reshape(S, n), np.empty((S, n, n)),
                self.qdd.reshape(S, n))

    @cached_property
    def articulated(self) -> ArticulatedBodyData:
        """The ABA's buffers on the model's moving tree (model/moving_tree.py)."""
        return ArticulatedBodyData(self.model, self.lead, self.model.compiled.moving_tree)

    @cached_property
    def aba_arguments(self) -> tuple:
        """The arguments of :func:`_forward_aba_batch` but the state, built once: flattened
        (flat.py), the moving tree's packed model, inertias and coupled groups, no applied
        loads, the bias pass's buffers on that tree (one sample's per-body rows), the ABA's
        work and zeros (the bias pass's qdd); then the (samples, n) free flags, phi and
        qdd."""
        a, S, n = self.articulated, self.samples, self.model.n_coordinates
        buffers = inverse_dynamics_buffers(self.model, a.tree.n_bodies, S, "efforts")
        header, ints, floats, _ = flatten([*a.tree.packed, a.tree.spatial_inertias, a.members,
                                           *NO_LOADS, *buffers, *a.work, np.zeros((S, n))])
        return (header, ints, floats, a.free, self.phi.reshape(S, n), self.qdd.reshape(S, n))


def forward_dynamics(model: Model, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                     method: str = "cholesky", held: Optional[np.ndarray] = None, *,
                     data: Optional[ForwardDynamicsData] = None) -> np.ndarray:
    """Joint accelerations qdd (..., n) for the configuration q (..., nq), rates and efforts
    (..., n) (SI).

    ``tau``: generalized effort of every coordinate (N m or N); for an actuator-driven
    coordinate (CHARMIE's d4, theta5) the effort the actuator puts on it. Springs and
    balancers act by themselves. Leading axes of q, qd and tau broadcast. ``method``:
    "cholesky" or "aba" (see the module docstring). ``held``: boolean (..., n), coordinates
    held at zero acceleration by a workless constraint (a joint resting on its stop); the
    others move with them held: H_ff qdd_f = phi_f, qdd_h = 0. ``data``: buffers for the
    broadcast sample shape, reused (see :class:`ForwardDynamicsData`; its ``qdd`` is
    returned); when omitted, a new array is returned, computed in the thread's last buffers
    for up to :data:`CACHED_SAMPLES` samples and in new ones beyond.

    A NaN or infinite q raises :class:`MassMatrixError` naming the configuration. Either
    method with ``data`` whose arrays the kernel takes as given (the simulator's path) does
    not check q first: there a non-finite q is named where the kernel's checks (mass, a
    balancer's reach, H positive definite) fail on it, and otherwise gives non-finite
    accelerations.
    """
    if method not in METHODS:
        raise ValueError(f"method: got {method!r}, expected one of {', '.join(METHODS)}")
    n = model.n_coordinates
    # the common cases, data of this model and sample shape (or none, a few samples) and
    # arrays as the kernel takes them, need none of the conversions and checks below
    if type(data) is ForwardDynamicsData and data.model is model \
            and _all_as_kernel_takes(model, q, qd, tau, data.lead):
        done = _unchecked(model, data, q, qd, tau, method, held)
        if done is not None:
            return done
    elif data is None and type(q) is np.ndarray and q.ndim \
            and math.prod(q.shape[:-1]) <= CACHED_SAMPLES \
            and _all_as_kernel_takes(model, q, qd, tau, q.shape[:-1]):
        not_finite = _not_finite(model, q)      # the unchecked kernels would not name it
        if not_finite is not None:
            raise not_finite
        done = _unchecked(model, _cached_data(model, q.shape[:-1]), q, qd, tau, method, held)
        if done is not None:
            return done.copy()
    q, qd, tau = (np.asarray(v, dtype=float) for v in (q, qd, tau))
    if q.shape[-1:] != (model.nq,) or qd.shape[-1:] != (n,) or tau.shape[-1:] != (n,):
        raise ValueError(f"q, qd, tau: got last axes {q.shape[-1:]}, {qd.shape[-1:]}, "
                         f"{tau.shape[-1:]}, expected ({n},) coordinates of {model.name} "
                         f"(q: ({model.nq},) configuration entries)")
    lead = q.shape[:-1]
    if qd.shape[:-1] != lead or tau.shape[:-1] != lead:
        lead = np.broadcast_shapes(lead, qd.shape[:-1], tau.shape[:-1])
        q = np.broadcast_to(q, lead + (model.nq,))
        qd, tau = (np.broadcast_to(v, lead + (n,)) for v in (qd, tau))
    not_finite = _not_finite(model, q)
    if not_finite is not None:
        raise not_finite
    if model.free_flyers:
        check_configuration(model, q)
    if data is None and math.prod(lead) <= CACHED_SAMPLES:
        return _solve(model, _cached_data(model, lead), q, qd, tau, lead, method, held).copy()
    return _solve(model, ForwardDynamicsData.reuse(data, model, lead), q, qd, tau, lead, method,
                  held)


def _solve(model: Model, data: ForwardDynamicsData, q: np.ndarray, qd: np.ndarray,
           tau: np.ndarray, lead: tuple[int, ...], method: str, held: Optional[np.ndarray]
           ) -> np.ndarray:
    """:func:`forward_dynamics` of arrays checked and broadcast to ``lead``, in ``data``."""
    n = model.n_coordinates
    if method == "aba" and data.coupling is not None:
        if model not in _FELL_BACK:
            _FELL_BACK.add(model)
            _LOG.warning("%s: forward_dynamics(method='aba') solves by Cholesky instead: %s",
                         model.name, data.coupling)
        method = "cholesky"
    q_s, qd_s = samples(q, lead, model.nq), samples(qd, lead, n)
    if method == "aba":
        return _aba(model, data, q_s, qd_s, samples(tau, lead, n), held)
    if held is None:
        return _cholesky(model, data, q_s, qd_s, samples(tau, lead, n))
    # the bias forces u' = ID(q, qd, 0) (module docstring), with the placements of q
    loads = bias_loads(model, q_s, qd_s, data.bias)
    np.subtract(tau, loads.coordinate_effort, out=data.phi)
    H = mass_matrix(model, q, placements=loads.placements, data=data.mass)
    try:
        data.qdd[...] = held_solve(H, data.phi, np.broadcast_to(np.asarray(held, dtype=bool),
                                                                data.phi.shape))
    except np.linalg.LinAlgError:
        raise _singular(model, H) from None
    return data.qdd


def _all_as_kernel_takes(model: Model, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                         lead: tuple[int, ...]) -> bool:
    n = model.n_coordinates
    return (_as_kernel_takes(q, lead, model.nq) and _as_kernel_takes(qd, lead, n)
            and _as_kernel_takes(tau, lead, n))


def _unchecked(model: Model, data: ForwardDynamicsData, q: np.ndarray, qd: np.ndarray,
               tau: np.ndarray, method: str, held: Optional[np.ndarray]
               ) -> Optional[np.ndarray]:
    """qdd in ``data`` of arrays as the kernels take them for ``data``, by the method's one
    kernel call; None where the method needs the checked path (the ABA of coupled joints
    that do not share their parents, Cholesky with ``held``)."""
    S, n = data.samples, model.n_coordinates
    aba = method == "aba" and data.coupling is None
    if not aba and not (method == "cholesky" and held is None):
        return None
    if model.free_flyers:
        # a NaN quaternion is named as a NaN configuration, not as a quaternion's norm
        not_finite = _not_finite(model, q)
        if not_finite is not None:
            raise not_finite
        check_configuration(model, q)
    q, qd, tau = q.reshape(S, model.nq), qd.reshape(S, n), tau.reshape(S, n)
    return _aba(model, data, q, qd, tau, held) if aba else _cholesky(model, data, q, qd, tau)


def _cholesky(model: Model, data: ForwardDynamicsData, q: np.ndarray, qd: np.ndarray,
              tau: np.ndarray) -> np.ndarray:
    """:func:`forward_dynamics` by Cholesky of the (samples, k) arrays checked against
    ``data``: every sample in one kernel call (:func:`_forward_cholesky_batch`)."""
    arguments = data.cholesky_arguments
    balancer, s = _forward_cholesky_batch(*arguments, q, qd, tau)
    if balancer >= 0 or s >= 0:     # a NaN configuration fails one: named as such
        raise _not_finite(model, q) or (balancer_range_error(model.balancers[balancer])
                                         if balancer >= 0 else _singular(model, arguments[4][s]))
    return data.qdd


def _as_kernel_takes(a: np.ndarray, lead: tuple[int, ...], n: int) -> bool:
    """``a`` is a C-contiguous float64 array of shape ``lead + (n,)`` (no conversion)."""
    return (type(a) is np.ndarray and a.shape == lead + (n,) and a.dtype is FLOAT
            and a.flags.c_contiguous)


def _aba(model: Model, data: ForwardDynamicsData, q: np.ndarray, qd: np.ndarray,
         tau: np.ndarray, held: Optional[np.ndarray]) -> np.ndarray:
    """:func:`forward_dynamics` by the ABA of the (samples, k) arrays checked against
    ``data`` (a model whose coupled joints share their parents): the bias pass and the ABA
    of every sample in one kernel call (:func:`bias_articulated_sample`)."""
    data.articulated.hold(held)
    balancer, c = _forward_aba_batch(*data.aba_arguments, q, qd, tau)
    if balancer >= 0 or c >= 0:     # a NaN configuration fails both checks: named as such
        raise _not_finite(model, q) or (balancer_range_error(model.balancers[balancer])
                                         if balancer >= 0 else no_mass(model, c))
    return data.qdd


def cholesky_solve(H: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Solve H x = phi for symmetric positive definite H (..., n, n), phi (..., n).

    H = L L^T (Cholesky-Banachiewicz, from H's lower triangle), then forward substitution
    L y = phi and back substitution L^T x = y, every sample in one kernel call
    (:func:`_cholesky_solve_batch`: one state's solve was 2n numpy calls, 450 us of 600 on
    CHARMIE); raises ``numpy.linalg.LinAlgError`` if H is not positive definite.
    """
    H, phi = np.asarray(H, dtype=float), np.asarray(phi, dtype=float)
    n = phi.shape[-1] if phi.ndim else 0
    if phi.ndim < 1 or H.shape[-2:] != (n, n):
        raise ValueError(f"H, phi: got shapes {H.shape}, {phi.shape}, expected (..., n, n) "
                         "and (..., n)")
    lead = phi.shape[:-1] if H.shape[:-2] == phi.shape[:-1] else \
        np.broadcast_shapes(H.shape[:-2], phi.shape[:-1])
    S = math.prod(lead)
    x = np.empty(lead + (n,))
    if _cholesky_solve_batch(_as_rows(H, lead + (n, n)).reshape(S, n, n),
                             _as_rows(phi, lead + (n,)).reshape(S, n), np.empty((n, n)),
                             x.reshape(S, n)) >= 0:
        raise np.linalg.LinAlgError("Matrix is not positive definite")
    return x


def _as_rows(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` broadcast to ``shape`` as a C-contiguous float array (itself where it is one)."""
    if type(a) is np.ndarray and a.shape == shape and a.dtype is FLOAT and a.flags.c_contiguous:
        return a
    return np.ascontiguousarray(np.broadcast_to(a, shape), dtype=float)


@kernel
def _cholesky_solve_batch(H, phi, L, x) -> int:
    """x[s] = H[s]^-1 phi[s], sample by sample (:func:`cholesky_solve_sample`); returns the
    first sample whose H is not positive definite, -1 for none."""
    for s in range(H.shape[0]):
        if not cholesky_solve_sample(H[s], phi[s], L, x[s]):
            return s
    return -1


@kernel
def cholesky_solve_sample(H, phi, L, x) -> bool:
    """x = H^-1 phi by L L^T = H (L: an (n, n) work array) and the two substitutions
    (kernel); False where H is not positive definite (x then undefined)."""
    n = phi.shape[0]
    for j in range(n):
        for i in range(j, n):
            v = H[i, j]
            for k in range(j):
                v -= L[i, k] * L[j, k]
            if i == j:
                if not v > 0.0:             # also a NaN
                    return False
                L[j, j] = np.sqrt(v)
            else:
                L[i, j] = v / L[j, j]
    for k in range(n):                      # L y = phi, y in x
        v = phi[k]
        for j in range(k):
            v -= L[k, j] * x[j]
        x[k] = v / L[k, k]
    for k in range(n - 1, -1, -1):          # L^T x = y
        v = x[k]
        for j in range(k + 1, n):
            v -= L[j, k] * x[j]
        x[k] = v / L[k, k]
    return True


def held_solve(H: np.ndarray, phi: np.ndarray, held: np.ndarray) -> np.ndarray:
    """x with x_h = 0 and H_ff x_f = phi_f for the coordinates not ``held`` (batched): the
    held rows and columns of H are replaced by those of the identity."""
    n = phi.shape[-1]
    cross = held[..., :, None] | held[..., None, :]
    return cholesky_solve(np.where(cross, np.eye(n), H), np.where(held, 0.0, phi))


# the header rows (flat.py) of _forward_cholesky_batch's arrays, in ForwardDynamicsData's order
_C_INERTIAS = len(PackedModel._fields)
_C_LOAD_BODY, _C_LOAD_VEC, _C_BUFFERS = _C_INERTIAS + 1, _C_INERTIAS + 2, _C_INERTIAS + 3
_C_WORK = _C_BUFFERS + len(InverseDynamicsBuffers._fields)
_C_ZEROS = _C_WORK + len(MassMatrixWork._fields)


@kernel
def _forward_cholesky_batch(header, ints, floats, phi, H, qdd, q, qd, tau) -> tuple[int, int]:
    """Sample by sample: the bias pass (the inverse dynamics' tree_efforts_sample with
    qdd = 0), phi = tau - u', H by the CRBA at its placements and H qdd = phi by Cholesky,
    the arrays flattened in the order of ``ForwardDynamicsData.cholesky_arguments``.
    Returns (the last balancer whose spring cannot reach its anchor, the first sample whose
    H is not positive definite), -1 for none, as the inverse dynamics and the ABA report
    them (every sample is run: the balancer is reported before H)."""
    pm = packed_model_view(header, ints, floats, 0)
    inertias = view3(floats, header, _C_INERTIAS)
    loads = view1(ints, header, _C_LOAD_BODY), view3(floats, header, _C_LOAD_VEC)
    b = buffers_view(header, floats, _C_BUFFERS)
    work = MassMatrixWork(view3(floats, header, _C_WORK), view3(floats, header, _C_WORK + 1),
                          view2(floats, header, _C_WORK + 2), view1(floats, header, _C_WORK + 3),
                          view1(floats, header, _C_WORK + 4))
    zeros, L = view1(floats, header, _C_ZEROS), view2(floats, header, _C_ZEROS + 1)
    balancer, singular = -1, -1
    for s in range(q.shape[0]):
        k = tree_efforts_sample(pm, loads, q[s], qd[s], zeros, b, s, 0)
        if k >= 0:
            balancer = k
            continue
        for c in range(phi.shape[1]):
            phi[s, c] = tau[s, c] - b.tau[s, c]
        mass_matrix_sample(pm, inertias, b.rotations[0], b.origins[0], work, H[s])
        if not cholesky_solve_sample(H[s], phi[s], L, qdd[s]) and singular < 0:
            singular = s
    return balancer, singular


# the header rows (flat.py) of _forward_aba_batch's arrays, in ForwardDynamicsData's order
_INERTIAS = len(PackedModel._fields)
_MEMBERS, _LOAD_BODY, _LOAD_VEC, _BUFFERS = _INERTIAS + 1, _INERTIAS + 2, _INERTIAS + 3, \
    _INERTIAS + 4
_WORK = _BUFFERS + len(InverseDynamicsBuffers._fields)
_ZEROS = _WORK + len(ArticulatedBodyWork._fields)


@kernel
def _forward_aba_batch(header, ints, floats, free, phi, qdd, q, qd, tau) -> tuple[int, int]:
    """:func:`bias_articulated_sample` sample by sample. The moving tree's packed model,
    inertias and coupled groups, the applied loads (none), the bias pass's buffers (one
    sample's per-body rows, which each sample overwrites), the ABA's work and the bias
    pass's qdd = 0 come flattened (flat.py: one call checks 9 arrays, not 45), in the
    order of ``ForwardDynamicsData.aba_arguments``. Returns the last balancer out of range
    (as the inverse dynamics reports it) and the first coordinate without mass, -1 for
    none."""
    pm = packed_model_view(header, ints, floats, 0)
    inertias, members = view3(floats, header, _INERTIAS), view2(ints, header, _MEMBERS)
    loads = view1(ints, header, _LOAD_BODY), view3(floats, header, _LOAD_VEC)
    b, w = buffers_view(header, floats, _BUFFERS), work_view(header, floats, _WORK)
    zeros = view2(floats, header, _ZEROS)
    balancer, coordinate = -1, -1
    for s in range(q.shape[0]):
        k, c = bias_articulated_sample(pm, (inertias, members), loads, q[s], qd[s], zeros[s],
                                       b, s, 0, (tau[s], phi[s], free[s], qdd[s], w))
        if k >= 0:
            balancer = k
        elif coordinate < 0:
            coordinate = c
    return balancer, coordinate
