"""Dynamics of closed chains by constraint embedding (seed 002 section 3; seed 003 section 5):
the tree's equations of motion with the loops' constraint forces as Lagrange multipliers.

With H(q) the tree's mass matrix (mass_matrix.py), b(q, qd) = ID(q, qd, 0) its bias forces
with gravity, springs and balancers (the tree's inverse dynamics at zero acceleration),
Phi_q the loops' constraint Jacobian and S the selection of the independent coordinates:

    H qdd + b = S^T tau + Phi_q^T lambda,     Phi_q qdd + gamma = 0

where tau are the efforts at the independent coordinates (the actuated joints' torques or
forces; every other coordinate is passive) and lambda the multipliers of the constraint rows
(mechanisms/closed_chains/constraints.py): for a position row e . (p_B - p_A) = 0 the force
lambda e on B at p_B and -lambda e on A at p_A; for an orientation row u . w = 0 the torque
lambda (u x w) on A and its opposite on B. With G the embedding map (qd = G qd_i, qdd = G
qdd_i + g; mechanisms/closed_chains/embedding.py), G^T S^T = 1 and Phi_q G = 0:

    inverse:  tau = G^T (H qdd + b)                          (virtual work; seed 002 eq. 8)
              Phi_d^T lambda = (H qdd + b)_d - 0              minimum-norm lambda, with the
              null space of Phi_d^T (the redundant rows' indeterminate wrenches) reported
    forward:  (G^T H G) qdd_i = tau - G^T (b + H g)           (embedded equations of motion)

Integration (:func:`simulate`): classical Runge-Kutta 4 on (q_i, qd_i); at every stage the
dependent coordinates are solved from the constraints by Newton-Raphson and their rates from
G (generalized coordinate partitioning): the constraints hold to the Newton tolerance at every
step, with no drift to correct and no Baumgarte terms. The energy reported is kinetic plus
gravitational, 1/2 qd^T H qd - sum_i m_i g . c_i (springs and balancers not included).

:func:`inverse_dynamics` solves the state and the multipliers by the compiled embedding
(mechanisms/closed_chains/compiled.py) and H qdd + b by the compiled mass matrix and bias
forces; :func:`inverse_dynamics_reference` and :func:`multipliers` are the same in numpy on
``ClosedChain.state`` (embedding.py), the reference the compiled path is tested against
(test/test_compiled_embedding.py). Forward dynamics and :func:`simulate` run on
``ClosedChain.state``, one state at a time.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..jit import kernel
from ..kinematics.forward import Placements, forward_kinematics
from ..mechanisms.auxiliary import balancer_range_error
from ..mechanisms.closed_chains import (ClosedChain, ConstraintValues, LoopSingularityError,
                                        SolveReport)
from ..mechanisms.closed_chains.compiled import (OK, Embedding, EmbeddingBuffers, MultiplierBuffers,
                                                 PackedLoops, _floats, embed_sample, embedding_of,
                                                 multipliers_sample)
from ..model.packed import unflat_packed
from .inverse import (InverseDynamicsBuffers, InverseDynamicsData, _inverse_dynamics_batch,
                      kernel_arguments)
from .mass_matrix import bias_forces, mass_matrix


@dataclass(frozen=True)
class ClosedChainLoads:
    """Inverse dynamics of a closed chain at one state (module docstring)."""

    q: np.ndarray                # (n,) every coordinate, and its rates
    qd: np.ndarray
    qdd: np.ndarray
    effort: np.ndarray           # (n_independent,) N m or N, ``chain.independent`` order
    multipliers: np.ndarray      # (m,) minimum-norm lambda, ``chain.rows.names`` order
    indeterminate: np.ndarray    # (m, r) basis of the multipliers' null space (redundant rows)
    tree_effort: np.ndarray      # (n,) H qdd + b
    report: SolveReport


def potential_energy(chain: ClosedChain, placements: Placements) -> float:
    """Gravitational potential energy, J: -sum_i m_i g . c_i (world com positions)."""
    model = chain.model
    com = placements.origin_world + np.einsum("bij,bj->bi", placements.rotation_world, model.com)
    return float(-np.sum(model.mass * (com @ model.gravity)))


def energy(chain: ClosedChain, q: np.ndarray, qd: np.ndarray) -> float:
    """Kinetic plus gravitational energy of the whole tree at (q, qd), J."""
    fk = forward_kinematics(chain.model, q)
    H = mass_matrix(chain.model, q, fk)
    return 0.5 * float(qd @ H @ qd) + potential_energy(chain, fk)


@kernel
def _embedded_inverse_dynamics(packed, loops, x, xd, xdd, start, follow, embedding, inverse,
                               out):
    """The state by the compiled embedding, H qdd + b by the tree's inverse dynamics at it
    (``inverse``: that kernel's arguments on the embedding's q, qd, qdd), the minimum-norm
    multipliers and tau = G^T (H qdd + b) (module docstring); ``out``: (tau, the
    multipliers' buffers). Returns (status, group, value, balancer out of reach or -1)."""
    pm, lp, b = unflat_packed(packed), PackedLoops(*loops), EmbeddingBuffers(*embedding)
    status, g, value = embed_sample(pm, lp, x, xd, xdd, start, follow, b)
    if status != OK:
        return status, g, value, -1
    failed = _inverse_dynamics_batch(*inverse)
    if failed >= 0:
        return OK, -1, 0.0, failed
    tree = InverseDynamicsBuffers(*inverse[5]).tau[0]
    tau, multiplier_buffers = out
    multipliers_sample(lp, b.jacobian, tree, MultiplierBuffers(*multiplier_buffers))
    for k in range(tau.shape[0]):
        total = 0.0
        for c in range(tree.shape[0]):
            total += b.G[c, k] * tree[c]
        tau[k] = total
    return OK, -1, 0.0, -1


class EmbeddedInverseDynamics:
    """The buffers of :func:`inverse_dynamics` for one chain: its compiled embedding and the
    tree's inverse dynamics on the embedding's state (built once, kept with the chain)."""

    def __init__(self, chain: ClosedChain) -> None:
        self.chain = chain
        self.embedding: Embedding = embedding_of(chain)
        b = self.embedding.named
        self.data = InverseDynamicsData(chain.model, keep="efforts")
        self.inverse = kernel_arguments(b.q.reshape(1, -1), b.qd.reshape(1, -1),
                                        b.qdd.reshape(1, -1), self.data)
        self.tree = self.data.loads.coordinate_effort.reshape(-1)
        self.tau = np.empty(len(chain.independent))
        self.out = (self.tau, self.embedding.multiplier_buffers)

    def solve(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
              start: np.ndarray | None = None) -> None:
        """One kernel call: the embedding's state into ``embedding.named`` (q, qd, qdd, G),
        H qdd + b into ``tree``, tau into ``tau``, the multipliers; raises as
        :func:`inverse_dynamics` (``start``: its warm start)."""
        embedding = self.embedding
        begin, follow = embedding.start_of(start)
        status, group, value, failed = _embedded_inverse_dynamics(
            embedding.packed, embedding.loops, _floats(x), _floats(xd), _floats(xdd), begin,
            follow, embedding.buffers, self.inverse, self.out)
        if status != OK:
            raise embedding.error(status, group, value)
        if failed >= 0:
            raise balancer_range_error(self.chain.model.balancers[failed])

    @classmethod
    def of(cls, chain: ClosedChain) -> EmbeddedInverseDynamics:
        found = chain.__dict__.get("_inverse_dynamics")
        if found is None:
            found = chain.__dict__["_inverse_dynamics"] = cls(chain)
        return found


def inverse_dynamics(chain: ClosedChain, q_independent: np.ndarray, qd_independent: np.ndarray,
                     qdd_independent: np.ndarray, start: np.ndarray | None = None
                     ) -> ClosedChainLoads:
    """Efforts at the independent coordinates and the cut joints' multipliers (module
    docstring); ``start`` warm-starts Newton-Raphson (the last solution; None: followed from
    the assembled configuration). One kernel call (the compiled embedding, the tree's
    inverse dynamics for H qdd + b), then the null space of Phi_d^T in numpy; equal to
    :func:`inverse_dynamics_reference` to rounding."""
    work = EmbeddedInverseDynamics.of(chain)
    embedding = work.embedding
    work.solve(q_independent, qd_independent, qdd_independent, start)
    b = embedding.named
    report = SolveReport(b.iterations.tolist(), b.residual.tolist(), float(b.condition[0]))
    return ClosedChainLoads(b.q.copy(), b.qd.copy(), b.qdd.copy(), work.tau.copy(),
                            embedding.multiplier_named.lam.copy(),
                            null_space_basis(b.jacobian[:, chain.dependent]), work.tree.copy(),
                            report)


def inverse_dynamics_reference(chain: ClosedChain, q_independent: np.ndarray,
                               qd_independent: np.ndarray, qdd_independent: np.ndarray,
                               start: np.ndarray | None = None) -> ClosedChainLoads:
    """:func:`inverse_dynamics` in numpy on ``ClosedChain.state``, H qdd + b by the mass
    matrix and the bias forces: the reference of the compiled path in the tests."""
    report = SolveReport()
    q, qd, qdd, G, values = chain.state(q_independent, qd_independent, qdd_independent, start,
                                        report)
    fk = values.placements
    tree = mass_matrix(chain.model, q, fk) @ qdd + bias_forces(chain.model, q, qd)
    lam, indeterminate = multipliers(chain, values, tree)
    return ClosedChainLoads(q, qd, qdd, G.T @ tree, lam, indeterminate, tree, report)


def _dependent_svd(Jd: np.ndarray) -> tuple[np.ndarray, ...]:
    """The SVD of Phi_d^T and its rank."""
    U, s, Vt = np.linalg.svd(Jd.T, full_matrices=True)
    return U, s, Vt, int(np.sum(s > 1e-9 * max(s[0], 1.0)))


def multipliers(chain: ClosedChain, values: ConstraintValues, tree: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The minimum-norm multipliers of ``Phi_d^T lambda = tree_d`` (``tree`` = H qdd + b, the
    tree's efforts (n,)) and a basis (m, r) of the null space of Phi_d^T: the redundant
    rows' indeterminate part (module docstring). Numpy: the reference of the compiled
    multipliers (compiled.multipliers_sample)."""
    U, s, Vt, rank = _dependent_svd(values.jacobian[:, chain.dependent])
    lam = Vt[:rank].T @ ((U[:, :rank].T @ tree[chain.dependent]) / s[:rank])
    return lam, Vt[rank:].T


def null_space_basis(Jd: np.ndarray) -> np.ndarray:
    """A basis (m, r) of the null space of Phi_d^T for Phi_d (m, n_dependent): the
    combinations of the redundant rows' multipliers the equations leave free."""
    _, _, Vt, rank = _dependent_svd(Jd)
    return Vt[rank:].T


def forward_dynamics(chain: ClosedChain, q_independent: np.ndarray, qd_independent: np.ndarray,
                     effort: np.ndarray, start: np.ndarray | None = None,
                     report: SolveReport | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(qdd_i, q, qd): the independent accelerations under ``effort`` at the independent
    coordinates (embedded equations, module docstring), and the full state solved."""
    # at zero independent acceleration the embedding's qdd is g
    q, qd, g, G, values = chain.state(q_independent, qd_independent,
                                      np.zeros_like(qd_independent), start, report)
    fk = values.placements
    H = mass_matrix(chain.model, q, fk)
    b = bias_forces(chain.model, q, qd)
    M, bias = embedded_equations(H, G, b + H @ g)
    return embedded_accelerations(M, bias, effort), q, qd


def embedded_equations(H: np.ndarray, G: np.ndarray, tree: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """The embedded equations of motion M qdd_i = tau - bias (module docstring): (M, bias) =
    (G^T H G, G^T tree) for the tree's mass matrix H (n, n), the embedding map G (n, n_i)
    and ``tree`` = b + H g, the tree's efforts at the embedding's qdd for zero independent
    accelerations. The one writing of them: :func:`forward_dynamics` (numpy state) and the
    simulator's loop step (simulation/loop_step.py, compiled state) call it."""
    return G.T @ H @ G, G.T @ tree


def embedded_accelerations(M: np.ndarray, bias: np.ndarray, effort: np.ndarray) -> np.ndarray:
    """qdd_i of the embedded equations (M, bias) under ``effort`` at the independent
    coordinates."""
    return np.linalg.solve(M, effort - bias)


@dataclass(frozen=True)
class Simulation:
    """A simulated motion: times, every coordinate and rate, energy, Newton iterations per
    step, and why it stopped early (None when it ran to the end)."""

    t: np.ndarray                # (k,)
    q: np.ndarray                # (k, n)
    qd: np.ndarray               # (k, n)
    energy: np.ndarray           # (k,) J
    iterations: np.ndarray       # (k,) Newton iterations of the step's first stage
    condition: np.ndarray        # (k,) largest condition number of Phi_d met at the step
    stopped: LoopSingularityError | None


def simulate(chain: ClosedChain, q0_independent: np.ndarray, qd0_independent: np.ndarray,
             duration: float, dt: float,
             effort: Callable[[float, np.ndarray, np.ndarray], np.ndarray] | None = None
             ) -> Simulation:
    """Integrate the embedded equations with RK4 (module docstring) from rest or a given
    state; ``effort(t, q_i, qd_i)`` at the independent coordinates, zero when None (free
    motion). Stops early at a singular configuration (:class:`LoopSingularityError`, kept
    in ``stopped``)."""
    ni = len(chain.independent)
    tau = (lambda t, x, v: np.zeros(ni)) if effort is None else effort
    x, v = np.array(q0_independent, float), np.array(qd0_independent, float)
    q_last = chain.positions(x)
    ts, qs, qds, es, its, conds = [], [], [], [], [], []
    stopped = None
    steps = int(round(duration / dt))
    for k in range(steps + 1):
        t = k * dt
        try:
            report = SolveReport()
            a1, q_last, qd = forward_dynamics(chain, x, v, tau(t, x, v), q_last, report)
            ts.append(t)
            qs.append(q_last)
            qds.append(qd)
            es.append(energy(chain, q_last, qd))
            its.append(report.iterations[0] if report.iterations else 0)
            conds.append(report.condition)
            if k == steps:
                break
            x2, v2 = x + 0.5 * dt * v, v + 0.5 * dt * a1
            a2 = forward_dynamics(chain, x2, v2, tau(t + dt / 2, x2, v2), q_last)[0]
            x3, v3 = x + 0.5 * dt * v2, v + 0.5 * dt * a2
            a3 = forward_dynamics(chain, x3, v3, tau(t + dt / 2, x3, v3), q_last)[0]
            x4, v4 = x + dt * v3, v + dt * a3
            a4 = forward_dynamics(chain, x4, v4, tau(t + dt, x4, v4), q_last)[0]
            x = x + dt / 6.0 * (v + 2 * v2 + 2 * v3 + v4)
            v = v + dt / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
        except LoopSingularityError as exc:
            stopped = exc
            break
    return Simulation(np.array(ts), np.array(qs), np.array(qds), np.array(es), np.array(its),
                      np.array(conds), stopped)
