"""Training data: states sampled within a model's limits and the core's outputs at them, in
chunks whose contents depend only on the recipe and the chunk's index.

The samples are drawn in the space of the model's inputs (``model.input_names``): positions
within the joint limits and the actuators' strokes (where the loader checked every
mechanism assembles), so no sample is infeasible and none is dropped; velocities and
accelerations within the velocity limits times the recipe's scales. Chunk ``k`` draws from
``numpy.random.default_rng([seed, k])``, so a resumed run writes the same chunks as an
uninterrupted one. Each chunk is an NPZ archive written with fixed zip timestamps (byte for
byte the same for the same recipe and model) and moved into place whole. No ROS; numpy
(identification's input ranges bring scipy, a dependency of the package).
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import secrets
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .documents import parse_json, read_text
from .dynamics import Payload, inverse_dynamics, mass_matrix
from .dynamics.inverse import InverseDynamicsData
from .errors import InputError
from .identification.base import input_ranges
from .kinematics import forward_kinematics, resolve_state
from .mechanisms.forces import spring_names
from .model.kinds import MECHANISM_KINDS, items
from .model.model import Model
from .trajectories import coordinate_kinds, input_kinds

#: What a dataset can hold, beside the sampled state (positions, velocities, accelerations).
OUTPUTS = ("coordinates", "efforts", "actuator_forces", "spring_tensions", "mass_matrix",
           "fk_poses")
SAMPLINGS = ("random", "grid")
#: A chunk's samples at most: its arrays (CHARMIE: about 7 kB a sample with every output)
#: stay well below a gigabyte in memory.
MAX_CHUNK_SIZE = 50_000
#: Chunk files are numbered with five digits.
MAX_CHUNKS = 100_000
MAX_SAMPLES = 10**9
#: Accelerations: at most this many times the velocity limit per second.
MAX_ACCELERATION_SCALE = 1000.0
MANIFEST = "dataset.json"
#: Chunk k's file (``str.format`` with ``index=k``), as the manifest says it
CHUNK_NAME = "chunk-{index:05d}.npz"
FORMAT_VERSION = 1
#: Every zip entry's timestamp (the zip format's earliest): the archives are byte-identical.
_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
_UNITS = {"angular": ("rad", "rad/s", "rad/s^2", "N m"),
          "linear": ("m", "m/s", "m/s^2", "N"), "actuator": ("m", "m/s", "m/s^2", "N")}


class DatasetError(InputError):
    """A recipe out of range, or a resume that does not match the dataset on disk."""


@dataclass(frozen=True)
class Recipe:
    """How a dataset is sampled: everything its samples depend on besides the model."""

    samples: int
    chunk_size: int
    seed: int
    outputs: tuple[str, ...]
    sampling: str = "random"
    velocity_scale: float = 1.0
    acceleration_scale: float = 10.0
    payloads: tuple[Payload, ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.samples <= MAX_SAMPLES:
            raise DatasetError(f"samples: got {self.samples}, expected 1 to {MAX_SAMPLES}")
        if not 1 <= self.chunk_size <= MAX_CHUNK_SIZE:
            raise DatasetError(f"chunk_size: got {self.chunk_size}, expected 1 to "
                               f"{MAX_CHUNK_SIZE}")
        if self.chunks > MAX_CHUNKS:
            raise DatasetError(f"chunk_size: {self.samples} samples in chunks of "
                               f"{self.chunk_size} make {self.chunks} chunks, expected at most "
                               f"{MAX_CHUNKS} (a chunk_size of at least "
                               f"{math.ceil(self.samples / MAX_CHUNKS)})")
        if not 0 <= self.seed < 2**63:
            raise DatasetError(f"seed: got {self.seed}, expected 0 to 2^63 - 1")
        unknown = [o for o in self.outputs if o not in OUTPUTS]
        if unknown or not self.outputs or len(set(self.outputs)) != len(self.outputs):
            raise DatasetError(f"outputs: got {','.join(self.outputs)!r}, expected distinct "
                               f"names among {', '.join(OUTPUTS)}")
        if self.sampling not in SAMPLINGS:
            raise DatasetError(f"sampling: got {self.sampling!r}, expected one of "
                               f"{', '.join(SAMPLINGS)}")
        for name, top in (("velocity_scale", 1.0), ("acceleration_scale", MAX_ACCELERATION_SCALE)):
            if not 0.0 <= getattr(self, name) <= top:         # NaN fails too
                raise DatasetError(f"{name}: got {getattr(self, name)}, expected 0 to {top:g}")

    @property
    def chunks(self) -> int:
        return -(-self.samples // self.chunk_size)

    def document(self) -> dict[str, Any]:
        """The recipe as the manifest writes it (JSON types)."""
        doc = dataclasses.asdict(self)
        doc["outputs"] = list(self.outputs)
        doc["payloads"] = [{"point": p.point, "mass": p.mass} for p in self.payloads]
        return doc


@dataclass(frozen=True)
class Bounds:
    """The sampling box of each input (``model.input_names``): positions ``lower``..``upper``,
    |velocity| <= ``velocity``, |acceleration| <= ``acceleration``."""

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def of(cls, model: Model, recipe: Recipe) -> "Bounds":
        """The joint limits and strokes (identification's ranges where the model gives no
        limit), the velocity limits times the recipe's scales."""
        lower, upper, vmax = input_ranges(model)
        return cls(lower, upper, recipe.velocity_scale * vmax, recipe.acceleration_scale * vmax)

    def document(self, names: Sequence[str]) -> dict[str, dict[str, list[float]]]:
        return {name: {"position": [float(lo), float(hi)], "velocity": float(v),
                       "acceleration": float(a)}
                for name, lo, hi, v, a in zip(names, self.lower, self.upper, self.velocity,
                                             self.acceleration)}


def check_recipe(model: Model, recipe: Recipe) -> None:
    """Refuse a model whose states the inputs alone do not give (loops, free-flyers), and a
    grid whose size is no power of the number of inputs."""
    if model.loops is not None:
        raise DatasetError(f"{model.source}: a model with closed loops, expected a tree "
                           "(its inputs are sampled directly; loops need the chain solve)")
    if model.free_flyers:
        raise DatasetError(f"{model.source}: body {model.body_names[model.free_flyers[0]]!r} "
                           "is a free-flyer, expected a model without floating joints")
    if recipe.sampling == "grid":
        grid_points(len(model.input_names), recipe.samples)


def grid_points(n_inputs: int, samples: int) -> int:
    """Points per input of a full grid of ``samples`` positions over ``n_inputs`` inputs;
    DatasetError unless ``samples`` is such a power (at least 2 points)."""
    m = max(2, round(samples ** (1.0 / n_inputs)))
    if m ** n_inputs != samples:
        near = sorted({max(2, m - 1) ** n_inputs, m ** n_inputs, (m + 1) ** n_inputs})
        raise DatasetError(f"samples: got {samples}, a grid over {n_inputs} inputs holds "
                           f"m^{n_inputs} positions (m >= 2 points per input), e.g. "
                           f"{', '.join(map(str, near))}")
    return m


def chunk_inputs(model: Model, recipe: Recipe, bounds: Bounds, k: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chunk ``k``'s positions, velocities and accelerations (samples, n_inputs): drawn
    from ``default_rng([seed, k])`` only. ``grid``: positions at grid indices
    ``k * chunk_size ...`` (the first input varies slowest), rates drawn as for random."""
    start = k * recipe.chunk_size
    count = min(recipe.chunk_size, recipe.samples - start)
    n = len(model.input_names)
    rng = np.random.default_rng([recipe.seed, k])
    if recipe.sampling == "grid":
        m = grid_points(n, recipe.samples)
        digits = np.stack(np.unravel_index(np.arange(start, start + count), (m,) * n), axis=-1)
        x = bounds.lower + (bounds.upper - bounds.lower) * (digits / (m - 1))
    else:
        x = rng.uniform(bounds.lower, bounds.upper, (count, n))
    xd = rng.uniform(-bounds.velocity, bounds.velocity, (count, n))
    xdd = rng.uniform(-bounds.acceleration, bounds.acceleration, (count, n))
    return x, xd, xdd


def evaluate(model: Model, recipe: Recipe, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray
             ) -> dict[str, np.ndarray]:
    """The chunk's arrays in the manifest's order: the state, then each requested output."""
    arrays = {"positions": x, "velocities": xd, "accelerations": xdd}
    wanted = set(recipe.outputs)
    state = resolve_state(model, x, xd, xdd)
    if wanted & {"efforts", "actuator_forces", "spring_tensions"}:
        # only the per-sample efforts: the per-body wrenches would cost time and memory
        loads = inverse_dynamics(model, state, payloads=list(recipe.payloads),
                                 data=InverseDynamicsData(model, x.shape[:1], keep="efforts"))
    if wanted & {"mass_matrix", "fk_poses"}:
        placements = forward_kinematics(model, state.q)
    produced = {
        "coordinates": lambda: {"coordinates": state.q},
        "efforts": lambda: {"efforts": loads.coordinate_effort},
        "actuator_forces": lambda: {"actuator_forces": loads.actuator_force},
        "spring_tensions": lambda: {"spring_tensions": loads.spring_tension},
        "mass_matrix": lambda: {"mass_matrix": mass_matrix(model, state.q, placements)},
        "fk_poses": lambda: {"fk_rotations": placements.rotation_world,
                             "fk_origins": placements.origin_world},
    }
    for name in OUTPUTS:
        if name in wanted:
            arrays.update(produced[name]())
    for name, a in arrays.items():
        if not np.all(np.isfinite(a)):
            raise DatasetError(f"{name}: a value is not finite, expected finite results "
                               "within the model's limits; chunk not written")
    return {name: np.ascontiguousarray(a, dtype=float) for name, a in arrays.items()}


def array_columns(model: Model, recipe: Recipe) -> dict[str, dict[str, Any]]:
    """Each array's per-sample shape, the names along its axes and its units."""
    inputs, kinds = list(model.input_names), input_kinds(model)
    coordinates = list(model.coordinate_names)
    ckinds = [coordinate_kinds(model)[c] for c in coordinates]
    bodies, n = list(model.body_names), model.n_coordinates
    columns = {q: {"shape": [len(inputs)], "axes": [inputs],
                   "units": [_UNITS[k][i] for k in kinds]}
               for i, q in enumerate(("positions", "velocities", "accelerations"))}
    springs = list(spring_names(model))
    described = {
        "coordinates": {"shape": [n], "axes": [coordinates],
                        "units": [_UNITS[k][0] for k in ckinds]},
        "efforts": {"shape": [n], "axes": [coordinates], "units": [_UNITS[k][3] for k in ckinds]},
        "actuator_forces": {"shape": [len(model.actuators)], "axes": [list(model.actuator_names)],
                            "units": "N (axial, positive pushes)"},
        "spring_tensions": {"shape": [len(springs)], "axes": [springs],
                            "units": [kind.unit for kind in MECHANISM_KINDS
                                      for _ in items(model, kind)]},
        "mass_matrix": {"shape": [n, n], "axes": [coordinates, coordinates],
                        "units": "kg m^2 (angular, angular), kg m (mixed), kg (linear, linear); "
                                 "the model's bodies, without payloads"},
        "fk_rotations": {"shape": [len(bodies), 3, 3], "axes": [bodies, "row", "column"],
                         "units": "1 (rotation of each body's frame in the world frame)"},
        "fk_origins": {"shape": [len(bodies), 3], "axes": [bodies, ["x", "y", "z"]],
                       "units": "m (each body's origin in the world frame)"},
    }
    for name in OUTPUTS:
        if name in recipe.outputs:
            names = ("fk_rotations", "fk_origins") if name == "fk_poses" else (name,)
            columns.update({a: described[a] for a in names})
    return columns


def package_version() -> str:
    try:
        return metadata.version("charmie_dynamics")
    except metadata.PackageNotFoundError:
        return "unknown"


def manifest(model: Model, model_hash: str, recipe: Recipe, complete: bool
             ) -> dict[str, Any]:
    """The dataset's ``dataset.json``: what a resume must match (``package_version``,
    ``model.hash``, ``recipe``, the bounds), the chunk files and the arrays' names and units.
    No time or path in it: two runs of one recipe write the same file."""
    return {
        "format": "charmie_dynamics dataset", "format_version": FORMAT_VERSION,
        "package_version": package_version(),
        "model": {"name": model.name, "hash": model_hash},
        "recipe": recipe.document(),
        "sampling": {"space": "model inputs (actuator lengths within their strokes: every "
                              "sample assembles, none dropped)",
                     "rng": "numpy.random.default_rng([seed, chunk index]), PCG64",
                     "bounds": Bounds.of(model, recipe).document(model.input_names)},
        "chunks": {"count": recipe.chunks, "name": CHUNK_NAME},
        "arrays": array_columns(model, recipe),
        "complete": complete,
    }


def chunk_name(k: int) -> str:
    return CHUNK_NAME.format(index=k)


def check_resume(path: Path, expected: dict[str, Any]) -> None:
    """DatasetError naming the first field of ``path`` (a manifest) that differs from this
    run's (the package version, the model's hash, a recipe field, the bounds)."""
    found = parse_json(read_text(path, "dataset manifest", error=DatasetError), str(path),
                       error=DatasetError)
    if not isinstance(found, dict):
        raise DatasetError(f"{path}: expected a JSON object (a dataset manifest)")
    for where, theirs, ours in _differences(found, expected, ("format_version",
                                                               "package_version", "model",
                                                               "recipe", "sampling")):
        raise DatasetError(f"--resume: {path}: {where} is {json.dumps(theirs)}, this run's is "
                           f"{json.dumps(ours)}; expected the same model and recipe (or "
                           "another --out)")


def _differences(found: Any, expected: Any, keys: Sequence[str], where: str = ""
                 ) -> list[tuple[str, Any, Any]]:
    out = []
    for key in keys:
        a = found.get(key) if isinstance(found, dict) else None
        b = expected[key]
        path = f"{where}.{key}" if where else key
        if isinstance(b, dict) and isinstance(a, dict):
            out += _differences(a, b, sorted(b), path)
        elif a != b:
            out.append((path, a, b))
    return out


def chunk_intact(path: Path, model: Model, recipe: Recipe, bounds: Bounds, k: int,
                 columns: dict[str, dict[str, Any]]) -> bool:
    """Whether ``path`` holds the chunk ``k`` this recipe writes: a regular file (a link, to
    /dev/zero say, is not read), every array of ``columns`` (named as :func:`array_columns`)
    with its shape, the positions the recipe draws for ``k``. A resume rewrites any other."""
    if path.is_symlink() or not path.is_file():
        return False
    x = chunk_inputs(model, recipe, bounds, k)[0]
    try:
        with np.load(path, allow_pickle=False) as archive:
            # reading each array whole checks its zip CRC: a flipped bit fails here
            arrays = {name: archive[name] for name in archive.files}
    except Exception:       # whatever a damaged archive raises: rewritten, never trusted
        return False
    return (sorted(arrays) == sorted(columns)
            and all(arrays[name].dtype == float
                    and arrays[name].shape == (len(x), *columns[name]["shape"])
                    for name in columns)
            and np.array_equal(arrays["positions"], x))


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """``write(temporary path)`` beside ``path``, then renamed onto it: a reader (or a
    resume) sees the whole file or none."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez``'s format (``np.load`` reads it) with fixed timestamps and order."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, a in arrays.items():
            with archive.open(zipfile.ZipInfo(f"{name}.npy", _ZIP_EPOCH), "w",
                              force_zip64=True) as f:
                np.lib.format.write_array(f, a, allow_pickle=False)


def write_json(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
