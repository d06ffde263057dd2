"""A learned feedforward network as plain arrays (issue 38 item 3): the file ``charmie-dynamics
learn`` writes and the dynamics node's ``feedforward_source: learned`` reads.

An NPZ (:meth:`LearnedFeedforward.save`): the weights, the input and output scalings, the
inputs' names, the model's name and hash. It is run by numpy alone
(:meth:`LearnedFeedforward.__call__`), so the robot's image needs no learning library, and it
is read without unpickling code (``allow_pickle=False``), every array's dtype, shape and
finiteness checked (:meth:`LearnedFeedforward.load`). Training lives in envs/learned.py.

This is the export format: a ReLU network of a few dense layers is a dozen lines of numpy,
where ONNX would add a runtime (onnxruntime, tens of megabytes) to the robot's image to run
the same two matrix products.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Sequence

import numpy as np

from .documents import read_bytes
from .errors import InputError

FORMAT = "charmie_dynamics learned feedforward 1"
#: Bounds of a network file: 64 MiB (a 1000x1000 two-layer network is 16 MB), 16 layers
MAX_BYTES, MAX_LAYERS = 64 * 2**20, 16


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
        # a regular file of at most MAX_BYTES (a FIFO would block the reader), read whole
        packed = read_bytes(path, "network", MAX_BYTES, LearnedFeedforwardError)
        try:
            data = np.load(io.BytesIO(packed), allow_pickle=False)
        except Exception as exc:    # noqa: BLE001 - numpy and zipfile raise what they meet
            raise LearnedFeedforwardError(f"{path}: cannot read the network: "
                                          f"{type(exc).__name__}: {exc}") from None
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise bad("file", "a single array, expected an NPZ archive (charmie-dynamics "
                      "learn's feedforward.npz)")
        with data:
            members = set(data.files)
            unpacked = sum(member.file_size for member in data.zip.infolist())
            if unpacked > MAX_BYTES:            # compressed members: no memory bomb
                raise bad("file", f"{unpacked} bytes unpacked, expected at most {MAX_BYTES}")
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
        if names is not None:
            check_names(path, found, names)
        n = len(found)
        missing = [k for k in wanted if k not in arrays]
        if missing:
            raise bad(missing[0], "missing")
        odd = [k for k, a in arrays.items() if a.dtype.kind not in "fi"]
        if odd:
            raise bad(odd[0], f"dtype {arrays[odd[0]].dtype}, expected floating-point numbers")
        with np.errstate(all="ignore"):     # a value beyond float64 is refused below, not logged
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


def check_names(path: "str | Path", found: Sequence[str], names: Sequence[str]) -> None:
    """A network for the inputs ``found`` (the file ``path``'s) must be for the model's
    inputs ``names``, in that order (:class:`LearnedFeedforwardError` otherwise)."""
    if tuple(found) != tuple(names):
        raise LearnedFeedforwardError(
            f"{path}: names: got {len(found)} inputs ({', '.join(found)}), expected the "
            f"model's {len(names)} ({', '.join(names)})")
