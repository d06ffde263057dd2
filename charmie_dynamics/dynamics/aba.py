"""The articulated-body algorithm (ABA) on the tree: joint accelerations qdd solving
H(q) qdd = phi in O(n), seed 002 eqs. 18-21, for :func:`~.forward.forward_dynamics`
(``method="aba"``) and the simulator's compiled step (actuated_step.py).

Seed 002's recursive solution of U D U^T qdd = phi (eqs. 18-21),
i.e. the articulated-body algorithm of a system at rest without gravity with phi as joint
input, written for a tree in body frames (spatial.py: A_i, p_i, M_i): one inward recursion
of the articulated inertias and one outward recursion of the accelerations. Inward, for
i = n..1,

    M^_i   = M_i + sum_{children j} A_j^T (M^_j - psi^_j psi^_j^T / m^_j) A_j     (19d)
    psi^_i = M^_i p_i,   m^_i = p_i^T psi^_i                                        (19c)
    eta_i  = sum_{children j} A_j^T (eta_j + psi^_j phi^_j / m^_j)                  (19b)
    phi^_i = phi_i - p_i^T eta_i                                                    (19a)

then phi~_i = phi^_i / m^_i (eq. 20) and outward, for i = 1..n, with mu~_0 = 0 (gravity is
in phi)

    qdd_i = phi~_i - psi^_i^T A_i mu~_p / m^_i,   mu~_i = A_i mu~_p + p_i qdd_i      (21a-b)

(eqs. 19c and 21a as extracted place the 1/m^_i and A_i in psi_i; it is the same product).

**The bias pass fused in** (:func:`bias_articulated_sample`, forward_dynamics' and the
simulator's route): phi = tau - u' with u' = ID(q, qd, 0) (forward.py's module docstring)
takes no pass of its own. As Pinocchio's aba (Featherstone, RBDA table 7.1: pass 1 the
velocities, velocity-product accelerations and bias forces, pass 2 the articulated inertias,
pass 3 the accelerations), there are three sweeps: outward, the placements, the motion with
qdd = 0 and -g at the base, and each body's own bias wrench (seed 000 eqs. 28-34's terms);
inward, each body's wrench, complete once its children have added theirs, is added to its
parent's (eqs. 33-34), its projection u'_i = p_i^T F_i gives phi_i, and eqs. 19a-d follow at
the same body; outward, eqs. 20-21. Seed 002's split (F for the bias, eta for phi's
propagation) is kept rather than Featherstone's single p^A = F + eta: the fused pass's bias
forces and phi are bit-identical to the separate passes', and a re-solve with held
coordinates (integrate.py's stops) reuses phi. The transforms A_i are applied from the
placements (R, r) without building (6, 6) matrices (spatial.py's ``rt_`` functions; RBDA
section 2.8): A_j^T M^ A_j as a blockwise rotation then a shift.
Seed 002 writes the chain; on a tree each sum runs over the children. A fixed joint has no
degree of freedom: M^ and eta pass to the parent unchanged, mu~_i = A_i mu~_p. A massless
(virtual) body has M_i = 0; its m^_i is that of the bodies it carries, positive whenever
they have mass along its joint (CHARMIE's d1 and d2 carry the whole robot).

**Coupled coordinates in the ABA.** A coordinate that moves several joints (the claw halves:
theta13a turns body_13a1 by +theta13a and body_13a2 by -theta13a) is one degree of freedom
of the group of bodies it moves. When these joints share one parent, the group is handled
exactly as one joint whose motion subspace is p_k multiplier_k on each member k: the sums
above run over the group (m^_c = sum_k mult_k^2 p_k^T M^_k p_k, phi^_c = phi_c -
sum_k mult_k p_k^T eta_k, W = sum_k A_k^T mult_k M^_k p_k replacing A^T psi^), and outward
qdd_c = (phi^_c - W^T mu~_p) / m^_c, mu~_k = A_k mu~_p + p_k mult_k qdd_c. This is
exact and stays O(n). A coordinate whose joints do not share a parent (one above the other,
or on different branches: the grippers of Talos and Tiago) would couple the recursion across
levels: :func:`~.forward.forward_dynamics` with ``method="aba"`` then solves by Cholesky, which
handles
any coupling, and logs the reason once per model (logger ``charmie_dynamics.dynamics.forward``,
WARNING); :func:`articulated_body_solve` itself refuses such a model with a ValueError.

**The free-flyer** (a root joint, model/joint.py) is the 6-degree-of-freedom joint of the
same recursion (Featherstone's floating base): at its body, eq. 19c's m^ is the (6, 6)
D = S^T M^ S, phi^ = phi - S^T eta, and having no parent it is solved there, D qdd = phi^
(a 6 x 6 Cholesky factorisation, :func:`free_flyer_solve`), mu~ = S qdd starting the
outward pass.

**Held coordinates** (``held``, the joint stops of integrate.py): qdd = 0 for them; a held
coordinate's joints act as fixed joints (its psi^ terms drop out of eqs. 19b, d).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from ..flat import view1, view2, view3
from ..jit import kernel
from ..kinematics.forward import Placements, forward_kinematics_sample
from ..kinematics.motion import body_motion_sample
from ..kinematics.state import samples
from ..layout import COORD, KIND, MULTIPLIER, PARENT, S_V, S_W, SCALARS, F, N
from ..linalg import dot, vec
from ..mechanisms.forces import passive_forces_sample
from ..model.data import AlgorithmData
from ..model.joint import FREE_COLUMNS, FREE_KIND
from ..model.model import Model
from ..model.moving_tree import Tree
from ..model.packed import flat_packed, unflat_packed
from .inverse import apply_loads_sample
from .mass_matrix import no_mass
from .rnea import body_wrenches_sample, push_wrench
from .spatial import rt_add_force_to_parent, rt_add_inertia_to_parent, rt_motion_to_child_into


def coordinate_groups(model: Model) -> list[tuple[int, ...]]:
    """Bodies moved by each coordinate, in ``model.coordinate_names`` order.

    Raises ValueError for a coordinate whose joints do not share one parent (see the module
    docstring: the ABA handles coupled joints that are siblings).
    """
    reason = model.compiled.aba_coupling               # built once per model
    if reason is not None:
        raise ValueError(f"{reason}, use method='cholesky'")
    return list(model.compiled.coordinate_bodies)


class ArticulatedBodyWork(NamedTuple):
    """The work arrays of :func:`articulated_body_sample`, for one sample at a time: per
    body M_hat, eta, mu; per coordinate W, m_hat, phi_hat, gain; psi per member of a
    coupled group, scratch (6, 6). (No A_i: the transforms are applied from the placements,
    spatial.py's rt_ functions.)"""

    M_hat: np.ndarray       # (nb, 6, 6)
    eta: np.ndarray         # (nb, 6)
    W: np.ndarray           # (n, 6)
    mu: np.ndarray          # (nb, 6)
    psi: np.ndarray         # (members per coordinate, 6)
    m_hat: np.ndarray       # (n,)
    phi_hat: np.ndarray     # (n,)
    gain: np.ndarray        # (n,)
    scratch: np.ndarray     # (6, 6)


@kernel
def articulated_body_sample(pm, inertias, members, rotations, origins, phi, free, qdd,
                            work) -> int:
    """Seed 002 eqs. 19-21 on the tree for one sample (kernel, module docstring).

    ``pm``: a :class:`~..model.packed.PackedModel`, ``work``: an
    :class:`ArticulatedBodyWork`; ``members[c]``: the bodies coordinate c moves (-1
    padded; the first, the lowest index, is where the group is reduced); ``free[c]``: 0 for
    a held coordinate, else 1. Returns a coordinate that moves no mass (m^ <= 0), or -1.
    """
    for i in range(pm.body_int.shape[0]):
        start_body(inertias, i, work)
    for i in range(pm.body_int.shape[0] - 1, -1, -1):
        c = inward_body(pm, members, rotations, origins, i, phi, free, qdd, work)
        if c >= 0:
            return c
    outward_pass(pm, members, rotations, origins, qdd, work)
    return -1


@kernel
def start_body(inertias, i, work) -> None:
    """Body i's M^_i = M_i, eta_i = 0, mu_i = 0 (kernel), before the inward recursion."""
    M_hat, eta, mu = work.M_hat, work.eta, work.mu
    for a in range(6):              # element by element: numba's slice assignments cost more
        for b in range(6):
            M_hat[i, a, b] = inertias[i, a, b]
        eta[i, a] = 0.0
        mu[i, a] = 0.0


@kernel
def inward_body(pm, members, rotations, origins, i, phi, free, qdd, work) -> int:
    """Eqs. 19a-d at body i (kernel), its children done: a body on a fixed joint passes
    M^_i and eta_i to its parent, a free-flyer root is solved (:func:`free_flyer_solve`),
    a coupled group is reduced at its first member. A_i^T M A_i and A_i^T f are applied
    from the placements (spatial.py: rt_add_inertia_to_parent, rt_add_force_to_parent;
    RBDA table 7.1's X^T I^a X, which Pinocchio also applies blockwise). Returns a
    coordinate that moves no mass, or -1."""
    body_int, body_vec, subspaces = pm.body_int, pm.body_vec, pm.subspace
    M_hat, eta, W, mu = work.M_hat, work.eta, work.W, work.mu
    psi, m_hat, phi_hat, gain, scratch = (work.psi, work.m_hat, work.phi_hat, work.gain,
                                          work.scratch)
    parent, c = body_int[i, PARENT], body_int[i, COORD]
    if c < 0:
        if parent >= 0:
            rt_add_inertia_to_parent(rotations, origins, i, M_hat[i], M_hat[parent])
            rt_add_force_to_parent(rotations, origins, i, eta[i], eta[parent])
        return -1
    if body_int[i, KIND] == FREE_KIND:      # a root: solved now, mu_i = S qdd
        return free_flyer_solve(M_hat[i], eta[i], phi, free, c, scratch, qdd, mu[i])
    if i != members[c, 0]:
        return -1                       # a coupled group is reduced at its first member
    mass, effort = 0.0, phi[c]
    for j in range(members.shape[1]):
        k = members[c, j]
        if k < 0:
            break
        m_k = body_vec[k, SCALARS, MULTIPLIER]
        for a in range(6):                                          # psi_k = m_k M^_k p_k
            acc = 0.0
            for b in range(6):
                acc += M_hat[k, a, b] * subspaces[k, b]
            psi[j, a] = m_k * acc
        mass += m_k * dot6(psi[j], subspaces[k])
        effort -= m_k * dot6(eta[k], subspaces[k])
    if not mass > 0.0:
        return c
    m_hat[c], phi_hat[c], gain[c] = mass, effort, free[c] / mass
    if parent < 0:
        return -1
    for a in range(6):
        W[c, a] = 0.0
    for j in range(members.shape[1]):
        k = members[c, j]
        if k < 0:
            break
        rt_add_force_to_parent(rotations, origins, k, psi[j], W[c])
        rt_add_inertia_to_parent(rotations, origins, k, M_hat[k], M_hat[parent])
        rt_add_force_to_parent(rotations, origins, k, eta[k], eta[parent])
    for a in range(6):
        eta[parent, a] += W[c, a] * phi_hat[c] * gain[c]
        for b in range(6):
            M_hat[parent, a, b] -= W[c, a] * W[c, b] * gain[c]
    return -1


@kernel
def outward_pass(pm, members, rotations, origins, qdd, work) -> None:
    """Eqs. 20-21 (kernel): qdd and mu outward (mu_i = A_i mu_p + p_i qdd_i, A_i applied
    from the placements: spatial.rt_motion_to_child_into), the roots' free-flyers solved
    inward."""
    body_int, body_vec, subspaces = pm.body_int, pm.body_vec, pm.subspace
    W, mu, phi_hat, gain = work.W, work.mu, work.phi_hat, work.gain
    for i in range(body_int.shape[0]):
        parent, c = body_int[i, PARENT], body_int[i, COORD]
        if c < 0:
            if parent >= 0:
                rt_motion_to_child_into(rotations, origins, i, mu[parent], mu[i])
            continue
        if i != members[c, 0] or body_int[i, KIND] == FREE_KIND:
            continue
        acc = phi_hat[c] * gain[c]
        if parent >= 0:
            acc -= dot6(W[c], mu[parent]) * gain[c]
        qdd[c] = acc
        for j in range(members.shape[1]):
            k = members[c, j]
            if k < 0:
                break
            if parent >= 0:
                rt_motion_to_child_into(rotations, origins, k, mu[parent], mu[k])
            for a in range(6):
                mu[k, a] += subspaces[k, a] * body_vec[k, SCALARS, MULTIPLIER] * acc


@kernel(inline=True)
def dot6(a, b):
    """a . b of two 6-vectors (kernel), in order: numba's np.dot calls BLAS, whose call
    costs more than the six products."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@kernel
def free_flyer_solve(M_hat, eta, phi, free, c, L, qdd, mu) -> int:
    """The free-flyer root's step of eqs. 19-21 (kernel): with S its subspace (model/joint.py,
    FREE_COLUMNS), D = S^T M^ S (6, 6), phi^ = phi[c:c + 6] - S^T eta, qdd[c:c + 6] solving
    D qdd = phi^ by Cholesky (D = L L^T, in the (6, 6) work array ``L``), mu = S qdd. Held
    coordinates (free = 0) get the identity's rows and columns and qdd = 0, as held_solve.
    Returns the first coordinate whose pivot is not positive (no mass moves), or -1."""
    for a in range(6):
        for b in range(a + 1):
            if free[c + a] > 0.0 and free[c + b] > 0.0:
                acc = M_hat[FREE_COLUMNS[a], FREE_COLUMNS[b]]
            else:
                acc = 1.0 if a == b else 0.0
            for k in range(b):
                acc -= L[a, k] * L[b, k]
            if a == b:
                if not acc > 0.0:
                    return c + a
                L[a, a] = np.sqrt(acc)
            else:
                L[a, b] = acc / L[b, b]
    for a in range(6):                                  # L y = phi^, y in qdd
        acc = (phi[c + a] - eta[FREE_COLUMNS[a]]) * free[c + a]
        for k in range(a):
            acc -= L[a, k] * qdd[c + k]
        qdd[c + a] = acc / L[a, a]
    for a in range(5, -1, -1):                          # L^T qdd = y
        acc = qdd[c + a]
        for k in range(a + 1, 6):
            acc -= L[k, a] * qdd[c + k]
        qdd[c + a] = acc / L[a, a]
    for a in range(6):
        mu[FREE_COLUMNS[a]] = qdd[c + a]
    return -1


@kernel
def _articulated_body_batch(model, inertias, members, rotations, origins, phi, free, qdd,
                            work) -> int:
    """:func:`articulated_body_sample` sample by sample. ``model``: the packed model
    flattened (packed.flat_packed), ``work``: the arrays of :class:`ArticulatedBodyWork` as a
    plain tuple (the dispatch cost: see inverse.py's kernel); named here."""
    pm, w = unflat_packed(model), ArticulatedBodyWork(*work)
    for s in range(phi.shape[0]):
        c = articulated_body_sample(pm, inertias, members, rotations[s], origins[s], phi[s],
                                    free[s], qdd[s], w)
        if c >= 0:
            return c
    return -1


@kernel
def bias_articulated_sample(pm, tree, loads, q, qd, zeros, b, s, t, solve) -> tuple[int, int]:
    """One sample's forward dynamics by the ABA with its bias pass fused in (kernel, module
    docstring). Outward: the placements of q, the motion with qdd = 0 (``zeros``; -g at the
    base) and the passive forces and applied ``loads``, then each body's own wrench (the
    inverse dynamics' steps, inverse.py: seed 000 eqs. 28-35, 39-41), and M^_i = M_i.
    Inward, one pass for body i = n..1: its wrench, complete, added to its parent's (eqs.
    33-34, rnea.py), and where a coordinate's group is reduced, the bias force u' = p^T F
    (seed 002 eq. 16a with qdd = 0: u' = ID(q, qd, 0)) and phi = tau - u' (eq. 18) before
    eqs. 19a-d there. Then eqs. 20-21 outward. The arithmetic of each quantity is that of
    the separate passes, in the same order. The bias forces land in the
    :class:`~.inverse.InverseDynamicsBuffers` ``b`` (row ``s`` of the per-sample buffers,
    ``t`` of the per-body ones). ``tree``: (inertias, members) of
    :func:`articulated_body_sample`; ``solve``: (tau, phi, free, qdd, work), one sample's.
    Returns (a balancer whose spring cannot reach its anchor, the ABA not run; a coordinate
    that moves no mass), -1 for none."""
    inertias, members = tree
    tau, phi, free, qdd, work = solve
    body_int, body_vec = pm.body_int, pm.body_vec
    load_body, load_vec = loads
    values, rotations, origins, motion, applied, wrenches = b.values[t], b.rotations[t], \
        b.origins[t], b.motion[t], b.applied[t], b.tree[t]
    bias = b.tau[s]
    forward_kinematics_sample(body_int, body_vec, pm.body_mat, q, values, rotations, origins)
    body_motion_sample(body_int, body_vec, rotations, origins, qd, zeros,
                       pm.base_acceleration, motion)
    applied[:] = 0.0
    k = passive_forces_sample(pm.mech_int, pm.mech_vec, rotations, origins, b.tension[s],
                              b.hanger[s], applied)
    if k >= 0:
        return k, -1
    apply_loads_sample(load_body, load_vec, rotations, origins, motion, applied)
    body_wrenches_sample(body_int, body_vec, pm.body_mat, motion, applied, wrenches)
    nb = body_int.shape[0]
    for i in range(nb):
        start_body(inertias, i, work)
    for i in range(nb - 1, -1, -1):
        push_wrench(body_int, rotations, origins, wrenches, i)
        c = body_int[i, COORD]
        if c < 0:
            pass
        elif body_int[i, KIND] == FREE_KIND:    # S^T [n; f] = [f; n] (model/joint.py)
            for a in range(3):
                bias[c + a], bias[c + 3 + a] = wrenches[i, F, a], wrenches[i, N, a]
            for a in range(6):
                phi[c + a] = tau[c + a] - bias[c + a]
        elif i == members[c, 0]:                # s_w . n + s_v . f over the group
            u = 0.0
            for j in range(members.shape[1]):
                m = members[c, j]
                if m < 0:
                    break
                u += body_vec[m, SCALARS, MULTIPLIER] * (
                    dot(vec(wrenches, m, N), vec(body_vec, m, S_W))
                    + dot(vec(wrenches, m, F), vec(body_vec, m, S_V)))
            bias[c] = u
            phi[c] = tau[c] - u
        c = inward_body(pm, members, rotations, origins, i, phi, free, qdd, work)
        if c >= 0:
            return -1, c
    outward_pass(pm, members, rotations, origins, qdd, work)
    return -1, -1


@kernel(inline=True)
def work_view(header, floats, k):
    """The :class:`ArticulatedBodyWork` flattened (flat.py) at the header's rows k to k + 8,
    as views (kernel)."""
    return ArticulatedBodyWork(
        view3(floats, header, k), view2(floats, header, k + 1), view2(floats, header, k + 2),
        view2(floats, header, k + 3), view2(floats, header, k + 4), view1(floats, header, k + 5),
        view1(floats, header, k + 6), view1(floats, header, k + 7), view2(floats, header, k + 8))


class ArticulatedBodyData(AlgorithmData):
    """Buffers of :func:`articulated_body_solve` for one model and sample shape ``lead``:
    the coupled groups (``members``), qdd and the recursion's work arrays, on the model's
    tree (``model.compiled.tree``) or, for :func:`forward_dynamics`' route, its ``tree`` of
    moving bodies. ValueError for a model whose coupled joints do not share a parent (see
    :func:`coordinate_groups`)."""

    def __init__(self, model: Model, lead: tuple[int, ...] = (),
                 tree: Optional[Tree] = None) -> None:
        super().__init__(model, lead)
        coordinate_groups(model)                # the check
        self.tree = model.compiled.tree if tree is None else tree
        groups = self.tree.coordinate_bodies
        n, nb = model.n_coordinates, self.tree.n_bodies
        self.members = np.full((n, max((len(g) for g in groups), default=1)), -1,
                               dtype=np.int64)
        for c, group in enumerate(groups):
            self.members[c, :len(group)] = group
        self.free = np.ones((self.samples, n))
        self.all_free = True                     # free holds ones: no coordinate held
        self.qdd = np.empty(self.lead + (n,))
        self.qdd_samples = self.qdd.reshape(self.samples, n)
        # the kernel's model arguments, built once
        self.constants = (flat_packed(self.tree.packed), self.tree.spatial_inertias, self.members)
        self.work = tuple(ArticulatedBodyWork(   # a plain tuple: the kernel's dispatch is faster
            M_hat=np.empty((nb, 6, 6)), eta=np.empty((nb, 6)),
            W=np.empty((n, 6)), mu=np.empty((nb, 6)), psi=np.empty((self.members.shape[1], 6)),
            m_hat=np.empty(n), phi_hat=np.empty(n), gain=np.empty(n), scratch=np.empty((6, 6))))

    def hold(self, held: Optional[np.ndarray]) -> None:
        """``free`` for the coordinates ``held`` (boolean, broadcast to (..., n)), or for none
        (refilled only after a call with some held)."""
        if held is None:
            if not self.all_free:
                self.free[...] = 1.0
                self.all_free = True
        else:
            shape = self.lead + (self.model.n_coordinates,)
            self.free.reshape(shape)[...] = np.logical_not(
                np.broadcast_to(np.asarray(held, dtype=bool), shape))
            self.all_free = False


def articulated_body_solve(model: Model, placements: Placements, phi: np.ndarray,
                           held: Optional[np.ndarray] = None, *,
                           data: Optional[ArticulatedBodyData] = None) -> np.ndarray:
    """qdd solving H qdd = phi by seed 002 eqs. 19-21 on the tree (module docstring), (..., n).

    ``held`` (boolean (..., n)): those coordinates get qdd = 0 and act as fixed joints in the
    recursion (M^ and eta pass to the parent without the psi^ terms). Raises
    :class:`MassMatrixError` when a coordinate has no inertia (m^ <= 0). ``data``: buffers
    for the placements' sample shape, reused (see :class:`ArticulatedBodyData`); new ones
    when omitted.
    """
    lead, n = placements.lead, model.n_coordinates
    data = ArticulatedBodyData.reuse(data, model, lead)
    if data.tree is not model.compiled.tree:
        raise ValueError("data: ArticulatedBodyData of the moving tree (forward_dynamics' "
                         f"own), expected one of the whole tree of {model.name}")
    rotations, origins = placements.per_sample(model)
    phi = samples(phi, lead, n)
    data.hold(held)
    c = _articulated_body_batch(*data.constants, rotations, origins, phi, data.free,
                                data.qdd_samples, data.work)
    if c >= 0:
        raise no_mass(model, c)
    return data.qdd
