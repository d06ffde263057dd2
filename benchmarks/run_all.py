"""Every benchmark in one run, and the targets of issues 14 and 37 as measured ratios.

    .venv/bin/python benchmarks/run_all.py [--quick] [--skip node,...] [--out DIR]

(--skip with --out DIR of an earlier run re-reads that run's JSON for the skipped scripts: a
script that failed can be run again alone into DIR and the table made again.)

Runs the benchmark scripts one after another (each in its own process, as a user would),
each writing its JSON into DIR (default benchmarks/results/run_<time>/), then prints one table:
each target, the figure measured and whether it is met, read from those JSON
files, and writes it with the load average before and after every script to DIR/summary.json.
The ratios are the scripts' own (ours over Pinocchio or over the echo node, within one
process); nothing here times anything. --quick shortens every script (fewer rounds, 10 s node
runs): for checking that the pipeline works, not for figures.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Optional

from common import write_result

HERE = Path(__file__).resolve().parent

# script -> (arguments, quick arguments); each takes --out FILE.json
SCRIPTS = {
    "dynamics": ("bench_dynamics.py", ["--no-startup"], ["--no-startup", "--repeats", "3", "--batch", "2000"]),
    "loading": ("bench_loading.py", [], ["--repeats", "3"]),
    "aba": ("bench_aba.py", [], ["--repeats", "3", "--bodies", "20", "100"]),
    "simulator": ("bench_simulator.py", [], ["--repeats", "3"]),
    "forward_dynamics": ("bench_forward_dynamics.py", ["--batch", "10000"],
                         ["--repeats", "3", "--batch", "1000"]),
    "node_callback": ("bench_node_callback.py", [], ["--calls", "500"]),
    "loop_evaluator": ("bench_loop_evaluator.py", [], ["--calls", "100", "--repeats", "3"]),
    "generic_loops": ("bench_generic_loops.py", [], ["--states", "20", "--repeats", "3"]),
    "platform": ("bench_platform.py", [], ["--dt", "0.01"]),
    "node": ("bench_node.py", ["--rate", "1000", "--duration", "30"],
             ["--rate", "1000", "--duration", "10"]),
}


def _get(data: dict, *path):
    for key in path:
        data = data[key]
    return data


def _node_run(results: dict, run: str) -> dict:
    return next(r for r in results["node"]["runs"] if r["run"] == run)


# (target, how it is read, the bound, "<=" or ">="); the bounds of issue 37 (performance,
# round 3) where it sets one, else of the issue that did
TARGETS: list[tuple[str, Callable[[dict], float], float, str]] = [
    ("single state: the evaluator (the node's) / pin.rnea",
     lambda r: _get(r, "dynamics", "ratios", "evaluator (the node's single state) / pin.rnea"),
     2.0, "<="),
    ("single state: resolve_state + inverse_dynamics, reused buffers / pin.rnea",
     lambda r: _get(r, "dynamics", "ratios", "fk+id single, reused buffers / pin.rnea"), 3.0, "<="),
    ("batch, efforts only / pin.rneaInParallel (1 thread)",
     lambda r: _get(r, "dynamics", "ratios",
                    "fk+id batch, reused buffers, efforts only / pin.rneaInParallel(1 thread)"), 1.0, "<="),
    ("FK, reused buffers / pin.forwardKinematics",
     lambda r: _get(r, "dynamics", "ratios", "fk, reused buffers / pin.forwardKinematics"), 1.5, "<="),
    ("ABA per body on the chains / pin.aba", lambda r: _get(r, "aba", "chains_fit", "per_body_ratio"), 1.5, "<="),
    ("ABA on Talos / pin.aba",
     lambda r: next(v["ratio"] for k, v in r["aba"]["rows"].items() if k.startswith("talos")), 2.0, "<="),
    ("ABA on G1 / pin.aba",
     lambda r: next(v["ratio"] for k, v in r["aba"]["rows"].items() if "g1" in k.lower()), 2.0, "<="),
    ("load a 1,000-body model, ms",
     lambda r: next(v["ms"]["model_from_text"] for k, v in r["loading"]["results"].items()
                    if k.startswith("chain")), 100.0, "<="),
    ("simulator, RK4 at 1 ms on CHARMIE, x real time",
     lambda r: _get(r, "simulator", "real_time_factor", "rk4 compiled x10"), 5.0, ">="),
    ("one state's forward_dynamics (default call) / the batch's ABA per state",
     lambda r: _get(r, "forward_dynamics", "ratios",
                    "cholesky single, default call / aba batch per state"), 3.0, "<="),
    ("one state's forward_dynamics, reused data: cholesky / aba",
     lambda r: _get(r, "forward_dynamics", "ratios",
                    "cholesky single / aba single, reused data"), 2.0, "<="),
    ("five-bar: the node's evaluation (LoopEvaluator), ms",
     lambda r: _get(r, "loop_evaluator", "models", "five_bar", "ms_per_call", "LoopEvaluator"),
     0.1, "<="),
    ("CHARMIE by the generic loops (warm) / its closed forms",
     lambda r: _get(r, "generic_loops", "ratio_to_closed_forms", "generic, warm"), 3.0, "<="),
    ("IRSBot-2: the platform motion at 1 ms (analyze's computation), s CPU",
     lambda r: _get(r, "platform", "seconds_median"), 60.0, "<="),
    ("node at 1 kHz: dropped inputs, points over the echo node",
     lambda r: _node_run(r, "a")["over_echo"]["dropped_extra_pct"], 1.0, "<="),
    ("node at 1 kHz: feedforward latency p99 / the echo node's",
     lambda r: _node_run(r, "a")["over_echo"]["p99"], 1.5, "<="),
    ("node at 1 kHz: CPU per evaluation / the echo node's",
     lambda r: _node_run(r, "a")["over_echo"]["cpu_per_evaluation"], 1.5, "<="),
]


def _read(fn: Callable[[dict], float], results: dict) -> Optional[float]:
    try:
        return float(fn(results))
    except (KeyError, StopIteration, TypeError):
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs: checks the pipeline, no figures")
    parser.add_argument("--skip", default="", help=f"comma list of {', '.join(SCRIPTS)} not to run "
                        "(their JSON already in --out DIR, if any, is read)")
    parser.add_argument("--out", type=Path, default=None, help="directory for the JSON files")
    args = parser.parse_args()
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    if skip - set(SCRIPTS):
        parser.error(f"--skip: unknown {', '.join(sorted(skip - set(SCRIPTS)))}; expected {', '.join(SCRIPTS)}")
    out = args.out or HERE / "results" / time.strftime("run_%Y%m%dT%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    results, loads, failed = {}, {}, []
    for name, (script, full, quick) in SCRIPTS.items():
        target = out / f"{name}.json"
        if name in skip:          # a JSON already in DIR (an earlier run of it) still counts
            if target.is_file():
                results[name] = json.loads(target.read_text())
            continue
        load0 = os.getloadavg()
        print(f"== {script} (load average {load0[0]:.2f})", flush=True)
        rc = subprocess.call([sys.executable, str(HERE / script), *(quick if args.quick else full),
                              "--out", str(target)])
        loads[name] = [load0[0], os.getloadavg()[0]]
        if rc != 0 or not target.is_file():
            failed.append(f"{script} (exit {rc})")
            continue
        results[name] = json.loads(target.read_text())
    rows = []
    for label, fn, bound, sense in TARGETS:
        value = _read(fn, results)
        met = None if value is None else (value <= bound if sense == "<=" else value >= bound)
        rows.append({"target": label, "measured": value, "bound": bound, "sense": sense, "met": met})
    print(f"\nthe targets ({'QUICK: not figures' if args.quick else 'this run'}; "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()})")
    for row in rows:
        v = "not measured" if row["measured"] is None else f"{row['measured']:.3g}"
        verdict = {None: "-", True: "met", False: "NOT met"}[row["met"]]
        print(f"  {row['target']:68s} {v:>12s}  {row['sense']} {row['bound']:g}  {verdict}")
    print("load average (1 min) before -> after each script: "
          + ", ".join(f"{k} {a:.2f}->{b:.2f}" for k, (a, b) in loads.items()))
    for f in failed:
        print(f"FAILED: {f}", file=sys.stderr)
    write_result(out / "summary.json", {"quick": args.quick, "loadavg_before_after": loads,
                                        "targets": rows, "failed": failed})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
