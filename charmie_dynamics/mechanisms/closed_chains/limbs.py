"""The platform motion as input: inverse kinematics of a parallel mechanism's limbs by
numerical constraint embedding (seed 003 sections 3.6 and 4, algorithms 1-3).

A model with loops is read as a parallel kinematic mechanism (PKM) when some of its cut
joints are rigid (type F): each rigid cut joins two *platform copies*, the bodies that end
the limbs (the platform itself and massless copies of it, one per further limb; see
config/examples/irsbot2.yaml). Limb l is the tree path from its platform copy to the ground
with the loops closed onto it (its *intra-limb* loops: every cut other than the rigid ones);
its coordinates are those of the bodies of the path and of its loops. For each intra-limb
loop group (model/cut_joints.py) the independent coordinates are the declared (actuated) ones
of the group and, where the group's mobility (coordinates - rank of its rows at the assembled
configuration) asks for more, the group's coordinates on the path nearest the platform (for
the IRSBot-2: q1 for the proximal loop, the angles of U6 for the distal one, as seed 003
sec. 6.2). These, with the limb's coordinates in no loop, are the limb's generalized
coordinates y_l (seed 003 eq. 15); the limb's other coordinates are solved from its loops
(:class:`ClosedChain` restricted to the limb's groups: algorithm 2, eqs. 17, 24).

Task (seed 003 eqs. 29, 36): the position x of the platform's reference point (the rigid
cut's origin on the platform copy), world frame; the limb is non-redundant when y_l has 3
coordinates, and its task Jacobian is J_T = J_x G_y (3 x 3), J_x the point's linear
Jacobian, G_y the embedding's columns of y_l (eq. 26). The platform's orientation is not an
input: for a translational PKM (the IRSBot-2) the limbs impose it, and the rigid cuts'
residual after every limb is solved says whether the target was in the PKM's workspace.

* Algorithm 1 (nested): dy = J_T^-1 (x_target - x(q)) (eq. 35 with the world-frame position
  error), y += dy, then algorithm 2 on the limb's loops (iterations reported per outer step),
  until max |x_target - x| <= ``tolerance`` (default TASK_TOLERANCE).
* Algorithm 3 (compound): Newton-Raphson on the stacked system [Phi_l(q); x(q) - x_target]
  = 0 in the limb's coordinates (Phi_l its loops' rows), the closed chain's damped iteration
  with the pseudo-inverse (the redundant rows of a planar loop cut as R are consistent at the
  solution), until max |Phi_l| <= the chain's tolerance and the position error <=
  ``tolerance``: the loops and the limb's inverse kinematics solved in one common iteration
  (sec. 4.2). Its condition number is that of the stacked Jacobian.
* Rates (eqs. 31-33): ydot = J_T^-1 v, qd = G_y ydot; ydd = J_T^-1 (a - a_0),
  qdd = G_y ydd + g, with g the loops' acceleration bias (eq. 23) and a_0 the point's
  acceleration at ydd = 0 (J_x g + Jdot_x qd).

Near an input singularity the condition number of J_T grows: above the chain's
``condition_limit`` the solution stops with :class:`LoopSingularityError` naming the limb.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...kinematics.forward import Placements, forward_kinematics
from ...kinematics.jacobian import frame_jacobian
from ...kinematics.motion import body_motion
from ...model.cut_joints import loop_bodies, loop_groups, path_to_root
from ...model.validation import ModelError
from .compiled import embedding_of
from .constraints import ConstraintValues, _point_motion, evaluate
from .embedding import RANK_TOLERANCE, ClosedChain, GroupInfo, LoopSingularityError, SolveReport

#: Algorithms of seed 003 section 4.
NESTED, COMPOUND = "nested", "compound"
#: Default tolerance on the platform position error, m: above the loops' residual tolerance
#: (ClosedChain.tolerance, 1e-12), whose remainder moves the platform by as much, so that
#: algorithm 1 does not chase the inner loop's rounding.
TASK_TOLERANCE = 1e-10


class NotAParallelMechanism(ModelError):
    """A model with loops whose limbs cannot be read (no rigid cut, a limb that is not
    non-redundant)."""


@dataclass(frozen=True)
class Limb:
    """One limb of a PKM (module docstring)."""

    name: str                      # "limb <platform copy>"
    end: int                       # the platform copy (body index)
    point: np.ndarray              # the platform's reference point in ``end``'s frame, (3,)
    coordinates: tuple[int, ...]   # every coordinate of the limb
    generalized: tuple[int, ...]   # y_l, coordinate indices
    loops: ClosedChain             # the limb's intra-limb loops (its groups only)
    columns: np.ndarray            # positions of y_l among ``loops.independent``
    rows: np.ndarray               # the limb's constraint rows (indices into chain rows)


@dataclass
class LimbReport:
    """Iterations of one limb's inverse kinematics at one target."""

    outer: int = 0                                    # algorithm 1 or 3 iterations
    inner: list[list[int]] = field(default_factory=list)   # per outer step, per loop group
    task_error: list[float] = field(default_factory=list)  # max |x_target - x| per iterate
    loop_residual: float = 0.0                        # max |Phi_l| at the solution
    condition: float = 0.0                            # largest condition number of J_T


@dataclass(frozen=True)
class PlatformSolution:
    """Every coordinate, rate and acceleration (n,) for a platform motion, with the limbs'
    reports and the rigid cuts' residual (0 to the tolerance: the target is reachable)."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    limbs: tuple[LimbReport, ...]
    closure_residual: float


def _rank(J: np.ndarray) -> int:
    s = np.linalg.svd(J, compute_uv=False)
    return int(np.sum(s > RANK_TOLERANCE * max(s[0], 1.0))) if s.size else 0


@dataclass(frozen=True)
class ParallelMechanism:
    """A PKM's limbs over its closed chain (module docstring); build with :meth:`build`."""

    chain: ClosedChain
    limbs: tuple[Limb, ...]
    closure_rows: np.ndarray       # the rigid cuts' rows

    @classmethod
    def build(cls, chain: ClosedChain) -> ParallelMechanism:
        """The limbs of ``chain``'s model; :class:`NotAParallelMechanism` naming the file
        when it has no rigid cut or a limb is redundant or under-determined."""
        model, loops = chain.model, chain.model.loops
        source = f"{model.source}: loops.cuts"
        rigid = [k for k, c in enumerate(loops.cuts) if c.type == "F"]
        if not rigid:
            raise NotAParallelMechanism(f"{source}: no rigid (F) cut joins two platform copies, "
                                        "expected a parallel mechanism's platform closure")
        ends: dict[int, np.ndarray] = {}
        for k in rigid:
            c = loops.cuts[k]
            ends.setdefault(c.body_a, c.origin_a)
            ends.setdefault(c.body_b, c.origin_b)
        intra = [k for k in range(len(loops.cuts)) if k not in rigid]
        ci = model.coordinate_index
        loop_coords = {k: {int(ci[b]) for b in loop_bodies(model.parent, loops.cuts[k].body_a,
                                                           loops.cuts[k].body_b) if ci[b] >= 0}
                       for k in intra}
        declared = set(int(c) for c in chain.independent)
        values = evaluate(model, chain.rows, chain.assembled)
        limbs = []
        for end, point in ends.items():
            path = [int(ci[b]) for b in path_to_root(model.parent, end) if ci[b] >= 0]
            coords, mine = set(path), []
            grew = True
            while grew:
                grew = False
                for k in intra:
                    if k not in mine and loop_coords[k] & coords:
                        mine.append(k)
                        coords |= loop_coords[k]
                        grew = True
            name = f"limb {model.bodies[end].name}"
            infos, generalized = [], set(coords)
            mine.sort()
            for g in loop_groups(ci, model.parent, tuple(loops.cuts[k] for k in mine), declared):
                g = replace(g, cuts=tuple(mine[k] for k in g.cuts))
                r = np.flatnonzero(np.isin(chain.rows.cut, g.cuts))
                mobility = len(g.coordinates) - _rank(values.jacobian[np.ix_(r, g.coordinates)])
                chosen = list(g.independent)
                for c in path:                      # platform side first
                    if len(chosen) < mobility and c in g.coordinates and c not in chosen:
                        chosen.append(c)
                deps = tuple(c for c in g.coordinates if c not in chosen)
                if len(chosen) != mobility or _rank(values.jacobian[np.ix_(r, deps)]) < len(deps):
                    raise NotAParallelMechanism(
                        f"{source}: {name}: {g.label(loops)} has mobility {mobility}; no choice "
                        "of independent coordinates on the path to the platform determines the "
                        "others")
                g = replace(g, independent=tuple(sorted(chosen)), dependent=deps)
                generalized -= set(deps)
                infos.append(GroupInfo(g, g.label(loops), r, len(g.coordinates) - mobility,
                                       mobility, ()))
            gen = tuple(sorted(generalized))
            if len(gen) != 3:
                raise NotAParallelMechanism(
                    f"{source}: {name} has {len(gen)} generalized coordinates "
                    f"({', '.join(model.coordinate_names[c] for c in gen)}), expected 3 for "
                    "the platform position task (a non-redundant limb, seed 003 sec. 3.6)")
            dependent = sorted(c for info in infos for c in info.group.dependent)
            independent = np.array([c for c in range(model.n_coordinates)
                                    if c not in dependent], dtype=int)
            sub = ClosedChain(model, chain.rows, tuple(infos), independent,
                              np.array(dependent, dtype=int), chain.assembled, chain.tolerance,
                              chain.max_iterations, chain.condition_limit)
            rows = np.concatenate([info.rows for info in infos]) if infos else np.zeros(0, int)
            limbs.append(Limb(name, end, np.asarray(point, float), tuple(sorted(coords)), gen,
                              sub, np.searchsorted(independent, gen), rows))
        closure = np.flatnonzero(np.isin(chain.rows.cut, rigid))
        return cls(chain, tuple(limbs), closure)

    def platform_position(self, q: np.ndarray, limb: int = 0) -> np.ndarray:
        """World position (3,) of the platform's reference point through limb ``limb``."""
        lb = self.limbs[limb]
        return forward_kinematics(self.chain.model, q).to_world(lb.end, lb.point)

    def _task(self, lb: Limb, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, Placements]:
        """(x, J_x, placements) of limb ``lb``'s platform point at q."""
        fk = forward_kinematics(self.chain.model, q)
        x = fk.to_world(lb.end, lb.point)
        return x, frame_jacobian(self.chain.model, fk, lb.end, x)[1], fk

    def _task_jacobian(self, lb: Limb, q: np.ndarray, J_x: np.ndarray, report: LimbReport
                       ) -> tuple[np.ndarray, np.ndarray]:
        """(J_T, G) at q; LoopSingularityError above the limit. G by the limb's compiled
        embedding (compiled.py, equal to ``ClosedChain.velocity_map`` to rounding) at its
        solve from q: q must close the limb's loops (the assembled configuration, a solution
        of algorithm 2 or 3, a previous sample's solution), else G is taken at the
        configuration that closes them and the solve's errors are raised."""
        zero = np.zeros(len(lb.loops.independent))
        G = embedding_of(lb.loops).state(q[lb.loops.independent], zero, zero, q, False).G
        J_T = J_x @ G[:, lb.columns]
        s = np.linalg.svd(J_T, compute_uv=False)
        condition = s[0] / s[-1] if s[-1] > 0 else np.inf
        report.condition = max(report.condition, float(condition))
        if not condition <= self.chain.condition_limit:
            raise LoopSingularityError(
                f"{lb.name}: the task Jacobian J_T has condition number {condition:.3g} > "
                f"{self.chain.condition_limit:g}: the limb is at or near an input singularity",
                lb.name, float(condition))
        return J_T, G.copy()

    def _limb_nested(self, lb: Limb, target: np.ndarray, q: np.ndarray, report: LimbReport,
                     tolerance: float) -> np.ndarray:
        """Algorithm 1 with algorithm 2 inside (module docstring), damped: the step
        dy = J_T^-1 (x_target - x) is halved until the loops close at y + s dy and the
        position error's Euclidean norm falls (dy is a descent direction of that norm, not
        of its largest component), as algorithm 2's step. Undamped, a start 0.15 m from the
        target made the iterates wander for 29 iterations on one numpy and fail after 30 on
        another (the IRSBot-2 from its zero configuration to the parabola at t = 0.71 s)."""
        x, J_x, _ = self._task(lb, q)
        err = target - x
        inner = embedding_of(lb.loops)
        for it in range(self.chain.max_iterations + 1):
            report.task_error.append(float(np.abs(err).max()))
            if report.task_error[-1] <= tolerance:
                report.outer = it
                return q
            if it == self.chain.max_iterations:
                break
            J_T, _ = self._task_jacobian(lb, q, J_x, report)
            step, scale, norm = np.linalg.solve(J_T, err), 1.0, float(np.linalg.norm(err))
            for _ in range(20):
                trial = q.copy()
                trial[list(lb.generalized)] += scale * step
                try:                                # algorithm 2, compiled (compiled.py)
                    trial = inner.positions(trial[lb.loops.independent], trial, False).copy()
                except LoopSingularityError:        # the loops do not close there
                    scale *= 0.5
                    continue
                x_trial, J_trial, _ = self._task(lb, trial)
                if np.linalg.norm(target - x_trial) < norm:    # False for NaN
                    break
                scale *= 0.5
            else:
                break
            q, x, J_x, err = trial, x_trial, J_trial, target - x_trial
            report.inner.append(inner.named.iterations.tolist())
        raise LoopSingularityError(f"{lb.name}: algorithm 1 stopped at a position error of "
                                   f"{report.task_error[-1]:.3g} m after "
                                   f"{len(report.task_error) - 1} iterations", lb.name, np.nan)

    def _limb_compound(self, lb: Limb, target: np.ndarray, q: np.ndarray, report: LimbReport,
                       tolerance: float) -> np.ndarray:
        """Algorithm 3 (module docstring) by the closed chain's damped Newton-Raphson over
        the limb's coordinates; the task rows are scaled by the loops' tolerance over
        ``tolerance``, so that one threshold stops both."""
        cols = lb.coordinates
        scale = self.chain.tolerance / tolerance

        def system(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, ConstraintValues]:
            x, J_x, _ = self._task(lb, q)
            values = evaluate(self.chain.model, self.chain.rows, q)
            return (np.concatenate([values.residual[lb.rows], scale * (x - target)]),
                    np.vstack([values.jacobian[np.ix_(lb.rows, cols)], scale * J_x[:, cols]]),
                    values)
        report.task_error.append(float(np.abs(target - self._task(lb, q)[0]).max()))
        inner = SolveReport()
        q, report.outer, _, _ = self.chain._newton(q, cols, system, f"{lb.name} (algorithm 3)",
                                                   inner)
        report.task_error.append(float(np.abs(target - self._task(lb, q)[0]).max()))
        report.condition = max(report.condition, inner.condition)
        return q

    def solve(self, position: np.ndarray, velocity: np.ndarray, acceleration: np.ndarray,
              start: np.ndarray | None = None, algorithm: str = NESTED,
              tolerance: float = TASK_TOLERANCE) -> PlatformSolution:
        """Every coordinate and its rates for the platform point's world position, velocity
        and acceleration (3,) each (module docstring), Newton warm-started from ``start``
        (n,; default the assembled configuration), limb by limb."""
        if algorithm not in (NESTED, COMPOUND):
            raise ValueError(f"algorithm {algorithm!r}, expected {NESTED!r} or {COMPOUND!r}")
        target, v, a = (np.asarray(x, dtype=float) for x in (position, velocity, acceleration))
        for name, x in (("position", target), ("velocity", v), ("acceleration", a)):
            if x.shape != (3,) or not np.all(np.isfinite(x)):
                raise ValueError(f"platform {name}: expected 3 finite numbers (world frame, "
                                 f"SI), got shape {x.shape}")
        q = (self.chain.assembled if start is None else np.asarray(start, float)).copy()
        n = self.chain.model.n_coordinates
        qd, qdd, reports = np.zeros(n), np.zeros(n), []
        for lb in self.limbs:
            report = LimbReport()
            step = self._limb_nested if algorithm == NESTED else self._limb_compound
            q = step(lb, target, q, report, tolerance)
            report.loop_residual = float(np.abs(evaluate(
                self.chain.model, self.chain.rows.take(lb.rows), q).residual).max(initial=0.0))
            x, J_x, fk = self._task(lb, q)
            J_T, G = self._task_jacobian(lb, q, J_x, report)
            own = list(lb.coordinates)
            qd[own] = (G[:, lb.columns] @ np.linalg.solve(J_T, v))[own]      # eqs. 31-32
            zero = np.zeros(len(lb.loops.independent))
            bias = np.zeros(n)                                                 # eq. 23
            bias[own] = embedding_of(lb.loops).state(q[lb.loops.independent],
                                                     qd[lb.loops.independent], zero, q,
                                                     False).qdd[own]
            motion = body_motion(self.chain.model, fk, qd, bias)
            a0 = _point_motion(fk, motion, lb.end, lb.point)[3]
            qdd[own] = (G[:, lb.columns] @ np.linalg.solve(J_T, a - a0) + bias)[own]
            reports.append(report)
        closure = evaluate(self.chain.model, self.chain.rows.take(self.closure_rows), q).residual
        return PlatformSolution(q, qd, qdd, tuple(reports), float(np.abs(closure).max()))
