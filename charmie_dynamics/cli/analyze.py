"""``charmie-dynamics analyze``: evaluate a whole motion offline, write CSV time series and plots.

Inputs beyond the model's limits are refused before any work (a trajectory file: naming the
row and column; :func:`charmie_dynamics.trajectories.violation`), and nothing is written
unless every cell of both tables is finite. The files are written into a temporary folder
beside ``--out`` and moved into it only when all of them are written (output_files.py): a
failed or interrupted run leaves no partial files in ``--out``.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from ..dynamics import inverse_dynamics
from ..errors import InputError
from ..kinematics import point_positions, resolve_state
from ..mechanisms.auxiliary import auxiliary_segments
from ..model import Model, load_model
from ..model.kinds import MECHANISM_KINDS, items
from ..trajectories import MAX_DT, MIN_DT, MOTIONS, Trajectory, check_dt, from_csv, motion
from .arguments import (add_overwrite_argument, add_position_limits_argument, check_point,
                        check_points, parse_payload)
from .loop_analysis import LOOP_MOTIONS, loop_analysis, trajectory_analysis
from .output_files import check_output, write_all, write_csv
from .plots import plot_efforts, plot_series, require_matplotlib

#: the point analyze tracks on CHARMIE unless told otherwise: the right claw's tip
CLAW = "body_12a.D12a"


def spring_columns(model: Model) -> list[str]:
    """loads.csv's columns of the spring tensions, in ``spring_names(model)``'s order:
    NAME.OUTPUT by each mechanism's kind (NAME.tension in N for a spring or a balancer's
    spring, NAME.torque in N m for a torsion spring)."""
    return [f"{kind.law_name(item)}.{kind.output}" for kind in MECHANISM_KINDS
            for item in items(model, kind)]


def add_analyze_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--motion", choices=sorted(MOTIONS) + list(LOOP_MOTIONS),
                     default="validation",
                     help="a reference motion of the papers (default: validation, seed 000 "
                          "sec. 6; seed002-*, seed003-parabola: models with loops, "
                          "cli/loop_analysis.py)")
    src.add_argument("--trajectory", type=Path, help="a trajectory CSV instead (see README)")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--out", type=Path, default=Path("charmie_results"), help="output directory")
    add_overwrite_argument(p)
    p.add_argument("--dt", type=float, default=0.01,
                   help=f"sample period of --motion, s, in [{MIN_DT:g}, {MAX_DT:g}]")
    p.add_argument("--point", default=None,
                   help="point to track (BODY.POINT, BODY.origin); default CHARMIE's claw "
                        "body_12a.D12a, or the last body's origin on a model without it")
    p.add_argument("--payload", action="append", default=[], metavar="BODY.POINT:MASS",
                   help="a point mass in kg carried at a named point (repeatable)")
    add_position_limits_argument(p)
    p.set_defaults(func=run_analyze)


def _table(name: str, t: np.ndarray, header: list[str], columns: list[np.ndarray]
           ) -> tuple[str, list[str], np.ndarray]:
    """A CSV table (name, header, rows), refused when a cell is NaN or infinite."""
    rows = np.column_stack(columns)
    bad = np.argwhere(~np.isfinite(rows))
    if bad.size:
        k, c = bad[0]
        raise InputError(f"{name}: column {header[c]}, sample {k} (time {t[k]:g} s) is "
                         f"{rows[k, c]}: the inputs are too large for finite results, expected "
                         "inputs within the model's limits; nothing written")
    return name, header, rows


def run_analyze(args: argparse.Namespace) -> int:
    check_output(args.out)
    require_matplotlib("analyze")
    model = load_model(args.model)
    if model.loops is not None:
        return _run_loop_analysis(args, model)
    if args.trajectory is not None:
        traj: Trajectory = from_csv(model, str(args.trajectory),
                                    check_position_limits=args.check_position_limits)
        source = str(args.trajectory)
    else:
        if args.motion in LOOP_MOTIONS:
            raise InputError(f"--motion {args.motion}: a motion of a model with loops, and "
                             f"{args.model} has none; expected one of {', '.join(sorted(MOTIONS))}")
        # --dt and the model's limits checked (another model's may be narrower than the motion)
        traj = motion(model, args.motion, args.dt, args.check_position_limits)
        source = f"motion '{args.motion}'"
    if args.point is None:
        args.point = CLAW if CLAW.rpartition(".")[0] in model.body_names else \
            f"{model.body_names[-1]}.origin"
    check_point(model, args.point, "--point")
    payloads = [parse_payload(text) for text in args.payload]
    check_points(model, payloads)
    start = time.perf_counter()
    state = resolve_state(model, traj.x, traj.xd, traj.xdd)
    loads = inverse_dynamics(model, state, payloads=payloads)
    elapsed = time.perf_counter() - start
    placements = loads.placements
    point = point_positions(model, placements, [args.point])[args.point]
    segments = auxiliary_segments(model, placements)
    n = len(traj.t)
    t = traj.t
    # actuator lengths are among the auxiliary segments (their length equals the input)
    tables = [
        _table("kinematics.csv", t,
               ["time"] + [f"{args.point}.{a}" for a in "xyz"] + list(model.coordinate_names)
               + [f"{s.name}.length" for s in segments],
               [t, point, state.q] + [s.length for s in segments]),
        _table("loads.csv", t,
               ["time"] + [f"base_reaction.force.{a}" for a in "xyz"]
               + [f"base_reaction.torque.{a}" for a in "xyz"]
               + [f"{a}.force" for a in model.actuator_names]
               + spring_columns(model)
               + [f"{c}.effort" for c in model.coordinate_names],
               [t, loads.base_force_world, loads.base_torque_world, loads.actuator_force,
                loads.spring_tension, loads.coordinate_effort])]
    base = model.body_names[loads.base_body]
    steps = [(table[0], lambda path, table=table: write_csv(path, table)) for table in tables]
    steps += [
        ("claw_position.png", lambda path: plot_series(
            path, t, {f"{a} [m]": point[:, k] for k, a in enumerate("xyz")},
            "position [m]", f"{args.point} in the world frame ({source})")),
        ("base_reaction.png", lambda path: plot_series(
            path, t,
            {f"F{a} [N]": loads.base_force_world[:, k] for k, a in enumerate("xyz")}, "force [N]",
            f"force of {model.bodies[loads.base_body].parent} on {base}, world frame"))]
    if model.actuators:
        steps.append(("actuator_forces.png", lambda path: plot_series(
            path, t,
            {f"{a} [N]": loads.actuator_force[:, k] for k, a in enumerate(model.actuator_names)},
            "axial force [N] (positive pushes)", "linear actuator forces")))
    if model.input_names:
        steps.append(("joint_efforts.png", lambda path: plot_efforts(
            path, t, model, loads.coordinate_effort,
            loads.actuator_force, f"efforts by subsystem ({source})")))
    try:
        write_all(args.out, steps, args.overwrite)
    except OSError as exc:
        raise InputError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
    print(f"{model.name}: {source}, {n} samples over {t[-1] - t[0]:.2f} s; kinematics and "
          f"inverse dynamics in {elapsed * 1e3:.1f} ms ({elapsed / n * 1e6:.1f} us per sample, "
          "batched)")
    print(f"  {args.point} start [{', '.join(f'{v:+.4f}' for v in point[0])}] m, "
          f"end [{', '.join(f'{v:+.4f}' for v in point[-1])}] m")
    for k, name in enumerate(model.actuator_names):
        coord = model.bodies[model.actuators[k].drives].coordinate
        c = model.coordinate(coord)
        length = state.actuator_length[:, k]
        print(f"  {name} {length.min():.4f}..{length.max():.4f}"
              f" m -> {coord} {state.q[:, c].min():+.4f}..{state.q[:, c].max():+.4f}; axial force "
              f"{loads.actuator_force[:, k].min():+.1f}..{loads.actuator_force[:, k].max():+.1f} N")
    fz = loads.base_force_world[:, 2]
    print(f"  floor load on {base}: Fz {fz.min():.1f}..{fz.max():.1f} N "
          f"(weight {model.total_mass * np.linalg.norm(model.gravity):.1f} N)")
    print(f"  wrote kinematics.csv, loads.csv and PNG plots in {args.out}")
    return 0


def _run_loop_analysis(args: argparse.Namespace, model: Model) -> int:
    """A model with loops: seed 002's and 003's motions, or a trajectory file of the
    independent coordinates, by constraint embedding (cli/loop_analysis.py)."""
    payloads = [parse_payload(text) for text in args.payload]
    check_points(model, payloads)
    if args.trajectory is not None:
        tables, plots, summary = trajectory_analysis(model, str(args.trajectory),
                                                     args.check_position_limits, payloads)
    else:
        check_dt(args.dt)
        tables, plots, summary = loop_analysis(model, args.motion, args.dt, payloads,
                                               args.check_position_limits)
    tables = [_table(name, cols[0], header, cols) for name, header, cols in tables]
    steps = [(table[0], lambda path, table=table: write_csv(path, table)) for table in tables]
    try:
        write_all(args.out, steps + plots, args.overwrite)
    except OSError as exc:
        raise InputError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
    print("\n".join(summary))
    print(f"  wrote {', '.join(name for name, _ in steps + plots)} in {args.out}")
    return 0
