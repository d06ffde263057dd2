"""A learned feedforward (issue 38 item 3): a small network trained on ``charmie-dynamics
dataset`` chunks to give the inputs' efforts from their positions, rates and accelerations.

Training uses scikit-learn's ``MLPRegressor`` (the ``learn`` extra; Adam, ReLU, early
stopping), chosen for its weight: one wheel on top of scipy and joblib, which the package
already needs, against hundreds of megabytes for PyTorch. What it learns is a
:class:`~..feedforward_network.LearnedFeedforward`: plain arrays, run by numpy alone.

The targets are the inverse dynamics in input order (the joints' efforts, the actuators'
axial forces in their inputs' slots): the rigid bodies, springs and balancer, what a network
has to learn. The friction law (seed 004 eq. 43) is known and added by the user of the
network, as envs/compare.py adds it.
"""
from __future__ import annotations

import io
import json
import sys
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from ..datasets import MANIFEST, MAX_CHUNKS, chunk_name
from ..documents import read_bytes, read_text
from ..feedforward_network import LearnedFeedforward, LearnedFeedforwardError
from ..model.model import Model

#: Fewest samples a network is trained on (a tenth is held out for early stopping)
MIN_SAMPLES = 100
#: Largest chunk file read (a regular file: a FIFO would block the reader); MAX_CHUNK_SIZE
#: samples of a 100-input model with every output fit in a fraction of it
MAX_CHUNK_BYTES = 2**30
#: The dataset outputs the targets are made of
NEEDED = ("efforts", "actuator_forces")


def dataset_samples(model: Model, model_hash: str, directory: Path
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Features (samples, 3 n) and target efforts (samples, n) of a complete ``charmie-dynamics
    dataset`` folder made for ``model`` (its file's hash ``model_hash``) with the outputs
    :data:`NEEDED`."""
    manifest_path = directory / MANIFEST
    try:
        doc = json.loads(read_text(manifest_path, "dataset manifest",
                                   error=LearnedFeedforwardError))
        outputs, count = doc["recipe"]["outputs"], int(doc["chunks"]["count"])
        found_hash, complete = doc["model"]["hash"], doc["complete"]
    except LearnedFeedforwardError:
        raise
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
            packed = read_bytes(path, "dataset chunk", MAX_CHUNK_BYTES, LearnedFeedforwardError)
            with np.load(io.BytesIO(packed), allow_pickle=False) as data:
                unpacked = sum(member.file_size for member in data.zip.infolist())
                if unpacked > MAX_CHUNK_BYTES:      # compressed members: no memory bomb
                    raise LearnedFeedforwardError(f"{path}: {unpacked} bytes unpacked, expected "
                                                  f"at most {MAX_CHUNK_BYTES}")
                arrays = [np.asarray(data[name], dtype=float) for name in
                          ("positions", "velocities", "accelerations", "efforts",
                           "actuator_forces")]
        except LearnedFeedforwardError:
            raise
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
