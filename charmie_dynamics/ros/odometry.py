"""The planar base's coordinates from an odometry message's numbers (pure Python: no rclpy
here). nav_msgs/Odometry gives the pose in the odometry frame and the twist in the robot's
own frame; the model's base coordinates d1, d2, theta3 and their rates are in the world."""
from __future__ import annotations

import math

from .inputs import InputRejected

BASE_COORDINATES = ("d1", "d2", "theta3")
#: How far from 1 the orientation quaternion's norm may be (float32 sources round it)
NORM_TOLERANCE = 1e-3


def base_from_odometry(x: float, y: float, orientation: tuple[float, float, float, float],
                       linear: tuple[float, float], angular_z: float
                       ) -> tuple[dict[str, float], dict[str, float]]:
    """Positions and velocities of :data:`BASE_COORDINATES` from the pose (``x``, ``y``, the
    unit quaternion ``orientation`` x y z w) and the twist (``linear`` x y in the robot's
    frame, ``angular_z``). Raises ``invalid_value`` for an orientation that is not a unit
    quaternion, ``non_finite`` for NaN or infinite values."""
    qx, qy, qz, qw = orientation
    norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if not (math.isfinite(norm) and abs(norm - 1.0) < NORM_TOLERANCE):
        raise InputRejected("invalid_value", f"odometry orientation norm {norm:g}, expected 1")
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    vx, vy = linear
    if not all(math.isfinite(v) for v in (x, y, yaw, vx, vy, angular_z)):
        raise InputRejected("non_finite", "odometry")
    c, s = math.cos(yaw), math.sin(yaw)     # the twist turned into the world frame
    return (dict(zip(BASE_COORDINATES, (x, y, yaw))),
            dict(zip(BASE_COORDINATES, (c * vx - s * vy, s * vx + c * vy, angular_z))))
