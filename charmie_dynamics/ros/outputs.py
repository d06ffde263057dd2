"""What the dynamics node makes of an evaluation before publishing it (pure Python: no rclpy
here): the feedforward in its order, clamped on request, with the inputs beyond their effort
limit; the grids of stamps on which /tf and the loads are published; the bodies whose joint
wrench is published, and their topics."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from ..dynamics.actuation import actuator_space
from ..dynamics.inverse import base_body
from ..model.model import Model

WRENCH_TOPICS = "joint_wrenches"


def wrench_bodies(model: Model, names: Sequence[str]) -> list[str]:
    """The bodies of the ``wrench_joints`` parameter (empty entries ignored), or where it
    names none (its default ``[""]``) the model's base body: the first body with mass, whose
    joint wrench is the load on the floor or the mount (``Loads.base_body``; CHARMIE's
    body_3), so that the default suits any model."""
    given = [name for name in names if name]
    return given or [model.body_names[base_body(model)]]


def wrench_topic(body: str) -> str:
    """``joint_wrenches/<body>`` as a valid ROS topic name: body names may hold '-' and '.',
    which topic names may not, and '/' (kept as namespaces, empty levels dropped); other
    characters become '_', a level starting with a digit gets a leading '_'."""
    levels = [re.sub(r"\W", "_", level, flags=re.ASCII) for level in body.split("/") if level]
    return "/".join([WRENCH_TOPICS] + ["_" + w if w[0].isdigit() else w for w in levels])


class FeedforwardMap:
    """Efforts in ``names`` order (the evaluator's inputs: ``model.input_names``, or a model
    with loops' independent coordinates) -> the feedforward in ``joints`` order."""

    def __init__(self, model: Model, names: Sequence[str], joints: Sequence[str]) -> None:
        self.names = tuple(names)
        self.index = [self.names.index(j) for j in joints]
        self.effort_limit = actuator_space(model).effort_limit[
            [model.input_names.index(n) for n in self.names]]

    def beyond_limits(self, efforts: np.ndarray) -> tuple[str, ...]:
        """The inputs whose effort is beyond the model's effort or force limit."""
        beyond = np.abs(efforts) > self.effort_limit
        return tuple(n for n, b in zip(self.names, beyond) if b) if beyond.any() else ()

    def __call__(self, efforts: np.ndarray, clamp: bool) -> np.ndarray:
        """The feedforward, clamped at the model's limits with ``clamp``."""
        if clamp:
            efforts = np.clip(efforts, -self.effort_limit, self.effort_limit)
        return efforts[self.index]

    def zeros(self) -> np.ndarray:
        return np.zeros(len(self.index))


@dataclass
class StampGrid:
    """Stamps (integer ns) on a grid 1/rate apart: the evaluations that publish an output
    at most ``rate`` times a second (/tf at ``tf_rate``, the loads at ``output_rate``), so
    that jitter in the input stamps does not lower its average rate; a gap of more than a
    period, or time going back, restarts the grid."""

    next_due: Optional[int] = None

    def due(self, stamp: int, rate_hz: float) -> bool:
        """Whether ``stamp`` gets the output (rate 0: every stamp)."""
        if rate_hz <= 0:
            return True
        period, due = int(1e9 / rate_hz), self.next_due
        if not (due is None or stamp >= due or stamp < due - 2 * period):
            return False
        on_grid = due is not None and due <= stamp < due + period
        self.next_due = (due if on_grid else stamp) + period
        return True

    def reset(self) -> None:
        self.next_due = None
