"""Cost per state of CHARMIE's two actuator loops solved by the generic method (constraint
embedding of test/charmie_generic_loops.py's variant, dynamics/closed_chain.py) against the
closed forms (resolve_state + inverse_dynamics of config/charmie.yaml), one state at a time,
measured in the same process.

    .venv/bin/python benchmarks/bench_generic_loops.py [--states 50] [--repeats 7] [--out FILE.json]

Cases: ``closed forms``; ``generic, warm``: inverse dynamics of the closed chain
(``closed_chain.inverse_dynamics``: the compiled embedding) along a smooth motion sampled
every 10 ms (every input x0 + 0.1 sin(2 pi t)), each state's Newton-Raphson started from
the previous state's solution, as along a trajectory; ``generic, warm, numpy``: the same by
``closed_chain.inverse_dynamics_reference`` (the numpy embedding, the path before it was
compiled); ``generic, cold``: random states, each followed from the assembled configuration
(continuation, as the node's first input). Prints the median
(min..max) time per state over ``--repeats`` rounds, the cases taking turns in each round,
and each generic case's ratio to the closed forms. The time is this process's CPU time
(``time.process_time``): on a shared machine the wall time also counts the waits for a core.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
from charmie_dynamics import bundled_model, load_model, resolve_state  # noqa: E402
from charmie_dynamics.dynamics import closed_chain as cc  # noqa: E402
from charmie_dynamics.dynamics import inverse_dynamics  # noqa: E402
from charmie_dynamics.mechanisms.closed_chains import ClosedChain  # noqa: E402
from charmie_dynamics.model.loader import model_from_dict  # noqa: E402
from charmie_generic_loops import generic_loops_document  # noqa: E402
from common import timings_us, write_result  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    load = [os.getloadavg()[0]]
    charmie = load_model(bundled_model())
    chain = ClosedChain.build(model_from_dict(generic_loops_document(), "charmie variant"))
    pick = [charmie.input_names.index(name) for name in chain.independent_names]
    n = len(charmie.input_names)
    x0 = np.zeros(n)
    for a in charmie.actuators:
        x0[charmie.input_names.index(a.name)] = 0.40
    w, t = 2 * np.pi, 0.01 * np.arange(args.states)[:, None]
    sin, cos = np.sin(w * t) * np.ones(n), np.cos(w * t) * np.ones(n)
    smooth = (x0 + 0.1 * sin, 0.1 * w * cos, -0.1 * w * w * sin)
    for a in charmie.actuators:                      # the actuators within their stroke
        k = charmie.input_names.index(a.name)
        for arr in smooth:
            arr[:, k] *= 0.5
        smooth[0][:, k] += 0.5 * x0[k]
    rng = np.random.default_rng(14)
    cold = [rng.uniform(-0.3, 0.3, (args.states, n)) for _ in range(3)]
    for a in charmie.actuators:
        cold[0][:, charmie.input_names.index(a.name)] = rng.uniform(0.33, 0.47, args.states)
    starts, last = [], None
    for k in range(args.states):
        starts.append(last)
        last = cc.inverse_dynamics(chain, *(s[k, pick] for s in smooth), last).q

    def closed() -> None:
        for k in range(args.states):
            inverse_dynamics(charmie, resolve_state(charmie, *(s[k] for s in smooth)))

    def warm() -> None:
        for k in range(args.states):
            cc.inverse_dynamics(chain, *(s[k, pick] for s in smooth), starts[k])

    def warm_numpy() -> None:
        for k in range(args.states):
            cc.inverse_dynamics_reference(chain, *(s[k, pick] for s in smooth), starts[k])

    def cold_start() -> None:
        for k in range(args.states):
            cc.inverse_dynamics(chain, *(s[k, pick] for s in cold))

    per_pass_us = timings_us({"closed forms": closed, "generic, warm": warm,
                              "generic, warm, numpy": warm_numpy, "generic, cold": cold_start},
                             args.repeats, clock=time.process_time)
    result = {name: tuple(us / 1e3 / args.states for us in v) for name, v in per_pass_us.items()}
    base = result["closed forms"][0]
    load.append(os.getloadavg()[0])
    print(f"CHARMIE, one state at a time, {args.states} states x {args.repeats} rounds "
          f"(CPU ms per state: median (min..max)); load average {load[0]:.2f} .. {load[1]:.2f}")
    for name, (med, lo, hi) in result.items():
        ratio = "" if name == "closed forms" else f"   {med / base:.1f}x the closed forms"
        print(f"  {name:20s} {med:8.3f} ({lo:.3f}..{hi:.3f}){ratio}")
    if args.out is not None:
        write_result(args.out, {"load_average": load, "states": args.states,
                                "ms_per_state": {k: v[0] for k, v in result.items()},
                                "ratio_to_closed_forms": {k: v[0] / base for k, v in result.items()}})


if __name__ == "__main__":
    main()
