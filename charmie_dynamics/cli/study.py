"""``charmie-dynamics study STUDY.yaml --out DIR``: a design study (sweep, optimize, envelope)
to CSV tables, a report, plots and, for an optimisation, the best model file.

The designs run in this process, on ``--jobs`` cores (joblib) or on a Dask cluster
(``--scheduler ADDRESS``); the files are written as ``analyze`` writes them
(output_files.py), so a failed run leaves nothing partial.
"""
from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Callable, Iterator, Optional

import numpy as np

try:
    from tqdm import tqdm
except ImportError:          # optional (the `plots` extra): no progress bar then
    tqdm = None

from ..errors import InputError
from ..identification.model_file import edited_model_text
from ..resources import bundled_model
from ..studies import (DesignProblem, Outcome, Runner, Study, envelope, optimize, read_study,
                       sensitivity, sweep)
from ..studies.evaluation import Infeasible
from ..studies.outputs import CaseLoads, active_constraints, output_names
from ..studies.runner import RunnerError
from ..studies.study_file import designs_of
from .arguments import add_overwrite_argument
from .output_files import check_output, check_targets, write_all, write_csv
from .plots import plot_input_efforts, plot_response, plot_torque_speed, require_matplotlib

#: The comment on each line of the best model file that the study changed.
MARK = "study"
MAX_JOBS = 512

Step = tuple[str, Callable[[Path], None]]


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"got {text!r}, expected 1 to {MAX_JOBS}")
    return value


def add_study_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study")
    p.add_argument("study", type=Path, help="the study file (YAML; docs/studies.md)")
    p.add_argument("--out", type=Path, default=Path("study_results"), help="output directory")
    add_overwrite_argument(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=_jobs, default=1,
                       help="local processes evaluating designs (joblib; default 1)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="a Dask scheduler (tcp://HOST:8786) to evaluate the designs on")
    p.set_defaults(func=run_study)


@contextlib.contextmanager
def _progress(total: Optional[int], what: str) -> Iterator[Optional[Callable[[int], None]]]:
    """A bar on stderr counting designs (none when piped or without tqdm)."""
    if tqdm is None:
        yield None
        return
    with tqdm(total=total, desc=what, unit="design", disable=None, leave=False) as bar:
        yield bar.update


def run_study(args: argparse.Namespace) -> int:
    check_output(args.out)
    # before the designs run (minutes, hours on a cluster): every kind writes report.txt;
    # the other files are checked with it once they are known
    check_targets(args.out, ["report.txt"], args.overwrite)
    require_matplotlib("study")
    study = read_study(args.study, bundled_model())
    problem = DesignProblem.of(study)
    states = sum(len(case.trajectory.t) for case in problem.cases)
    print(f"{study.source}: {study.kind}: {'at most ' * (study.kind == 'optimize')}"
          f"{designs_of(study)} design(s), {states} states per design")
    total = designs_of(study) if study.kind == "sweep" else None   # an optimisation stops early
    try:
        with _progress(total, study.kind) as progress, \
                Runner(args.jobs, args.scheduler, progress) as runner:
            if study.kind == "sweep":
                steps, summary = _sweep(study, problem, runner)
            elif study.kind == "optimize":
                steps, summary = _optimize(study, problem, runner)
            else:
                steps, summary = _envelope(study, problem)
    except RunnerError as exc:
        raise InputError(str(exc)) from None
    except Infeasible as exc:
        raise InputError(f"{study.source}: the model as it is cannot run the motions "
                         f"({exc.reason}): {exc}") from None
    steps.append(("report.txt", lambda path: path.write_text("\n".join(summary) + "\n",
                                                              encoding="utf-8")))
    try:
        write_all(args.out, steps, args.overwrite)
    except OSError as exc:
        raise InputError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
    print("\n".join(summary))
    print(f"  wrote {', '.join(name for name, _ in steps)} in {args.out}")
    return 0


def _csv(name: str, header: list[str], rows: list[list]) -> Step:
    table = (name, header, np.array(rows, dtype=object).reshape(len(rows), len(header)))
    return name, lambda path: write_csv(path, table)


def _cell(value: Optional[float]) -> object:
    return "" if value is None else value


def _infeasible_lines(outcomes: list[Outcome]) -> list[str]:
    """The infeasible designs counted by reason, each with its first message."""
    first: dict[str, str] = {}
    counts: dict[str, int] = {}
    for o in outcomes:
        if not o.feasible:
            counts[o.reason] = counts.get(o.reason, 0) + 1
            first.setdefault(o.reason, o.message or "")
    lines = [f"  infeasible designs: {sum(counts.values())} of {len(outcomes)}"]
    lines += [f"    {reason}: {n} (first: {first[reason]})" for reason, n in sorted(counts.items())]
    return lines


def _objective_text(study: Study) -> str:
    return " + ".join(name if w == 1 else f"{w:g} * {name}" for name, w in study.objective.items())


def _sweep(study: Study, problem: DesignProblem, runner: Runner) -> tuple[list[Step], list[str]]:
    result = sweep(problem, study.sweep, runner)
    model = problem.model(problem.start)
    names = output_names(model)
    objective = ["objective"] if study.objective else []
    header = [p.name for p in study.parameters] + ["feasible", "reason"] + objective + names
    rows = [list(d) + [int(o.feasible), o.reason or ""]
            + [problem.objective_of(o) if o.feasible else "" for _ in objective]
            + [o.outputs[n] if o.outputs else "" for n in names]
            for d, o in zip(result.designs, result.outcomes)]
    shown = list(study.objective) or [f"{a}.peak_force" for a in model.actuator_names][:1] \
        or ["energy_per_cycle"]
    value = np.array([problem.objective_of(o) if study.objective else
                      (o.outputs[shown[0]] if o.feasible else np.nan)
                      for o in result.outcomes])
    value[value >= 1e29] = np.nan
    summary = [f"{study.source}: sweep ({study.sweep.method}) of {len(result.designs)} designs "
               f"over {', '.join(p.name for p in study.parameters)}"]
    summary += _infeasible_lines(result.outcomes)
    if np.any(np.isfinite(value)):
        k = int(np.nanargmin(value))
        label = _objective_text(study) if study.objective else shown[0]
        summary.append(f"  lowest {label}: {value[k]:.6g} at " + ", ".join(
            f"{p.name} = {v:.6g}" for p, v in zip(study.parameters, result.designs[k])))
    steps = [_csv("sweep.csv", header, rows),
             ("sweep.png", lambda path: plot_response(
                 path, [p.name for p in study.parameters], result.designs, value,
                 _objective_text(study) if study.objective else shown[0]))]
    return steps, summary


def _optimize(study: Study, problem: DesignProblem, runner: Runner
              ) -> tuple[list[Step], list[str]]:
    result = optimize(problem, study.optimize, runner)
    start, best = result.start, result.best
    summary = [f"{study.source}: optimize {_objective_text(study)} over "
               f"{', '.join(p.name for p in study.parameters)}: {len(result.evaluated)} "
               f"designs ({result.message})"]
    summary += _infeasible_lines(result.evaluated)
    header = [p.name for p in study.parameters] + ["feasible", "reason", "objective"]
    rows = [list(o.values) + [int(o.feasible), o.reason or "",
                              problem.objective_of(o) if o.feasible else ""]
            for o in result.evaluated]
    steps = [_csv("evaluations.csv", header, rows)]
    if not best.feasible:
        summary.append("  no feasible design found: no best model file written")
        return steps, summary
    before = problem.objective_of(start) if start.feasible else None
    summary.append(f"  objective: {before:.6g} -> {problem.objective_of(best):.6g}"
                   if before is not None else
                   f"  objective: the model as it is is infeasible ({start.reason}) -> "
                   f"{problem.objective_of(best):.6g}")
    for p, a, b in zip(study.parameters, start.values, best.values):
        at = " at its lower bound" if b - p.lower <= 1e-6 * (p.upper - p.lower) else \
            " at its upper bound" if p.upper - b <= 1e-6 * (p.upper - p.lower) else ""
        summary.append(f"  {p.name}: {a:.6g} -> {b:.6g}  (bounds [{p.lower:g}, {p.upper:g}]"
                       f"{at})")
    model = problem.model(best.values)
    for name in model.actuator_names:
        key = f"{name}.peak_force"
        was = f"{start.outputs[key]:.1f}" if start.feasible else "-"
        summary.append(f"  {key}: {was} -> {best.outputs[key]:.1f} N")
    active = active_constraints(best.margins, best.outputs, model)
    summary.append(f"  active constraints: {', '.join(active) or 'none'}")
    slopes = sensitivity(problem, best.values)
    summary.append("  sensitivity of the objective at the optimum (per file unit):")
    summary += [f"    {s.parameter}: {s.derivative:.6g} ({s.kind}, step {s.step:.3g})"
                for s in slopes]
    names = output_names(model)
    steps += [
        _csv("outputs.csv", ["output", "before", "after"],
             [[n, _cell(start.outputs[n] if start.feasible else None), best.outputs[n]]
              for n in names]),
        _csv("sensitivity.csv", ["parameter", "value", "step", "derivative", "kind"],
             [[s.parameter, s.value, s.step, s.derivative, s.kind] for s in slopes]),
        ("best_model.yaml", lambda path: path.write_text(edited_model_text(
            study.model_text, str(study.model_path),
            [(path_, v) for p, v in zip(study.parameters, best.values) for path_ in p.paths],
            MARK), encoding="utf-8"))]
    after = problem.loads(model)
    before_loads = problem.loads(problem.model(start.values)) if start.feasible else None
    for k, case in enumerate(after):
        series = {"after": case.efforts}
        if before_loads is not None:
            series = {"before": before_loads[k].efforts, **series}
        steps.append((f"efforts_{case.case.label}.png",
                      lambda path, case=case, series=series: plot_input_efforts(
                          path, case.case.trajectory.t, model, series,
                          f"efforts before and after ({case.case.label})")))
    return steps, summary


def _envelope(study: Study, problem: DesignProblem) -> tuple[list[Step], list[str]]:
    rows, loads = envelope(problem)
    model = problem.model(())
    summary = [f"{study.source}: envelope of {model.name} over "
               f"{', '.join(c.case.label for c in loads)}",
               "  input: peak |effort|, RMS effort, peak |speed| (limits)"]
    summary += [f"    {r.name}: {r.peak_effort:.4g}, {r.rms_effort:.4g}, {r.peak_speed:.4g}"
                f" ({_cell(r.effort_limit)}, {_cell(r.velocity_limit)})" for r in rows]
    steps = [_csv("envelope.csv", ["input", "peak_effort", "rms_effort", "peak_speed",
                                   "effort_limit", "velocity_limit"],
                  [[r.name, r.peak_effort, r.rms_effort, r.peak_speed, _cell(r.effort_limit),
                    _cell(r.velocity_limit)] for r in rows]),
             _csv("torque_speed.csv", ["case", "time"] + [
                 f"{n}.{q}" for n in model.input_names for q in ("speed", "effort")],
                  _torque_speed_rows(loads)),
             ("torque_speed.png", lambda path: plot_torque_speed(
                 path, model.input_names, {c.case.label: (c.speeds, c.efforts) for c in loads},
                 f"torque-speed points of {model.name}"))]
    return steps, summary


def _torque_speed_rows(loads: list[CaseLoads]) -> list[list]:
    rows = []
    for c in loads:
        pairs = np.stack([c.speeds, c.efforts], axis=-1).reshape(len(c.speeds), -1)
        rows += [[c.case.label, t] + list(v) for t, v in zip(c.case.trajectory.t, pairs)]
    return rows
