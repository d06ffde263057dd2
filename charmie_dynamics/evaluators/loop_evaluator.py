"""The evaluator of a model with closed loops: the independent coordinates in,
every load and TF pose the dynamics node publishes out, as :class:`~.evaluator.Evaluator`
does for an open tree (same :class:`~.evaluator.Evaluation`, same buffers reused).

One call (inputs: the loops' independent coordinates, ``ClosedChain.independent_names``):

1. the dependent coordinates by damped Newton-Raphson warm-started from the last solution
   (seed 003 algorithm 2; mechanisms/closed_chains), their rates and accelerations
   qd = G qd_i, qdd = G qdd_i + g (eq. 17). An input more than ``MAX_STEP`` away from the
   last solution's is reached by continuation (``ClosedChain.approach``: a single warm
   start from far away may converge on the other assembly branch: a five-bar flipped its
   elbows after a jump of 14 deg and stayed there); where that path meets a singularity, it
   is followed instead from the assembled configuration (the model's own branch), and else
   the input is refused;
2. the tree's compiled evaluator at (q, qd, qdd) without cut loads: its coordinate efforts
   are the tree's H qdd + b (gravity, springs, balancers included); the efforts at the
   independent coordinates are tau = G^T (H qdd + b) (virtual work, seed 002 eq. 8) and the
   cut joints' multipliers the minimum-norm solution of Phi_d^T lambda = (H qdd + b)_d
   (dynamics/closed_chain.py);
3. the tree's evaluator again with the cut joints' constraint wrenches applied as external
   loads: for a position row, the force lambda e on the successor B at its cut point p_B
   and -lambda e on the predecessor A at the same world point; for an orientation row, the
   torque lambda (u x w) on A and its opposite on B (mechanisms/closed_chains/constraints.py).
   Its joint wrenches, TF poses and auxiliary segments are those of the closed chain, and
   its coordinate efforts H qdd + b - Phi_q^T lambda = S^T tau: tau at the independent
   coordinates, zero (to rounding) at the passive, dependent ones. With redundant rows
   (an over-constrained loop) the joint wrenches are those of the minimum-norm multipliers:
   the split of the indeterminate part is a choice, not a result (docs/closed_chains.md).

Payloads and external wrenches given at construction are applied in both passes (the
efforts then carry them, as ``inverse_dynamics``' do); ``cli`` ``id`` uses them.

A state whose loops do not close (Newton-Raphson does not converge) or whose loop is at or
near a singular configuration raises :class:`LoopSingularityError`; the last solution is
then kept as the next warm start.

With a finite ``max_jump`` (the dynamics node's ``max_loop_jump``) the cost of one call is
bounded: an input farther than ``max_jump`` (rad or m, largest independent coordinate)
from the last solution is not evaluated (:class:`LoopJumpError`). When it lies within
``max_jump`` of the previous far input (a robot that really is there reports consistent
positions), the solution first moves ``max_jump`` toward it (about ``max_jump / MAX_STEP``
Newton solves), so the robot is reached over a few inputs; a lone glitch, or far inputs
that disagree with each other, move nothing, and the valid inputs after them are evaluated
as before. A revolute independent coordinate without position limits is taken modulo 2 pi
nearest the last solution (an encoder wrapping at +-pi is not a jump). Plain numpy for the loops, one state at a time; the tree
passes are the compiled evaluator's.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..mechanisms.closed_chains import ClosedChain, LoopSingularityError, SolveReport
from ..model.model import Model
from ..dynamics.closed_chain import multipliers
from .evaluator import Evaluation, Evaluator, NonFiniteLoads
from ..layout import LOAD_FORCE, LOAD_POINT, LOAD_TORQUE
from ..dynamics.inverse import ExternalWrench, Payload, applied_loads

__all__ = ["LoopEvaluator", "LoopJumpError", "LoopSingularityError", "evaluator_for"]


class LoopJumpError(LoopSingularityError):
    """An input farther than ``max_jump`` from the last solution: the solution moved
    ``max_jump`` toward it, the input itself was not evaluated."""


class LoopEvaluator:
    """Efforts at the independent coordinates, loads and TF poses of one state of a model
    with loops per call (module docstring). Not thread-safe: one call at a time."""

    def __init__(self, model: Model, payloads: Sequence[Payload] = (),
                 external: Sequence[ExternalWrench] = (), max_jump: float = math.inf) -> None:
        """``payloads`` and ``external`` wrenches: loads carried at every call (as
        ``inverse_dynamics`` takes them), in every pass. ``max_jump``: the bound on one
        call's continuation (module docstring); infinite: every input followed at once."""
        # raises LoopAssemblyError (a ModelError) for loops that do not assemble
        self.chain = ClosedChain.build(model)
        self.model = model
        self.input_names: tuple[str, ...] = self.chain.independent_names
        self.max_jump = max_jump
        self._far: np.ndarray | None = None          # the last input refused as a jump
        body_of = {b.coordinate: b for b in model.bodies if b.coordinate is not None}
        self._wraps = np.array([body_of[n].joint_type.angular
                                and body_of[n].limits.lower is None and body_of[n].limits.upper is None
                                for n in self.input_names], dtype=bool)
        rows = self.chain.rows
        m = len(rows.names)
        given_body, given_vec = applied_loads(model, payloads, external)
        # then per row: entry 2r on the successor B, 2r + 1 on the predecessor A
        cut_body = np.empty(2 * m, dtype=np.int64)
        cut_body[0::2], cut_body[1::2] = rows.body_b, rows.body_a
        load_vec = np.concatenate([given_vec, np.zeros((2 * m, 4, 3))])
        self._cut_vec = load_vec[len(given_body):]          # a view: the cut wrenches
        self._cut_vec[0::2, LOAD_POINT] = rows.origin_b
        self._position = (rows.kind == 0)[:, None]
        # the tree's inputs are its coordinates (the loader refuses actuators with loops)
        self.tree = Evaluator(model, (np.concatenate([given_body, cut_body]), load_vec))
        self.frames = self.tree.frames
        self._tau = np.empty(len(self.input_names))
        self._full = np.empty((3, model.n_coordinates))
        self._zeros = np.zeros(len(self.input_names))
        self.last_solution = self.chain.assembled.copy()
        self.report = SolveReport()
        self.multipliers = np.zeros(m)
        self.indeterminate = np.zeros((m, 0))
        self.result = Evaluation(self._tau, np.empty(0), self.tree.state, self.tree.result.loads,
                                 self.tree.result.translations, self.tree.result.quaternions)
        self(self.chain.assembled[self.chain.independent], self._zeros, self._zeros)

    def __call__(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                 gravity_only: bool = False) -> Evaluation:
        """Evaluate the independent coordinates' positions, rates and accelerations (n_ind,)
        each, in ``input_names`` order. ``gravity_only``: the loads with zero rates (the
        state keeps the given ones). Raises :class:`LoopSingularityError` (no convergence,
        or a singular loop) and :class:`NonFiniteLoads`."""
        chain, n = self.chain, len(self.input_names)
        x, xd, xdd = (np.asarray(a, dtype=float) for a in (x, xd, xdd))
        if not x.shape == xd.shape == xdd.shape == (n,):
            raise ValueError(f"inputs of shapes {x.shape}, {xd.shape}, {xdd.shape}, expected "
                             f"({n},) each: {', '.join(self.input_names)} ({self.model.name})")
        if math.isfinite(self.max_jump):
            x = self._bounded(x)
        report = SolveReport()
        try:
            q, qd, qdd, G, values = chain.state(x, xd, xdd,
                                                chain.approach(x, self.last_solution), report)
        except LoopSingularityError:
            # the path from the last solution crosses a singularity, or the last solution is
            # one the loops cannot be solved from: back to the branch the model assembled on
            # (bounded: only within max_jump of it; else the next inputs start from there)
            if self._distance(x, chain.assembled) > self.max_jump:
                self.last_solution = chain.assembled.copy()
                raise
            report = SolveReport()
            q, qd, qdd, G, values = chain.state(x, xd, xdd, chain.approach(x), report)
        self._full[0], self._full[1], self._full[2] = q, qd, qdd
        self._cut_vec[:, LOAD_FORCE] = 0.0
        self._cut_vec[:, LOAD_TORQUE] = 0.0
        tree = self.tree(*self._full, gravity_only).efforts   # H qdd + b (and given loads)
        lam, indeterminate = multipliers(chain, values, tree)
        np.matmul(G.T, tree, out=self._tau)
        if not (np.isfinite(lam).all() and np.isfinite(self._tau).all()):
            raise NonFiniteLoads(f"the loop loads of this input are not finite (inputs too "
                                 f"large for {self.model.name})")
        self._apply_cut_wrenches(values.placements, lam)
        self.tree(*self._full, gravity_only)
        self.last_solution = q
        self._far = None
        self.report = report
        self.multipliers, self.indeterminate = lam, indeterminate
        return self.result

    def _distance(self, x: np.ndarray, q: np.ndarray) -> float:
        return float(np.max(np.abs(x - q[self.chain.independent]), initial=0.0))

    def _bounded(self, x: np.ndarray) -> np.ndarray:
        """``x`` with its unlimited revolute coordinates nearest the last solution (mod 2 pi);
        :class:`LoopJumpError` after moving the solution ``max_jump`` toward a farther one."""
        x0 = self.last_solution[self.chain.independent]
        if self._wraps.any():
            x = x.copy()
            w = self._wraps
            x[w] = x0[w] + np.remainder(x[w] - x0[w] + math.pi, 2 * math.pi) - math.pi
        jump = self._distance(x, self.last_solution)
        # a relative margin: a solution moved max_jump toward an input lies max_jump from the
        # input it came from, to rounding
        if jump > self.max_jump * (1.0 + 1e-9):           # NaN is not: the solve refuses it
            chain, far, self._far = self.chain, self._far, x.copy()
            followed = far is not None and float(np.max(np.abs(x - far))) <= self.max_jump
            if followed:
                target = x0 + (x - x0) * (self.max_jump / jump)
                self.last_solution = chain.positions(target, chain.approach(target, self.last_solution))
            raise LoopJumpError(
                f"{self.model.name}: the independent coordinates moved by {jump:.3g} from the last "
                f"solution, more than max_loop_jump {self.max_jump:g} (rad or m): "
                + (f"the solution followed {self.max_jump:g} toward them (two consistent far "
                   "inputs); the next inputs go on from there" if followed else
                   "not followed (a far input is followed only when the next one agrees with it)"),
                ", ".join(info.label for info in chain.groups), math.nan)
        return x

    def _apply_cut_wrenches(self, placements, lam: np.ndarray) -> None:
        """The cut joints' constraint wrenches of multipliers ``lam`` into the applied loads
        (module docstring, step 3)."""
        rows = self.chain.rows
        R, O = placements.rotation_world, placements.origin_world
        a, b = rows.body_a, rows.body_b
        p_b = O[b] + np.einsum("kij,kj->ki", R[b], rows.origin_b)
        u = np.einsum("kij,kj->ki", R[a], rows.u)
        w = np.einsum("kij,kj->ki", R[b], rows.w)
        force = np.where(self._position, lam[:, None] * u, 0.0)
        torque = np.where(self._position, 0.0, lam[:, None] * np.cross(u, w))
        v = self._cut_vec
        v[0::2, LOAD_FORCE], v[0::2, LOAD_TORQUE] = force, -torque
        v[1::2, LOAD_POINT] = np.einsum("kji,kj->ki", R[a], p_b - O[a])   # R_A^T (p_B - O_A)
        v[1::2, LOAD_FORCE], v[1::2, LOAD_TORQUE] = -force, torque

    def gravity(self, x: np.ndarray) -> Evaluation:
        """Gravity compensation at independent positions ``x``: rates zero."""
        return self(x, self._zeros, self._zeros, gravity_only=True)


def evaluator_for(model: Model, max_loop_jump: float = math.inf) -> Evaluator | LoopEvaluator:
    """The evaluator of ``model``: :class:`LoopEvaluator` for a model with loops (each
    call's continuation bounded by ``max_loop_jump``)."""
    return Evaluator(model) if model.loops is None else LoopEvaluator(model, max_jump=max_loop_jump)
