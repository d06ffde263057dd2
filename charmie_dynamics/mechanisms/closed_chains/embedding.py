"""Constraint embedding of a model's closed loops (seed 003 section 3.4 and algorithm 2):
the dependent coordinates, rates and accelerations from the independent ones.

Coordinates are split into the declared independent ones (every coordinate outside the
loops, and the loops' declared ``independent`` coordinates) and the dependent ones (the
loops' other coordinates). For a loop group (model/cut_joints.py) with constraint rows Phi,
Jacobian blocks Phi_d (dependent columns) and Phi_i (independent columns):

* positions, damped Newton-Raphson (algorithm 2), warm-started from the last solution:
      dq_d = -Phi_d^+ Phi(q),  q_d += s dq_d,  s = 1, 1/2, 1/4, ... until |Phi| decreases,
  until max |Phi| <= tolerance; Phi_d^+ is the pseudo-inverse from the singular value
  decomposition, exact for redundant rows (whose residual is consistent). Without a warm
  start, or from one farther than ``MAX_STEP``, the solution is followed by continuation
  (:meth:`ClosedChain.approach`): one Newton solve from far away may converge on the
  other assembly branch (a five-bar flipped its elbows after a jump of 14 degrees);
* velocities:    qd_d  = -Phi_d^+ Phi_i qd_i                                   (eq. 17)
* accelerations: qdd_d = -Phi_d^+ (Phi_i qdd_i + gamma)                        (eq. 17)

so that qd = G qd_i with G = [1; -Phi_d^+ Phi_i] (rows in coordinate order; eq. 20, the
orthogonal complement of Phi_q), and qdd = G qdd_i + g with g = [0; -Phi_d^+ gamma].
Near a singularity the condition number s_max / s_min of Phi_d (singular values) grows: above
``condition_limit`` the solution stops with :class:`LoopSingularityError` naming the loop.

The platform motion as input (:meth:`ClosedChain.inverse_kinematics`): the task rows of a
named point stacked under the group's loop rows, every coordinate of the group unknown, one
compound Newton-Raphson iteration for both (seed 003 algorithm 3).

Building a :class:`ClosedChain` assembles the loops from the file's guess (the independent
coordinates held at their guess) and checks mobility: the rank of the group's constraint
Jacobian at the assembled configuration gives its mobility (coordinates - rank), compared
with the declared independent coordinates, with the Gruebler count (coordinates - rows), and
names the redundant rows (rows beyond the rank, found by pivoted Gram-Schmidt).

The solve, G and the rates run compiled, one kernel call per state, in compiled.py (the
dynamics node's LoopEvaluator, ``analyze``, ``closed_chain.inverse_dynamics``); this numpy
implementation is their reference in the tests (test_compiled_embedding.py: equal to 1e-12)
and serves the assembly and mobility checks, the platform motion (limbs.py) and closed-chain
forward dynamics and simulation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ...kinematics.jacobian import frame_jacobian
from ...model.cut_joints import LoopGroup, loop_bodies, path_to_root
from ...model.model import Model
from ...model.validation import ModelError
from .constraints import ConstraintRows, ConstraintValues, check_joint_types, evaluate, with_gamma

#: The largest change of an independent coordinate per Newton-Raphson solve of a
#: continuation (rad or m), and the most steps followed (a longer jump is refused).
MAX_STEP, MAX_STEPS = 0.05, 200
#: Defaults: residual tolerance (m and rad), Newton iterations, condition-number limit.
TOLERANCE = 1e-12
MAX_ITERATIONS = 30
CONDITION_LIMIT = 1e6
RANK_TOLERANCE = 1e-9          # relative to the largest singular value


class LoopAssemblyError(ModelError):
    """A model whose loops cannot be assembled, or whose mobility does not match the
    declared independent coordinates."""


class LoopSingularityError(ArithmeticError):
    """The dependent coordinates of a loop cannot be solved: the constraint Jacobian of its
    dependent coordinates is (nearly) singular, or Newton-Raphson did not converge."""

    def __init__(self, message: str, loop: str, condition: float) -> None:
        super().__init__(message)
        self.loop = loop
        self.condition = condition

    # one wording for each failure, shared by this module and the compiled kernels' errors
    @classmethod
    def non_finite(cls, label: str) -> LoopSingularityError:
        return cls(f"{label}: non-finite constraint values (the state ran through a singular "
                   "configuration)", label, math.inf)

    @classmethod
    def ill_conditioned(cls, label: str, names: str, condition: float,
                        limit: float) -> LoopSingularityError:
        return cls(f"{label}: the constraint Jacobian of the solved coordinates ({names}) has "
                   f"condition number {condition:.3g} > {limit:g}: the loop is at or near a "
                   "singular configuration", label, float(condition))

    @classmethod
    def no_convergence(cls, label: str, residual: float, iterations: int,
                       tolerance: float) -> LoopSingularityError:
        return cls(f"{label}: the loop cannot be closed there (Newton-Raphson stopped at max "
                   f"|Phi| = {residual:.3g} after {iterations} iterations, tolerance "
                   f"{tolerance:g})", label, math.nan)

    @classmethod
    def branch_change(cls, label: str, names: str) -> LoopSingularityError:
        return cls(f"{label}: the solved coordinates ({names}) crossed a singular configuration "
                   "between the start and this input: the loop would change assembly branch",
                   label, math.inf)

    @classmethod
    def too_far(cls, model: str, jump: float, labels: str) -> LoopSingularityError:
        # the CLI's one state has no last solution: it is followed from the assembly
        return cls(f"{model}: the independent coordinates moved by {jump:.3g} from the "
                   "solution they are followed from (the last one, or the assembled "
                   f"configuration), more than {MAX_STEP * MAX_STEPS:g} (rad or m: angles in "
                   "radians, not degrees) at once: not followed (the loops' branch could "
                   "change)", labels, math.nan)


@dataclass(frozen=True)
class GroupInfo:
    """A loop group's checks at the assembled configuration."""

    group: LoopGroup
    label: str                     # "loop cut1+cut2"
    rows: np.ndarray               # its constraint rows (indices into ConstraintRows)
    rank: int
    mobility: int                  # coordinates - rank
    redundant: tuple[str, ...]     # names of rows beyond the rank


@dataclass
class SolveReport:
    """Newton-Raphson of one call: iterations and final max |Phi| per group, and the
    largest condition number met."""

    iterations: list[int] = field(default_factory=list)
    residual: list[float] = field(default_factory=list)
    condition: float = 0.0


def loop_bodies_of(model: Model, group: LoopGroup) -> list[int]:
    """The bodies of a group's loops."""
    cuts = model.loops.cuts
    return [i for k in group.cuts for i in loop_bodies(model.parent, cuts[k].body_a,
                                                       cuts[k].body_b)]


def independent_rows(J: np.ndarray, rank: int) -> list[int]:
    """``rank`` rows of J spanning its row space, by pivoted Gram-Schmidt (largest residual
    first); the others are the redundant ones."""
    R = np.array(J, dtype=float)
    chosen: list[int] = []
    for _ in range(rank):
        norms = np.linalg.norm(R, axis=1)
        norms[chosen] = -1.0
        k = int(np.argmax(norms))
        chosen.append(k)
        v = R[k] / norms[k]
        R -= np.outer(R @ v, v)
    return sorted(chosen)


def _mobility_hint(model: Model, rows: ConstraintRows, group_rows: np.ndarray, group) -> str:
    """Why an assembly may fail before Newton's method is to blame: as many independent
    coordinates declared as the mobility at the guess, or else what to declare."""
    J = evaluate(model, rows, model.loops.guess).jacobian[np.ix_(group_rows, group.coordinates)]
    s = np.linalg.svd(J, compute_uv=False)
    rank = int(np.sum(s > RANK_TOLERANCE * max(s[0], 1.0))) if s.size else 0
    mobility = len(group.coordinates) - rank
    if len(group.independent) == mobility:
        return ""
    return (f"; loops.independent: {len(group.independent)} coordinates declared independent, "
            f"but the constraint Jacobian at the guess has rank {rank} of "
            f"{len(group.coordinates)} coordinates: mobility {mobility}, expected {mobility} "
            "independent coordinates")


@dataclass(frozen=True)
class ClosedChain:
    """A model's loops ready to solve (module docstring); build with :meth:`build`."""

    model: Model
    rows: ConstraintRows
    groups: tuple[GroupInfo, ...]
    independent: np.ndarray        # coordinate indices, in coordinate order
    dependent: np.ndarray
    assembled: np.ndarray          # (n,) the assembled configuration
    tolerance: float = TOLERANCE
    max_iterations: int = MAX_ITERATIONS
    condition_limit: float = CONDITION_LIMIT

    @property
    def group_labels(self) -> str:
        """Every loop group's label, for messages ("loop cut1+cut2, loop cut3")."""
        return ", ".join(info.label for info in self.groups)

    @property
    def independent_names(self) -> tuple[str, ...]:
        return tuple(self.model.coordinate_names[c] for c in self.independent)

    @property
    def dependent_names(self) -> tuple[str, ...]:
        return tuple(self.model.coordinate_names[c] for c in self.dependent)

    @classmethod
    def build(cls, model: Model, *, tolerance: float = TOLERANCE,
              max_iterations: int = MAX_ITERATIONS,
              condition_limit: float = CONDITION_LIMIT) -> ClosedChain:
        """Assemble the loops from the guess and check their mobility (module docstring);
        :class:`LoopAssemblyError` naming the file and the loop otherwise."""
        if model.loops is None:
            raise LoopAssemblyError(f"{model.source}: {model.name} has no loops section")
        try:
            check_joint_types(model)
        except ValueError as exc:
            raise LoopAssemblyError(str(exc)) from None
        rows = ConstraintRows.of(model)
        loops = model.loops
        dependent = sorted(c for g in loops.groups for c in g.dependent)
        independent = [c for c in range(model.n_coordinates) if c not in set(dependent)]
        draft = cls(model, rows, (), np.array(independent, dtype=int),
                    np.array(dependent, dtype=int), loops.guess, tolerance, max_iterations,
                    np.inf)
        row_groups = [np.flatnonzero(np.isin(rows.cut, g.cuts)) for g in loops.groups]
        q = loops.guess.copy()
        for g, r in zip(loops.groups, row_groups):
            label = g.label(loops)
            try:
                q = draft._newton(q, g.dependent, draft._group_system(r, g.dependent), label,
                                  assemble=True)[0]
            except LoopSingularityError as exc:
                raise LoopAssemblyError(f"{model.source}: loops: {label} cannot be assembled "
                                        f"from the guess (loops.guess): {exc}"
                                        f"{_mobility_hint(model, rows, r, g)}") from None
        values = evaluate(model, rows, q)
        infos = []
        for g, r in zip(loops.groups, row_groups):
            label = g.label(loops)
            J = values.jacobian[np.ix_(r, g.coordinates)]
            s = np.linalg.svd(J, compute_uv=False)
            rank = int(np.sum(s > RANK_TOLERANCE * max(s[0], 1.0))) if s.size else 0
            mobility = len(g.coordinates) - rank
            keep = independent_rows(values.jacobian[np.ix_(r, g.dependent)], rank)
            redundant = tuple(rows.names[r[k]] for k in range(len(r)) if k not in keep)
            if len(g.independent) != mobility:
                raise LoopAssemblyError(
                    f"{model.source}: loops.independent: {label} has mobility {mobility} "
                    f"({len(g.coordinates)} coordinates, constraint Jacobian of rank {rank} at "
                    f"the assembled configuration; Gruebler count {g.gruebler}), "
                    f"{len(g.independent)} coordinates declared independent, expected "
                    f"{mobility}")
            Jd = values.jacobian[np.ix_(r, g.dependent)]
            rank_d = int(np.sum(np.linalg.svd(Jd, compute_uv=False)
                                > RANK_TOLERANCE * max(s[0], 1.0)))
            if rank_d < len(g.dependent):
                raise LoopAssemblyError(
                    f"{model.source}: loops.independent: {label}: the declared independent "
                    "coordinates do not determine the others at the assembled configuration "
                    f"(dependent block of rank {rank_d} < {len(g.dependent)}), expected another "
                    "choice of independent coordinates")
            infos.append(GroupInfo(g, label, r, rank, mobility, redundant))
        return cls(model, rows, tuple(infos), draft.independent, draft.dependent, q,
                   tolerance, max_iterations, condition_limit)

    def _solve_dependent(self, values: ConstraintValues, rows: np.ndarray, deps: tuple,
                         rhs: np.ndarray, label: str, report: SolveReport | None) -> np.ndarray:
        """x = Phi_d^+ rhs for one group, with the condition check."""
        return self._pseudo_solve(values.jacobian[np.ix_(rows, deps)], rhs, deps, label, report)

    def _pseudo_solve(self, J: np.ndarray, rhs: np.ndarray, cols: tuple, label: str,
                      report: SolveReport | None) -> np.ndarray:
        """x = J^+ rhs (J of full column rank) by the SVD; LoopSingularityError when the
        condition number exceeds the limit."""
        if not (np.all(np.isfinite(J)) and np.all(np.isfinite(rhs))):
            raise LoopSingularityError.non_finite(label)
        U, s, Vt = np.linalg.svd(J, full_matrices=False)
        condition = s[0] / s[-1] if s[-1] > 0 else np.inf
        if report is not None:
            report.condition = max(report.condition, float(condition))
        if not condition <= self.condition_limit:
            raise LoopSingularityError.ill_conditioned(label, self.names_of(cols), condition,
                                                       self.condition_limit)
        return Vt.T @ ((U.T @ rhs) / s.reshape((-1,) + (1,) * (rhs.ndim - 1)))

    def _group_system(self, rows: np.ndarray, cols: tuple) -> Callable:
        """q -> (Phi of ``rows``, its Jacobian in the columns ``cols``, the constraints of
        ``rows`` only: the other groups' rows are not evaluated)."""
        mine, columns = self.rows.take(rows), list(cols)

        def system(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, ConstraintValues]:
            values = evaluate(self.model, mine, q)
            return values.residual, values.jacobian[:, columns], values
        return system

    def _newton(self, q: np.ndarray, cols: tuple, system: Callable, label: str,
                report: SolveReport | None = None, assemble: bool = False,
                branch: np.ndarray | None = None
                ) -> tuple[np.ndarray, int, float, ConstraintValues]:
        """Algorithm 2 on the unknown coordinates ``cols`` of ``system`` (q -> residual,
        Jacobian in ``cols``, constraints): (q, iterations, max |residual|, the constraints
        at q); ``assemble``: steps by the rank-truncated pseudo-inverse (the mobility is not
        checked yet); ``branch``: the Jacobian at the start, whose assembly branch the
        solution must keep (:meth:`_check_branch`)."""
        res, J, values = system(q)
        err = float(np.abs(res).max())
        for it in range(self.max_iterations + 1):
            if err <= self.tolerance:
                if branch is not None and it > 0:
                    self._check_branch(branch, J, cols, label)
                return q, it, err, values
            if it == self.max_iterations:
                break
            step = (np.linalg.lstsq(J, -res, rcond=RANK_TOLERANCE)[0] if assemble else
                    self._pseudo_solve(J, -res, cols, label, report))
            scale = 1.0
            for _ in range(20):             # damping: halve the step until |Phi| decreases
                trial = q.copy()
                trial[list(cols)] += scale * step
                new = system(trial)
                new_err = float(np.abs(new[0]).max())
                if new_err < err:           # False for NaN
                    break
                scale *= 0.5
            else:
                break
            q, (res, J, values), err = trial, new, new_err
        raise LoopSingularityError.no_convergence(label, err, self.max_iterations, self.tolerance)

    def _check_branch(self, start: np.ndarray, J: np.ndarray, cols: tuple, label: str) -> None:
        """The solution on the start's assembly branch: det(J_0^T J), with J_0 the Jacobian
        of the solved coordinates at the start and J at the solution, is positive at the start
        (a Gram determinant) and changes sign where J loses rank between the two (for a
        square J, or redundant rows that vanish identically, only there). A step
        of the independent coordinates across a singular configuration (the five-bar's
        stretched distal links) lands Newton-Raphson on the other branch with every row
        satisfied: refused as a singularity, however far apart the inputs (the two ends of
        one step are compared: two crossings within one step cancel)."""
        if not np.linalg.det(start.T @ J) > 0.0:
            raise LoopSingularityError.branch_change(label, self.names_of(cols))

    def names_of(self, cols: Sequence[int]) -> str:
        """The coordinates ``cols`` by name, for messages."""
        return ", ".join(self.model.coordinate_names[c] for c in cols)

    def inverse_kinematics(self, point: str, target: np.ndarray,
                           start: np.ndarray | None = None,
                           report: SolveReport | None = None) -> np.ndarray:
        """All coordinates (n,) that place the named point ``point`` (BODY.POINT) at
        ``target`` (world, m), the platform motion as input: the loop constraints of the
        group holding the point's body and the three task rows p(q) - target solved together
        over every coordinate of that group, one compound Newton-Raphson iteration for both
        (seed 003 algorithm 3); warm-started from ``start`` (default: the assembled
        configuration). Redundant task rows (a planar mechanism's z) are consistent and need
        no selection; the group's independent coordinates must then be fixed by the task."""
        ref = self.model.point(point)
        path = set(path_to_root(self.model.parent, ref.body))
        info = next((i for i in self.groups
                     if path & set(loop_bodies_of(self.model, i.group))), None)
        if info is None:
            raise ValueError(f"{point}: on no body of a loop, expected a point of a loop")
        cols = info.group.coordinates
        target = np.asarray(target, dtype=float)

        def system(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, ConstraintValues]:
            values = evaluate(self.model, self.rows, q)
            p = values.placements.to_world(ref.body, ref.local)
            Jv = frame_jacobian(self.model, values.placements, ref.body, p)[1]
            return (np.concatenate([values.residual[info.rows], p - target]),
                    np.vstack([values.jacobian[np.ix_(info.rows, cols)], Jv[:, cols]]), values)
        q = (self.assembled if start is None else np.asarray(start, dtype=float)).copy()
        q, it, err, _ = self._newton(q, cols, system, f"{info.label} with {point}", report)
        if report is not None:
            report.iterations.append(it)
            report.residual.append(err)
        return q

    def positions(self, q_independent: np.ndarray, start: np.ndarray | None = None,
                  report: SolveReport | None = None) -> np.ndarray:
        """All coordinates (n,) for the independent ones (in ``independent`` order),
        Newton-Raphson warm-started from ``start`` (n,; default: the assembled
        configuration, followed by :meth:`approach`)."""
        return self.solve(q_independent, start, report)[0]

    def approach(self, q_independent: np.ndarray, start: np.ndarray | None = None
                 ) -> np.ndarray:
        """A warm start for the solve at ``q_independent``: the solution followed from
        ``start`` (default the assembled configuration, the model's branch) along the
        straight path of the independent coordinates in steps of at most ``MAX_STEP``
        (continuation), so that a jump cannot land the solve on another assembly branch.
        :class:`LoopSingularityError` where a step fails or beyond ``MAX_STEPS`` steps."""
        start = self.assembled if start is None else start
        x0 = start[self.independent]
        x = np.asarray(q_independent, dtype=float)
        jump = float(np.max(np.abs(x - x0), initial=0.0))
        if not np.isfinite(jump):
            return start                # the solve refuses the non-finite input itself
        steps = math.ceil(jump / MAX_STEP)
        if steps > MAX_STEPS:
            raise LoopSingularityError.too_far(
                self.model.name, jump, self.group_labels)
        for k in range(1, steps):
            start = self.positions(x0 + (x - x0) * (k / steps), start)
        return start

    def solve(self, q_independent: np.ndarray, start: np.ndarray | None = None,
              report: SolveReport | None = None) -> tuple[np.ndarray, ConstraintValues]:
        """:meth:`positions`, and the constraints at the solution."""
        if start is None:
            start = self.approach(q_independent)
        q = np.array(start, dtype=float)
        at_start = evaluate(self.model, self.rows, q).jacobian
        q[self.independent] = q_independent
        for info in self.groups:            # each group moves only its own coordinates
            deps = info.group.dependent
            q, it, err, _ = self._newton(q, deps, self._group_system(info.rows, deps),
                                         info.label, report,
                                         branch=at_start[np.ix_(info.rows, deps)])
            if report is not None:
                report.iterations.append(it)
                report.residual.append(err)
        return q, evaluate(self.model, self.rows, q)

    def velocity_map(self, q: np.ndarray, qd: np.ndarray | None = None,
                     report: SolveReport | None = None,
                     values: ConstraintValues | None = None
                     ) -> tuple[np.ndarray, ConstraintValues]:
        """G (n, n_independent) with qd = G qd_i (module docstring), and the constraint
        values at q (with gamma when ``qd`` is given; ``values``: those at q when already
        evaluated)."""
        values = evaluate(self.model, self.rows, q) if values is None else values
        if qd is not None:
            values = with_gamma(self.model, self.rows, values, qd)
        n = self.model.n_coordinates
        G = np.zeros((n, len(self.independent)))
        G[self.independent, np.arange(len(self.independent))] = 1.0
        for info in self.groups:
            Ji = values.jacobian[np.ix_(info.rows, self.independent)]
            G[list(info.group.dependent)] = self._solve_dependent(
                values, info.rows, info.group.dependent, -Ji, info.label, report)
        return G, values

    def acceleration_bias(self, values: ConstraintValues) -> np.ndarray:
        """g (n,): the coordinates' accelerations at zero independent acceleration."""
        out = np.zeros(self.model.n_coordinates)
        for info in self.groups:
            out[list(info.group.dependent)] = self._solve_dependent(
                values, info.rows, info.group.dependent, -values.gamma[info.rows], info.label,
                None)
        return out

    def state(self, q_independent: np.ndarray, qd_independent: np.ndarray,
              qdd_independent: np.ndarray, start: np.ndarray | None = None,
              report: SolveReport | None = None) -> tuple[np.ndarray, ...]:
        """(q, qd, qdd, G, values) of all coordinates from the independent ones."""
        q, values = self.solve(q_independent, start, report)
        G, _ = self.velocity_map(q, None, report, values)
        qd = G @ qd_independent
        values = with_gamma(self.model, self.rows, values, qd)
        qdd = G @ qdd_independent + self.acceleration_bias(values)
        return q, qd, qdd, G, values
