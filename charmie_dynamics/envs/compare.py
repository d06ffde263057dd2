"""Feedforwards compared under PD feedback (issue 38 item 3): the robot in the tracking task
(envs/tracking.py, the same simulation a learner steps) driven by a PD on every input plus
no feedforward, the model's inverse dynamics or a learned one (envs/learned.py), all at the
reference of each control instant, held over the period. Both feedforwards get the same
friction term, the one the simulation applies (plants.py): the network learns the rigid
body's part, the friction law (seed 004 eq. 43) is known.

The PD's gains come from the robot's own inertia in the reference's configuration of the
instant (gain scheduling: a shoulder's inertia about its axis grows tenfold as the arm
rises, and gains from the start let it fall away): for input i,
kp = m_i w^2 and kd = 2 zeta m_i w, m_i = 1 / (H_x^-1)_ii the inertia input i feels while
the others move freely (dynamics/actuation.input_space_dynamics; (H_x)_ii, the inertia with
the others locked, is up to a hundred times larger at the light wrist joints, and gains from
it made their 100 Hz hold unstable), w = 2 pi ``bandwidth`` (2 Hz), zeta 1: one
second-order response per input, slow enough for the 100 Hz hold. A PD this soft leaves the
loads (gravity above all) to the feedforward, which is what the comparison measures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..dynamics.actuation import input_space_dynamics
from .tracking import Tracking

#: The feedforward sources, in the table's order
SOURCES = ("pd", "pd+model", "pd+learned")

Feedforward = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Run:
    """One tracking run under PD feedback: the tracking error in error scales (the reward's
    units: 0.1 rad, 0.01 m), RMS over inputs and time and its peak over both; the efforts'
    RMS as a fraction of their limits; the steps taken and whether the robot was lost before
    the end."""

    source: str
    rms_error: float
    peak_error: float
    rms_effort: float
    steps: int
    lost: bool


def pd_gains(task: Tracking, x: np.ndarray, bandwidth: float = 2.0, damping: float = 1.0
             ) -> tuple[np.ndarray, np.ndarray]:
    """kp, kd (n,) of each input at the inputs ``x`` (n,) (module docstring)."""
    q = task.plant.joint_positions(0, x)
    mass = input_space_dynamics(task.model, q, np.zeros_like(q))[0]
    inertia = 1.0 / np.diagonal(np.linalg.inv(mass))
    w = 2.0 * math.pi * bandwidth
    return inertia * w * w, 2.0 * damping * inertia * w


def tracking_run(task: Tracking, feedforward: Optional[Feedforward], source: str,
                rng: np.random.Generator, bandwidth: float = 2.0) -> Run:
    """Robot 0 of ``task`` (one robot, not residual) from its reference's start to its end or
    until lost, under PD + ``feedforward`` (None: PD alone), the PD's gains those of the
    reference's configuration at each instant."""
    task.reset_rows(np.array([0]), [rng])
    errors, efforts, lost = [], [], False
    n = len(task.names)
    while True:
        x, xd = task.plant.observe()
        x_ref, xd_ref, xdd_ref = task.reference.at(task.k)
        kp, kd = pd_gains(task, x_ref[0], bandwidth)
        u = kp * (x_ref - x) + kd * (xd_ref - xd)
        if feedforward is not None:
            u = u + feedforward(x_ref, xd_ref, xdd_ref)
        observation, _, terminated, truncated, _ = task.step(u / task.limit)
        errors.append((observation[0, :n] - observation[0, 2 * n:3 * n]) / task.scale)
        efforts.append(task.effort[0] / task.limit)
        if terminated[0] or truncated[0]:
            lost = bool(terminated[0])
            break
    e, u = np.array(errors), np.array(efforts)
    return Run(source, float(np.sqrt(np.mean(e ** 2))), float(np.max(np.abs(e))),
               float(np.sqrt(np.mean(u ** 2))), len(errors), lost)


def compare(task: Tracking, learned: Optional[Feedforward], seed: int = 0,
            bandwidth: float = 2.0) -> list[Run]:
    """PD alone, PD + the model's feedforward and (when given) PD + ``learned`` on ``task``'s
    reference, each from the same start (``seed`` for a random reference)."""
    plant = task.plant

    def with_friction(rigid: Feedforward) -> Feedforward:
        return lambda x, xd, xdd: rigid(x, xd, xdd) + plant.friction(xd)

    sources = {"pd": None, "pd+model": with_friction(plant.rigid_body),
               "pd+learned": None if learned is None else with_friction(learned)}
    return [tracking_run(task, sources[source], source, np.random.default_rng(seed), bandwidth)
            for source in SOURCES if source != "pd+learned" or learned is not None]
