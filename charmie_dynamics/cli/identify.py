"""``charmie-dynamics record``, ``identify`` and ``base-parameters``: logs of a model's motion,
and the model's dynamic parameters identified from a log.

* ``record``: the model's efforts along a motion (inverse dynamics plus friction:
  identification/recording.py says why not the integrator), with optional Gaussian noise,
  written as a rosbag2 MCAP folder as the robot records (a name without a suffix; in the
  robot's names and units with ``--joint-map``), one MCAP file (``.mcap``) or CSV (``.csv``):
  /joint_states and /actuator_states (identification/logs.py).
* ``identify``: from a recording of the robot (read as the dynamics node reads its inputs:
  ros/tools/recorded_inputs.py) or a CSV log: base parameters, OLS and weighted LS with standard
  deviations, the physically
  consistent estimate near the model (``--prior-weight``), written as an updated model file
  (``--out``) and a report folder (report.txt, measured vs predicted plots). A URDF model
  is written as its model document (YAML, as the model loader publishes it) with the
  identified values.
* ``base-parameters``: the base parameters' names and expressions.
* ``excite``: an excitation trajectory (identification/excitation.py) as a trajectory CSV
  that ``analyze --trajectory``, ``record --trajectory`` and the trajectory player read.
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Optional

import numpy as np

from ..documents import DEFAULT_MAX_BYTES
from ..errors import InputError
from ..identification.base import base_parameters
from ..identification.excitation import optimise, write_trajectory
from ..identification.logs import ACTUATOR_STATES, JOINT_STATES, Log, log_messages, write_log
from ..identification.model_file import updated_model_text
from ..identification.pipeline import BASE_SAMPLES, Identification, identify, residual_rms
from ..identification.recording import measured_states, record
from ..identification.regressor import parameter_layout
from ..model.model import Model
from ..model.reader import model_from_text, read_model_file
from ..model.urdf import is_urdf
from ..recordings import JOINT_STATE, JOINT_STATE_DEFINITION, write_recording
from ..ros.common.joint_map import JointMap
from ..ros.common.model_source import urdf_as_document
from ..ros.tools.recorded_inputs import read_any_log
from ..ros.tools.robot_inputs import (add_joint_map_argument, add_robot_input_arguments,
                                      joint_map_of, robot_inputs)
from ..trajectories import MAX_DT, MIN_DT, MOTIONS, check_dt, from_csv, input_kinds, motion
from .arguments import add_overwrite_argument
from .output_files import check_file_target, check_output, check_targets, write_all, write_file
from .plots import plot_input_efforts, require_matplotlib

UNITS = {"actuator": "N", "linear": "N", "angular": "N m"}
# identify writes no model that fits its log worse than the model it started from, or whose
# total mass differs by more than this factor (a log in other units, x1000, or a negated
# effort column moves it further), unless --accept-worse.
MAX_MASS_FACTOR = 2.0
#: Most the physically consistent fit's residual RMS may exceed the unconstrained one's (the
#: log's noise), as a factor, plus NOISE_FLOOR (N m or N: a noise-free log's unconstrained
#: residual is rounding)
CONSISTENCY_FACTOR = 3.0
NOISE_FLOOR = 1e-3
# The consistent estimate weighs samples (WLS) and the prior: its plain residual RMS may
# exceed the prior's by rounding on a log the prior already fits; more is a worse fit.
FIT_TOLERANCE = 1e-3


def _nonnegative(option: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0.0 <= value < math.inf:
            raise argparse.ArgumentTypeError(f"{option}: got {text!r}, expected a finite number "
                                             ">= 0")
        return value
    return parse


def _read_log(path: Path, model: Model, args: argparse.Namespace) -> Log:
    """A recording (read as the dynamics node reads its inputs; what it did not use is
    printed) or a CSV log."""
    topics, joint_map = robot_inputs(args, model)
    log, summary = read_any_log(path, model, topics, joint_map, args.max_joint_age)
    if summary:
        print(f"read {path}: {summary}")
    return log


def write_robot_recording(folder: str | Path, model: Model, log: Log, joint_map: JointMap
                          ) -> None:
    """``log`` as the robot would record it: a rosbag2 MCAP folder
    (``recordings.write_recording``) of /joint_states and /actuator_states under the joint
    map's names and units (positions ``(x - offset) / scale``, velocities ``/ scale``, efforts
    times ``effort_scale``), which :func:`read_recording` reads back with the same map."""
    names = model.input_names
    x, xd, effort = log.x, log.xd, log.effort
    out = joint_map.position_factors(names)
    if out is not None:
        scale, offset = out
        x = (x - offset) / scale
        xd = None if xd is None else xd / scale
    effort_scale = joint_map.effort_out(names)
    if effort_scale is not None:
        effort = effort * effort_scale
    definition = (JOINT_STATE, JOINT_STATE_DEFINITION)
    write_recording(folder, {JOINT_STATES: definition, ACTUATOR_STATES: definition},
                    log_messages(model, Log(log.t, x, xd, effort),
                                 joint_map.to_hardware(names)))


def check_folder_target(path: Path) -> None:
    """A new recording folder: never an existing file, link or non-empty folder, with or
    without --overwrite (a recording is a folder of the user's; rosbag2 refuses one too)."""
    if not path.name or path.name in (".", ".."):
        raise InputError(f"--out {str(path)!r}: expected a new folder's name")
    check_output(path.parent)
    if path.is_symlink() or path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise InputError(f"--out {path} exists: a recording folder is never replaced "
                         "(--overwrite applies to files); give a new name")


def _cmd_record(args: argparse.Namespace) -> int:
    folder = args.out.suffix == ""            # a rosbag2 folder, as the robot records
    if args.out.suffix not in ("", ".mcap", ".csv"):
        raise InputError(f"--out {args.out}: expected a folder's name (no suffix: a rosbag2 "
                         "recording), NAME.mcap or NAME.csv")
    if folder:
        check_folder_target(args.out)
    else:
        check_file_target(args.out, args.overwrite)
    model = read_model_file(args.model)[0]
    joint_map = joint_map_of(args, model)
    if args.joint_map and not folder:
        raise InputError(f"--joint-map: --out {args.out} is a file, which holds the model's "
                         "names; expected a recording folder (a name without a suffix) for "
                         "the robot's")
    traj = from_csv(model, str(args.trajectory)) if args.trajectory else \
        motion(model, args.motion, args.dt)
    log = record(model, traj, args.position_noise, args.effort_noise, args.seed)
    if folder:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_robot_recording(args.out, model, log, joint_map)
    else:
        write_file(args.out, lambda path: write_log(path, model, log), args.overwrite)
    print(f"wrote {args.out}: {len(log.t)} samples over {log.t[-1] - log.t[0]:g} s of "
          f"{model.name}; noise (std) {args.position_noise:g} on positions (rad or m), "
          f"{args.effort_noise:g} on efforts (N m or N)")
    return 0


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip()
                     for r in rows)


def report_text(model: Model, result: Identification, source: str,
                fit: dict[str, np.ndarray], holdout: Optional[dict[str, np.ndarray]],
                prior_weight: float) -> str:
    """The report: base parameters with standard deviations, residual RMS per input."""
    base = result.base
    P = base.projection
    beta_c, beta_0 = P @ result.consistent.pi, P @ result.prior
    lines = [f"identification of {model.name} from {source}: {result.samples} samples, "
             f"prior weight {prior_weight:g}",
             f"base parameters identified by the log: {base.rank} (pivoted QR of its regressor, "
             f"|R_kk|/|R_00| > {base.tolerance:g}), of {result.structural_rank} identifiable "
             f"by any motion ({BASE_SAMPLES} random states) and {len(result.layout)} "
             "parameters; SI units",
             f"consistent estimate: every body physically consistent: "
             f"{result.bodies_consistent()}; ADMM: {result.consistent.iterations} iterations, "
             f"converged to 1e-6: {result.consistent.converged}", ""]
    rows = [["base parameter", "OLS", "std", "WLS", "std", "consistent", "prior"]]
    for k, name in enumerate(base.base_names):
        rows.append([name] + [f"{v:.6g}" for v in (
            result.ols.beta[k], result.ols.std[k], result.wls.beta[k], result.wls.std[k],
            beta_c[k], beta_0[k])])
    lines += [_table(rows), "", "residual RMS per input (N m or N):"]
    kinds = input_kinds(model)
    header = ["input", "unit"] + [f"fit {k}" for k in fit] + \
        ([f"holdout {k}" for k in holdout] if holdout else [])
    rows = [header]
    for i, name in enumerate(model.input_names):
        rows.append([name, UNITS[kinds[i]]] + [_rms(v[i]) for v in fit.values()]
                    + ([_rms(v[i]) for v in holdout.values()] if holdout else []))
    lines += [_table(rows), "", "base parameters as sums of the full parameters:"]
    lines += [f"  {e}" for e in base.expressions()]
    return "\n".join(lines) + "\n"


def _rms(value: float) -> str:
    return "no efforts" if math.isnan(value) else f"{value:.4g}"


def _total_rms(rms: np.ndarray) -> float:
    """Over the inputs whose efforts are logged (NaN: not logged)."""
    return float(np.sqrt(np.nanmean(rms ** 2)))


def acceptance_problems(model: Model, identified: Model, result: Identification,
                        fit: dict[str, np.ndarray],
                        holdout: Optional[dict[str, np.ndarray]] = None) -> list[str]:
    """Why the identified model must not replace ``model`` silently; empty when it may. The
    holdout log, when given, must be predicted no worse either: a log whose efforts are wrong
    (negated, another unit) can be fitted better than the model fits it, never a clean one."""
    # ADMM's convergence is reported, not gated: its estimate is consistent by construction,
    # and the README's own short excitation stops at the iteration cap with a good fit
    problems = []
    # the unconstrained fit's residual is the log's noise and unmodelled effects; a
    # physically consistent model (positive masses, inertias) that leaves many times more
    # explains no robot: efforts negated, in another unit, or of another machine
    free_rms = min(_total_rms(fit["OLS"]), _total_rms(fit["WLS"]))
    consistent_rms = _total_rms(fit["consistent"])
    if not consistent_rms <= CONSISTENCY_FACTOR * free_rms + NOISE_FLOOR:
        problems.append(f"no physically consistent model explains the log: its residual RMS "
                        f"{consistent_rms:.4g} is over {CONSISTENCY_FACTOR:g} times the "
                        f"unconstrained fit's {free_rms:.4g} (efforts negated, in another unit, "
                        "or of another robot?)")
    new_rms, prior_rms = _total_rms(fit["consistent"]), _total_rms(fit["prior"])
    if not new_rms <= prior_rms * (1.0 + FIT_TOLERANCE):
        problems.append(f"it fits the log worse than the model (residual RMS {new_rms:.4g} "
                        f"vs {prior_rms:.4g})")
    if holdout is not None:
        new_rms, prior_rms = _total_rms(holdout["consistent"]), _total_rms(holdout["prior"])
        if not new_rms <= prior_rms * (1.0 + FIT_TOLERANCE):
            problems.append(f"it predicts the holdout log worse than the model (residual RMS "
                            f"{new_rms:.4g} vs {prior_rms:.4g})")
    old_mass, new_mass = float(np.sum(model.mass)), float(np.sum(identified.mass))
    if old_mass > 0 and not 1.0 / MAX_MASS_FACTOR <= new_mass / old_mass <= MAX_MASS_FACTOR:
        problems.append(f"it changes the total mass from {old_mass:.4g} kg to {new_mass:.4g} "
                        f"kg (expected within a factor {MAX_MASS_FACTOR:g})")
    return problems


#: What identify writes into its report folder (holdout.png only with --holdout)
REPORT_FILES = ("report.txt", "fit.png", "holdout.png")


def _cmd_identify(args: argparse.Namespace) -> int:
    require_matplotlib("identify")
    check_file_target(args.out, args.overwrite)
    report_dir: Path = args.report or args.out.with_name(args.out.stem + "_report")
    check_output(report_dir)
    check_targets(report_dir, REPORT_FILES[:2 if args.holdout is None else 3], args.overwrite)
    model, text = read_model_file(args.model)
    if is_urdf(text):
        # the loader's model document of the URDF (the same model) is edited and written as
        # YAML: a URDF holds no springs or actuator friction to write back
        text = urdf_as_document(text, args.model, None, DEFAULT_MAX_BYTES)
    log = _read_log(args.log, model, args)
    state, effort, t = measured_states(model, log, str(args.log))
    try:
        result = identify(model, state, effort, args.prior_weight)
    except np.linalg.LinAlgError as exc:
        raise InputError(f"{args.log}: the log does not determine the parameters (linear "
                         f"algebra: {exc}): expected a motion that excites them and efforts "
                         "that are not all zero") from None
    pi = result.consistent.pi
    fit = {"OLS": result.per_input(result.ols.residual_rms),
           "WLS": result.per_input(result.wls.residual_rms),
           "consistent": result.per_input(result.consistent.residual_rms),
           "prior": residual_rms(model, result.prior, state, effort)[1]}
    holdout = None
    series = {"fit": (t - t[0], effort, residual_rms(model, pi, state, effort)[0])}
    if args.holdout is not None:
        h_state, h_effort, h_t = measured_states(model, _read_log(args.holdout, model, args),
                                                 str(args.holdout))
        predicted, rms = residual_rms(model, pi, h_state, h_effort)
        holdout = {"consistent": rms,
                   "prior": residual_rms(model, result.prior, h_state, h_effort)[1]}
        series["holdout"] = (h_t - h_t[0], h_effort, predicted)
    new_text = updated_model_text(text, str(args.model), model, result.layout, pi)
    identified = model_from_text(new_text, str(args.out))          # it must load back
    problems = acceptance_problems(model, identified, result, fit, holdout)
    if problems and not args.accept_worse:
        raise InputError(f"{args.log}: {args.out} not written: {'; '.join(problems)} "
                         "(--accept-worse writes it anyway)")
    report = report_text(model, result, str(args.log), fit, holdout, args.prior_weight)
    if problems:
        report = f"written with --accept-worse although {'; '.join(problems)}\n\n{report}"
    # the report first, staged and moved in whole; the model last, renamed into place
    write_all(report_dir, [("report.txt", lambda path: path.write_text(report))] + [
        (f"{name}.png", lambda path, name=name, data=data: plot_input_efforts(
            path, data[0], model, {"measured": data[1], "predicted": data[2]},
            f"{model.name}: measured and predicted efforts ({name} log)"))
        for name, data in series.items()], args.overwrite)
    write_file(args.out, lambda path: path.write_text(new_text), args.overwrite)
    print(f"wrote {args.out} and {report_dir}/ (report.txt, "
          f"{', '.join(f'{k}.png' for k in series)})")
    if problems:
        print(f"written with --accept-worse although {'; '.join(problems)}")
    if not result.consistent.converged:
        # not gated: the estimate is consistent by construction and fits no worse than the
        # prior (checked above), only not the optimum
        print(f"note: ADMM stopped at its cap of {result.consistent.iterations} iterations "
              "before converging to 1e-6: the estimate is physically consistent and fits "
              "the log no worse than the model, but is not the optimum (a longer, richer "
              "excitation converges)")
    total = {k: _total_rms(v) for k, v in fit.items()}
    print("residual RMS over all inputs, fit: " + ", ".join(f"{k} {v:.4g}"
                                                             for k, v in total.items()))
    if holdout:
        print("residual RMS over all inputs, holdout: " + ", ".join(
            f"{k} {_total_rms(v):.4g}" for k, v in holdout.items()))
    return 0


def _cmd_base_parameters(args: argparse.Namespace) -> int:
    model = read_model_file(args.model)[0]
    layout = parameter_layout(model)
    base = base_parameters(model, layout.names, args.samples)
    print(f"{model.name}: {base.rank} base parameters of {len(layout)} (pivoted QR on "
          f"{args.samples} random states, tolerance {base.tolerance:g})")
    for expression in base.expressions():
        print(f"  {expression}")
    return 0


def _cmd_excite(args: argparse.Namespace) -> int:
    check_file_target(args.out, args.overwrite)
    model = read_model_file(args.model)[0]
    check_dt(args.dt)
    layout = parameter_layout(model)
    base = base_parameters(model, layout.names, BASE_SAMPLES)
    result = optimise(model, base, args.period, args.harmonics, args.acceleration_ratio,
                      args.evaluations, seed=args.seed)
    written = []
    write_file(args.out, lambda path: written.append(write_trajectory(
        str(path), model, result.series, args.dt, args.periods)), args.overwrite)
    traj = written[0]
    print(f"wrote {args.out}: {len(traj.t)} samples over {traj.t[-1]:g} s; condition number "
          f"of the column-normalised base regressor ({base.rank} base parameters): "
          f"{result.initial_condition:.4g} for the random start, {result.final_condition:.4g} "
          f"after {result.evaluations} evaluations")
    return 0


def _positive_int(option: str, low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{option}: got {text!r}, expected a whole number "
                                             f"from {low} to {high}")
        return value
    return parse


def _positive(option: str, low: float, high: float):
    def parse(text: str) -> float:
        value = _nonnegative(option)(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{option}: got {text!r}, expected a number in "
                                             f"[{low:g}, {high:g}]")
        return value
    return parse


def add_identify_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("record")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--motion", choices=sorted(MOTIONS), default="validation",
                     help="a reference motion of the papers (default: validation)")
    src.add_argument("--trajectory", type=Path, help="a trajectory CSV instead (e.g. from excite)")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--dt", type=float, default=0.01,
                   help=f"sample period of --motion, s, in [{MIN_DT:g}, {MAX_DT:g}]")
    p.add_argument("--position-noise", type=_nonnegative("--position-noise"), default=0.0,
                   help="std of Gaussian noise on the positions, rad or m (default 0)")
    p.add_argument("--effort-noise", type=_nonnegative("--effort-noise"), default=0.0,
                   help="std of Gaussian noise on the efforts, N m or N (default 0)")
    p.add_argument("--seed", type=int, default=0, help="seed of the noise")
    p.add_argument("--out", type=Path, required=True,
                   help="a name without a suffix: a rosbag2 MCAP folder, as the robot records "
                        "(a new folder); NAME.mcap: one MCAP file; NAME.csv: CSV")
    add_joint_map_argument(p)
    add_overwrite_argument(p)
    p.set_defaults(func=_cmd_record)
    p = sub.add_parser("identify")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--log", type=Path, required=True,
                   help="a recording (rosbag2 folder, .mcap or .db3) or a CSV log (see README)")
    p.add_argument("--holdout", type=Path, default=None,
                   help="a second log, not fitted, to check the predictions on")
    add_robot_input_arguments(p)
    p.add_argument("--prior-weight", type=_nonnegative("--prior-weight"), default=0.01,
                   help="how many samples' worth of weight keep each parameter near the "
                        "model where the log says little (default 0.01)")
    p.add_argument("--out", type=Path, required=True,
                   help="the updated model file (YAML; for a URDF --model, its model document)")
    p.add_argument("--report", type=Path, default=None,
                   help="report folder (default: beside --out, named OUT_report)")
    p.add_argument("--accept-worse", action="store_true",
                   help="write the model even when it fits the log worse than the "
                        "model or changes its total mass by more than a "
                        f"factor {MAX_MASS_FACTOR:g} (said in the report)")
    add_overwrite_argument(p)
    p.set_defaults(func=_cmd_identify)
    p = sub.add_parser("base-parameters")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--samples", type=_positive_int("--samples", 10, 100_000),
                   default=BASE_SAMPLES, help=f"random states of the QR (default {BASE_SAMPLES})")
    p.set_defaults(func=_cmd_base_parameters)
    p = sub.add_parser("excite")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--period", type=_positive("--period", 1.0, 600.0), default=10.0,
                   help="period of the series, s (default 10)")
    p.add_argument("--harmonics", type=_positive_int("--harmonics", 2, 20), default=5,
                   help="harmonics per input (default 5)")
    p.add_argument("--acceleration-ratio", type=_positive("--acceleration-ratio", 0.01, 100.0),
                   default=2.0, help="acceleration limit of each input as its velocity limit "
                                     "times this, per s (default 2)")
    p.add_argument("--evaluations", type=_positive_int("--evaluations", 1, 100_000),
                   default=400, help="budget of condition-number evaluations (default 400)")
    p.add_argument("--dt", type=float, default=0.01,
                   help=f"sample period of the file, s, in [{MIN_DT:g}, {MAX_DT:g}]")
    p.add_argument("--periods", type=_positive_int("--periods", 1, 100), default=1,
                   help="periods written (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random start")
    p.add_argument("--out", type=Path, required=True, help="trajectory CSV to write")
    add_overwrite_argument(p)
    p.set_defaults(func=_cmd_excite)
