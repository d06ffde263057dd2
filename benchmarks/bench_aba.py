"""The articulated-body algorithm against Pinocchio's ``aba``, per body, in one process: chains
of 20 to 300 bodies (a revolute joint each, axes alternating x and y, as bench_loading.py
writes them) and URDF robots of example-robot-data (Talos, G1; fixed base) when installed.
Not longer chains: Pinocchio's ``Data`` holds nv^3 tensors (measured with Pinocchio 4.1:
``createData`` of a 250-body chain takes 1.0 GB, so 990 bodies would take about 60 GB).

    .venv/bin/python benchmarks/bench_aba.py [--bodies 20 50 100 200 300] [--repeats 9]
                                              [--out benchmarks/results/aba_latest.json]

For every model, one state: ours ``forward_dynamics(model, q, qd, tau, "aba", data=...)``
with reused buffers (as a simulator calls it) and ``pin.aba(model, data, q, v, tau)`` on
Pinocchio's model of the same tree (the chains exported through our URDF), both given the
same state; the two accelerations are compared (largest relative difference) before any
timing. Prints the medians (the cases take turns, so a change of load hits them alike), the
ratio ours/Pinocchio, and for the chains a least-squares line time = fixed + per_body * n
for each, whose per-body ratio is the issue's measure (ABA <= 2x Pinocchio per body).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import logging
import math
import os
from pathlib import Path

import numpy as np
import pinocchio as pin

from bench_loading import chain_text
from charmie_dynamics import load_model
from charmie_dynamics.dynamics import forward_dynamics
from charmie_dynamics.dynamics.forward import ForwardDynamicsData
from charmie_dynamics.export.urdf import urdf_from_model
from charmie_dynamics.model import model_from_text
from common import timings_us, write_result

ROBOTS = ("talos_data/robots/talos_reduced.urdf", "g1_description/urdf/g1_29dof_rev_1_0.urdf")


def robot_files() -> dict[str, Path]:
    """The ROBOTS' URDF files of example-robot-data, where installed."""
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return {}
    found = {str(f).split("robots/", 1)[-1]: Path(f.locate()) for f in files
             if str(f).endswith(".urdf")}
    return {name: found[name] for name in ROBOTS if name in found}


class Pair:
    """Our model and Pinocchio's of one tree, and one random state in both: Pinocchio's
    joints matched to our coordinates by name (continuous joints as cos, sin)."""

    def __init__(self, model, pm: pin.Model, rng: np.random.Generator) -> None:
        self.model, self.pm, self.pd = model, pm, pm.createData()
        n = model.n_coordinates
        self.q = np.zeros(model.nq)
        self.qd, self.tau = rng.normal(size=n), rng.normal(size=n)
        self.qp, self.vp, self.taup = pin.neutral(pm), np.zeros(pm.nv), np.zeros(pm.nv)
        self.index_v = []               # Pinocchio's v index of each of our coordinates
        for c, name in enumerate(model.coordinate_names):
            joint = pm.joints[pm.getJointId(name)]
            value = rng.uniform(-1.0, 1.0)
            self.q[model.coordinate_configuration[c]] = value
            if joint.nq == 2:
                self.qp[joint.idx_q:joint.idx_q + 2] = math.cos(value), math.sin(value)
            else:
                self.qp[joint.idx_q] = value
            self.vp[joint.idx_v], self.taup[joint.idx_v] = self.qd[c], self.tau[c]
            self.index_v.append(joint.idx_v)
        if len(set(self.index_v)) != pm.nv:
            raise ValueError(f"{model.name}: Pinocchio's {pm.nv} velocities are not our "
                             f"{n} coordinates one to one")
        self.data = ForwardDynamicsData(model)

    def ours(self) -> np.ndarray:
        return forward_dynamics(self.model, self.q, self.qd, self.tau, "aba", data=self.data)

    def pinocchio(self) -> np.ndarray:
        return pin.aba(self.pm, self.pd, self.qp, self.vp, self.taup)

    def difference(self) -> float:
        ref = self.pinocchio()[self.index_v]
        return float(np.abs(self.ours() - ref).max() / np.abs(ref).max())


def line(x: list[float], y: list[float]) -> tuple[float, float]:
    """Least-squares fixed + per_body * x."""
    per_body, fixed = np.polyfit(np.asarray(x, dtype=float), np.asarray(y), 1)
    return float(fixed), float(per_body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, nargs="+", default=[20, 50, 100, 200, 300])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--calls", type=int, default=50, help="calls per timed round")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/aba_latest.json"))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    pairs: dict[str, Pair] = {}
    for n in args.bodies:
        model = model_from_text(chain_text(n), f"chain{n}")
        pm = pin.buildModelFromXML(urdf_from_model(model, include_auxiliary=False))
        pm.gravity = pin.Motion(np.asarray(model.gravity), np.zeros(3))
        pairs[f"chain {n}"] = Pair(model, pm, rng)
    logging.getLogger("charmie_dynamics").setLevel(logging.ERROR)     # the files' warnings
    for name, path in robot_files().items():
        pairs[name.split("/")[-1]] = Pair(load_model(path), pin.buildModelFromUrdf(str(path)),
                                          rng)
    differences = {label: p.difference() for label, p in pairs.items()}
    cases = {}
    for label, p in pairs.items():
        cases[f"{label} ours"], cases[f"{label} pin"] = p.ours, p.pinocchio
    load0 = os.getloadavg()[0]
    times = {name: med for name, (med, _, _) in timings_us(cases, args.repeats,
                                                           args.calls).items()}
    load1 = os.getloadavg()[0]
    rows = {label: {"bodies": p.model.n_bodies, "nv": p.model.n_coordinates,
                    "ours_us": times[f"{label} ours"], "pinocchio_us": times[f"{label} pin"],
                    "ratio": times[f"{label} ours"] / times[f"{label} pin"],
                    "relative_difference": differences[label]} for label, p in pairs.items()}
    chains = [r for label, r in rows.items() if label.startswith("chain")]
    fit = {}
    if len(chains) >= 2:
        for who in ("ours", "pinocchio"):
            fit[who] = dict(zip(("fixed_us", "per_body_us"),
                                line([r["bodies"] for r in chains], [r[f"{who}_us"] for r in chains])))
        fit["per_body_ratio"] = fit["ours"]["per_body_us"] / fit["pinocchio"]["per_body_us"]
    print(f"ABA, one state, medians of {args.repeats} rounds of {args.calls} calls (us); "
          f"load average {load0:.2f} -> {load1:.2f} on {os.cpu_count()} CPUs; Pinocchio "
          f"{pin.__version__}")
    print(f"{'model':28s} {'bodies':>6s} {'nv':>4s} {'ours':>9s} {'pin.aba':>9s} {'ratio':>6s} "
          f"{'ours/body':>9s} {'pin/body':>9s} {'rel.diff':>9s}")
    for label, r in rows.items():
        print(f"{label:28s} {r['bodies']:6d} {r['nv']:4d} {r['ours_us']:9.2f} "
              f"{r['pinocchio_us']:9.2f} {r['ratio']:6.2f} {r['ours_us'] / r['bodies']:9.3f} "
              f"{r['pinocchio_us'] / r['bodies']:9.3f} {r['relative_difference']:9.1e}")
    if fit:
        print(f"chains, least squares time = fixed + per_body * bodies: ours "
              f"{fit['ours']['fixed_us']:.2f} + {fit['ours']['per_body_us']:.4f} n, Pinocchio "
              f"{fit['pinocchio']['fixed_us']:.2f} + {fit['pinocchio']['per_body_us']:.4f} n; "
              f"per-body ratio {fit['per_body_ratio']:.2f}")
    write_result(args.out, {"pinocchio": pin.__version__, "loadavg_before_after": [load0, load1],
                            "rows": rows, "chains_fit": fit})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
