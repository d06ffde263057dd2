"""``charmie-dynamics learn``: a feedforward network trained on a ``dataset`` folder
(envs/learned.py) and compared in closed loop with PD alone and PD + the model's own
feedforward (envs/compare.py) along the validation motion, the kinematic validation motion
and random reaches; writes ``feedforward.npz`` (what the dynamics node's
``feedforward_source: learned`` reads), ``comparison.csv`` and ``comparison.png`` into
``--out`` and prints the table. Needs the ``learn`` extra (gymnasium, scikit-learn).
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import time
from pathlib import Path

from ..errors import InputError
from ..model import read_model_file
from ..model.reader import model_hash
from .output_files import check_output
from .plots import plot_comparison, require_matplotlib

#: The comparison's motions: (label, reference, seed); random reaches last 2 s
MOTIONS = (("validation", "validation", 0), ("kinematic-validation", "kinematic-validation", 0),
           ("random reach, seed 1", "random", 1), ("random reach, seed 2", "random", 2),
           ("random reach, seed 3", "random", 3))


def _hidden(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or not all(1 <= s <= 4096 for s in sizes) or len(sizes) > 8:
        raise argparse.ArgumentTypeError(f"got {text!r}, expected 1 to 8 comma-separated layer "
                                         "widths of 1 to 4096")
    return sizes


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"got {text!r}, expected 0 to 2^32 - 1")
    return value


def _positive(kind, top):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = -1
        if not 0 < value <= top:
            raise argparse.ArgumentTypeError(f"got {text!r}, expected a number in (0, {top}]")
        return value
    return parse


def add_learn_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("learn")
    p.add_argument("--data", type=Path, required=True,
                   help="a dataset folder (charmie-dynamics dataset --outputs "
                        "efforts,actuator_forces)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--model", type=Path, default=None,
                   help="model file (default: bundled CHARMIE); the dataset's must be the same")
    p.add_argument("--hidden", type=_hidden, default=(64, 64), help="layer widths (64,64)")
    p.add_argument("--epochs", type=_positive(int, 10_000), default=40,
                   help="most passes over the data (early stopping may end sooner)")
    p.add_argument("--seed", type=_seed, default=0, help="training seed (0 to 2^32 - 1)")
    p.add_argument("--bandwidth", type=_positive(float, 20.0), default=4.0,
                   help="the PD's bandwidth, Hz (every input, from its inertia)")
    p.set_defaults(func=run_learn)


OUTPUTS = ("feedforward.npz", "comparison.csv", "comparison.png")


def run_learn(args: argparse.Namespace) -> int:
    check_output(args.out)
    require_matplotlib("learn")
    there = [name for name in OUTPUTS if (args.out / name).exists()]
    if there:
        raise InputError(f"--out {args.out}: holds {', '.join(there)} already, expected a "
                         "folder without them (an earlier run's are never replaced)")
    try:
        from ..envs.compare import compare
        from ..envs.learned import train
        from ..envs.tracking import Tracking
    except ImportError as exc:
        raise InputError(f"learn needs the learn extra: {exc}") from None
    model, text = read_model_file(args.model)
    if model.loops is not None:
        raise InputError(f"{args.model}: {model.name} has loops; learn trains and compares on "
                         "models without loops (the comparison's PD uses the input-space "
                         "inertia of a tree)")
    # the comparison's tasks first: a model they cannot run is refused before the training
    try:
        tasks = [(label, seed, Tracking(model, 1, reference=reference, episode_steps=200,
                                        max_error=math.inf, velocity_margin=math.inf))
                 for label, reference, seed in MOTIONS]
    except ValueError as exc:                 # e.g. a model without effort limits
        raise InputError(f"{args.model or model.name}: the comparison cannot run it: "
                         f"{exc}") from None
    start = time.perf_counter()
    network = train(model, model_hash(text), args.data, args.hidden, args.epochs, args.seed)
    trained = time.perf_counter() - start
    rows = [{"motion": label, **dataclasses.asdict(run)}
            for label, seed, task in tasks for run in compare(task, network, seed,
                                                               args.bandwidth)]
    # both files written beside their names and renamed in at the end: a run stopped
    # before leaves --out without them
    args.out.mkdir(parents=True, exist_ok=True)
    partial = [args.out / f".partial.{name}" for name in OUTPUTS]   # the suffix names the format
    with open(partial[0], "wb") as f:
        network.save(f)
    with open(partial[1], "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot_comparison(partial[2], rows, f"{model.name}: PD, PD + the model's and PD + the learned "
                    f"feedforward, closed loop ({args.bandwidth:g} Hz PD)")
    for path, name in zip(partial, OUTPUTS):
        path.replace(args.out / name)
    print(f"trained {'x'.join(map(str, args.hidden))} in {trained:.1f} s; network "
          f"{args.out / 'feedforward.npz'}")
    print("tracking error in error scales (0.1 rad, 0.01 m), effort as a fraction of the "
          "limits")
    print(f"{'motion':<24} {'controller':<12} {'RMS error':>10} {'peak':>8} {'RMS effort':>11}"
          f" {'steps':>6}  lost")
    for r in rows:
        print(f"{r['motion']:<24} {r['source']:<12} {r['rms_error']:>10.3f} "
              f"{r['peak_error']:>8.3f} {r['rms_effort']:>11.3f} {r['steps']:>6}  "
              f"{'yes' if r['lost'] else 'no'}")
    return 0
