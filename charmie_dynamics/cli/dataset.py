"""``charmie-dynamics dataset``: sampled states and the core's outputs at them (training data),
as NPZ chunks and a ``dataset.json`` manifest, resumable (charmie_dynamics/datasets.py).

``--resume`` skips the chunks already on disk (each was moved into place whole) after
checking that the manifest's model hash and recipe are this run's; without it an ``--out``
that already holds a dataset is refused.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import math
import os
import shutil
import time
from pathlib import Path

try:
    from tqdm import tqdm
except ImportError:          # optional (the `plots` extra): no progress bar then
    tqdm = None

from ..datasets import (MANIFEST, OUTPUTS, SAMPLINGS, Bounds, DatasetError, Recipe, check_recipe,
                        check_resume, chunk_inputs, chunk_intact, chunk_name, evaluate, manifest,
                        write_atomically, write_json, write_npz)
from ..errors import InputError
from ..model import read_model_file
from ..model.reader import model_hash
from .arguments import check_points, parse_payload
from .output_files import check_output


def add_dataset_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("dataset")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--samples", type=int, required=True, help="number of states")
    p.add_argument("--chunk-size", type=int, default=10_000, help="states per NPZ file")
    p.add_argument("--seed", type=int, default=0, help="random seed (chunk k draws from [seed, k])")
    p.add_argument("--outputs", default="efforts,actuator_forces",
                   help=f"comma-separated, among {','.join(OUTPUTS)}")
    p.add_argument("--sampling", default="random",
                   help=f"{' or '.join(SAMPLINGS)} (grid: positions on a full grid, "
                        "--samples = m^inputs)")
    p.add_argument("--velocity-scale", type=float, default=1.0,
                   help="|velocity| up to this fraction of each input's velocity limit (0 to 1)")
    p.add_argument("--acceleration-scale", type=float, default=10.0,
                   help="|acceleration| up to this many times the velocity limit per second")
    p.add_argument("--payload", action="append", default=[], metavar="BODY.POINT:MASS",
                   help="a point mass in kg carried at a named point (repeatable)")
    p.add_argument("--resume", action="store_true",
                   help="finish an interrupted run of the same recipe and model in --out")
    p.set_defaults(func=run_dataset)


@contextlib.contextmanager
def _one_run_at_a_time(out: Path):
    """An exclusive lock on the ``--out`` folder itself for the run (released when it ends,
    however it ends; no file is left): two runs on one --out each decided "fresh" and left a
    manifest of one seed over chunks of the other (issue 34, D1). The second is refused. A
    folder made here for the lock and left empty (a refused run) is removed again."""
    # the folders made here (out and missing parents), outermost first; a folder another run
    # made in the meantime is not ours (mkdir tells: FileExistsError)
    made = [p for p in reversed((out, *out.parents)) if not p.exists()]
    try:
        for path in made[:]:
            try:
                path.mkdir()
            except FileExistsError:
                made.remove(path)
        folder = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write: {exc.strerror or exc}") from None
    locked = False
    try:
        try:
            fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DatasetError(f"--out {out}: another dataset run is writing there, expected "
                               "one run at a time; wait for it to end, or give another "
                               "directory") from None
        except OSError as exc:                 # a file system without flock (some NFS)
            raise InputError(f"--out {out}: cannot lock it for this run: "
                             f"{exc.strerror or exc}") from None
        locked = True
        yield
    finally:
        # removed while the lock is held: a run that opened the folder meanwhile is refused
        try:
            if locked:
                for path in reversed(made):
                    if any(path.iterdir()):
                        break
                    path.rmdir()
        except OSError:
            pass                               # left behind, never in the way of the error
        finally:
            os.close(folder)


def run_dataset(args: argparse.Namespace) -> int:
    check_output(args.out)
    with _one_run_at_a_time(args.out):
        return _run_dataset(args)


def _run_dataset(args: argparse.Namespace) -> int:
    payloads = tuple(parse_payload(text) for text in args.payload)
    recipe = Recipe(args.samples, args.chunk_size, args.seed,
                    tuple(o.strip() for o in args.outputs.split(",")), args.sampling,
                    args.velocity_scale, args.acceleration_scale, payloads)
    model, text = read_model_file(args.model)
    check_recipe(model, recipe)
    check_points(model, payloads)
    done = manifest(model, model_hash(text), recipe, complete=True)
    path = args.out / MANIFEST
    if args.resume and path.exists():
        check_resume(path, done)
        for stale in args.out.glob(".chunk-*.partial"):       # a killed run's unfinished file
            stale.unlink()
    elif path.exists() or (args.out.is_dir() and any(args.out.glob("chunk-*.npz"))):
        # chunks without a manifest cannot be checked against this recipe
        raise DatasetError(f"--out {args.out}: holds a dataset already (chunk files or "
                           f"{MANIFEST}), expected --resume with its {MANIFEST} (same recipe "
                           "and model) or another directory")
    bounds = Bounds.of(model, recipe)
    todo = [k for k in range(recipe.chunks)
            if not chunk_intact(args.out / chunk_name(k), model, recipe, bounds, k,
                                done["arrays"])]
    damaged = sum(os.path.lexists(args.out / chunk_name(k)) for k in todo)
    written = sum(min(recipe.chunk_size, recipe.samples - k * recipe.chunk_size) for k in todo)
    _check_space(args.out, written * sum(8 * math.prod(a["shape"])     # float64 arrays
                                         for a in done["arrays"].values()))
    start = time.perf_counter()
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        write_atomically(path, lambda p: write_json(p, {**done, "complete": False}))
        with (tqdm(todo, desc="chunks", unit="chunk", disable=None, leave=False) if tqdm
              else contextlib.nullcontext(todo)) as bar:
            for k in bar:
                arrays = evaluate(model, recipe, *chunk_inputs(model, recipe, bounds, k))
                write_atomically(args.out / chunk_name(k), lambda p: write_npz(p, arrays))
        write_atomically(path, lambda p: write_json(p, done))
    except OSError as exc:
        raise InputError(f"--out {args.out}: cannot write: {exc.strerror or exc}") from None
    elapsed = time.perf_counter() - start
    rate = f", {written / elapsed:,.0f} samples/s" if written else ""
    print(f"{model.name}: {written} of {recipe.samples} samples written in {len(todo)} of "
          f"{recipe.chunks} chunks ({damaged} damaged chunk(s) rewritten; {elapsed:.1f} s"
          f"{rate}); outputs {', '.join(recipe.outputs)}; manifest {path}")
    return 0


def _check_space(out: Path, needed: int) -> None:
    """Refuse chunks that would not fit on ``--out``'s file system, before writing any."""
    where = next(p for p in (out, *out.parents) if p.exists())
    free = shutil.disk_usage(where).free
    if needed > free:
        raise DatasetError(f"--out {out}: the chunks need about {needed / 1e9:.3g} GB, its file "
                           f"system has {free / 1e9:.3g} GB free; expected fewer --samples or "
                           "--outputs, or another --out")
