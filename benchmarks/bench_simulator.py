"""The simulator's speed at 1 ms steps on CHARMIE (or another model with actuators): the
Python step (simulation.integrate.step with the simulator node's actuator-space efforts
evaluated at every stage, joint stops on, ABA) against the compiled step
(simulation.actuated_step.held_input_steps) in the same run, for RK4 and semi-implicit Euler,
with one forward-dynamics call (ABA, reused buffers, given joint efforts) as the reference.

    .venv/bin/python benchmarks/bench_simulator.py [--model FILE] [--repeats 9]
                                                  [--out benchmarks/results/simulator.json]

The state is the simulator node's start (the validation motion's first sample) held still by
gravity compensation, the node's Coulomb smoothing. Compiled: 10 steps per call (the node's
100 Hz period under effort control) and 1 step per call (its pd control, which changes the
efforts at every step). Prints, per case, the median (min) time per step over ``--repeats``
rounds (the cases take turns within each round) and simulated seconds per wall second,
dt / step time; the compiled/Python ratios; the load average before and after. Saves JSON.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Callable

import numpy as np

from charmie_dynamics import bundled_model, load_model, resolve_state
from charmie_dynamics.dynamics import bias_forces, forward_dynamics
from charmie_dynamics.dynamics.actuation import input_jacobians, input_space_dynamics
from charmie_dynamics.dynamics.forward import ForwardDynamicsData
from charmie_dynamics.kinematics import inputs_from_dict
from charmie_dynamics.simulation.actuated_step import HeldStepData, held_efforts, held_input_steps
from charmie_dynamics.simulation.integrate import INTEGRATORS, StepData, step
from common import write_result

DT = 1e-3


def per_step_us(cases: dict[str, tuple[Callable[[], int], int]], repeats: int, budget: float
                ) -> dict[str, tuple[float, float]]:
    """(median, min) microseconds per step of each case, a callable taking ``steps`` steps per
    call, over ``repeats`` rounds of about ``budget`` seconds each; the cases take turns."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    calls = {}
    for name, (fn, steps) in cases.items():
        start = time.perf_counter()
        fn()                                  # warm-up (kernel cache load, first allocations)
        calls[name] = max(1, int(budget / max(time.perf_counter() - start, 1e-7)))
    for _ in range(repeats):
        for name, (fn, steps) in cases.items():
            start = time.perf_counter()
            for _ in range(calls[name]):
                taken = fn()
            if taken != steps:
                raise RuntimeError(f"{name}: took {taken} of {steps} steps (a stop or an "
                                   "error handed a step back: pick a state that moves freely)")
            samples[name].append(1e6 * (time.perf_counter() - start) / (calls[name] * steps))
    return {name: (statistics.median(v), min(v)) for name, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model file (default: bundled CHARMIE)")
    parser.add_argument("--repeats", type=int, default=9, help="timed rounds")
    parser.add_argument("--budget", type=float, default=0.2, help="seconds per case and round")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/simulator.json"))
    args = parser.parse_args()
    model = load_model(args.model or bundled_model())
    q = resolve_state(model, *inputs_from_dict(model)).q
    qd = np.zeros_like(q)
    _, J, _ = input_jacobians(model, q)
    u = J * bias_forces(model, q, qd)                 # still: gravity compensation
    Hx, _, _ = input_space_dynamics(model, q, qd)
    smoothing = np.maximum(2.0 * DT * model.compiled.actuator_space.coulomb
                           * np.diag(np.linalg.inv(Hx)), 1e-9)
    tau = held_efforts(model, u, smoothing)
    held, work, fd = HeldStepData(model), StepData(model), ForwardDynamicsData(model)

    def python(method: str) -> int:
        step(model, 0.0, q, qd, tau, DT, method, dynamics="aba", data=work)
        return 1

    def compiled(method: str, steps: int) -> int:
        return held_input_steps(model, q, qd, u, smoothing, steps, DT, method, data=held)

    efforts = tau(0.0, q, qd)

    def aba() -> int:
        forward_dynamics(model, q, qd, efforts, "aba", data=fd)
        return 1

    cases: dict[str, tuple[Callable[[], int], int]] = {}
    for method in INTEGRATORS:
        cases[f"{method} python"] = (lambda m=method: python(m), 1)
        cases[f"{method} compiled x10"] = (lambda m=method: compiled(m, 10), 10)
        cases[f"{method} compiled x1"] = (lambda m=method: compiled(m, 1), 1)
    cases["forward_dynamics aba"] = (aba, 1)
    load0 = os.getloadavg()
    times = per_step_us(cases, args.repeats, args.budget)
    load1 = os.getloadavg()
    print(f"{model.name}, {DT * 1e3:g} ms steps, joint stops on, ABA; load average "
          f"{load0[0]:.2f} {load0[1]:.2f} before, {load1[0]:.2f} {load1[1]:.2f} after "
          f"({os.cpu_count()} CPUs)")
    print(f"{'':36s} {'us per step, median (min)':>26s} {'simulated s per wall s':>24s}")
    for name, (med, low) in times.items():
        print(f"{name:36s} {med:14.1f} ({low:8.1f}) {DT * 1e6 / med:16.2f} ({DT * 1e6 / low:.2f})")
    ratios = {}
    for method in INTEGRATORS:
        for calls in ("x10", "x1"):
            ratios[f"{method} python / compiled {calls}"] = (
                times[f"{method} python"][0] / times[f"{method} compiled {calls}"][0])
    ratios["rk4 compiled x10 / forward_dynamics aba"] = (
        times["rk4 compiled x10"][0] / times["forward_dynamics aba"][0])
    for name, value in ratios.items():
        print(f"{name:44s} {value:6.2f}")
    write_result(args.out, {
        "model": model.name, "dt": DT, "load_before": load0, "load_after": load1,
        "us_per_step": {k: {"median": v[0], "min": v[1]} for k, v in times.items()},
        "real_time_factor": {k: DT * 1e6 / v[0] for k, v in times.items()},
        "ratios": ratios})


if __name__ == "__main__":
    main()
