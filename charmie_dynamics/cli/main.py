"""``charmie-dynamics``: validate a model, forward kinematics of one state, analyse a motion.

Errors in files or inputs are printed as one line ``charmie-dynamics: error: ...`` with exit
status 1 (2 for command-line usage errors), never as a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from ..kinematics import StateError, forward_kinematics, inputs_from_dict, point_positions, \
    resolve_state
from ..mechanisms.auxiliary import auxiliary_segments
from ..mechanisms.indirect import MechanismRangeError
from ..model import ModelError, load_model
from ..resources import bundled_model
from ..trajectories import TrajectoryFileError
from .analyze import add_analyze_parser

PROG = "charmie-dynamics"


class InputError(ValueError):
    """A bad input file for the CLI."""


def read_state(path: Path) -> dict[str, Any]:
    """Read STATE.json: ``{"positions": {...}, "velocities": {...}, "accelerations": {...}}``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read the state file: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object with positions/velocities/accelerations")
    unknown = set(data) - {"positions", "velocities", "accelerations"}
    if unknown:
        raise InputError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}, expected "
                         "positions, velocities, accelerations")
    for key, value in data.items():
        if not isinstance(value, dict):
            raise InputError(f"{path}: {key}: expected an object NAME -> number")
    return data


def _list(a: np.ndarray) -> list:
    return np.asarray(a).tolist()


def fk_report(model, state: dict[str, Any]) -> dict[str, Any]:
    """The JSON document printed by ``fk`` (metres, world frame)."""
    x, xd, xdd = inputs_from_dict(model, state.get("positions"), state.get("velocities"),
                                  state.get("accelerations"))
    joint_state = resolve_state(model, x, xd, xdd)
    placements = forward_kinematics(model, joint_state.q)
    frames = {
        name: {"parent": model.bodies[i].parent,
               "rotation": _list(placements.rotation_world[i]),
               "origin": _list(placements.origin_world[i])}
        for i, name in enumerate(model.body_names)}
    points = {k: _list(v) for k, v in point_positions(model, placements).items()}
    auxiliary = {s.name: {"kind": s.kind, "attached_to": model.body_names[s.body],
                          "start": _list(s.start), "end": _list(s.end),
                          "length": float(s.length), "rotation": _list(s.rotation)}
                 for s in auxiliary_segments(model, placements)}
    coordinates = dict(zip(model.coordinate_names, _list(joint_state.q)))
    return {"model": model.name, "coordinates": coordinates, "frames": frames,
            "points": points, "auxiliary": auxiliary}


def _cmd_validate(args: argparse.Namespace) -> int:
    model = load_model(args.file)
    print(f"{args.file}: valid model {model.name!r}: {model.n_bodies} bodies, "
          f"{model.n_coordinates} coordinates, {len(model.actuators)} actuators, "
          f"{len(model.springs)} springs, {len(model.balancers)} balancers, "
          f"total mass {model.total_mass:.3f} kg")
    return 0


def _cmd_fk(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    state = read_state(args.state) if args.state else {}
    json.dump(fk_report(model, state), sys.stdout, indent=args.indent)
    sys.stdout.write("\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate-model", help="check a model file and print a summary")
    p.add_argument("file", type=Path)
    p.set_defaults(func=_cmd_validate)
    p = sub.add_parser("fk", help="forward kinematics of one state, as JSON")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--state", type=Path, default=None,
                   help="STATE.json (default: every coordinate 0, actuators at their default)")
    p.add_argument("--indent", type=int, default=None, help="indent the JSON output")
    p.set_defaults(func=_cmd_fk)
    add_analyze_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "model", "absent") is None:
        args.model = bundled_model()
    try:
        return args.func(args)
    except (ModelError, StateError, InputError, MechanismRangeError, TrajectoryFileError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
