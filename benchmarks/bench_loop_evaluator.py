"""The dynamics node's evaluation of a model with loops (``LoopEvaluator``) against its peers
in the same process: the closed chain's inverse dynamics (``closed_chain.inverse_dynamics``:
the same solve, mass matrix and bias forces, no TF or joint wrenches) and the tree's
``Evaluator`` on the same model (the open tree, no loop solved).

    .venv/bin/python benchmarks/bench_loop_evaluator.py [--calls 300] [--repeats 5]

For the five-bar and the IRSBot-2: milliseconds per call (median of the rounds; the cases
take turns within each round, so a change of machine load hits them alike), along a path of
small steps (the warm start's usual case), and the ratios to the peers.
"""
from __future__ import annotations

import argparse
import os

import numpy as np

from common import timings_us
from charmie_dynamics import load_model
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.evaluators.evaluator import Evaluator
from charmie_dynamics.evaluators.loop_evaluator import LoopEvaluator
from charmie_dynamics.resources import share_directory

MODELS = ("five_bar", "irsbot2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; {args.calls} calls x {args.repeats} rounds")
    for name in MODELS:
        model = load_model(share_directory() / "config" / "examples" / f"{name}.yaml")
        loop, tree = LoopEvaluator(model), Evaluator(model)
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

        def run_tree() -> None:
            for _ in steps:
                tree(q, qd, qdd)

        cases = {"LoopEvaluator": run_loop, "closed_chain.inverse_dynamics": run_chain,
                 "Evaluator (open tree)": run_tree}
        median = {k: v[0] / 1e3 / args.calls
                  for k, v in timings_us(cases, args.repeats).items()}   # ms per call
        print(f"{name}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in median.items()))
        print(f"  LoopEvaluator / closed_chain.inverse_dynamics = "
              f"{median['LoopEvaluator'] / median['closed_chain.inverse_dynamics']:.2f}; "
              f"LoopEvaluator / Evaluator = "
              f"{median['LoopEvaluator'] / median['Evaluator (open tree)']:.1f}")


if __name__ == "__main__":
    main()
