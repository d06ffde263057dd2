"""``charmie-dynamics analyze --motion seed003-parabola``: the platform path of seed 003
section 6.4 on a parallel mechanism (a model whose limbs meet in rigid cuts, e.g.
config/examples/irsbot2.yaml), by the limbs' inverse kinematics
(mechanisms/closed_chains/limbs.py) and the closed chain's inverse dynamics
(dynamics/closed_chain.py).

The path (the paper's values are missing from our copy; chosen here): a parabola in the
PKM's xz-plane through the platform's position p0 at the assembled configuration,

    x(t) = p0_x + A sin(2 pi f t),   y = p0_y,   z(t) = p0_z - B (sin(2 pi f t))^2,

A = 0.15 m, B = 0.08 m, f = 1 cycle per second, one cycle (an arc over the centre, as a
pick-and-place motion), sampled every ``--dt`` (the paper: 1 ms, and a larger step for its
Fig. 11b). At every sample, warm-started from the last one, both algorithms run: nested
(algorithms 1 and 2: outer iterations and each loop's inner iterations per outer step, the
paper's Figs. 10-12) and compound (algorithm 3, Figs. 15-16); the efforts at the actuated
coordinates follow from the nested solution. Power balance: the actuators' power sum tau_i
qd_i against dE/dt, E the kinetic plus gravitational energy, by central differences of the
sampled E (second order in dt).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import numpy as np

from ..dynamics import closed_chain as cc
from ..mechanisms.closed_chains import ClosedChain
from ..mechanisms.closed_chains.limbs import COMPOUND, NESTED, ParallelMechanism
from .plots import plot_series

#: The path (module docstring): amplitude in x, depth of the arc in z (m), cycles per second.
PARABOLA = (0.15, 0.08, 1.0)

Table = tuple[str, list[str], list[np.ndarray]]
Step = tuple[str, Callable[[Path], None]]


def parabola(t: np.ndarray, home: np.ndarray, amplitude: float = PARABOLA[0],
             depth: float = PARABOLA[1], frequency: float = PARABOLA[2]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Platform position, velocity and acceleration (len(t), 3) along the path."""
    w = 2 * math.pi * frequency
    s, c = np.sin(w * t), np.cos(w * t)
    zero = np.zeros_like(t)
    p = np.stack([home[0] + amplitude * s, home[1] + zero, home[2] - depth * s * s], axis=1)
    v = np.stack([amplitude * w * c, zero, -depth * w * np.sin(2 * w * t)], axis=1)
    a = np.stack([-amplitude * w * w * s, zero, -2 * depth * w * w * np.cos(2 * w * t)], axis=1)
    return p, v, a


def platform_analysis(chain: ClosedChain, dt: float) -> tuple[list[Table], list[Step], list[str]]:
    """Tables, plots and summary lines of the path (module docstring)."""
    pm = ParallelMechanism.build(chain)
    model = chain.model
    t = np.arange(0.0, 1.0 / PARABOLA[2] + dt / 2, dt)
    home = pm.platform_position(chain.assembled)
    p, v, a = parabola(t, home)
    n, k, nl = model.n_coordinates, len(t), len(pm.limbs)
    q, qd, effort = np.empty((k, n)), np.empty((k, n)), np.empty((k, len(chain.independent)))
    energy, closure = np.empty(k), np.empty(k)
    outer, compound = np.zeros((k, nl)), np.zeros((k, nl))
    inner: list[list[list[list[int]]]] = [[] for _ in pm.limbs]   # limb, sample, step, group
    last_nested = last_compound = None
    for i in range(k):
        sol = pm.solve(p[i], v[i], a[i], last_nested, NESTED)
        comp = pm.solve(p[i], v[i], a[i], last_compound, COMPOUND)
        last_nested, last_compound = sol.q, comp.q
        q[i], qd[i], closure[i] = sol.q, sol.qd, sol.closure_residual
        for l, (rn, rc) in enumerate(zip(sol.limbs, comp.limbs)):
            outer[i, l], compound[i, l] = rn.outer, rc.outer
            inner[l].append(rn.inner)
        ind = chain.independent
        loads = cc.inverse_dynamics(chain, sol.q[ind], sol.qd[ind], sol.qdd[ind], sol.q)
        effort[i] = loads.effort
        energy[i] = cc.energy(chain, loads.q, loads.qd)
    steps = max(1, int(outer.max()))
    names, ind_names = model.coordinate_names, chain.independent_names
    iter_header, iter_cols = ["time"], [t]
    for l, lb in enumerate(pm.limbs):
        groups = [g.label for g in lb.loops.groups]
        iter_header += [f"{lb.name}.nested_outer", f"{lb.name}.compound"]
        iter_cols += [outer[:, l], compound[:, l]]
        for s in range(steps):
            for g, label in enumerate(groups):
                iter_header.append(f"{lb.name}.{label}.inner_step{s + 1}")
                iter_cols.append(np.array([row[s][g] if s < len(row) else 0
                                           for row in inner[l]], dtype=float))
    power = np.sum(effort * qd[:, chain.independent], axis=1)
    dE = np.gradient(energy, dt, edge_order=2)
    tables = [("kinematics.csv", ["time", "platform.x", "platform.y", "platform.z"] + list(names)
               + ["closure_residual"], [t, p, q, closure]),
              ("iterations.csv", iter_header, iter_cols),
              ("loads.csv", ["time"] + [f"{c}.effort" for c in ind_names]
               + ["actuator_power", "energy", "denergy_dt"], [t, effort, power, energy, dE])]
    title = f"seed 003 sec. 6.4 parabola, dt = {dt:g} s"
    first = pm.limbs[0]
    plots = [("joint_angles.png", lambda path: plot_series(
                 path, t, {f"{c} [deg]": np.degrees(q[:, j]) for j, c in enumerate(names)
                           if j in first.coordinates},
                 "angle [deg]", f"{model.name}: {first.name}'s coordinates ({title})")),
             ("joint_efforts.png", lambda path: plot_series(
                 path, t, {f"{c} [N m]": effort[:, j] for j, c in enumerate(ind_names)},
                 "torque [N m]", f"{model.name}: actuated torques ({title})")),
             ("newton_iterations.png", lambda path: plot_series(
                 path, t, {f"{lb.name}: algorithm 1 (outer)": outer[:, l]
                           for l, lb in enumerate(pm.limbs)}
                 | {f"{lb.name}: algorithm 3": compound[:, l] for l, lb in enumerate(pm.limbs)},
                 "iterations", f"{model.name}: Newton-Raphson iterations per sample ({title})")),
             ("power_balance.png", lambda path: plot_series(
                 path, t, {"actuator power [W]": power, "dE/dt [W]": dE}, "power [W]",
                 f"{model.name}: power balance ({title})"))]
    inner_all = [it for limb in inner for row in limb for step in row for it in step]
    body = slice(1, None)
    summary = [f"{model.name}: {title}, {k} samples, platform from {home.round(4).tolist()} m"]
    for l, lb in enumerate(pm.limbs):
        summary.append(
            f"  {lb.name}: algorithm 1 outer iterations per sample after the first "
            + ", ".join(f"{m}: {c}" for m, c in enumerate(np.bincount(outer[body, l]
                                                                     .astype(int))) if c)
            + "; algorithm 3: " + ", ".join(
                f"{m}: {c}" for m, c in enumerate(np.bincount(compound[body, l].astype(int)))
                if c))
    summary.append(f"  algorithm 2 inner iterations per outer step: {min(inner_all, default=0)}"
                   f"..{max(inner_all, default=0)}; max rigid-cut residual {closure.max():.2g}")
    summary += [f"  {c} torque {effort[:, j].min():+.3f}..{effort[:, j].max():+.3f} N m"
                for j, c in enumerate(ind_names)]
    gap = np.abs(power - dE)[1:-1]
    summary.append(f"  power balance: max |sum tau qd - dE/dt| {gap.max():.3g} W "
                   f"(max |dE/dt| {np.abs(dE).max():.3g} W; central differences of E)")
    return tables, plots, summary
