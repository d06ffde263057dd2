"""``charmie-dynamics analyze`` on a model with loops: the motions of seed 002
section 3.5 on the loops' two independent (actuated) coordinates, evaluated by constraint
embedding (dynamics/closed_chain.py).

* ``seed002-eq35``: eq. 22a, theta(t) = theta(0) + (theta(T) - theta(0)) / T
  (t - T / (2 pi) sin(2 pi t / T)), with eq. 35's data: 30 -> 90 deg and 30 -> 70.3 deg,
  T = 20 s, sampled every ``--dt``: the actuated efforts (inverse dynamics, with
  ``--payload``), the dependent coordinates and Newton-Raphson's iterations per sample
  (warm-started from the last one).
* ``--trajectory FILE``: the same for a trajectory CSV of the independent coordinates.
* ``seed002-free-fall``: eq. 36, from rest at 80 and 70 deg, unactuated, integrated by RK4
  with a fixed 1 ms step for up to 3 s; stops at the singular configuration (the condition
  number of the dependent coordinates' constraint Jacobian above the closed chain's limit)
  and reports the time (the paper: about 1.4 s).
* ``seed002-scraping``: seed 002 sec. 4.4, the carpet-scraping machine
  (config/examples/scraping_machine.yaml): the one independent coordinate (the crank) turned
  at a constant 45 rpm (4.712 rad/s) for one revolution (4/3 s) from its assembled angle,
  sampled every ``--dt`` (the last sample at or before 4/3 s): the driving torque (the paper's Fig.
  20, whose values are missing
  from our copy) and its split into the statics against gravity, tau(q, 0, 0), and the rest
  (the torque without gravity, as in a horizontal plane); the cut joints' multipliers, every
  coordinate, every named point's path, Newton-Raphson's iterations, and the power balance
  tau theta_dot against dE/dt (central differences of the sampled energy).
* ``seed003-parabola``: seed 003 sec. 6.4's platform path on a parallel mechanism (the
  IRSBot-2), by the limbs' inverse kinematics: cli/platform_analysis.py.

Returns the tables (name, header, columns) and plot steps for analyze.py to write.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..dynamics import closed_chain as cc
from ..dynamics.inverse import Payload
from ..errors import InputError
from ..evaluators.loop_evaluator import LoopEvaluator, PathError
from ..kinematics.forward import forward_kinematics, point_positions
from ..kinematics.limits import POSITION_TOLERANCE
from ..mechanisms.closed_chains import ClosedChain
from ..model.model import Model
from ..trajectories import EQ35, EQ36, inputs_from_csv, sine_ramp
from .platform_analysis import platform_analysis
from .plots import plot_paths, plot_series

FREE_FALL_STEP, FREE_FALL_DURATION = 1e-3, 3.0     # s
SCRAPING_RPM = 45.0                                # seed 002 sec. 4.4: the crank's speed
LOOP_MOTIONS = ("seed002-eq35", "seed002-free-fall", "seed002-scraping", "seed003-parabola")
#: How many independent coordinates each seed 002 motion drives.
DRIVEN = {"seed002-eq35": 2, "seed002-free-fall": 2, "seed002-scraping": 1}
WELL_CONDITIONED = 1e2        # condition number up to which the free fall's energy is reported

Table = tuple[str, list[str], list[np.ndarray]]
Step = tuple[str, Callable[[Path], None]]


def _chain(model: Model, motion: str) -> ClosedChain:
    chain = ClosedChain.build(model)
    if motion not in LOOP_MOTIONS:
        raise InputError(f"--motion {motion}: {model.name} has loops, expected one of "
                         f"{', '.join(LOOP_MOTIONS)}")
    if motion in DRIVEN and len(chain.independent) != DRIVEN[motion]:
        raise InputError(f"--motion {motion}: drives {DRIVEN[motion]} independent "
                         f"coordinate(s) ({'the crank' if DRIVEN[motion] == 1 else 'the five-bar'}"
                         f"), {model.name} has {len(chain.independent)} "
                         f"({', '.join(chain.independent_names)})")
    return chain


def loop_analysis(model: Model, motion: str, dt: float, payloads: Sequence[Payload] = (),
                  check_position_limits: bool = False
                  ) -> tuple[list[Table], list[Step], list[str]]:
    """Tables, plots and summary lines of ``motion`` (module docstring) on ``model``;
    ``payloads``: carried along eq. 35's motion (the other two motions take none);
    ``check_position_limits``: eq. 35's solved coordinates held to their joint limits
    (:func:`dependent_limits`)."""
    chain = _chain(model, motion)
    if payloads and motion != "seed002-eq35":
        raise InputError(f"--payload: --motion {motion} takes no payload, expected "
                         "--motion seed002-eq35 or a --trajectory file")
    if motion == "seed003-parabola":
        return platform_analysis(chain, dt)
    if motion == "seed002-eq35":
        (a0, a1), (b0, b1), T = EQ35
        t = np.arange(0.0, T + dt / 2, dt)
        ramps = [sine_ramp(t, math.radians(s), math.radians(e), T)
                 for s, e in ((a0, a1), (b0, b1))]
        x, xd, xdd = (np.stack([r[k] for r in ramps], axis=1) for k in range(3))
        return _torques(LoopEvaluator(model, payloads), t, x, xd, xdd, "seed 002 eqs. 22a, 35",
                        check_position_limits)
    if motion == "seed002-scraping":
        return _scraping(chain, dt)
    return _free_fall(chain)


def trajectory_analysis(model: Model, path: str, check_position_limits: bool,
                        payloads: Sequence[Payload] = ()
                        ) -> tuple[list[Table], list[Step], list[str]]:
    """A trajectory CSV of the loops' independent coordinates (``inputs_from_csv``: those
    columns only, the dependent ones are solved) evaluated sample by sample."""
    evaluator = LoopEvaluator(model, payloads)
    traj = inputs_from_csv(model, path, evaluator.input_names, check_position_limits)
    return _torques(evaluator, traj.t, traj.x, traj.xd, traj.xdd, f"--trajectory {path}",
                    check_position_limits)


def dependent_limits(chain: ClosedChain, t: np.ndarray, q: np.ndarray) -> str:
    """The first sample where a dependent (solved) coordinate of ``q`` (samples, n) is beyond
    its joint limits by more than the dynamics node's tolerance, in words ("" if none)."""
    lower, upper = chain.model.compiled.coordinate_limits
    for c in chain.dependent:
        over = (q[:, c] < lower[c] - POSITION_TOLERANCE) | (q[:, c] > upper[c] + POSITION_TOLERANCE)
        if np.any(over):
            k = int(np.argmax(over))
            return (f"sample {k} (t = {t[k]:.6g} s): the dependent coordinate "
                    f"{chain.model.coordinate_names[c]} = {q[k, c]:.6g} (solved from the loops) "
                    f"is beyond its joint limits [{lower[c]:.6g}, {upper[c]:.6g}] by more than "
                    f"{POSITION_TOLERANCE:g} (SI units)")
    return ""


def _torques(evaluator: LoopEvaluator, t: np.ndarray, x: np.ndarray, xd: np.ndarray,
             xdd: np.ndarray, title: str, check_position_limits: bool = False
             ) -> tuple[list[Table], list[Step], list[str]]:
    """The efforts, coordinates, multipliers and Newton-Raphson iterations of every sample
    of the independent coordinates (x, xd, xdd: (samples, independent)), warm-started from
    the last sample's solution as the dynamics node evaluates them, in one kernel call
    (LoopEvaluator.path, evaluators/loop_evaluator.py)."""
    chain = evaluator.chain
    names, rows = chain.model.coordinate_names, chain.rows.names
    ind = evaluator.input_names
    try:
        path = evaluator.path(x, xd, xdd)      # one kernel call for every sample
    except PathError as exc:
        k = exc.sample
        raise InputError(f"{title}: sample {k} (t = {t[k]:.6g} s): {exc}") from None
    q, effort, lam = path.q, path.efforts, path.multipliers
    beyond = dependent_limits(chain, t, q)
    if beyond and check_position_limits:
        raise InputError(f"{title}: --check-position-limits: {beyond}")
    iterations = path.iterations.sum(axis=1).astype(float)
    residual = path.residual.max(axis=1)
    tables = [("kinematics.csv", ["time"] + list(names) + ["newton_iterations", "residual"],
               [t, q, iterations, residual]),
              ("loads.csv", ["time"] + [f"{c}.effort" for c in ind] + list(rows),
               [t, effort, lam])]
    plots = [("joint_angles.png", lambda p: plot_series(
                 p, t, {f"{c} [deg]": np.degrees(q[:, k]) for k, c in enumerate(names)},
                 "angle [deg]", f"{chain.model.name}: coordinates ({title})")),
             ("joint_efforts.png", lambda p: plot_series(
                 p, t, {f"{c} [N m]": effort[:, k] for k, c in enumerate(ind)},
                 "torque [N m]", f"{chain.model.name}: actuated torques ({title})")),
             ("newton_iterations.png", lambda p: plot_series(
                 p, t, {"iterations": iterations}, "Newton-Raphson iterations",
                 f"warm-started per sample ({title})"))]
    counts = np.bincount(iterations.astype(int)[1:])
    summary = [f"{chain.model.name}: {title}, {len(t)} samples over {t[-1] - t[0]:g} s "
               f"(dt {np.min(np.diff(t)):g} to {np.max(np.diff(t)):g} s)"]
    if beyond:
        summary.append(f"  WARNING: {beyond} (--check-position-limits makes it an error)")
    summary += [f"  {c} torque {effort[:, k].min():+.3f}..{effort[:, k].max():+.3f} N m"
                for k, c in enumerate(ind)]
    summary.append("  Newton-Raphson iterations per sample after the first: " + ", ".join(
        f"{n}: {c}" for n, c in enumerate(counts) if c) + f"; max residual {residual.max():.2g}")
    return tables, plots, summary


def _free_fall(chain: ClosedChain) -> tuple[list[Table], list[Step], list[str]]:
    sim = cc.simulate(chain, np.radians(EQ36), np.zeros(2), FREE_FALL_DURATION, FREE_FALL_STEP)
    t, names = sim.t, chain.model.coordinate_names
    tables = [("simulation.csv", ["time"] + list(names) + [f"{c}.rate" for c in names]
               + ["energy", "newton_iterations", "condition"],
               [t, sim.q, sim.qd, sim.energy, sim.iterations, sim.condition])]
    title = "free fall, seed 002 eq. 36"
    plots = [("free_fall_angles.png", lambda p: plot_series(
                 p, t, {f"{c} [deg]": np.degrees(sim.q[:, k]) for k, c in enumerate(names)},
                 "angle [deg]", f"{chain.model.name}: {title}")),
             ("free_fall_energy.png", lambda p: plot_series(
                 p, t, {"kinetic + potential [J]": sim.energy}, "energy [J]",
                 f"{chain.model.name}: {title}, RK4 {FREE_FALL_STEP * 1e3:g} ms"))]
    end = (f"stopped at t = {t[-1]:.3f} s: {sim.stopped}" if sim.stopped is not None else
           f"no singular configuration within {FREE_FALL_DURATION:g} s")
    calm = sim.condition <= WELL_CONDITIONED
    calm_end = t[calm][-1] if calm[0] else t[0]
    summary = [f"{chain.model.name}: {title}, RK4 step {FREE_FALL_STEP:g} s", f"  {end}",
               f"  energy {sim.energy[0]:.6f} J at start; drift {np.ptp(sim.energy[calm]):.3g} J "
               f"while the condition number stays <= {WELL_CONDITIONED:g} (to t = "
               f"{calm_end:.3f} s), {np.ptp(sim.energy):.3g} J in all (near the singularity "
               "the motion outruns the fixed step)",
               f"  Newton-Raphson iterations per step: at most {sim.iterations.max()}, "
               f"{np.mean(sim.iterations[1:]):.2f} on average"]
    return tables, plots, summary


def _scraping(chain: ClosedChain, dt: float) -> tuple[list[Table], list[Step], list[str]]:
    """The crank at 45 rpm over one revolution (module docstring)."""
    model = chain.model
    w = 2 * math.pi * SCRAPING_RPM / 60.0
    t = np.arange(0.0, 2 * math.pi / w * (1 + 1e-12), dt)       # the last sample <= 4/3 s
    theta = chain.assembled[chain.independent[0]] + w * t
    names, rows = model.coordinate_names, chain.rows.names
    k, n = len(t), model.n_coordinates
    q, lam = np.empty((k, n)), np.empty((k, len(rows)))
    torque, statics, energy = np.empty(k), np.empty(k), np.empty(k)
    iterations, residual = np.empty(k), np.empty(k)
    refs = list(point_positions(model, forward_kinematics(model, chain.assembled)))
    paths = {ref: np.empty((k, 3)) for ref in refs}
    last = None
    for i in range(k):
        loads = cc.inverse_dynamics(chain, theta[i:i + 1], [w], [0.0], last)
        held = cc.inverse_dynamics(chain, theta[i:i + 1], [0.0], [0.0], loads.q)
        last = q[i] = loads.q
        torque[i], statics[i], lam[i] = loads.effort[0], held.effort[0], loads.multipliers
        energy[i] = cc.energy(chain, loads.q, loads.qd)
        iterations[i], residual[i] = sum(loads.report.iterations), max(loads.report.residual)
        for ref, p in point_positions(model, forward_kinematics(model, loads.q), refs).items():
            paths[ref][i] = p
    dE = np.gradient(energy, dt, edge_order=2)
    power = torque * w
    crank = chain.independent_names[0]
    tables = [("kinematics.csv", ["time"] + list(names)
               + [f"{ref}.{a}" for ref in refs for a in "xyz"]
               + ["newton_iterations", "residual"],
               [t, q] + list(paths.values()) + [iterations, residual]),
              ("loads.csv", ["time", f"{crank}.effort", f"{crank}.effort_statics",
                             f"{crank}.effort_without_gravity", "power", "energy",
                             "denergy_dt"] + list(rows),
               [t, torque, statics, torque - statics, power, energy, dE, lam])]
    title = f"seed 002 sec. 4.4, {SCRAPING_RPM:g} rpm"
    plots = [("driving_torque.png", lambda p: plot_series(
                 p, t, {"driving torque [N m]": torque,
                        "statics against gravity [N m]": statics,
                        "without gravity [N m]": torque - statics},
                 "torque [N m]", f"{model.name}: {crank} ({title})")),
             ("joint_angles.png", lambda p: plot_series(
                 p, t, {f"{c} [deg]": np.degrees(q[:, j]) for j, c in enumerate(names)},
                 "angle [deg]", f"{model.name}: coordinates ({title})")),
             ("point_paths.png", lambda p: plot_paths(
                 p, paths, f"{model.name}: named points over one revolution")),
             ("power_balance.png", lambda p: plot_series(
                 p, t, {"tau theta_dot [W]": power, "dE/dt [W]": dE}, "power [W]",
                 f"{model.name}: power balance ({title})"))]
    counts = np.bincount(iterations.astype(int)[1:])
    gap = np.abs(power - dE)[1:-1]
    summary = [f"{model.name}: {title} ({w:.4f} rad/s), one revolution, {k} samples (dt "
               f"{dt:g} s)",
               f"  {crank} driving torque {torque.min():+.3f}..{torque.max():+.3f} N m; "
               f"statics against gravity {statics.min():+.3f}..{statics.max():+.3f} N m; "
               f"without gravity {(torque - statics).min():+.3f}.."
               f"{(torque - statics).max():+.3f} N m",
               f"  power balance: max |tau theta_dot - dE/dt| {gap.max():.3g} W (max |dE/dt| "
               f"{np.abs(dE).max():.3g} W; central differences of E, second order in dt)",
               "  Newton-Raphson iterations per sample after the first: " + ", ".join(
                   f"{m}: {c}" for m, c in enumerate(counts) if c)
               + f"; max residual {residual.max():.2g}"]
    return tables, plots, summary
