"""Conversions between the core's arrays and ROS messages."""
from __future__ import annotations

from array import array
from typing import Sequence

import numpy as np
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import TransformStamped
from sensor_msgs.msg import JointState

from ...model.rotations import quaternions


def _split_seconds(seconds: float) -> tuple[int, int]:
    """(sec, nanosec) with the rounding carried into the seconds."""
    total = int(round(seconds * 1e9))
    return total // 1_000_000_000, total % 1_000_000_000


def stamp_from_seconds(seconds: float) -> Time:
    sec, nanosec = _split_seconds(seconds)
    return Time(sec=sec, nanosec=nanosec)


def stamp_from_nanoseconds(nanoseconds: int) -> Time:
    return Time(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)


def duration_from_seconds(seconds: float) -> Duration:
    sec, nanosec = _split_seconds(seconds)
    return Duration(sec=sec, nanosec=nanosec)


def set_transform(msg: TransformStamped, stamp: Time, translation: np.ndarray,
                  xyzw: np.ndarray) -> None:
    """Fill a TransformStamped whose frames are already set (reused from message to message)."""
    msg.header.stamp = stamp
    t, r = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = float(translation[0]), float(translation[1]), float(translation[2])
    r.x, r.y, r.z, r.w = float(xyzw[0]), float(xyzw[1]), float(xyzw[2]), float(xyzw[3])


def transform(stamp: Time, parent: str, child: str, R: np.ndarray, p: np.ndarray
              ) -> TransformStamped:
    msg = TransformStamped()
    msg.header.frame_id = parent
    msg.child_frame_id = child
    set_transform(msg, stamp, p, quaternions(R))
    return msg


def float_array(values: np.ndarray) -> array:
    """A float64 sequence field's own type: assigned without per-element checks, sent as
    one block."""
    return array("d", np.ascontiguousarray(values, dtype=float).tobytes())


def joint_state(stamp: Time, names: Sequence[str], position: np.ndarray, velocity: np.ndarray,
                effort: np.ndarray) -> JointState:
    msg = JointState(name=list(names))
    msg.header.stamp = stamp
    msg.position = float_array(position)
    msg.velocity = float_array(velocity)
    msg.effort = float_array(effort)
    return msg


def diagnostics(stamp: Time, name: str, level: bytes, message: str,
                values: dict[str, str]) -> DiagnosticArray:
    """A DiagnosticArray with one status of this package's nodes."""
    status = DiagnosticStatus(name=name, hardware_id="charmie", level=level, message=message)
    status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = stamp
    return msg
