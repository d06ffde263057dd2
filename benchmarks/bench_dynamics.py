"""Benchmark of the numerical core against Pinocchio, in one process, on the bundled CHARMIE.

    .venv/bin/python benchmarks/bench_dynamics.py [--batch 10000] [--repeats 7] [--out FILE.json]

Prints microseconds per state (median, min and max over repeats) for our forward kinematics,
forward kinematics + inverse dynamics with the closed loops (single state and batched), and
Pinocchio's forwardKinematics, rnea and rneaInParallel (one thread) on the same open tree
(exported through our URDF: the loops replaced by their joints, no springs), with the
ratios ours/Pinocchio. Results are also written as JSON, so runs can be compared.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

from charmie_dynamics import bundled_model, forward_kinematics, load_model, resolve_state
from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.export.urdf import urdf_from_model


def per_call_us(fn, calls: int, repeats: int, per: int = 1) -> dict:
    """Microseconds per state: ``fn`` is called ``calls`` times per repeat, each call
    evaluating ``per`` states."""
    fn()                                            # warm-up (caches, first allocations)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls / per * 1e6)
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def random_inputs(model, rng, n):
    x = rng.uniform(-np.pi, np.pi, (n, len(model.input_names)))
    for a in model.actuators:
        x[:, model.input_names.index(a.name)] = rng.uniform(*a.stroke, n)
    return x, rng.normal(size=x.shape) * 0.1, rng.normal(size=x.shape) * 0.1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=50, help="single-state calls per repeat")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/latest.json"))
    args = parser.parse_args()

    model = load_model(bundled_model())
    rng = np.random.default_rng(0)
    x1, xd1, xdd1 = (v[0] for v in random_inputs(model, rng, 1))
    xb, xdb, xddb = random_inputs(model, rng, args.batch)
    state1 = resolve_state(model, x1, xd1, xdd1)

    pm = pin.buildModelFromXML(urdf_from_model(model, include_auxiliary=False), True)
    pm.gravity = pin.Motion(np.asarray(model.gravity), np.zeros(3))
    pd = pm.createData()
    # our coordinates -> Pinocchio's q (continuous joints take cos, sin)
    def pin_q(q):
        out = pin.neutral(pm)
        for c, name in enumerate(model.coordinate_names):
            j = pm.joints[pm.getJointId(name)]
            if j.nq == 2:
                out[j.idx_q:j.idx_q + 2] = np.cos(q[c]), np.sin(q[c])
            else:
                out[j.idx_q] = q[c]
        return out

    def pin_v(v):
        out = np.zeros(pm.nv)
        for c, name in enumerate(model.coordinate_names):
            out[pm.joints[pm.getJointId(name)].idx_v] = v[c]
        return out

    q1, v1, a1 = pin_q(state1.q), pin_v(state1.qd), pin_v(state1.qdd)
    stateb = resolve_state(model, xb, xdb, xddb)
    qb = np.column_stack([pin_q(q) for q in stateb.q])
    vb = np.column_stack([pin_v(v) for v in stateb.qd])
    ab = np.column_stack([pin_v(a) for a in stateb.qdd])
    pool = pin.ModelPool(pm, 1)

    r, c, n = args.repeats, args.calls, args.batch
    results = {
        "ours.forward_kinematics": per_call_us(lambda: forward_kinematics(model, state1.q), c, r),
        "ours.fk+id_with_loops": per_call_us(
            lambda: inverse_dynamics(model, resolve_state(model, x1, xd1, xdd1)), c, r),
        f"ours.fk+id_with_loops.batch{n}": per_call_us(
            lambda: inverse_dynamics(model, resolve_state(model, xb, xdb, xddb)), 1, r, n),
        "pinocchio.forwardKinematics": per_call_us(lambda: pin.forwardKinematics(pm, pd, q1), 1000, r),
        "pinocchio.rnea": per_call_us(lambda: pin.rnea(pm, pd, q1, v1, a1), 1000, r),
        f"pinocchio.rneaInParallel.1thread.batch{n}": per_call_us(
            lambda: pin.rneaInParallel(1, pool, qb, vb, ab), 1, r, n),
    }
    ratios = {
        "fk / pin.forwardKinematics": results["ours.forward_kinematics"]["median"]
        / results["pinocchio.forwardKinematics"]["median"],
        "fk+id single / pin.rnea": results["ours.fk+id_with_loops"]["median"]
        / results["pinocchio.rnea"]["median"],
        "fk+id batch / pin.rneaInParallel(1 thread)": results[f"ours.fk+id_with_loops.batch{n}"]["median"]
        / results[f"pinocchio.rneaInParallel.1thread.batch{n}"]["median"],
    }
    print(f"CHARMIE ({model.n_bodies} bodies, {model.n_coordinates} coordinates); Pinocchio "
          f"{pin.__version__} on the same open tree (nq={pm.nq}, nv={pm.nv}); numpy {np.__version__}")
    print(f"{'benchmark':48s} {'median':>10s} {'min':>10s} {'max':>10s}   us per state")
    for name, v in results.items():
        print(f"{name:48s} {v['median']:10.2f} {v['min']:10.2f} {v['max']:10.2f}")
    print("ratios (ours / Pinocchio, medians):")
    for name, v in ratios.items():
        print(f"  {name:46s} {v:10.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "python": sys.version.split()[0],
        "machine": platform.machine(), "processor": platform.processor(),
        "numpy": np.__version__, "pinocchio": pin.__version__, "batch": n,
        "us_per_state": results, "ratios": ratios}, indent=2))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
