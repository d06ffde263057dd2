"""Designs evaluated per second by ``charmie-dynamics study``: CHARMIE's balancing study
(config/studies/balancing.yaml: the validation motion, two payload cases) on one core and on
``--jobs`` cores (joblib), and their ratio, in one run.

    .venv/bin/python benchmarks/bench_study.py [--designs 400] [--jobs 2] [--repeats 3]
                                               [--out benchmarks/results/study_latest.json]

Each round evaluates the same Latin-hypercube designs (``--designs``) with one process, then
with ``--jobs`` (the cases take turns, so a change of the machine's load hits them alike;
one warm-up round first: numba's kernels loaded in every worker). Wall time: on a shared
machine the waits for a core count, and the load average is printed.
"""
from __future__ import annotations

import argparse
import os
import statistics
from pathlib import Path

from charmie_dynamics.resources import bundled_model
from charmie_dynamics.studies import DesignProblem, Runner, read_study
from charmie_dynamics.studies.kinds import sweep
from charmie_dynamics.studies.study_file import SweepSpec
from common import take_turns, write_result

STUDY = Path(__file__).resolve().parent.parent / "config" / "studies" / "balancing.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", type=int, default=400)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/study_latest.json"))
    args = parser.parse_args()
    study = read_study(STUDY, bundled_model())
    problem = DesignProblem.of(study)
    spec = SweepSpec("lhs", samples=args.designs, seed=0)
    load0 = os.getloadavg()
    with Runner(1) as one, Runner(args.jobs) as many:
        seconds = take_turns({"1": lambda: sweep(problem, spec, one),
                              str(args.jobs): lambda: sweep(problem, spec, many)}, args.repeats)
    load1 = os.getloadavg()
    rate = {name: args.designs / statistics.median(v) for name, v in seconds.items()}
    ratio = rate[str(args.jobs)] / rate["1"]
    for name, r in rate.items():
        print(f"{name} core(s): {r:.1f} designs/s ({len(study.payload_cases)} load cases of "
              f"{len(problem.cases[0].trajectory.t)} samples each)")
    print(f"ratio {args.jobs} cores / 1: {ratio:.2f}; load average {load0[0]:.2f} -> "
          f"{load1[0]:.2f} on {os.cpu_count()} CPUs")
    write_result(args.out, {"study": str(STUDY.name), "designs": args.designs,
                            "designs_per_second": rate, "ratio": ratio,
                            "loadavg_before_after": [load0[0], load1[0]]})


if __name__ == "__main__":
    main()
