"""``charmie-dynamics analyze``: evaluate a whole motion offline, write CSV time series and plots."""
from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np

from ..kinematics import forward_kinematics, point_positions, resolve_state
from ..mechanisms.auxiliary import auxiliary_segments
from ..model import load_model
from ..trajectories import MOTIONS, Trajectory, from_csv


def add_analyze_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analyze", help="evaluate a motion; write CSV time series and PNG plots")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--motion", choices=sorted(MOTIONS), default="validation",
                     help="a reference motion of the papers (default: validation, seed 000 sec. 6)")
    src.add_argument("--trajectory", type=Path, help="a trajectory CSV instead (see README)")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--out", type=Path, default=Path("charmie_results"), help="output directory")
    p.add_argument("--dt", type=float, default=0.01, help="sample period of --motion, s")
    p.add_argument("--point", default="body_12a.D12a", help="point to track (BODY.POINT)")
    p.set_defaults(func=run_analyze)


def _write_csv(path: Path, header: list[str], columns: list[np.ndarray]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(np.column_stack(columns).tolist())


def _plot(path: Path, t: np.ndarray, series: dict[str, np.ndarray], ylabel: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, y in series.items():
        ax.plot(t, y, label=label)
    ax.set_xlabel("time [s]")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_analyze(args: argparse.Namespace) -> int:
    from .main import InputError

    model = load_model(args.model)
    if args.trajectory is not None:
        traj: Trajectory = from_csv(model, str(args.trajectory))
        source = str(args.trajectory)
    else:
        if not 0 < args.dt <= 0.5:
            raise InputError(f"--dt {args.dt}: expected a sample period in (0, 0.5] s")
        traj = MOTIONS[args.motion](model, args.dt)
        source = f"motion '{args.motion}'"
    try:
        model.point(args.point)
    except KeyError as exc:
        raise InputError(f"--point: {exc.args[0]}") from None
    start = time.perf_counter()
    state = resolve_state(model, traj.x, traj.xd, traj.xdd)
    placements = forward_kinematics(model, state.q)
    point = point_positions(model, placements, [args.point])[args.point]
    segments = auxiliary_segments(model, placements)
    elapsed = time.perf_counter() - start
    args.out.mkdir(parents=True, exist_ok=True)
    n = len(traj.t)
    # actuator lengths are among the auxiliary segments (their length equals the input)
    header = (["time"] + [f"{args.point}.{a}" for a in "xyz"] + list(model.coordinate_names)
              + [f"{s.name}.length" for s in segments])
    _write_csv(args.out / "kinematics.csv", header,
               [traj.t, point, state.q] + [s.length for s in segments])
    _plot(args.out / "claw_position.png", traj.t,
          {f"{a} [m]": point[:, k] for k, a in enumerate("xyz")}, "position [m]",
          f"{args.point} in the world frame ({source})")
    print(f"{model.name}: {source}, {n} samples over {traj.t[-1] - traj.t[0]:.2f} s; "
          f"kinematics in {elapsed * 1e3:.1f} ms ({elapsed / n * 1e6:.1f} us per sample, batched)")
    print(f"  {args.point} start [{', '.join(f'{v:+.4f}' for v in point[0])}] m, "
          f"end [{', '.join(f'{v:+.4f}' for v in point[-1])}] m")
    for name, coord in model.driven_coordinates.items():
        k = model.coordinate(name)
        print(f"  {coord} {state.actuator_length[:, model.actuator_names.index(coord)].min():.4f}"
              f"..{state.actuator_length[:, model.actuator_names.index(coord)].max():.4f} m -> "
              f"{name} {state.q[:, k].min():+.4f}..{state.q[:, k].max():+.4f}")
    print(f"  wrote {args.out / 'kinematics.csv'} and {args.out / 'claw_position.png'}")
    return 0
