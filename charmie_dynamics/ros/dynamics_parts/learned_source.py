"""The dynamics node's learned feedforward source (``feedforward_source: learned``, issue 38
item 3): a network (``charmie-dynamics learn``'s feedforward.npz) gives the efforts, the
model's inverse dynamics of the same input is the check beside it.

Per evaluation, the network's efforts are published when every input's lies within
``tolerance`` times its effort limit of the model's (and is finite); otherwise the model's
are, and the evaluation is counted as replaced. A network is thus never trusted beyond a
stated distance from the physics it was trained to imitate, and a network for other states
(a motion outside its training data, a changed payload) degrades to the model's feedforward.
The safe policy's gravity and zeros and ``deactivate_command`` stay the model's (its hold
repeats the last feedforward published, checked as above).

Pure Python (no rclpy): the node holds one per installed model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...feedforward_network import LearnedFeedforward, LearnedFeedforwardError, check_names

FEEDFORWARD_SOURCES = ("model", "learned")


@dataclass
class LearnedSource:
    """The network ``network`` for the evaluator's inputs, with the check's bound
    ``tolerance`` x ``effort_limit`` (n,) per input; ``largest_difference``: the largest
    difference seen between the network and the model, as a fraction of the limit."""

    network: LearnedFeedforward
    bound: np.ndarray
    effort_limit: np.ndarray
    largest_difference: float = 0.0

    @classmethod
    def of(cls, network: LearnedFeedforward, path: str, names: Sequence[str], model_name: str,
           effort_limit: np.ndarray, tolerance: float) -> "LearnedSource":
        """``network`` (read from ``path``) checked for the inputs ``names`` (the
        evaluator's, in that order) of the model named ``model_name``; every input needs a
        finite effort limit (the check's scale). :class:`LearnedFeedforwardError` names the
        file and the field otherwise."""
        check_names(path, network.names, names)
        if network.model_name != model_name:
            raise LearnedFeedforwardError(
                f"{path}: model.name: got {network.model_name!r}, expected {model_name!r}, "
                "the node's model")
        limit = np.asarray(effort_limit, dtype=float)
        unlimited = [n for n, value in zip(names, limit) if not np.isfinite(value)]
        if unlimited:
            raise LearnedFeedforwardError(
                f"{path}: the model {model_name!r} gives no effort limit for "
                f"{', '.join(unlimited)}, expected one for every input (the check against "
                "the model's feedforward is scaled by it)")
        return cls(network, tolerance * limit, limit)

    def __call__(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                 model_efforts: np.ndarray) -> tuple[np.ndarray, bool]:
        """The efforts to publish for the input (x, xd, xdd) and whether they are the
        network's: its own where every input lies within the bound of ``model_efforts``
        (module docstring), else ``model_efforts``."""
        with np.errstate(over="ignore", invalid="ignore"):    # refused below, not logged
            learned = self.network(x, xd, xdd)
            difference = np.abs(learned - model_efforts)
        if not np.all(np.isfinite(difference)):   # huge finite weights can overflow
            self.largest_difference = float("inf")
            return model_efforts, False
        self.largest_difference = max(self.largest_difference,
                                      float(np.max(difference / self.effort_limit)))
        if np.any(difference > self.bound):
            return model_efforts, False
        return learned, True
