"""``charmie-dynamics``: validate a model, forward kinematics of one state, analyse a motion.

Errors in files or inputs are printed as one line ``charmie-dynamics: error: ...`` with exit
status 1 (2 for command-line usage errors), never as a traceback. Every input file is read
through the package's one guard (:mod:`charmie_dynamics.documents`: regular files only, a size
cap, strict UTF-8, every parser exception turned into the package's error); inputs beyond
the model's limits are refused as the dynamics node refuses them
(:mod:`charmie_dynamics.kinematics.limits`; positions against the joint limits only with
``--check-position-limits``), and a result
that holds NaN or infinity is refused (exit 1) instead of printed or written.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Optional, Sequence

import numpy as np

from .. import jit
from ..documents import DocumentError, bounded, parse_json, read_text
from ..dynamics import ExternalWrench, MassMatrixError, inverse_dynamics
from ..dynamics.inverse import Loads
from ..errors import InputError
from ..evaluators.evaluator import NonFiniteLoads
from ..evaluators.loop_evaluator import LoopEvaluator, assembled_evaluator
from ..kinematics import (StateError, forward_kinematics, inputs_from_dict, point_positions,
                          resolve_state)
from ..kinematics.indirect import MechanismRangeError, joint_from_length
from ..kinematics.limits import POSITION_TOLERANCE, VELOCITY_TOLERANCE, InputLimits
from ..mechanisms.auxiliary import auxiliary_segments
from ..mechanisms.closed_chains import ClosedChain, LoopSingularityError
from ..model import load_model
from ..model.actuator_geometry import indirect_joints
from ..model.kinds import MECHANISM_KINDS, items
from ..resources import bundled_model
from .arguments import add_position_limits_argument, check_points, parse_payload
from .loop_reports import independent_state, loop_id_report, loops_summary, solve_report

PROG = "charmie-dynamics"
#: Longest error line printed (a message quoting a hostile input is cut).
MAX_ERROR_LINE = 1000


def read_state(path: Path) -> dict[str, Any]:
    """Read STATE.json: ``{"positions": {...}, "velocities": {...}, "accelerations": {...}}``."""
    data = parse_json(read_text(path, "state file", error=InputError), str(path), error=InputError)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object with positions/velocities/accelerations")
    unknown = set(data) - {"positions", "velocities", "accelerations"}
    if unknown:
        raise InputError(f"{path}: unknown key(s) {bounded(', '.join(sorted(unknown)))}, "
                         "expected positions, velocities, accelerations")
    for key, value in data.items():
        if not isinstance(value, dict):
            raise InputError(f"{path}: {key}: expected an object NAME -> number")
    return data


Inputs = tuple[np.ndarray, np.ndarray, np.ndarray]


def state_inputs(model, path: Optional[Path], check_position_limits: bool) -> Inputs:
    """Input positions, velocities and accelerations from STATE.json (``None``: the defaults),
    refused when a given value is beyond the model's limits (as a trajectory's samples are:
    :func:`charmie_dynamics.trajectories.violation`)."""
    if model.free_flyers:       # inputs are the velocity entries: no pose can be given
        raise InputError(f"{model.source}: body {model.body_names[model.free_flyers[0]]!r} has "
                         "a floating joint (free-flyer): a state file gives no free-flyer pose, "
                         "expected a model without floating joints (free-flyer models: the "
                         "Python API)")
    state = read_state(path) if path else {}
    given = [state.get(key) or {} for key in ("positions", "velocities", "accelerations")]
    inputs = inputs_from_dict(model, *given)            # names and finite numbers first
    bad = InputLimits.of(model).violation(
        given[0], given[1], POSITION_TOLERANCE if check_position_limits else math.inf,
        VELOCITY_TOLERANCE, given[2])
    if bad is not None:
        field = {"position": "positions", "velocity": "velocities",
                 "acceleration": "accelerations"}[bad.quantity]
        raise InputError(f"{path}: {field}.{bad.name}: {bad.value:.6g} {bad.why}")
    return inputs


def _list(a: np.ndarray) -> list:
    return np.asarray(a).tolist()


def _numbers(doc: Any, where: str = "") -> Iterator[tuple[str, float]]:
    """Every number of a JSON-like document with its dotted path."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _numbers(value, f"{where}.{key}" if where else str(key))
    elif isinstance(doc, (list, tuple)):
        for k, value in enumerate(doc):
            yield from _numbers(value, f"{where}[{k}]")
    elif isinstance(doc, float):
        yield where, doc


def check_finite(doc: Any, what: str) -> None:
    """Refuse a result that holds NaN or infinity, naming the first such value."""
    for where, value in _numbers(doc):
        if not math.isfinite(value):
            raise InputError(f"{what}: {where} is {value}: the inputs are too large for a finite "
                             "result, expected inputs within the model's limits; nothing printed")


def print_json(doc: dict[str, Any], what: str, indent: Optional[int]) -> None:
    check_finite(doc, what)
    json.dump(doc, sys.stdout, indent=indent, allow_nan=False)
    sys.stdout.write("\n")


def fk_report(model, inputs: Inputs) -> dict[str, Any]:
    """The JSON document printed by ``fk`` (metres, world frame)."""
    joint_state = resolve_state(model, *inputs)
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


def parse_force(text: str) -> ExternalWrench:
    """``BODY.POINT:FX,FY,FZ[,TX,TY,TZ]`` (N, N m, world frame)."""
    point, sep, values = text.rpartition(":")
    try:
        numbers = [float(v) for v in values.split(",")]
    except ValueError:
        numbers = []
    if not sep or len(numbers) not in (3, 6) or not np.all(np.isfinite(numbers)):
        raise InputError(f"--force {bounded(repr(text), 80)}: expected "
                         "BODY.POINT:FX,FY,FZ[,TX,TY,TZ] (finite numbers, N and N m, world frame)")
    return ExternalWrench(point, numbers[:3], numbers[3:] or (0.0, 0.0, 0.0))


def id_report(model, inputs: Inputs, payloads=(), external=(),
              gravity_only: bool = False) -> dict[str, Any]:
    """The JSON document printed by ``id`` (SI units, wrenches in the world frame)."""
    check_points(model, list(payloads) + list(external))
    loads = inverse_dynamics(model, resolve_state(model, *inputs), payloads=payloads,
                             external=external, gravity_only=gravity_only)
    return {
        "model": model.name,
        "gravity_only": gravity_only,
        "joint_efforts": dict(zip(model.coordinate_names, _list(loads.coordinate_effort))),
        "actuator_forces": dict(zip(model.actuator_names, _list(loads.actuator_force))),
        "spring_forces": dict(zip(loads.spring_names, _list(loads.spring_tension))),
        **wrench_report(model, loads),
    }


def wrench_report(model, loads: Loads) -> dict[str, Any]:
    """``id``'s joint wrenches (world frame, at each joint point) and base reaction."""
    return {
        "joint_wrenches": {name: {"force": _list(loads.joint_force_world[i]),
                                  "torque": _list(loads.joint_torque_world[i])}
                           for i, name in enumerate(model.body_names)},
        "base_reaction": {"body": model.body_names[loads.base_body],
                          "force": _list(loads.base_force_world),
                          "torque": _list(loads.base_torque_world)},
    }


def _loop_inputs(chain: ClosedChain, args: argparse.Namespace) -> Inputs:
    """The independent coordinates' state of a model with loops (cli/loop_reports.py)."""
    inputs = state_inputs(chain.model, args.state, args.check_position_limits)
    state = read_state(args.state) if args.state else {}
    return independent_state(chain, state, inputs, str(args.state))


@contextmanager
def naming_the_state_file(path: Optional[Path]) -> Iterator[None]:
    """A state the model cannot take (an actuator beyond its stroke, a loop that does not
    close, loads that are not finite) is the state file's fault: its error names the file.
    Without a file the defaults are evaluated and the error stands as it is."""
    try:
        yield
    except (StateError, MechanismRangeError, LoopSingularityError, NonFiniteLoads) as exc:
        if path is None:
            raise
        raise InputError(f"{path}: {exc}") from None


def _cmd_id(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    payloads = [parse_payload(p) for p in args.payload]
    external = [parse_force(f) for f in args.force]
    if model.loops is not None:
        check_points(model, payloads + external)
        evaluator = LoopEvaluator(model, payloads, external)
        with naming_the_state_file(args.state):
            report = loop_id_report(evaluator, *_loop_inputs(evaluator.chain, args),
                                    args.gravity_only)
        report.update(wrench_report(model, evaluator.result.loads))
        print_json(report, "id", args.indent)
        return 0
    with naming_the_state_file(args.state):
        inputs = state_inputs(model, args.state, args.check_position_limits)
        report = id_report(model, inputs, payloads, external, args.gravity_only)
    print_json(report, "id", args.indent)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    model = load_model(args.file)
    # assembly and mobility checks before "valid model" is said: the dynamics node's at
    # start, its evaluator built at the default inputs (the loops' guess: the closed chain
    # built with it); a model with a free-flyer, which the node refuses: its loops' alone
    if model.free_flyers:
        chain = ClosedChain.build(model) if model.loops is not None else None
    else:
        evaluator = assembled_evaluator(model, str(args.file))
        chain = evaluator.chain if isinstance(evaluator, LoopEvaluator) else None
    print(f"{args.file}: valid model {model.name!r}: {model.n_bodies} bodies, "
          f"{model.n_coordinates} coordinates, {len(model.actuators)} actuators, "
          + "".join(f"{len(items(model, kind))} {kind.label}, " for kind in MECHANISM_KINDS)
          + f"total mass {model.total_mass:.3f} kg")
    if chain is not None:
        print(f"  loops: independent {', '.join(chain.independent_names)}; dependent "
              f"{', '.join(chain.dependent_names)}\n{loops_summary(chain)}")
    return 0


def _cmd_fk(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    if model.loops is not None:
        # the dependent coordinates as id and the dynamics node solve them (continuation from
        # the assembled branch): a far state could converge on another branch from one guess
        evaluator = LoopEvaluator(model)
        with naming_the_state_file(args.state):
            x = _loop_inputs(evaluator.chain, args)[0]
            rest = np.zeros_like(x)
            q = evaluator(x, rest, rest, gravity_only=True).state.q.copy()
        zero = np.zeros_like(q)
        print_json({**fk_report(model, (q, zero, zero)), "loops": solve_report(evaluator)},
                   "fk", args.indent)
        return 0
    with naming_the_state_file(args.state):
        report = fk_report(model, state_inputs(model, args.state, args.check_position_limits))
    print_json(report, "fk", args.indent)
    return 0


def compile_kernels(model) -> None:
    """Run every compiled algorithm once on ``model``: one state and a batch of two, the
    nodes' evaluator (and a model with loops' LoopEvaluator, its path and the closed
    chain's inverse dynamics) and the simulator's compiled step (so a node's first start
    does not compile them)."""
    from ..dynamics import forward_dynamics, mass_matrix
    from ..evaluators.evaluator import Evaluator
    from ..simulation import simulate
    from ..simulation.actuated_step import compiled_step_reason, held_input_steps
    x, xd, xdd = inputs_from_dict(model)
    for shape in ((), (2,)):
        state = resolve_state(model, *(np.broadcast_to(v, shape + v.shape) for v in (x, xd, xdd)))
        loads = inverse_dynamics(model, state)
        auxiliary_segments(model, loads.placements)
        mass_matrix(model, state.q)
        for method in ("aba", "cholesky"):
            forward_dynamics(model, state.q, state.qd, np.zeros_like(state.q), method=method)
    for joint in indirect_joints(model):
        joint_from_length(joint, np.array(joint.stroke))
    q = resolve_state(model, x, xd, xdd).q
    simulate(model, q, np.zeros_like(x), None, duration=0.002)
    Evaluator(model)                                    # compiles at construction
    if model.loops is not None:                         # the loops' compiled embedding
        from ..dynamics.closed_chain import inverse_dynamics as loop_inverse_dynamics
        loop = LoopEvaluator(model)                     # compiles at construction
        x0 = loop.chain.assembled[loop.chain.independent]
        loop.path(x0[None], np.zeros((1, len(x0))), np.zeros((1, len(x0))))
        loop_inverse_dynamics(loop.chain, x0, np.zeros_like(x0), np.zeros_like(x0))
    if compiled_step_reason(model) is None:
        for method in ("euler", "rk4"):
            held_input_steps(model, q, np.zeros_like(q), np.zeros_like(q), method=method)


def _cmd_compile(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    if not jit.ENABLED:
        print(f"{jit.DISABLED_REASON}: the kernels run as plain Python; nothing to compile")
        return 0
    start = time.perf_counter()
    compile_kernels(model)
    print(f"kernels compiled (or loaded from numba's cache) and run on {model.name} in "
          f"{time.perf_counter() - start:.1f} s; later runs load them from the cache")
    return 0


def _indent(text: str) -> int:
    """``--indent``: 0 to 16 spaces (a huge indent would print gigabytes of blanks)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 16:
        raise argparse.ArgumentTypeError(f"got {bounded(repr(text), 40)}, expected 0 to 16")
    return value


class Command(NamedTuple):
    """A subcommand whose parser and code live in a module of their own."""
    help: str
    module: str
    add_parser: str     #: the module's function adding the command's parser to a subparsers
    needs: str = ""     #: what a failed import of the module means (empty: a broken install)


#: The listing of ``--help`` needs only these lines: a command's module (scipy for identify
#: and dataset, the viewer, the ROS layer) is imported only when that command runs or its own
#: ``--help`` is asked, so that ``--help`` and ``fk`` start in a fraction of the time.
COMMANDS: dict[str, Command] = {
    "analyze": Command("evaluate a motion; write CSV time series and PNG plots",
                       "charmie_dynamics.cli.analyze", "add_analyze_parser"),
    "dataset": Command("sample states within the model's limits; write their efforts, mass "
                       "matrices, poses... as NPZ chunks",
                       "charmie_dynamics.cli.dataset", "add_dataset_parser"),
    "learn": Command("train a feedforward network on a dataset; compare it in closed loop "
                     "with PD and the model's feedforward (needs the 'learn' extra)",
                     "charmie_dynamics.cli.learn", "add_learn_parser"),
    "view": Command("serve a local web page showing the robot (needs the 'view' extra: viser); "
                    "a motion replayed, or live with --ros",
                    "charmie_dynamics.view", "add_view_parser"),
    "export-urdf": Command("write the model as a URDF and a mechanism overlay (overlay.yaml) "
                           "that load back as the same model",
                           "charmie_dynamics.cli.export", "add_export_parser"),
    "record": Command("log a model's efforts along a motion (MCAP or CSV), with optional "
                      "sensor noise", "charmie_dynamics.cli.identify", "add_identify_parsers"),
    "identify": Command("identify the model's masses, inertias, springs and friction from a "
                        "log; write the updated model",
                        "charmie_dynamics.cli.identify", "add_identify_parsers"),
    "base-parameters": Command("print the model's base parameters",
                               "charmie_dynamics.cli.identify", "add_identify_parsers"),
    "excite": Command("optimise an excitation trajectory (Fourier series) for identification; "
                      "write it as a trajectory CSV",
                      "charmie_dynamics.cli.identify", "add_identify_parsers"),
    "study": Command("a design study (sweep, optimize, envelope) of a model file's values",
                     "charmie_dynamics.cli.study", "add_study_parser"),
    "bringup": Command("start the ROS 2 nodes in one process (needs rclpy)",
                       "charmie_dynamics.ros.tools.bringup", "add_bringup_parser",
                       needs="bringup needs ROS 2 (rclpy and the message packages): {exc}. "
                             "Run scripts/setup.sh or source a ROS 2 install."),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: this module's commands in full, the others (:data:`COMMANDS`) as
    stubs that take every argument for :func:`command_parser`."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate-model", help="check a model file and print a summary")
    p.add_argument("file", type=Path)
    p.set_defaults(func=_cmd_validate)
    p = sub.add_parser("fk", help="forward kinematics of one state, as JSON")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--state", type=Path, default=None,
                   help="STATE.json (default: every coordinate 0, actuators at their default)")
    p.add_argument("--indent", type=_indent, default=None,
                   help="indent the JSON output by 0 to 16 spaces")
    add_position_limits_argument(p)
    p.set_defaults(func=_cmd_fk)
    p = sub.add_parser("id", help="inverse dynamics of one state, as JSON (world-frame wrenches)")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--state", type=Path, default=None,
                   help="STATE.json (default: at rest, coordinates 0, actuators at their default)")
    p.add_argument("--payload", action="append", default=[], metavar="BODY.POINT:MASS",
                   help="a point mass in kg carried at a named point (repeatable)")
    p.add_argument("--force", action="append", default=[], metavar="BODY.POINT:FX,FY,FZ[,TX,TY,TZ]",
                   help="an external force/torque on a named point, world frame (repeatable)")
    p.add_argument("--gravity-only", action="store_true",
                   help="gravity compensation: velocities and accelerations taken as zero")
    p.add_argument("--indent", type=_indent, default=None,
                   help="indent the JSON output by 0 to 16 spaces")
    add_position_limits_argument(p)
    p.set_defaults(func=_cmd_id)
    p = sub.add_parser("compile", help="compile the numerical kernels now (numba) and cache them "
                                       "on disk, so that the first node start is fast")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.set_defaults(func=_cmd_compile)
    for name, command in COMMANDS.items():
        # no -h of its own: `COMMAND --help` reaches the command's own parser
        sub.add_parser(name, help=command.help, add_help=False)
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """A parser holding command ``name`` in full, its module imported now."""
    command = COMMANDS[name]
    try:
        module = importlib.import_module(command.module)
    except ImportError as exc:
        if not command.needs:
            raise
        raise InputError(command.needs.format(exc=exc)) from None
    parser = argparse.ArgumentParser(prog=PROG)
    getattr(module, command.add_parser)(parser.add_subparsers(dest="command", required=True))
    return parser


def parse_arguments(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    """The command line parsed: a command of :data:`COMMANDS` is read again by its own parser."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command in COMMANDS:
        parser = command_parser(args.command)
        args, rest = parser.parse_known_args([args.command, *rest])
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if getattr(args, "model", "absent") is None:
        args.model = bundled_model()
    return args


def _terminated(signum, frame):
    raise KeyboardInterrupt


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a service stop, ``timeout``) ends a command as Ctrl-C does: its writers then
    remove what they staged (write_all, write_file, a recording's folder) instead of leaving
    it; bringup installs its own handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is _terminated:   # not bringup's own, kept
            signal.signal(signal.SIGTERM, previous)


def main(argv: Optional[Sequence[str]] = None) -> int:
    with _sigterm_as_interrupt():
        return _main(argv)


def _main(argv: Optional[Sequence[str]]) -> int:
    try:
        args = parse_arguments(argv)    # within: a command's module may be refused (bringup)
        return args.func(args)
    # DocumentError: ModelError, InputError, TrajectoryFileError (files and arguments)
    except (DocumentError, StateError, MechanismRangeError, MassMatrixError,
            LoopSingularityError, NonFiniteLoads) as exc:
        print(f"{PROG}: error: {bounded(exc, MAX_ERROR_LINE)}", file=sys.stderr)
        return 1
    except np.linalg.LinAlgError as exc:
        # a singular or indefinite matrix built from the inputs (identify names its log
        # itself): still their fault, so one line, never a traceback
        print(f"{PROG}: error: {args.command}: linear algebra failed on these inputs "
              f"({bounded(exc, 200)}): expected inputs that leave the problem well posed",
              file=sys.stderr)
        return 1
    except MemoryError:
        print(f"{PROG}: error: out of memory: the model or the input is too large for this "
              "machine", file=sys.stderr)
        return 1
    except BrokenPipeError:            # output piped into a reader that stopped (| head)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:          # Ctrl-C: the writers leave nothing partial (write_all)
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
