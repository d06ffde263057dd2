"""A desired trajectory (trajectory_msgs/JointTrajectory's numbers) checked and turned into a
:class:`~.inputs.ReferenceTrajectory` (pure Python: no rclpy here). Accepted whole or
rejected whole with an :class:`~.inputs.InputRejected`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .inputs import AccelerationEstimator, InputRejected, ReferenceTrajectory


@dataclass
class Reference(ReferenceTrajectory):
    """A checked reference with the input slots (``model.input_names``) of its names."""

    slots: tuple[int, ...] = ()

    def input_accelerations(self, t: float, n_inputs: int) -> np.ndarray:
        """Accelerations of every input at ``t`` (s): the reference's, 0 for the others."""
        xdd = np.zeros(n_inputs)
        xdd[list(self.slots)] = self.sample(t)
        return xdd


def read_reference(names: Sequence[str], points: Sequence[tuple[int, Sequence[float]]],
                   start_ns: int, input_names: Sequence[str]) -> Reference:
    """``points``: (time from start in ns, accelerations, empty for zeros) of each point;
    ``start_ns``: the absolute time of the start. Raises ``invalid_value`` (no points, times
    that do not increase), ``duplicate_name``, ``unknown_name``, ``length_mismatch`` or
    ``non_finite``."""
    names = list(names)
    if not points:
        raise InputRejected("invalid_value", "reference trajectory without points")
    if len(set(names)) != len(names):
        raise InputRejected("duplicate_name", "reference trajectory names")
    unknown = [n for n in names if n not in input_names]
    if unknown:
        raise InputRejected("unknown_name", f"reference trajectory: {', '.join(unknown[:5])}")
    if any(len(acc) not in (0, len(names)) for _, acc in points):
        raise InputRejected("length_mismatch", "reference trajectory accelerations")
    times = np.array([(start_ns + t) * 1e-9 for t, _ in points])
    acc = np.array([list(a) or [0.0] * len(names) for _, a in points], dtype=float)
    if not np.all(np.isfinite(acc)):
        raise InputRejected("non_finite", "reference trajectory accelerations")
    if np.any(np.diff(times) <= 0):
        raise InputRejected("invalid_value", "reference trajectory times do not increase")
    return Reference(tuple(names), times, acc, tuple(list(input_names).index(n) for n in names))


def input_accelerations(source: str, stamp_ns: int, xd: np.ndarray,
                        estimator: AccelerationEstimator, reference: Optional[Reference]
                        ) -> np.ndarray:
    """The accelerations of one evaluation by ``acceleration_source``: ``estimate`` (filtered
    differences of the velocities), ``reference`` (sampled at the stamp; zeros before the
    first reference) or ``zero``."""
    if source == "estimate":
        return estimator.update(stamp_ns, xd)
    if source == "reference" and reference is not None:
        return reference.input_accelerations(stamp_ns * 1e-9, len(xd))
    return np.zeros_like(xd)
