"""The three kinds of study: ``sweep`` (a grid or Latin hypercube), ``optimize`` (scipy's
differential evolution, seeded, then a bounded Nelder-Mead polish) with the objective's
sensitivity at the optimum, and ``envelope`` (per input: peak and RMS effort, peak speed, the
torque-speed points)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .evaluation import PENALTY, DesignProblem, Outcome
from .outputs import CaseLoads
from .runner import Runner
from .study_file import OptimizeSpec, SweepSpec

#: Central differences step: this fraction of the parameter's range.
SENSITIVITY_STEP = 1e-3


@dataclass(frozen=True)
class SweepResult:
    designs: np.ndarray             # (n, parameters), file units
    outcomes: list[Outcome]

    @property
    def infeasible(self) -> Counter:
        return Counter(o.reason for o in self.outcomes if not o.feasible)


def _box(problem: DesignProblem) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([p.lower for p in problem.parameters]),
            np.array([p.upper for p in problem.parameters]))


def sweep(problem: DesignProblem, spec: SweepSpec, runner: Runner) -> SweepResult:
    """Every design of the grid (``spec.points`` per parameter, bounds included) or of a Latin
    hypercube of ``spec.samples`` (seeded)."""
    lo, hi = _box(problem)
    if spec.method == "grid":
        axes = [np.linspace(a, b, n) for a, b, n in zip(lo, hi, spec.points)]
        designs = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, len(lo))
    else:
        from scipy.stats import qmc
        unit = qmc.LatinHypercube(len(lo), seed=spec.seed).random(spec.samples)
        designs = lo + unit * (hi - lo)
    return SweepResult(designs, runner.evaluate(problem, designs))


@dataclass(frozen=True)
class Optimum:
    """The optimiser's answer: the start (the model file's values, evaluated apart) and the
    best design, every design the optimiser evaluated, the reasons of the infeasible ones."""

    start: Outcome
    best: Outcome
    evaluated: list[Outcome]
    message: str

    @property
    def infeasible(self) -> Counter:
        return Counter(o.reason for o in self.evaluated if not o.feasible)


def optimize(problem: DesignProblem, spec: OptimizeSpec, runner: Runner) -> Optimum:
    """Minimise the objective over the bounds (scaled to the unit box): differential evolution
    evaluating each generation as one batch (``runner``), then Nelder-Mead from its best
    within the bounds; reproducible for a seed."""
    from scipy.optimize import differential_evolution, minimize
    lo, hi = _box(problem)
    evaluated: list[Outcome] = []

    def batch(unit: np.ndarray) -> np.ndarray:      # (parameters, S) -> (S,)
        outcomes = runner.evaluate(problem, (lo + unit.T * (hi - lo)))
        evaluated.extend(outcomes)
        return np.array([problem.objective_of(o) for o in outcomes])

    start = problem.evaluate(problem.start)
    n = len(lo)
    result = differential_evolution(
        batch, [(0.0, 1.0)] * n, seed=spec.seed, popsize=spec.population,
        maxiter=spec.iterations, polish=False, vectorized=True, updating="deferred", tol=1e-8)
    message = f"differential evolution: {result.message}"
    if spec.polish and result.fun < PENALTY:
        polish = minimize(lambda u: batch(u[:, None])[0], result.x, method="Nelder-Mead",
                          bounds=[(0.0, 1.0)] * n,
                          options={"xatol": 1e-6, "fatol": 1e-9, "maxfev": 200 * n})
        message += f"; Nelder-Mead: {polish.message}"
    # the model file's own design competes only when it lies within the bounds
    inside = bool(np.all((lo <= start.values) & (start.values <= hi)))
    best = min(evaluated + [start] * inside, key=problem.objective_of)
    return Optimum(start, best, evaluated, message)


@dataclass(frozen=True)
class Sensitivity:
    """d(objective)/d(parameter) at the optimum by central differences of step ``step``
    (one-sided where a bound is nearer than the step: ``kind``)."""

    parameter: str
    value: float
    step: float
    derivative: float
    kind: str


def sensitivity(problem: DesignProblem, values: tuple[float, ...]) -> list[Sensitivity]:
    """The objective's derivative along each parameter at ``values`` (file units)."""
    out = []
    f0 = problem.objective_of(problem.evaluate(values))
    for k, p in enumerate(problem.parameters):
        h = SENSITIVITY_STEP * (p.upper - p.lower)
        x = values[k]
        up, down = x + h <= p.upper, x - h >= p.lower
        at = [x + h if up else x, x - h if down else x]
        f = []
        for v in at:
            design = list(values)
            design[k] = v
            f.append(problem.objective_of(problem.evaluate(tuple(design))))
        kind = "central" if up and down else ("forward" if up else "backward")
        if PENALTY in f or f0 >= PENALTY:
            out.append(Sensitivity(p.name, x, h, float("nan"), "infeasible neighbour"))
            continue
        out.append(Sensitivity(p.name, x, h, (f[0] - f[1]) / (at[0] - at[1]), kind))
    return out


@dataclass(frozen=True)
class EnvelopeRow:
    """One input over every case: ``effort`` is an actuator's axial force or a coordinate's
    generalised effort, ``speed`` its velocity; limits from the model (None: none)."""

    name: str
    peak_effort: float
    rms_effort: float
    peak_speed: float
    effort_limit: Optional[float]
    velocity_limit: Optional[float]


def envelope(problem: DesignProblem) -> tuple[list[EnvelopeRow], list[CaseLoads]]:
    """The model as it is over every motion and payload case: a row per input (the
    model's ``input_names``) and each case's loads (the torque-speed points)."""
    from ..kinematics.limits import InputLimits
    model = problem.model(())
    loads = problem.loads(model)
    efforts = np.concatenate([c.efforts for c in loads])
    speeds = np.concatenate([c.speeds for c in loads])
    limits = InputLimits.of(model).velocity
    effort_limits = {a.name: a.force_limit for a in model.actuators}
    for body in model.bodies:
        if body.coordinate is not None:
            effort_limits.setdefault(body.coordinate, body.limits.effort)
    rows = [EnvelopeRow(name, float(np.max(np.abs(efforts[:, k]))),
                        float(np.sqrt(np.mean(efforts[:, k] ** 2))),
                        float(np.max(np.abs(speeds[:, k]))), effort_limits.get(name),
                        limits.get(name))
            for k, name in enumerate(model.input_names)]
    return rows, loads
