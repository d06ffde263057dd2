"""Timing of loading a model from its YAML text: a chain of ``--bodies`` bodies (a revolute
joint each, mass, centre of mass, inertia, as a model file writes them) and CHARMIE.

    .venv/bin/python benchmarks/bench_loading.py [--bodies 1000] [--repeats 7] [--cpu]
                                                 [--out benchmarks/results/loading_latest.json]

Per text, medians over ``--repeats`` (cases take turns, so a change of load hits them
alike), in one process; wall time, or with ``--cpu`` the process's CPU time (every thread's:
on a shared machine the wall time also counts the waits for a core):

* ``parse_yaml``: the package's guarded parse (documents.py: plain data built straight from
  libyaml's parser events);
* ``composer``: the route of any other document (anchors, tags), and of every document in
  the release before this one: libyaml's parser and composer on a thread of its own, the
  plain-data constructor;
* ``before``: the route of the previous release, libyaml's parser with PyYAML's pure-Python
  composer and constructor (merge keys refused: the same work);
* ``yaml.CSafeLoader``: PyYAML's own all-C loader, unguarded (the floor of libyaml here);
* ``model_from_text``: the whole load, parse and model building.

Prints milliseconds, ratios to ``composer``, ``before`` and ``yaml.CSafeLoader``, and the load
average.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.resolver import Resolver

from charmie_dynamics import bundled_model, documents
from charmie_dynamics.documents import CParser, nesting_bound, parse_yaml, read_text
from charmie_dynamics.model import model_from_text
from charmie_dynamics.model.loader import FORMAT
from common import take_turns, write_result


class Before(Composer, CParser, yaml.constructor.SafeConstructor, Resolver):
    """The previous release's loader: libyaml's parser, the pure-Python composer."""

    def __init__(self, stream: str) -> None:
        CParser.__init__(self, stream)
        Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        Resolver.__init__(self)


def composer_route(text: str) -> Any:
    """parse_yaml's route for a document that is not plain data, as parse_yaml takes it
    (the cyclic collector paused; libyaml's composer on a thread with the bound's stack)."""
    with documents._cyclic_gc_paused():
        return documents._load_on_own_stack(text, max(documents.C_STACK_MIN, nesting_bound(text)
                                                      * documents.C_STACK_PER_LEVEL))


def chain_text(n: int) -> str:
    """A model file of an n-body chain, written by PyYAML as a model file is (flow lists)."""
    bodies = [{"name": f"b{k}", "parent": "world" if k == 0 else f"b{k - 1}",
               "origin": [0.0, 0.0, 0.01],
               "joint": {"type": "R", "axis": "xy"[k % 2], "coordinate": f"q{k}"},
               "mass": 0.1, "com": [0.0, 0.0, 0.005],
               "inertia": {"ixx": 1e-4, "iyy": 1e-4, "izz": 1e-4}} for k in range(n)]
    return yaml.safe_dump({"format": FORMAT, "name": f"chain{n}", "bodies": bodies},
                          default_flow_style=None, sort_keys=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cpu", action="store_true", help="CPU time, not wall time")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/loading_latest.json"))
    args = parser.parse_args()
    if CParser is None:
        parser.error("PyYAML without libyaml: nothing to compare")
    texts = {f"chain of {args.bodies}": chain_text(args.bodies),
             "CHARMIE": read_text(bundled_model())}
    load0 = os.getloadavg()
    results = {}
    for label, text in texts.items():
        times = {name: 1e3 * statistics.median(v) for name, v in take_turns({
            "parse_yaml": lambda: parse_yaml(text, "s"),
            "composer": lambda: composer_route(text),
            "before": lambda: yaml.load(text, Loader=Before),
            "yaml.CSafeLoader": lambda: yaml.load(text, Loader=yaml.CSafeLoader),
            "model_from_text": lambda: model_from_text(text, "s"),
        }, args.repeats, clock=time.process_time if args.cpu else time.perf_counter).items()}
        model = model_from_text(text, "s")
        results[label] = {"bytes": len(text.encode()), "bodies": model.n_bodies,
                          "nesting_bound": nesting_bound(text), "ms": times,
                          "parse_over_composer": times["parse_yaml"] / times["composer"],
                          "parse_over_before": times["parse_yaml"] / times["before"],
                          "parse_over_csafeloader": times["parse_yaml"] / times["yaml.CSafeLoader"],
                          "model_ms_per_body": times["model_from_text"] / model.n_bodies}
    load1 = os.getloadavg()
    print(f"model loading, medians of {args.repeats} (ms, {'CPU' if args.cpu else 'wall'} time); "
          f"load average {load0[0]:.2f} -> "
          f"{load1[0]:.2f}; {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"PyYAML {yaml.__version__}")
    print(f"{'':16s} {'kB':>6s} {'bound':>6s} {'parse_yaml':>10s} {'composer':>8s} {'ratio':>6s} "
          f"{'before':>8s} {'ratio':>6s} "
          f"{'CSafeLoader':>11s} {'ratio':>6s} {'model_from_text':>15s} {'per body':>8s}")
    for label, r in results.items():
        t = r["ms"]
        print(f"{label:16s} {r['bytes'] / 1e3:6.1f} {r['nesting_bound']:6d} "
              f"{t['parse_yaml']:10.1f} {t['composer']:8.1f} {r['parse_over_composer']:6.2f} "
              f"{t['before']:8.1f} {r['parse_over_before']:6.2f} "
              f"{t['yaml.CSafeLoader']:11.1f} {r['parse_over_csafeloader']:6.2f} "
              f"{t['model_from_text']:15.1f} {r['model_ms_per_body']:8.3f}")
    write_result(args.out, {"pyyaml": yaml.__version__, "clock": "cpu" if args.cpu else "wall",
                            "loadavg_before_after": [load0[0], load1[0]], "results": results})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
