"""A desired trajectory (trajectory_msgs/JointTrajectory's numbers) checked and turned into a
:class:`~.inputs.ReferenceTrajectory` (pure Python: no rclpy here). Accepted whole or
rejected whole with an :class:`~.inputs.InputRejected`."""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Sequence

import numpy as np

from ...kinematics.limits import InputLimits
from ..common.inputs import AccelerationEstimator, InputRejected, ReferenceTrajectory

#: CDR encapsulations (RTPS) whose JointTrajectory prefix :func:`check_serialized_reference`
#: reads: plain CDR and XCDR2, big and little endian (the lowest bit)
_PLAIN_CDR = (0, 1, 6, 7)


@dataclass
class Reference(ReferenceTrajectory):
    """A checked reference with the input slots (``model.input_names``) of its names."""

    slots: tuple[int, ...] = ()

    def input_accelerations(self, t: float, n_inputs: int) -> np.ndarray:
        """Accelerations of every input at ``t`` (s): the reference's, 0 for the others."""
        xdd = np.zeros(n_inputs)
        xdd[list(self.slots)] = self.sample(t)
        return xdd


def check_serialized_reference(data: bytes, max_names: int, max_points: int) -> None:
    """Raise ``invalid_value`` for a serialized trajectory_msgs/JointTrajectory (as a raw
    subscription hands it over) with more than ``max_names`` joint names or ``max_points``
    points, read from the counts in its CDR bytes: before deserializing, which costs about
    10 us a point. Another encoding is left to :func:`read_reference`'s checks."""
    if len(data) < 4 or data[1] not in _PLAIN_CDR or data[0] != 0:
        return
    u32 = struct.Struct("<I" if data[1] & 1 else ">I").unpack_from
    try:
        # after the 4-byte encapsulation: header.stamp (8 bytes), header.frame_id, joint_names,
        # points; every field here is 4-aligned (relative to the encapsulation's end)
        at = 4 + 8
        at = _after_string(data, at, u32)
        (n_names,) = u32(data, at)
        if n_names > max_names:
            raise InputRejected("invalid_value", f"reference trajectory with {n_names} joint "
                                                 f"names, the model has {max_names} inputs")
        at += 4
        for _ in range(n_names):
            at = _after_string(data, at, u32)
        (n_points,) = u32(data, at)
    except struct.error:
        raise InputRejected("invalid_value", "reference trajectory: truncated message") from None
    if n_points > max_points:
        raise InputRejected("invalid_value", f"reference trajectory with {n_points} points, "
                                             f"max_reference_points {max_points}")


def _after_string(data: bytes, at: int, u32) -> int:
    """Offset of what follows the CDR string at ``at`` (length, bytes, padding to 4)."""
    (length,) = u32(data, at)
    end = at + 4 + length
    if end > len(data):
        raise struct.error("string beyond the message")
    return 4 + ((end - 4 + 3) & ~3)


def read_reference(names: Sequence[str], points: Sequence[tuple[int, Sequence[float]]],
                   start_ns: int, input_names: Sequence[str], limits: InputLimits,
                   max_points: int, scale: Mapping[str, float] = MappingProxyType({})
                   ) -> Reference:
    """``points``: (time from start in ns, accelerations, empty for zeros) of each point;
    ``start_ns``: the absolute time of the start; ``names``: the model's names, the
    accelerations in the hardware's units, times ``scale`` (the joint map's) in the model's.
    Raises ``invalid_value`` (no points, more
    than ``max_points``, times that do not increase), ``duplicate_name``, ``unknown_name``,
    ``length_mismatch``, ``non_finite`` or ``beyond_limits`` (an acceleration beyond
    ``limits``: implausible, as for measured inputs)."""
    names = list(names)
    if not points:
        raise InputRejected("invalid_value", "reference trajectory without points")
    if len(points) > max_points:
        raise InputRejected("invalid_value", f"reference trajectory with {len(points)} points, "
                                             f"max_reference_points {max_points}")
    if len(set(names)) != len(names):
        raise InputRejected("duplicate_name", "reference trajectory names")
    unknown = [n for n in names if n not in input_names]
    if unknown:
        raise InputRejected("unknown_name", f"reference trajectory: {', '.join(unknown[:5])}")
    if any(len(acc) not in (0, len(names)) for _, acc in points):
        raise InputRejected("length_mismatch", "reference trajectory accelerations")
    times = np.array([(start_ns + t) * 1e-9 for t, _ in points])
    acc = np.array([list(a) or [0.0] * len(names) for _, a in points], dtype=float)
    if scale:
        acc = acc * np.array([scale.get(n, 1.0) for n in names])
    if not np.all(np.isfinite(acc)):
        raise InputRejected("non_finite", "reference trajectory accelerations")
    problem = limits.violation({}, {}, math.inf, math.inf, dict(zip(names, acc.T)))
    if problem is not None:
        raise InputRejected("beyond_limits",
                            f"reference trajectory point {problem.sample}: {problem}")
    # checked on the integer nanoseconds: a float of seconds since 1970 resolves only ~240 ns
    offsets = [t for t, _ in points]
    if any(b <= a for a, b in zip(offsets, offsets[1:])):
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
    return np.zeros(xd.shape[0])
