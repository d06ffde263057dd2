"""The IRSBot-2's platform motion as input at a 1 ms sample period: ``analyze --motion
seed003-parabola --dt 0.001``'s computation (cli/platform_analysis.py: per sample the limbs'
inverse kinematics by algorithm 1 and by algorithm 3, mechanisms/closed_chains/limbs.py,
then the closed chain's inverse dynamics and energy), without its plots and files.

    .venv/bin/python benchmarks/bench_platform.py [--dt 0.001] [--repeats 1] [--out FILE.json]

Prints the CPU time (``time.process_time``) of the whole path in seconds, per sample in
milliseconds, and the ratio per sample to the peer measured in the same process: the same
samples given as the actuated coordinates (q1_1, q1_2 from the path's result, their rates
by differences) to the dynamics node's evaluator (``LoopEvaluator.path``, one kernel call),
the cost of the loads when the platform motion is not the input. Issue 25's target: the 1 ms path in
seconds, not minutes (before the limbs' inner solves were compiled: 32 s quiet, 105 s at
load 3.8).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from common import write_result

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from charmie_dynamics import load_model  # noqa: E402
from charmie_dynamics.cli.platform_analysis import platform_analysis  # noqa: E402
from charmie_dynamics.evaluators.loop_evaluator import LoopEvaluator  # noqa: E402
from charmie_dynamics.mechanisms.closed_chains import ClosedChain  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt", type=float, default=0.001)
    parser.add_argument("--repeats", type=int, default=1, choices=range(1, 11),
                        metavar="1..10")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    load = [os.getloadavg()[0]]
    model = load_model(ROOT / "config" / "examples" / "irsbot2.yaml")
    chain = ClosedChain.build(model)
    platform_analysis(chain, 0.05)                    # compiled kernels loaded, first calls
    seconds, peer = [], []
    for _ in range(args.repeats):
        start = time.process_time()
        tables = platform_analysis(chain, args.dt)[0]
        seconds.append(time.process_time() - start)
        columns = dict(zip(tables[0][1], [c for block in tables[0][2] for c in
                                          (block.T if block.ndim == 2 else [block])]))
        x = np.stack([columns[name] for name in chain.independent_names], axis=1)
        xd = np.gradient(x, args.dt, axis=0)
        xdd = np.gradient(xd, args.dt, axis=0)
        LoopEvaluator(model).path(x[:2], xd[:2], xdd[:2])      # its kernels loaded
        evaluator = LoopEvaluator(model)
        start = time.process_time()
        evaluator.path(x, xd, xdd)
        peer.append(time.process_time() - start)
    samples = len(x)
    total = statistics.median(seconds)
    per_sample_ms = 1e3 * total / samples
    peer_ms = 1e3 * statistics.median(peer) / samples
    load.append(os.getloadavg()[0])
    print(f"IRSBot-2, seed003-parabola at dt = {args.dt:g} s: {samples} samples")
    print(f"  platform path (algorithms 1 and 3, inverse dynamics, energy): {total:.2f} s CPU, "
          f"{per_sample_ms:.3f} ms per sample")
    print(f"  peer, the same samples as actuated inputs (LoopEvaluator.path): {peer_ms:.4f} ms "
          f"per sample; ratio {per_sample_ms / peer_ms:.1f}")
    print(f"  load average {load[0]:.2f} -> {load[1]:.2f}")
    if args.out:
        write_result(args.out, {"dt": args.dt, "samples": samples, "seconds": seconds,
                                "seconds_median": total, "ms_per_sample": per_sample_ms,
                                "peer_ms_per_sample": peer_ms,
                                "ratio_to_peer": per_sample_ms / peer_ms, "loadavg": load})


if __name__ == "__main__":
    main()
