"""The dynamics node's evaluation of a model with loops (``LoopEvaluator``: one kernel, the
compiled embedding and the tree's evaluator twice) against its peers in the same process:
the closed chain's inverse dynamics (``closed_chain.inverse_dynamics``: the compiled
embedding, the mass matrix and bias forces, no TF or joint wrenches), the same in numpy
(``closed_chain.inverse_dynamics_reference``: the path before the embedding was compiled)
and the tree's ``Evaluator`` on the same model (the open tree, no loop solved).

    .venv/bin/python benchmarks/bench_loop_evaluator.py [--calls 300] [--repeats 5] [--out FILE.json]

For the five-bar and the IRSBot-2: milliseconds per call (median of the rounds; the cases
take turns within each round, so a change of machine load hits them alike), along a path of
small steps (the warm start's usual case), and the ratios to the peers; the numpy case runs
a tenth of the calls (its figure is per call all the same).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from charmie_dynamics import load_model
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.evaluators.evaluator import Evaluator
from charmie_dynamics.evaluators.loop_evaluator import LoopEvaluator
from charmie_dynamics.resources import share_directory
from common import timings_us, write_result

MODELS = ("five_bar", "irsbot2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    load = [os.getloadavg()[0]]
    print(f"load average {load[0]:.2f}; {args.calls} calls x {args.repeats} rounds")
    results = {}
    for name in MODELS:
        model = load_model(share_directory() / "config" / "examples" / f"{name}.yaml")
        # as the dynamics node builds it (max_loop_jump's default, 0.5: the jump check runs)
        loop, tree = LoopEvaluator(model, max_jump=0.5), Evaluator(model)
        chain = loop.chain
        x0 = chain.assembled[chain.independent]
        steps = 1e-3 * np.arange(args.calls)[:, None] * np.linspace(1.0, -0.5, len(x0))
        xd, xdd = np.full(len(x0), 0.2), np.full(len(x0), 0.5)
        n = model.n_coordinates
        q, qd, qdd = chain.assembled, np.full(n, 0.2), np.full(n, 0.5)

        def run_loop() -> None:
            loop.last_solution = chain.assembled.copy()     # each round walks the same path
            for dx in steps:
                loop(x0 + dx, xd, xdd)

        def run_chain() -> None:
            start = chain.assembled
            for dx in steps:
                start = cc.inverse_dynamics(chain, x0 + dx, xd, xdd, start).q

        few = steps[:max(1, len(steps) // 10)]

        def run_numpy() -> None:
            start = chain.assembled
            for dx in few:
                start = cc.inverse_dynamics_reference(chain, x0 + dx, xd, xdd, start).q

        def run_tree() -> None:
            for _ in steps:
                tree(q, qd, qdd)

        cases = {"LoopEvaluator": run_loop, "closed_chain.inverse_dynamics": run_chain,
                 "closed_chain.inverse_dynamics_reference (numpy)": run_numpy,
                 "Evaluator (open tree)": run_tree}
        calls = {k: (len(few) if k.endswith("(numpy)") else len(steps)) for k in cases}
        median = {k: v[0] / 1e3 / calls[k]
                  for k, v in timings_us(cases, args.repeats).items()}   # ms per call
        results[name] = {"ms_per_call": median}
        print(f"{name}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in median.items()))
        print(f"  LoopEvaluator / closed_chain.inverse_dynamics = "
              f"{median['LoopEvaluator'] / median['closed_chain.inverse_dynamics']:.2f}; "
              f"LoopEvaluator / Evaluator = "
              f"{median['LoopEvaluator'] / median['Evaluator (open tree)']:.1f}; "
              f"numpy / LoopEvaluator = "
              f"{median['closed_chain.inverse_dynamics_reference (numpy)'] / median['LoopEvaluator']:.0f}")
    load.append(os.getloadavg()[0])
    print(f"load average at the end {load[1]:.2f}")
    if args.out is not None:
        write_result(args.out, {"load_average": load, "calls": args.calls,
                                "repeats": args.repeats, "models": results})


if __name__ == "__main__":
    main()
