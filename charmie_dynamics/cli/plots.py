"""Plots of ``analyze``: the efforts grouped by subsystem, one panel per group and unit (and
``identify``'s, ``study``'s and ``learn``'s closed-loop comparison).

A subsystem is found from the tree, so it works for any model: the coordinates along one
unbranched chain of bodies (a branch point, where a body has several children, ends a
chain; a coordinate that moves several sibling bodies, such as a claw's two halves, is a
chain of its own); the inputs driven by linear actuators form a group of their own (their
loads are axial forces). A chain whose coordinates have two units gets a panel per unit. For CHARMIE
this gives the base (d1, d2, theta3), the actuators (act4, act5),
each arm, each claw and the neck.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..model.model import Model

#: effort unit by the unit of a joint's coordinate (JointType.unit; a free-flyer's "" has none)
UNITS = {"rad": "N m", "m": "N"}


@dataclass(frozen=True)
class Subsystem:
    """A group of model inputs plotted together; ``unit`` is that of their efforts."""

    name: str
    inputs: tuple[str, ...]
    unit: str


def subsystems(model: Model) -> list[Subsystem]:
    """The model's inputs grouped by chain of the tree, then by unit (see the module)."""
    driven = model.driven_coordinates                    # coordinate -> actuator
    bodies_of: dict[str, list[int]] = {}
    for i, body in enumerate(model.bodies):
        if body.coordinate is not None:
            bodies_of.setdefault(body.coordinate, []).append(i)
    n_children = np.bincount([p for p in model.parent if p >= 0], minlength=model.n_bodies)
    chains: list[list[str]] = []                         # coordinates, parents first
    chain_of: dict[int, int] = {}                        # body -> index of its chain
    for i, body in enumerate(model.bodies):              # parents first
        c, parent = body.coordinate, model.parent[i]
        coupled = c is not None and len(bodies_of[c]) > 1
        if coupled and bodies_of[c][0] != i:             # a later sibling of a coupled group
            chain_of[i] = chain_of[bodies_of[c][0]]
            continue
        if parent >= 0 and n_children[parent] == 1 and not coupled:
            chain_of[i] = chain_of[parent]
        else:
            chain_of[i] = len(chains)
            chains.append([])
        if c is not None:
            chains[chain_of[i]].append(c)
    groups: list[Subsystem] = []
    for coordinates in chains:
        free = [c for c in coordinates if c not in driven]
        for names, unit in ((free, None), ([c for c in coordinates if c in driven], "N")):
            if not names:
                continue
            first, last = (model.body_names[bodies_of[c][0]] for c in (names[0], names[-1]))
            span = first if first == last else f"{first}..{last}"
            if len(names) == 1 and len(bodies_of[names[0]]) > 1:     # e.g. a claw's halves
                span = "+".join(model.body_names[i] for i in bodies_of[names[0]])
            if unit:                                     # the actuators' axial forces
                groups.append(Subsystem(f"actuators of {span}",
                                        tuple(driven[c] for c in names), unit))
                continue
            for unit, effort_unit in UNITS.items():
                inputs = tuple(c for c in names
                               if model.bodies[bodies_of[c][0]].joint_type.unit == unit)
                if inputs:
                    groups.append(Subsystem(span, inputs, effort_unit))
    return sorted(groups, key=lambda g: model.input_names.index(g.inputs[0]))


def plot_efforts(path: Path, t: np.ndarray, model: Model, coordinate_effort: np.ndarray,
                 actuator_force: np.ndarray, title: str) -> None:
    """One panel per subsystem of the efforts over time: ``coordinate_effort`` is
    (samples, coordinates) and ``actuator_force`` (samples, actuators), as ``Loads`` holds
    them; an actuator's panel shows its axial force (positive pushes)."""
    plot_input_efforts(path, t, model, {"": model.in_input_order(coordinate_effort,
                                                                 actuator_force)}, title)


def plot_input_efforts(path: Path, t: np.ndarray, model: Model, series: dict[str, np.ndarray],
                       title: str) -> None:
    """One panel per subsystem; ``series`` maps a label ("measured", "predicted"; "" for
    one unlabelled series) to efforts (samples, n_inputs) in ``model.input_names`` order,
    drawn solid, dashed, dotted... in that order."""
    plt = _pyplot()
    groups = subsystems(model)
    fig, axes = plt.subplots(len(groups), 1, sharex=True, squeeze=False,
                             figsize=(9, 1.9 * len(groups) + 0.8))
    styles = ("-", "--", ":", "-.")
    for ax, group in zip(axes[:, 0], groups):
        for name in group.inputs:
            k = model.input_names.index(name)
            color = None
            for n, (label, efforts) in enumerate(series.items()):
                line, = ax.plot(t, efforts[:, k], styles[n % len(styles)], color=color,
                                label=f"{name} {label}".strip())
                color = line.get_color()
        ax.set_ylabel(f"[{group.unit}]")
        ax.set_title(group.name, fontsize=9, loc="left")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(title)
    _save(plt, fig, path)


def plot_series(path: Path, t: np.ndarray, series: dict[str, np.ndarray], ylabel: str,
                title: str) -> None:
    """One panel of several labelled series over time."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, y in series.items():
        ax.plot(t, y, label=label)
    ax.set_xlabel("time [s]")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
    _save(plt, fig, path)


def plot_paths(path: Path, paths: dict[str, np.ndarray], title: str) -> None:
    """Paths of points in the xy-plane (each (k, 2) or wider: x, y first), equal axes."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 7))
    for label, xy in paths.items():
        ax.plot(xy[:, 0], xy[:, 1], label=label)
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    _save(plt, fig, path)


def plot_response(path: Path, names: list[str], designs: np.ndarray, value: np.ndarray,
                  label: str) -> None:
    """A sweep's response: a curve over one parameter, a filled contour over two (a grid) or
    scattered points (a Latin hypercube), parallel coordinates coloured by the value over
    more; NaN (infeasible) designs drawn grey."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5))
    ok = np.isfinite(value)
    if len(names) == 1:
        order = np.argsort(designs[:, 0])
        ax.plot(designs[order, 0], value[order], "o-", ms=3)
        ax.plot(designs[~ok, 0], np.full((~ok).sum(), np.nanmin(value, initial=0.0)), "x",
                color="grey", label="infeasible")
        ax.set_xlabel(names[0])
        ax.set_ylabel(label)
    elif len(names) == 2:
        x, y = designs[:, 0], designs[:, 1]
        nx, ny = len(np.unique(x)), len(np.unique(y))
        if nx * ny == len(x) and nx > 1 and ny > 1:     # a grid: meshgrid order, x slowest
            shown = ax.contourf(x.reshape(nx, ny), y.reshape(nx, ny), value.reshape(nx, ny), 20)
        else:
            shown = ax.scatter(x[ok], y[ok], c=value[ok], s=18)
        ax.plot(x[~ok], y[~ok], "x", color="grey", label="infeasible")
        fig.colorbar(shown, ax=ax, label=label)
        ax.set_xlabel(names[0])
        ax.set_ylabel(names[1])
    else:
        lo, hi = designs.min(0), designs.max(0)
        unit = (designs - lo) / np.where(hi > lo, hi - lo, 1.0)
        colors = plt.get_cmap("viridis")((value - np.nanmin(value, initial=0.0))
                                         / max(np.nanmax(value, initial=1.0)
                                               - np.nanmin(value, initial=0.0), 1e-12))
        for row, color, good in zip(unit, colors, ok):
            ax.plot(range(len(names)), row, color=color if good else "lightgrey", lw=0.7)
        ax.set_xticks(range(len(names)), names, rotation=20, fontsize=7)
        ax.set_ylabel("parameter, fraction of its bounds")
    ax.set_title(f"sweep: {label}")
    ax.grid(True, alpha=0.3)
    if (~ok).any() and len(names) <= 2:
        ax.legend()
    _save(plt, fig, path)


def plot_torque_speed(path: Path, inputs: tuple[str, ...] | list[str],
                      cases: dict[str, tuple[np.ndarray, np.ndarray]], title: str) -> None:
    """One panel per input: its effort over its speed at every sample of every case
    (``cases``: label -> (speeds, efforts), each (samples, inputs))."""
    plt = _pyplot()
    cols = min(5, len(inputs))
    rows = -(-len(inputs) // cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(3.0 * cols, 2.4 * rows + 0.6))
    for k, name in enumerate(inputs):
        ax = axes[k // cols, k % cols]
        for label, (speeds, efforts) in cases.items():
            ax.plot(speeds[:, k], efforts[:, k], ".", ms=2, label=label)
        ax.set_title(name, fontsize=8)
        ax.tick_params(labelsize=6)
        ax.grid(True, alpha=0.3)
    for k in range(len(inputs), rows * cols):
        axes[k // cols, k % cols].axis("off")
    axes[0, 0].legend(fontsize=6)
    fig.supxlabel("speed [rad/s or m/s]")
    fig.supylabel("effort [N m or N]")
    fig.suptitle(title)
    _save(plt, fig, path)


def plot_comparison(path: Path, rows: list[dict], title: str) -> None:
    """Closed-loop runs side by side (``rows``: motion, source, rms_error, peak_error, as
    ``learn``'s table): per motion, one bar per controller, RMS error above, peak below."""
    plt = _pyplot()
    motions = list(dict.fromkeys(r["motion"] for r in rows))
    sources = list(dict.fromkeys(r["source"] for r in rows))
    by = {(r["motion"], r["source"]): r for r in rows}
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    width = 0.8 / len(sources)
    for ax, key, label in zip(axes, ("rms_error", "peak_error"), ("RMS error", "peak error")):
        for k, source in enumerate(sources):
            ax.bar([m + (k - (len(sources) - 1) / 2) * width for m in range(len(motions))],
                   [by[(m, source)][key] if (m, source) in by else np.nan for m in motions],
                   width, label=source)
        ax.set_ylabel(f"{label} [error scales]")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[1].set_xticks(range(len(motions)), motions, rotation=15, fontsize=8)
    fig.suptitle(title)
    _save(plt, fig, path)


def require_matplotlib(command: str) -> None:
    """Refuse ``command`` before any work when matplotlib, an optional dependency (off the
    robot's image), is missing: one line saying what to install."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(f"{command} writes PNG plots with matplotlib, which is not installed: "
                         "pip install matplotlib (or apt install python3-matplotlib)") from None


def _pyplot():
    """matplotlib.pyplot on the file-only Agg backend (imported on first use, by commands
    that called :func:`require_matplotlib` first)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(plt, fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
