"""Conversions between the core's arrays and ROS messages."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from builtin_interfaces.msg import Duration, Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Quaternion, TransformStamped, Vector3
from sensor_msgs.msg import JointState


def to_seconds(stamp: Time) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def _split_seconds(seconds: float) -> tuple[int, int]:
    """(sec, nanosec) with the rounding carried into the seconds."""
    total = int(round(seconds * 1e9))
    return total // 1_000_000_000, total % 1_000_000_000


def stamp_from_seconds(seconds: float) -> Time:
    sec, nanosec = _split_seconds(seconds)
    return Time(sec=sec, nanosec=nanosec)


def duration_from_seconds(seconds: float) -> Duration:
    sec, nanosec = _split_seconds(seconds)
    return Duration(sec=sec, nanosec=nanosec)


def quaternion(R: np.ndarray) -> Quaternion:
    """Unit quaternion of a rotation matrix (Shepperd's method: stable for every rotation)."""
    t = np.trace(R)
    k = int(np.argmax([t, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(1.0 + t)
        w, x, y, z = 0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s
    elif k == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        w, x, y, z = (R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s
    elif k == 2:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        w, x, y, z = (R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        w, x, y, z = (R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s
    return Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))


def vector3(v: np.ndarray) -> Vector3:
    return Vector3(x=float(v[0]), y=float(v[1]), z=float(v[2]))


def transform(stamp: Time, parent: str, child: str, R: np.ndarray, p: np.ndarray) -> TransformStamped:
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = parent
    msg.child_frame_id = child
    msg.transform.translation = vector3(p)
    msg.transform.rotation = quaternion(R)
    return msg


def joint_state(stamp: Time, names: Sequence[str], position: np.ndarray, velocity: np.ndarray,
                effort: np.ndarray) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(v) for v in position]
    msg.velocity = [float(v) for v in velocity]
    msg.effort = [float(v) for v in effort]
    return msg


def diagnostics(stamp: Time, name: str, level: bytes, message: str,
                values: dict[str, str]) -> DiagnosticArray:
    """A DiagnosticArray with one status of this package's nodes."""
    status = DiagnosticStatus(name=name, hardware_id="charmie", level=level, message=message)
    status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = stamp
    return msg
