"""The evaluator of a model with closed loops: the independent coordinates in,
every load and TF pose the dynamics node publishes out, as :class:`~.evaluator.Evaluator`
does for an open tree (same :class:`~.evaluator.Evaluation`, same buffers reused).

One call (inputs: the loops' independent coordinates, ``ClosedChain.independent_names``):

1. the dependent coordinates by damped Newton-Raphson warm-started from the last solution
   (seed 003 algorithm 2; mechanisms/closed_chains/compiled.py), their rates and accelerations
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
then kept as the next warm start (also where the input is farther than ``max_jump`` from
the assembled configuration: the model's own branch is tried from there only within it).

:meth:`LoopEvaluator.gravity` (the dynamics node's safe output between inputs) is solved
from the last evaluated input's solution and changes nothing the next input starts from:
neither the warm start (which may have moved toward far inputs) nor the far input
remembered for the next one.

With a finite ``max_jump`` (the dynamics node's ``max_loop_jump``) the cost of one call is
bounded: an input farther than ``max_jump`` (rad or m, largest independent coordinate)
from the last solution is not evaluated (:class:`LoopJumpError`). When it lies within
``max_jump`` of the previous far input (a robot that really is there reports consistent
positions), the solution first moves ``max_jump`` toward it (about ``max_jump / MAX_STEP``
Newton solves), so the robot is reached over a few inputs; a lone glitch, or far inputs
that disagree with each other, move nothing, and the valid inputs after them are evaluated
as before. A revolute independent coordinate without position limits is taken modulo 2 pi
nearest the last solution (an encoder wrapping at +-pi is not a jump).

Steps 1-3 run as one kernel call (``_loop_evaluate``): the compiled embedding
(mechanisms/closed_chains/compiled.py, equal to embedding.py's numpy solve to rounding) and
the tree evaluator's kernel twice, on buffers built once; the continuation of
``ClosedChain.approach`` is the kernel's too.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from ..dynamics.closed_chain import null_space_basis
from ..dynamics.inverse import ExternalWrench, Payload, applied_loads
from ..jit import kernel
from ..kinematics.indirect import MechanismRangeError
from ..layout import (IN_WORLD, LOAD_FORCE, LOAD_POINT, LOAD_TORQUE, ROW_A, ROW_B, ROW_KIND,
                      ROW_ORIGIN_B, ROW_U, ROW_W)
from ..linalg import add, cross3, mat, mat_t_vec, mat_vec, sub, vec
from ..mechanisms.auxiliary import balancer_range_error
from ..mechanisms.closed_chains import ClosedChain, LoopSingularityError, SolveReport
from ..mechanisms.closed_chains.compiled import (OK, Embedding, EmbeddingBuffers, MultiplierBuffers,
                                                 PackedLoops, embed_sample, multipliers_sample)
from ..model.model import Model
from ..model.packed import unflat_packed
from ..model.validation import ModelError
from .evaluator import Evaluation, Evaluator, NonFiniteLoads, _evaluate, _quiet, _unflat

__all__ = ["LoopEvaluator", "LoopJumpError", "LoopSingularityError", "MaxJumpError",
           "NonFiniteInput", "PathError", "PathResult", "assembled_evaluator", "evaluator_for"]


class LoopJumpError(LoopSingularityError):
    """An input farther than ``max_jump`` from the last solution, not evaluated; the
    solution moved ``max_jump`` toward it where it agrees with the far input before it
    (never for :meth:`LoopEvaluator.gravity`)."""


class NonFiniteInput(NonFiniteLoads):
    """An input with a NaN or infinite position, rate or acceleration (a
    :class:`NonFiniteLoads`: its loads would not be finite), found when the input fails."""


#: The smallest ``max_jump``: far above the rounding of an input wrapped modulo 2 pi (a bound
#: of 1e-300 refused the evaluator's own first call, 1.1e-16 from the assembled configuration)
MIN_JUMP = 1e-6


class MaxJumpError(ValueError):
    """A ``max_jump`` (``max_loop_jump``) that is not a number >= :data:`MIN_JUMP` (inf:
    unbounded)."""


def _checked_jump(value: float, name: str) -> float:
    """``value`` if it is a valid bound on one call's jump, else :class:`MaxJumpError`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not value >= MIN_JUMP:                           # NaN is not
        raise MaxJumpError(f"{name} = {value!r}, expected a number >= {MIN_JUMP:g} (rad or m; "
                           "inf: unbounded)")
    return float(value)


class PathResult(NamedTuple):
    """:meth:`LoopEvaluator.path`'s arrays, one row per sample."""

    q: np.ndarray             # (samples, n) every coordinate
    efforts: np.ndarray       # (samples, n_ind) at the independent coordinates
    multipliers: np.ndarray   # (samples, m) minimum-norm, the chain's row order
    iterations: np.ndarray    # (samples, groups) Newton-Raphson iterations
    residual: np.ndarray      # (samples, groups) max |Phi| at the solution


class PathError(LoopSingularityError):
    """A sample of :meth:`LoopEvaluator.path` whose loops cannot be solved: ``sample`` its
    index, ``result`` the samples before it."""

    def __init__(self, message: str, loop: str, condition: float, sample: int,
                 result: PathResult) -> None:
        super().__init__(message, loop, condition)
        self.sample = sample
        self.result = result


# the stages of _loop_evaluate's status: the embedding failed (its status follows), a tree
# pass met a balancer out of reach or non-finite loads, the loop loads are not finite
EMBEDDING, BALANCER, TREE_NOT_FINITE, LOOP_NOT_FINITE, DONE = 0, 1, 2, 3, -1


@kernel
def _cut_wrenches(lp, rotations, origins, lam, loads, first) -> None:
    """The cut joints' constraint wrenches of multipliers ``lam`` into the applied loads'
    rows first + 2r (on the successor B) and first + 2r + 1 (on the predecessor A) (module
    docstring, step 3)."""
    for r in range(lp.row_int.shape[0]):
        a, b = lp.row_int[r, ROW_A], lp.row_int[r, ROW_B]
        R_a, O_a = mat(rotations, a, IN_WORLD), vec(origins, a, IN_WORLD)
        R_b = mat(rotations, b, IN_WORLD)
        p_b = add(vec(origins, b, IN_WORLD), mat_vec(R_b, vec(lp.row_vec, r, ROW_ORIGIN_B)))
        u = mat_vec(R_a, vec(lp.row_vec, r, ROW_U))
        if lp.row_int[r, ROW_KIND] == 0:
            force, torque = (lam[r] * u[0], lam[r] * u[1], lam[r] * u[2]), (0.0, 0.0, 0.0)
        else:
            uw = cross3(u, mat_vec(R_b, vec(lp.row_vec, r, ROW_W)))
            force, torque = (0.0, 0.0, 0.0), (lam[r] * uw[0], lam[r] * uw[1], lam[r] * uw[2])
        point = mat_t_vec(R_a, sub(p_b, O_a))
        on_b, on_a = first + 2 * r, first + 2 * r + 1
        for k in range(3):
            loads[on_b, LOAD_FORCE, k] = force[k]
            loads[on_b, LOAD_TORQUE, k] = -torque[k]
            loads[on_a, LOAD_POINT, k] = point[k]
            loads[on_a, LOAD_FORCE, k] = -force[k]
            loads[on_a, LOAD_TORQUE, k] = torque[k]


@kernel
def loop_sample(pm, lp, x, xd, xdd, start, b, extra, tree):
    """One call of :class:`LoopEvaluator` (module docstring, steps 1-3), inner kernel: the
    embedding followed from ``start``, the tree's evaluator (evaluator._evaluate) without
    and with the cut wrenches, the multipliers and tau = G^T (H qdd + b). ``extra``: (the
    applied loads, the first cut row, tau, the multipliers' buffers); ``tree``: (the tree
    evaluator's block, gravity_only), evaluator._unflat's arguments. Returns (stage, status
    or balancer, group, value)."""
    loads, first, tau, multiplier_buffers = extra
    status, g, value = embed_sample(pm, lp, x, xd, xdd, start, True, b)
    if status != OK:
        return EMBEDDING, status, g, value
    for r in range(first, loads.shape[0]):
        for k in range(3):
            loads[r, LOAD_FORCE, k] = 0.0
            loads[r, LOAD_TORQUE, k] = 0.0
    arguments = _unflat(tree[0], tree[1])
    efforts = arguments[4][0]           # _evaluate's outputs: (efforts, translations, xyzw)
    bad, failed, finite = _evaluate(b.q, b.qd, b.qdd, *arguments)   # efforts: H qdd + b
    if failed >= 0:
        return BALANCER, failed, -1, 0.0
    if not finite:
        return TREE_NOT_FINITE, 0, -1, 0.0
    mb = MultiplierBuffers(*multiplier_buffers)
    multipliers_sample(lp, b.jacobian, efforts, mb)
    total = 0.0
    for k in range(tau.shape[0]):           # tau = G^T (H qdd + b)
        t = 0.0
        for c in range(efforts.shape[0]):
            t += b.G[c, k] * efforts[c]
        tau[k] = t
        total += t
    for r in range(mb.lam.shape[0]):
        total += mb.lam[r]
    if not math.isfinite(total):
        return LOOP_NOT_FINITE, 0, -1, 0.0
    _cut_wrenches(lp, b.rotations, b.origins, mb.lam, loads, first)
    bad, failed, finite = _evaluate(b.q, b.qd, b.qdd, *arguments)
    if failed >= 0:
        return BALANCER, failed, -1, 0.0
    if not finite:
        return TREE_NOT_FINITE, 0, -1, 0.0
    return DONE, 0, -1, 0.0


@kernel
def _loop_evaluate(packed, loops, x, xd, xdd, start, embedding, extra, tree):
    """:func:`loop_sample` called from Python (plain tuples)."""
    return loop_sample(unflat_packed(packed), PackedLoops(*loops), x, xd, xdd, start,
                       EmbeddingBuffers(*embedding), extra, tree)


@kernel
def _loop_path(packed, loops, x, xd, xdd, starts, embedding, extra, tree, out):
    """:func:`loop_sample` for every sample of x, xd, xdd (samples, n_ind), each followed from
    the last sample's solution (``starts[0]``, then overwritten) and, where that fails, from
    the assembled configuration (``starts[1]``), as successive calls of the evaluator with an
    unbounded jump; ``out``: (q (samples, n), efforts (samples, n_ind), multipliers
    (samples, m), iterations and residual (samples, groups)). Returns (the sample that
    failed or -1, its stage, status, group, value)."""
    pm, lp, b = unflat_packed(packed), PackedLoops(*loops), EmbeddingBuffers(*embedding)
    q_out, effort_out, lam_out, iterations_out, residual_out = out
    tau, lam = extra[2], MultiplierBuffers(*extra[3]).lam
    last, assembled = starts[0], starts[1]
    for s in range(x.shape[0]):
        stage, status, g, value = loop_sample(pm, lp, x[s], xd[s], xdd[s], last, b, extra,
                                              tree)
        if stage == EMBEDDING:
            stage, status, g, value = loop_sample(pm, lp, x[s], xd[s], xdd[s], assembled, b,
                                                  extra, tree)
        if stage != DONE:
            return s, stage, status, g, value
        last[:] = b.q
        q_out[s] = b.q
        effort_out[s] = tau
        lam_out[s] = lam
        iterations_out[s] = b.iterations
        residual_out[s] = b.residual
    return -1, DONE, 0, -1, 0.0


@kernel
def _wrapped_jump(x, last, independent, wraps, out):
    """``out`` = x with the unlimited revolute coordinates (``wraps``) taken modulo 2 pi
    nearest the last solution, x0 + remainder(x - x0 + pi, 2 pi) - pi with numpy's remainder
    (fmod, moved into [0, 2 pi)); returns the largest |out - x0| (NaN when one is)."""
    jump = 0.0
    for k in range(x.shape[0]):
        x0, v = last[independent[k]], x[k]
        if wraps[k]:
            r = np.fmod(v - x0 + math.pi, 2 * math.pi)
            if r < 0.0:
                r += 2 * math.pi
            elif r == 0.0:
                r = 0.0
            v = x0 + r - math.pi
        out[k] = v
        d = abs(v - x0)
        if d > jump or d != d:
            jump = d
    return jump


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
        self.embedding = Embedding(self.chain)
        self.model = model
        self.input_names: tuple[str, ...] = self.chain.independent_names
        self.max_jump = _checked_jump(max_jump, "max_jump")
        self._far: np.ndarray | None = None          # the last input refused as a jump
        body_of = {b.coordinate: b for b in model.bodies if b.coordinate is not None}
        self._wraps = np.array([body_of[n].joint_type.angular
                                and body_of[n].limits.lower is None
                                and body_of[n].limits.upper is None
                                for n in self.input_names], dtype=bool)
        rows = self.chain.rows
        m = len(rows.names)
        given_body, given_vec = applied_loads(model, payloads, external)
        # then per row: entry 2r on the successor B, 2r + 1 on the predecessor A
        cut_body = np.empty(2 * m, dtype=np.int64)
        cut_body[0::2], cut_body[1::2] = rows.body_b, rows.body_a
        load_vec = np.concatenate([given_vec, np.zeros((2 * m, 4, 3))])
        load_vec[len(given_body):][0::2, LOAD_POINT] = rows.origin_b
        # the tree's inputs are its coordinates (the loader refuses actuators with loops)
        self.tree = Evaluator(model, (np.concatenate([given_body, cut_body]), load_vec),
                              first=self.chain.assembled)
        self.frames = self.tree.frames
        self._tau = np.empty(len(self.input_names))
        self._zeros = np.zeros(len(self.input_names))
        self._wrapped = np.empty(len(self.input_names))
        self._independent = PackedLoops(*self.embedding.loops).independent
        # the cut wrenches are written into the tree evaluator's own copy of the loads
        self._extra = (self.tree.applied[1], len(given_body), self._tau,
                       self.embedding.multiplier_buffers)
        self._trees = {g: (self.tree.flat, g) for g in (False, True)}
        named = self.embedding.named
        self._iterations = np.zeros_like(named.iterations)
        self._residual = np.zeros_like(named.residual)
        self._condition = np.zeros(1)
        self.last_solution = self.chain.assembled.copy()
        self._evaluated = self.chain.assembled.copy()  # the last evaluated input's solution
        self._before = self.chain.assembled.copy()     # the one evaluated before it
        self.multipliers = self.embedding.multiplier_named.lam
        self.result = Evaluation(self._tau, np.empty(0), self.tree.state, self.tree.result.loads,
                                 self.tree.result.translations, self.tree.result.quaternions)
        # both compiled entries at construction (cached after): the following of far
        # inputs compiled on the first one, seconds in a node's control callback
        self.embedding.positions(self.chain.assembled[self.chain.independent],
                                 self.chain.assembled, follow=True)
        self(self.chain.assembled[self.chain.independent], self._zeros, self._zeros)

    @property
    def report(self) -> SolveReport:
        """Newton-Raphson of the last evaluated input: iterations and max |Phi| per loop
        group, the largest condition number met."""
        return SolveReport(self._iterations.tolist(), self._residual.tolist(),
                           float(self._condition[0]))

    @property
    def indeterminate(self) -> np.ndarray:
        """A basis (m, r) of the null space of Phi_d^T at the last call's state (an input's
        or :meth:`gravity`'s, as ``result`` and ``multipliers``): the redundant rows'
        indeterminate part of the multipliers (dynamics/closed_chain.py)."""
        return null_space_basis(self.embedding.named.jacobian[:, self.chain.dependent])

    def _run(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray, start: np.ndarray,
             gravity_only: bool) -> tuple:
        return _loop_evaluate(self.embedding.packed, self.embedding.loops, x, xd, xdd, start,
                              self.embedding.buffers, self._extra, self._trees[bool(gravity_only)])

    def __call__(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                 gravity_only: bool = False) -> Evaluation:
        """Evaluate the independent coordinates' positions, rates and accelerations (n_ind,)
        each, in ``input_names`` order. ``gravity_only``: the loads with zero rates (the
        state keeps the given ones). Raises :class:`LoopSingularityError` (no convergence,
        or a singular loop), :class:`NonFiniteInput` (a NaN or infinite value given: named)
        and :class:`NonFiniteLoads`."""
        return self._evaluate(x, xd, xdd, gravity_only, True)

    def _evaluate(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray, gravity_only: bool,
                  tracked: bool) -> Evaluation:
        """One call; ``tracked``: an input (its solution is the next warm start, a far input
        is remembered or followed), else :meth:`gravity`'s evaluation from the last
        evaluated input's solution that changes neither."""
        chain, n = self.chain, len(self.input_names)
        x, xd, xdd = (np.ascontiguousarray(a, dtype=float) for a in (x, xd, xdd))
        if not x.shape == xd.shape == xdd.shape == (n,):
            raise ValueError(f"inputs of shapes {x.shape}, {xd.shape}, {xdd.shape}, expected "
                             f"({n},) each: {', '.join(self.input_names)} ({self.model.name})")
        given, start = x, (self.last_solution if tracked else self._evaluated)
        if math.isfinite(self.max_jump):
            x = self._bounded(x, start, tracked)
        with _quiet():
            stage, status, group, value = self._run(x, xd, xdd, start, gravity_only)
            if stage == EMBEDDING:
                non_finite = self._non_finite(given, xd, xdd)
                if non_finite is not None:      # the input's fault: the warm start is kept
                    raise non_finite
                # the path from the last solution crosses a singularity, or the last solution
                # is one the loops cannot be solved from: the branch the model assembled on,
                # only within max_jump of it; the warm start is kept either way (a reset to
                # the assembled configuration made every valid input after one singular
                # input a jump, and the gravity fallback at the last valid input too)
                if self._distance(x, chain.assembled) > self.max_jump:
                    raise self.embedding.error(status, group, value)
                stage, status, group, value = self._run(x, xd, xdd, chain.assembled,
                                                        gravity_only)
        if stage != DONE:
            raise self._non_finite(given, xd, xdd) or self._error(stage, status, group, value)
        if tracked:
            named = self.embedding.named
            self.last_solution[:] = named.q
            self._remember_evaluated(named.q)
            self._iterations[:] = named.iterations
            self._residual[:] = named.residual
            self._condition[:] = named.condition
            self._far = None
        return self.result

    def _non_finite(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                    where: str = "") -> NonFiniteInput | None:
        """The error of an input that failed because a value of it is NaN or infinite
        (None if every value is finite): names the values, not the failure they caused."""
        bad = [f"{kind} {self.input_names[k]} = {float(a[k])}"
               for kind, a in (("position", x), ("rate", xd), ("acceleration", xdd))
               for k in np.flatnonzero(~np.isfinite(a))]
        if not bad:
            return None
        return NonFiniteInput(f"{self.model.name}: {where}non-finite input: {', '.join(bad)}; "
                              "expected finite positions, rates and accelerations")

    def _error(self, stage: int, status: int, group: int, value: float) -> Exception:
        """The error of a kernel's failed stage."""
        if stage == EMBEDDING:
            return self.embedding.error(status, group, value)
        if stage == BALANCER:
            return balancer_range_error(self.model.balancers[status])
        if stage == TREE_NOT_FINITE:
            return NonFiniteLoads(f"the loads of this input are not finite (inputs too large "
                                  f"for {self.model.name})")
        return NonFiniteLoads(f"the loop loads of this input are not finite (inputs too "
                              f"large for {self.model.name})")

    def path(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> PathResult:
        """Every sample of a motion (x, xd, xdd: (samples, n_ind)) evaluated in one kernel
        call, each warm-started from the last sample's solution as successive calls are
        (an evaluator with an unbounded ``max_jump``): the coordinates, efforts,
        multipliers and Newton-Raphson iterations of every sample. A sample that cannot be
        evaluated raises :class:`PathError` (a :class:`LoopSingularityError`; the samples
        before it are in the error's ``result``), :class:`NonFiniteInput` (a NaN or
        infinite value of it) or :class:`NonFiniteLoads`, naming its index. The evaluator's
        buffers then hold the last sample's loads."""
        if math.isfinite(self.max_jump):
            raise ValueError("path: an evaluator with an unbounded max_jump, got "
                             f"{self.max_jump:g}")
        x, xd, xdd = (np.ascontiguousarray(a, dtype=float) for a in (x, xd, xdd))
        n = len(self.input_names)
        if not (x.ndim == 2 and x.shape[1] == n and x.shape == xd.shape == xdd.shape):
            raise ValueError(f"path: inputs of shapes {x.shape}, {xd.shape}, {xdd.shape}, "
                             f"expected (samples, {n}) each ({self.model.name})")
        k, named = len(x), self.embedding.named
        result = PathResult(np.empty((k, self.model.n_coordinates)), np.empty((k, n)),
                            np.empty((k, len(self.multipliers))),
                            np.empty((k, len(named.iterations)), dtype=np.int64),
                            np.empty((k, len(named.residual))))
        starts = np.stack([self.last_solution, self.chain.assembled])
        with _quiet():
            failed, stage, status, group, value = _loop_path(
                self.embedding.packed, self.embedding.loops, x, xd, xdd, starts,
                self.embedding.buffers, self._extra, self._trees[False], tuple(result))
        if failed >= 0:
            non_finite = self._non_finite(x[failed], xd[failed], xdd[failed],
                                          f"sample {failed}: ")
            if non_finite is not None:
                raise non_finite
            error = self._error(stage, status, group, value)
            done = PathResult(*(a[:failed] for a in result))
            if isinstance(error, LoopSingularityError):
                raise PathError(str(error), error.loop, error.condition, failed, done)
            raise NonFiniteLoads(f"sample {failed}: {error}")
        self.last_solution[:] = starts[0]
        self._remember_evaluated(starts[0])
        self._iterations[:] = named.iterations
        self._residual[:] = named.residual
        self._condition[:] = named.condition
        return result

    def _remember_evaluated(self, q: np.ndarray) -> None:
        self._before[:] = self._evaluated
        self._evaluated[:] = q

    def refuse_last(self) -> None:
        """The caller refused the last evaluated input (the dynamics node: a dependent
        coordinate beyond its limits): :meth:`gravity` is solved from the input evaluated
        before it again. The warm start stays the refused input's solution."""
        self._evaluated[:] = self._before

    def _distance(self, x: np.ndarray, q: np.ndarray) -> float:
        return float(np.max(np.abs(x - q[self.chain.independent]), initial=0.0))

    def _bounded(self, x: np.ndarray, start: np.ndarray, tracked: bool) -> np.ndarray:
        """``x`` with its unlimited revolute coordinates nearest the solution ``start`` (mod
        2 pi); :class:`LoopJumpError` for a farther one, after moving the warm start
        ``max_jump`` toward it where it is a ``tracked`` input that agrees with the far input
        before it. A non-finite ``x`` is returned as it is: the solve fails on it and names
        it."""
        if not np.all(np.isfinite(x)):
            return x
        given = x
        jump = _wrapped_jump(x, start, self._independent, self._wraps, self._wrapped)
        x = self._wrapped
        # a relative margin: a solution moved max_jump toward an input lies max_jump from the
        # input it came from, to rounding
        if jump > self.max_jump * (1.0 + 1e-9):           # NaN is not: the solve refuses it
            x0 = start[self.chain.independent]
            chain, far = self.chain, self._far
            if tracked:
                self._far = x.copy()
            followed = tracked and far is not None \
                and float(np.max(np.abs(x - far))) <= self.max_jump
            if followed:
                target = x0 + (x - x0) * (self.max_jump / jump)
                self.last_solution = self.embedding.positions(
                    target, self.last_solution, follow=True).copy()
            k = int(np.argmax(np.abs(x - x0)))
            if not tracked:
                outcome = "gravity compensation is solved only within max_loop_jump of it"
            elif followed:
                outcome = (f"the solution followed {self.max_jump:g} toward them (two "
                           "consistent far inputs); the next inputs go on from there")
            else:
                outcome = ("not followed (a far input is followed only when the next one "
                           "agrees with it)")
            raise LoopJumpError(
                f"{self.model.name}: a jump beyond max_loop_jump {self.max_jump:g} (rad or m): "
                f"{self.input_names[k]} = {given[k]:.6g} lies {jump:.3g} from the "
                + ("last solution" if tracked else "last evaluated input's solution")
                + f" {x0[k]:.6g}" + (" (modulo 2 pi)" if self._wraps[k] else "") + ": "
                + outcome, chain.group_labels, math.nan)
        return x

    def gravity(self, x: np.ndarray) -> Evaluation:
        """Gravity compensation at independent positions ``x``: rates zero; solved from the
        last evaluated input's solution (not refused: :meth:`refuse_last`), within
        ``max_jump`` of it, and changing nothing the next input starts from (module
        docstring)."""
        return self._evaluate(x, self._zeros, self._zeros, True, False)


def evaluator_for(model: Model, max_loop_jump: float = math.inf) -> Evaluator | LoopEvaluator:
    """The evaluator of ``model``: :class:`LoopEvaluator` for a model with loops (each
    call's continuation bounded by ``max_loop_jump``, a number >= :data:`MIN_JUMP` or inf:
    else :class:`MaxJumpError`)."""
    max_loop_jump = _checked_jump(max_loop_jump, "max_loop_jump")
    return Evaluator(model) if model.loops is None else LoopEvaluator(model, max_jump=max_loop_jump)


def assembled_evaluator(model: Model, source: str, max_loop_jump: float = math.inf
                        ) -> Evaluator | LoopEvaluator:
    """:func:`evaluator_for`, whose construction evaluates the default inputs (a model with
    loops: its loops' guess) and compiles (or loads) its kernels; :class:`ModelError` naming
    ``source`` where the model does not assemble there (an actuator out of its stroke, a
    balancer out of reach, loops that do not close, loads that are not finite: a spring
    whose two points coincide). What the dynamics node and ``validate-model`` check alike."""
    try:
        return evaluator_for(model, max_loop_jump)
    except (MechanismRangeError, NonFiniteLoads, LoopSingularityError) as exc:
        raise ModelError(f"{source}: the model does not assemble at its default "
                         f"inputs: {exc}") from None


#: What one sample of a motion may fail with (loops that do not close, an actuator out of its
#: stroke or a balancer out of reach, loads not finite)
EVALUATION_ERRORS = (LoopSingularityError, NonFiniteLoads, MechanismRangeError)


class EffortsUnavailable(ValueError):
    """A sample of a motion whose inverse dynamics failed: its ``index`` and the ``cause``."""

    def __init__(self, index: int, cause: Exception) -> None:
        super().__init__(str(cause))
        self.index = index
        self.cause = cause


def efforts_along(evaluate: Evaluator | LoopEvaluator, x: np.ndarray, xd: np.ndarray,
                  xdd: np.ndarray) -> np.ndarray:
    """The inverse dynamics' efforts at every sample of a motion: rows of ``x``, ``xd`` and
    ``xdd`` in ``evaluate.input_names`` order, evaluated in order (with loops each solved
    from the last); (n_samples, n_inputs), the actuators' axial forces in their inputs'
    slots (N m, N). The first sample that cannot be evaluated raises
    :class:`EffortsUnavailable`."""
    out = np.empty((len(x), len(evaluate.input_names)))
    for k in range(len(x)):
        try:
            out[k] = evaluate(x[k], xd[k], xdd[k]).efforts
        except EVALUATION_ERRORS as exc:
            raise EffortsUnavailable(k, exc) from exc
    return out
