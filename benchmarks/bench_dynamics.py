"""Benchmark of the numerical core against Pinocchio, in one process, on the bundled CHARMIE.

    .venv/bin/python benchmarks/bench_dynamics.py [--batch 10000] [--repeats 9] [--no-startup]
                                                   [--out FILE.json]

Prints microseconds per state (median, min and max over the timed rounds; the cases take
turns within each round, so a change of machine load hits them alike) for our forward
kinematics, forward kinematics + inverse dynamics with the closed loops (resolve_state and
inverse_dynamics: single state and batched; with fresh result arrays and with reused
buffers, ``out=``/``data=``, as the dynamics node does; and keeping only the efforts, as
Pinocchio's rneaInParallel does), forward dynamics, and Pinocchio's
forwardKinematics, rnea and rneaInParallel (one thread) on the same open tree (exported
through our URDF: the loops replaced by their joints, no springs), with the ratios
ours/Pinocchio (no ratio for forward dynamics: Pinocchio's aba refuses the mimic joints of
the claws). Unless ``--no-startup``: the start-up cost of the compiled kernels, cold
(an empty numba cache) and cached, each in a new process. Results are also written as JSON.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import pinocchio as pin

from charmie_dynamics import bundled_model, forward_kinematics, jit, load_model, resolve_state
from charmie_dynamics.dynamics import forward_dynamics, inverse_dynamics
from charmie_dynamics.dynamics.inverse import (InverseDynamicsData, _inverse_dynamics_batch,
                                               kernel_arguments)
from charmie_dynamics.evaluators.evaluator import Evaluator
from charmie_dynamics.export.urdf import urdf_from_model
from charmie_dynamics.kinematics.forward import ForwardKinematicsData, _forward_kinematics_flat
from charmie_dynamics.kinematics.state import state_samples
from common import timings_us, write_result


@jit.kernel
def _one_argument(a):
    """No work: the cost of calling a compiled kernel with one array."""
    return a.shape[0]


def fixed_costs(model, state, data: InverseDynamicsData) -> dict:
    """The single-state cases that split the fixed cost of a call: numba's dispatch (the
    kernels called with zero samples: type matching and unboxing of every argument, no
    work), the kernels alone on one sample, and a kernel of one array argument."""
    n = model.n_coordinates
    fk = ForwardKinematicsData(model)
    q1, none = state_samples(state)[0], np.empty((0, n))
    id_one = kernel_arguments(*state_samples(state)[:3], data)
    id_none = kernel_arguments(none, none, none, data)
    return {
        "numba.kernel_of_one_array": lambda: _one_argument(q1),
        "ours.fk_kernel.0_samples (dispatch, 5 arrays)": lambda: _forward_kinematics_flat(
            none, *fk.block),
        "ours.fk_kernel.1_sample": lambda: _forward_kinematics_flat(q1, *fk.block),
        f"ours.id_kernel.0_samples (dispatch, {len(id_none)} arguments)":
            lambda: _inverse_dynamics_batch(*id_none),
        "ours.id_kernel.1_sample": lambda: _inverse_dynamics_batch(*id_one),
        "ours.forward_kinematics.reused_buffers": lambda: forward_kinematics(model, state.q,
                                                                             data=fk),
    }


def random_inputs(model, rng, n):
    x = rng.uniform(-np.pi, np.pi, (n, len(model.input_names)))
    for a in model.actuators:
        x[:, model.input_names.index(a.name)] = rng.uniform(*a.stroke, n)
    return x, rng.normal(size=x.shape) * 0.1, rng.normal(size=x.shape) * 0.1


def startup_seconds(cache_dir: str) -> float:
    """Wall time of ``charmie-dynamics compile`` in a new process with numba's cache in
    ``cache_dir`` (import, model load, every kernel compiled or loaded, and run once)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", "compile"], check=True,
                   env=dict(os.environ, NUMBA_CACHE_DIR=cache_dir), stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def pinocchio_arrays(model, pm, state):
    """Our coordinates and rates -> Pinocchio's q, v (continuous joints take cos, sin)."""
    joints = [pm.joints[pm.getJointId(name)] for name in model.coordinate_names]
    lead = state.q.shape[:-1]
    q = np.tile(pin.neutral(pm), lead + (1,))
    v, a = np.zeros(lead + (pm.nv,)), np.zeros(lead + (pm.nv,))
    for c, j in enumerate(joints):
        if j.nq == 2:
            q[..., j.idx_q], q[..., j.idx_q + 1] = np.cos(state.q[..., c]), np.sin(state.q[..., c])
        else:
            q[..., j.idx_q] = state.q[..., c]
        v[..., j.idx_v], a[..., j.idx_v] = state.qd[..., c], state.qdd[..., c]
    return q, v, a


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=9, help="timed rounds")
    parser.add_argument("--calls", type=int, default=200, help="single-state calls per round")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up timing")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/latest.json"))
    args = parser.parse_args()

    model = load_model(bundled_model())
    rng = np.random.default_rng(0)
    x1, xd1, xdd1 = (v[0] for v in random_inputs(model, rng, 1))
    xb, xdb, xddb = random_inputs(model, rng, args.batch)
    state1, stateb = resolve_state(model, x1, xd1, xdd1), resolve_state(model, xb, xdb, xddb)
    data1, datab = InverseDynamicsData(model), InverseDynamicsData(model, (args.batch,))
    efforts_only = InverseDynamicsData(model, (args.batch,), keep="efforts")
    tau1, taub = np.zeros_like(state1.q), np.zeros_like(stateb.q)
    evaluator = Evaluator(model)

    pm = pin.buildModelFromXML(urdf_from_model(model, include_auxiliary=False), True)
    pm.gravity = pin.Motion(np.asarray(model.gravity), np.zeros(3))
    pd = pm.createData()
    q1, v1, a1 = pinocchio_arrays(model, pm, state1)
    qb, vb, ab = (np.asfortranarray(v.T) for v in pinocchio_arrays(model, pm, stateb))
    pool = pin.ModelPool(pm, 1)

    n = args.batch
    single = {
        "ours.forward_kinematics": lambda: forward_kinematics(model, state1.q),
        "ours.fk+id_with_loops": lambda: inverse_dynamics(
            model, resolve_state(model, x1, xd1, xdd1)),
        "ours.fk+id_with_loops.reused_buffers": lambda: inverse_dynamics(
            model, resolve_state(model, x1, xd1, xdd1, out=state1), data=data1),
        "ours.forward_dynamics.aba": lambda: forward_dynamics(model, state1.q, state1.qd, tau1,
                                                              "aba"),
        "ours.forward_dynamics.cholesky": lambda: forward_dynamics(model, state1.q, state1.qd,
                                                                   tau1, "cholesky"),
        "ours.evaluator (resolve + ID + auxiliary segments + poses in one kernel: the node's)":
            lambda: evaluator(x1, xd1, xdd1),
        **fixed_costs(model, state1, data1),
        "pinocchio.forwardKinematics": lambda: pin.forwardKinematics(pm, pd, q1),
        "pinocchio.rnea": lambda: pin.rnea(pm, pd, q1, v1, a1),
    }
    batch = {
        f"ours.forward_kinematics.batch{n}": lambda: forward_kinematics(model, stateb.q),
        f"ours.fk+id_with_loops.batch{n}": lambda: inverse_dynamics(
            model, resolve_state(model, xb, xdb, xddb)),
        f"ours.fk+id_with_loops.reused_buffers.batch{n}": lambda: inverse_dynamics(
            model, resolve_state(model, xb, xdb, xddb, out=stateb), data=datab),
        f"ours.fk+id_with_loops.reused_buffers.efforts_only.batch{n}": lambda: inverse_dynamics(
            model, resolve_state(model, xb, xdb, xddb, out=stateb), data=efforts_only),
        f"ours.forward_dynamics.aba.batch{n}": lambda: forward_dynamics(
            model, stateb.q, stateb.qd, taub, "aba"),
        f"pinocchio.rneaInParallel.1thread.batch{n}": lambda: pin.rneaInParallel(
            1, pool, qb, vb, ab),
    }
    results = {}
    load0 = os.getloadavg()[0]
    for name, (med, low, high) in timings_us(single, args.repeats, args.calls).items():
        results[name] = {"median": med, "min": low, "max": high}
    for name, (med, low, high) in timings_us(batch, args.repeats, 1).items():
        results[name] = {"median": med / n, "min": low / n, "max": high / n}
    med = {k: v["median"] for k, v in results.items()}
    ratios = {
        "fk / pin.forwardKinematics": med["ours.forward_kinematics"]
        / med["pinocchio.forwardKinematics"],
        "fk+id single / pin.rnea": med["ours.fk+id_with_loops"] / med["pinocchio.rnea"],
        "fk+id single, reused buffers / pin.rnea": med["ours.fk+id_with_loops.reused_buffers"]
        / med["pinocchio.rnea"],
        "fk, reused buffers / pin.forwardKinematics": med["ours.forward_kinematics.reused_buffers"]
        / med["pinocchio.forwardKinematics"],
        "fk kernel alone, one sample / pin.forwardKinematics": med["ours.fk_kernel.1_sample"]
        / med["pinocchio.forwardKinematics"],
        "evaluator (the node's single state) / pin.rnea": med[next(
            k for k in med if k.startswith("ours.evaluator"))] / med["pinocchio.rnea"],
        "id kernel alone, one sample (no loops' resolve) / pin.rnea":
            med["ours.id_kernel.1_sample"] / med["pinocchio.rnea"],
        "fk+id batch / pin.rneaInParallel(1 thread)": med[f"ours.fk+id_with_loops.batch{n}"]
        / med[f"pinocchio.rneaInParallel.1thread.batch{n}"],
        "fk+id batch, reused buffers / pin.rneaInParallel(1 thread)":
            med[f"ours.fk+id_with_loops.reused_buffers.batch{n}"]
            / med[f"pinocchio.rneaInParallel.1thread.batch{n}"],
        "fk+id batch, reused buffers, efforts only / pin.rneaInParallel(1 thread)":
            med[f"ours.fk+id_with_loops.reused_buffers.efforts_only.batch{n}"]
            / med[f"pinocchio.rneaInParallel.1thread.batch{n}"],
    }
    load1 = os.getloadavg()[0]
    startup = {}
    if not args.no_startup:
        with tempfile.TemporaryDirectory() as cache:
            startup = {"cold_compile_s": startup_seconds(cache), "cached_s": startup_seconds(cache)}

    print(f"CHARMIE ({model.n_bodies} bodies, {model.n_coordinates} coordinates); Pinocchio "
          f"{pin.__version__} on the same open tree (nq={pm.nq}, nv={pm.nv}); numpy "
          f"{np.__version__}; numba {numba.__version__} (kernels compiled: {jit.ENABLED}); "
          f"load average {load0:.2f} -> {load1:.2f} on {os.cpu_count()} CPUs")
    print(f"{'benchmark':84s} {'median':>9s} {'min':>9s} {'max':>9s}   us per state")
    for name, v in results.items():
        print(f"{name:84s} {v['median']:9.2f} {v['min']:9.2f} {v['max']:9.2f}")
    print("ratios (ours / Pinocchio, medians):")
    for name, v in ratios.items():
        print(f"  {name:72s} {v:7.2f}")
    if startup:
        print(f"start-up of `charmie-dynamics compile` in a new process: cold (empty numba "
              f"cache) {startup['cold_compile_s']:.1f} s, cached {startup['cached_s']:.1f} s")
    write_result(args.out, {
        "numba": numba.__version__, "pinocchio": pin.__version__, "batch": n,
        "loadavg_before_after": [load0, load1],
        "us_per_state": results, "ratios": ratios, "startup": startup})
    return 0


if __name__ == "__main__":
    sys.exit(main())
