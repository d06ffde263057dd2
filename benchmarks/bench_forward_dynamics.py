"""Timing of the joint-space dynamics on CHARMIE (or another model): the mass matrix by the
composite-rigid-body algorithm, the bias forces, and forward dynamics by Cholesky and by the
articulated-body algorithm, for one state and for a batch of states.

    .venv/bin/python benchmarks/bench_forward_dynamics.py [--model FILE] [--batch 1000]
                                                           [--repeats 15] [--calls 20]
                                                           [--out FILE.json]

Prints the median time per call (microseconds) over ``--repeats`` timed runs (a single-state
run times ``--calls`` calls), the time per state in the batch, and the ratio of the two
forward-dynamics methods (the simulator's step: bench_simulator.py), and issue 37's ratios:
one state's default call (no ``data=``) over the batch's ABA per state, and Cholesky over the
ABA with reused data. Random states have every
coordinate uniform in [-pi, pi]
(actuators uniform in their stroke), unit normal rates and efforts.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from charmie_dynamics import bundled_model, forward_kinematics, load_model, resolve_state
from charmie_dynamics.dynamics import bias_forces, forward_dynamics, mass_matrix
from charmie_dynamics.dynamics.forward import ForwardDynamicsData
from common import timings_us, write_result


def random_states(model, rng: np.random.Generator, count: int):
    x = rng.uniform(-np.pi, np.pi, (count, len(model.input_names)))
    for a in model.actuators:
        x[:, model.input_names.index(a.name)] = rng.uniform(*a.stroke, count)
    q = resolve_state(model, x, 0 * x, 0 * x).q
    return q, rng.normal(size=q.shape), rng.normal(size=q.shape)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model file (default: bundled CHARMIE)")
    parser.add_argument("--batch", type=int, default=1000, help="states in the batch")
    parser.add_argument("--repeats", type=int, default=15, help="timed runs per entry")
    parser.add_argument("--calls", type=int, default=20, help="single-state calls per run")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON")
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
    model = load_model(args.model or bundled_model())
    q, qd, tau = random_states(model, np.random.default_rng(0), args.batch)
    cases = {
        "forward kinematics": lambda q, qd, tau: forward_kinematics(model, q),
        "mass_matrix (CRBA)": lambda q, qd, tau: mass_matrix(model, q),
        "bias_forces (RNEA, qdd = 0)": lambda q, qd, tau: bias_forces(model, q, qd),
        "forward_dynamics cholesky": lambda q, qd, tau: forward_dynamics(model, q, qd, tau,
                                                                         "cholesky"),
        "forward_dynamics aba": lambda q, qd, tau: forward_dynamics(model, q, qd, tau, "aba"),
    }
    one = ForwardDynamicsData(model, ())
    reused = {f"forward_dynamics {m}, data=": (lambda m=m: forward_dynamics(
        model, q[0], qd[0], tau[0], m, data=one)) for m in ("cholesky", "aba")}
    single = timings_us({name: (lambda fn=fn: fn(q[0], qd[0], tau[0]))
                         for name, fn in cases.items()} | reused, args.repeats, args.calls)
    batch = timings_us({name: (lambda fn=fn: fn(q, qd, tau)) for name, fn in cases.items()},
                       max(3, args.repeats // 3), 1)
    print(f"{model.name}: {model.n_bodies} bodies, {model.n_coordinates} coordinates; "
          f"median (min) over the runs, microseconds")
    print(f"{'':30s} {'single state':>16s} {f'batch of {args.batch}':>20s} {'per state':>9s}")
    for name in cases:
        (s_med, s_min, _), (b_med, b_min, _) = single[name], batch[name]
        print(f"{name:30s} {s_med:8.0f} ({s_min:5.0f}) {b_med:10.0f} ({b_min:7.0f}) "
              f"{b_med / args.batch:9.1f}")
    for label, table in (("single state", single), (f"batch of {args.batch}", batch)):
        ratio = table["forward_dynamics aba"][0] / table["forward_dynamics cholesky"][0]
        verdict = ("aba is faster" if ratio < 0.95 else "cholesky is faster" if ratio > 1.05
                   else "within 5%: neither is clearly faster")
        print(f"forward_dynamics aba / cholesky, {label} (medians): {ratio:.2f} ({verdict})")
    aba_per_state = batch["forward_dynamics aba"][0] / args.batch
    ratios = {
        "cholesky single, default call / aba batch per state":
            single["forward_dynamics cholesky"][0] / aba_per_state,
        "aba single, default call / aba batch per state":
            single["forward_dynamics aba"][0] / aba_per_state,
        "cholesky single / aba single, reused data":
            single["forward_dynamics cholesky, data="][0] / single["forward_dynamics aba, data="][0]}
    for label in reused:
        med, mn, _ = single[label]
        print(f"{label:30s} {med:8.0f} ({mn:5.0f})     (one state, reused data)")
    for label, value in ratios.items():
        print(f"{label}: {value:.2f}")
    if args.out is not None:
        write_result(args.out, {
            "model": model.name, "batch": args.batch,
            "loadavg_before_after": [load0, os.getloadavg()[0]],
            "single_us": {k: v[0] for k, v in single.items()},
            "batch_per_state_us": {k: v[0] / args.batch for k, v in batch.items()},
            "ratios": ratios})


if __name__ == "__main__":
    main()
