"""A learned feedforward (issue 38 item 3): a small network trained on ``charmie-dynamics
dataset`` chunks to give the inputs' efforts from their positions, rates and accelerations.

Training uses scikit-learn's ``MLPRegressor`` (the ``learn`` extra; Adam, ReLU, early
stopping), chosen for its weight: one wheel on top of scipy and joblib, which the package
already needs, against hundreds of megabytes for PyTorch. What it learns is written as plain
arrays (:meth:`LearnedFeedforward.save`, an NPZ: the weights, the input and output scalings,
the inputs' names, the model's name and hash), and run by numpy alone
(:meth:`LearnedFeedforward.__call__`): the robot's image needs no learning library, and the
file is read without unpickling code (``allow_pickle=False``).

The targets are the inverse dynamics in input order (the joints' efforts, the actuators'
axial forces in their inputs' slots): the rigid bodies, springs and balancer, what a network
has to learn. The friction law (seed 004 eq. 43) is known and added by the user of the
network, as envs/compare.py adds it.
"""
from __future__ import annotations

import json
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Sequence

import numpy as np

from ..datasets import MANIFEST, MAX_CHUNKS, chunk_name
from ..errors import InputError
from ..model.model import Model

FORMAT = "charmie_dynamics learned feedforward 1"
#: Bounds of a network file: 64 MiB (a 1000x1000 two-layer network is 16 MB), 16 layers
MAX_BYTES, MAX_LAYERS = 64 * 2**20, 16
#: Fewest samples a network is trained on (a tenth is held out for early stopping)
MIN_SAMPLES = 100
#: The dataset outputs the targets are made of
NEEDED = ("efforts", "actuator_forces")


class LearnedFeedforwardError(InputError):
    """A network file or a dataset that cannot be used (the message names the file, the
    field and what was expected)."""


@dataclass(frozen=True)
class LearnedFeedforward:
    """A ReLU network u = f(x, x', x'') for the inputs ``names`` of the model ``model_name``
    (hash ``model_hash``): inputs scaled by (v - ``in_mean``) / ``in_scale``, outputs by
    ``out_scale`` y + ``out_mean``; layer k maps h to h @ weights[k] + biases[k], ReLU between
    layers."""

    model_name: str
    model_hash: str
    names: tuple[str, ...]
    in_mean: np.ndarray
    in_scale: np.ndarray
    out_mean: np.ndarray
    out_scale: np.ndarray
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]

    def __call__(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray) -> np.ndarray:
        """The efforts (..., n) at inputs (..., n) each, in ``names`` order."""
        h = (np.concatenate([x, xd, xdd], axis=-1) - self.in_mean) / self.in_scale
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w + b
            if k < len(self.weights) - 1:
                np.maximum(h, 0.0, out=h)
        return h * self.out_scale + self.out_mean

    def save(self, path: "str | Path | BinaryIO") -> None:
        """The network as an NPZ at ``path`` (a path or a binary file), read by :meth:`load`."""
        arrays = {"in_mean": self.in_mean, "in_scale": self.in_scale,
                  "out_mean": self.out_mean, "out_scale": self.out_scale}
        for k, (w, b) in enumerate(zip(self.weights, self.biases)):
            arrays[f"weight_{k}"], arrays[f"bias_{k}"] = w, b
        header = {"format": FORMAT, "model": {"name": self.model_name, "hash": self.model_hash},
                  "names": list(self.names), "layers": len(self.weights)}
        np.savez(path, header=np.array(json.dumps(header)), **arrays)

    @classmethod
    def load(cls, path: Path, names: Sequence[str] | None = None) -> "LearnedFeedforward":
        """The network in ``path``; with ``names`` (the model's inputs) it must be for those
        inputs in that order. :class:`LearnedFeedforwardError` names the file and the field."""
        def bad(field: str, why: str) -> LearnedFeedforwardError:
            return LearnedFeedforwardError(f"{path}: {field}: {why}")
        try:
            size = Path(path).stat().st_size
            data = np.load(path, allow_pickle=False)
            members = set(data.files)
        except Exception as exc:    # noqa: BLE001 - numpy and zipfile raise what they meet
            raise LearnedFeedforwardError(f"{path}: cannot read the network: "
                                          f"{type(exc).__name__}: {exc}") from None
        with data:
            if size > MAX_BYTES:
                raise bad("file", f"{size} bytes, expected at most {MAX_BYTES}")
            try:
                header = json.loads(str(data["header"]))
                if not isinstance(header, dict):
                    raise ValueError("not a JSON object")
            except (KeyError, ValueError, TypeError, RecursionError) as exc:
                raise bad("header", f"missing or malformed ({exc}), expected the JSON this "
                          "package writes") from None
            layers = header.get("layers")
            if type(layers) is not int or not 1 <= layers <= MAX_LAYERS:
                raise bad("layers", f"got {layers!r}, expected 1 to {MAX_LAYERS}")
            wanted = [*(f"{kind}_{k}" for k in range(layers) for kind in ("weight", "bias")),
                      "in_mean", "in_scale", "out_mean", "out_scale"]
            try:
                arrays = {k: np.array(data[k]) for k in wanted if k in members}
            except Exception as exc:    # noqa: BLE001 - a member numpy cannot read
                raise LearnedFeedforwardError(f"{path}: cannot read the network: "
                                              f"{type(exc).__name__}: {exc}") from None
        if header.get("format") != FORMAT:
            raise bad("format", f"got {header.get('format')!r}, expected {FORMAT!r}")
        found, model = header.get("names"), header.get("model")
        if not isinstance(found, list) or not all(isinstance(n, str) for n in found) \
                or not isinstance(model, dict):
            raise bad("header", "names and model: expected a list of input names and an "
                      "object with the model's name and hash")
        found = tuple(found)
        if names is not None and found != tuple(names):
            raise bad("names", f"got {len(found)} inputs ({', '.join(found)}), expected the "
                      f"model's {len(names)} ({', '.join(names)})")
        n = len(found)
        missing = [k for k in wanted if k not in arrays]
        if missing:
            raise bad(missing[0], "missing")
        odd = [k for k, a in arrays.items() if a.dtype.kind not in "fi"]
        if odd:
            raise bad(odd[0], f"dtype {arrays[odd[0]].dtype}, expected floating-point numbers")
        weights = tuple(arrays[f"weight_{k}"].astype(float) for k in range(layers))
        biases = tuple(arrays[f"bias_{k}"].astype(float) for k in range(layers))
        scalings = [arrays[k].astype(float) for k in ("in_mean", "in_scale", "out_mean",
                                                      "out_scale")]
        width = 3 * n
        for k, (w, b) in enumerate(zip(weights, biases)):
            out = n if k == layers - 1 or w.ndim == 0 else w.shape[-1]
            if w.ndim != 2 or w.shape[0] != width or b.shape != (out,) or w.shape[1] != out:
                raise bad(f"weight_{k}", f"shape {w.shape} (bias {b.shape}), expected "
                          f"({width}, {out}) and ({out},)")
            width = out
        for field, a, size in zip(("in_mean", "in_scale", "out_mean", "out_scale"), scalings,
                                  (3 * n, 3 * n, n, n)):
            if a.shape != (size,):
                raise bad(field, f"shape {a.shape}, expected ({size},)")
        if not all(np.all(np.isfinite(a)) for a in (*weights, *biases, *scalings)) or \
                not (np.all(scalings[1] > 0) and np.all(scalings[3] > 0)):
            raise bad("weights", "a value is not finite or a scale is not positive")
        return cls(str(model.get("name", "")), str(model.get("hash", "")), found, *scalings,
                   weights, biases)


def dataset_samples(model: Model, model_hash: str, directory: Path
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Features (samples, 3 n) and target efforts (samples, n) of a complete ``charmie-dynamics
    dataset`` folder made for ``model`` (its file's hash ``model_hash``) with the outputs
    :data:`NEEDED`."""
    manifest_path = directory / MANIFEST
    try:
        doc = json.loads(manifest_path.read_text(encoding="utf-8"))
        outputs, count = doc["recipe"]["outputs"], int(doc["chunks"]["count"])
        found_hash, complete = doc["model"]["hash"], doc["complete"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LearnedFeedforwardError(f"{manifest_path}: cannot read the dataset's manifest: "
                                      f"{exc}") from None
    if found_hash != model_hash:
        raise LearnedFeedforwardError(f"{manifest_path}: model.hash: got {found_hash!r}, "
                                      f"expected {model_hash!r}, the model file trained for")
    if complete is not True:
        raise LearnedFeedforwardError(f"{manifest_path}: complete: got {complete!r}, expected "
                                      "true (finish it: charmie-dynamics dataset --resume)")
    if not isinstance(outputs, list) or not 1 <= count <= MAX_CHUNKS:
        raise LearnedFeedforwardError(f"{manifest_path}: recipe.outputs, chunks.count: got "
                                      f"{outputs!r}, {count}, expected a list of names and 1 "
                                      f"to {MAX_CHUNKS} chunks")
    if doc["recipe"].get("payloads"):
        raise LearnedFeedforwardError(f"{manifest_path}: recipe.payloads: got "
                                      f"{doc['recipe']['payloads']!r}, expected none (the "
                                      "network and its comparison are for the model as it is)")
    missing = [o for o in NEEDED if o not in outputs]
    if missing:
        raise LearnedFeedforwardError(
            f"{manifest_path}: recipe.outputs: {', '.join(missing)} missing, expected "
            f"{','.join(NEEDED)} (charmie-dynamics dataset --outputs {','.join(NEEDED)})")
    features, targets = [], []
    n, na = len(model.input_names), len(model.actuators)
    for k in range(count):
        path = directory / chunk_name(k)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = [np.asarray(data[name], dtype=float) for name in
                          ("positions", "velocities", "accelerations", "efforts",
                           "actuator_forces")]
        except Exception as exc:    # noqa: BLE001 - numpy and zipfile raise what they meet
            raise LearnedFeedforwardError(f"{path}: cannot read the chunk: "
                                          f"{type(exc).__name__}: {exc}") from None
        rows = len(arrays[0])
        if [a.shape for a in arrays] != [(rows, n)] * 4 + [(rows, na)] or \
                not all(np.all(np.isfinite(a)) for a in arrays):
            raise LearnedFeedforwardError(
                f"{path}: arrays: got shapes {[a.shape for a in arrays]}, expected finite "
                f"(samples, {n}) positions, velocities, accelerations, efforts and (samples, "
                f"{na}) actuator_forces")
        features.append(np.concatenate(arrays[:3], axis=1))
        targets.append(model.in_input_order(arrays[3], arrays[4]))
    features, targets = np.concatenate(features), np.concatenate(targets)
    if len(features) < MIN_SAMPLES:
        raise LearnedFeedforwardError(f"{manifest_path}: {len(features)} samples, expected at "
                                      f"least {MIN_SAMPLES}")
    return features, targets


def train(model: Model, model_hash: str, directory: Path, hidden: Sequence[int] = (64, 64),
          epochs: int = 200, seed: int = 0) -> LearnedFeedforward:
    """A network fitted to the dataset in ``directory`` (module docstring): scikit-learn's
    MLPRegressor on the scaled samples, at most ``epochs`` passes (early stopping on a tenth
    held out), seeded."""
    try:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPRegressor
    except ImportError:
        raise LearnedFeedforwardError("training needs scikit-learn: pip install "
                                      "'charmie_dynamics[learn]' (or pip install "
                                      "scikit-learn)") from None
    features, targets = dataset_samples(model, model_hash, directory)
    in_mean, in_scale = features.mean(axis=0), features.std(axis=0)
    out_mean, out_scale = targets.mean(axis=0), targets.std(axis=0)
    in_scale[in_scale == 0.0] = 1.0          # an input the dataset never moves
    out_scale[out_scale == 0.0] = 1.0
    regressor = MLPRegressor(hidden_layer_sizes=tuple(hidden), max_iter=int(epochs),
                             early_stopping=True, random_state=seed, batch_size=256,
                             learning_rate_init=1e-3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        regressor.fit((features - in_mean) / in_scale, (targets - out_mean) / out_scale)
    if any(issubclass(w.category, ConvergenceWarning) for w in caught):
        print(f"learn: note: training stopped after {epochs} passes, before the held-out "
              "error stopped improving (more --epochs may help)", file=sys.stderr)
    return LearnedFeedforward(model.name, model_hash, tuple(model.input_names), in_mean,
                              in_scale, out_mean, out_scale,
                              tuple(np.asarray(w, dtype=float) for w in regressor.coefs_),
                              tuple(np.asarray(b, dtype=float) for b in regressor.intercepts_))
