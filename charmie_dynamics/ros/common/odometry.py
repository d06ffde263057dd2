"""The planar base's coordinates from an odometry message's numbers (pure Python: no rclpy
here). nav_msgs/Odometry gives the pose of REP 103's ``base_link`` (x forward) in the
odometry frame and the twist in base_link; the model's base coordinates (``PlanarBase``: x,
y along the world, which is the odometry frame, and the yaw of the base body, whose frame
may sit turned in base_link) and their rates are in the world."""
from __future__ import annotations

import math

from ...model.model import PlanarBase
from .inputs import InputRejected

#: How far from 1 the orientation quaternion's norm may be (float32 sources round it)
NORM_TOLERANCE = 1e-3
#: How far base_link's z axis may lean from the odometry frame's (a 3D odometry on a ramp)
#: before the pose is not a planar base's: a rolled or upside-down pose has no yaw to take
MAX_TILT = math.radians(30.0)


def base_from_odometry(base: PlanarBase, x: float, y: float,
                       orientation: tuple[float, float, float, float],
                       linear: tuple[float, float], angular_z: float
                       ) -> tuple[dict[str, float], dict[str, float]]:
    """Positions and velocities of ``base.coordinates`` from the pose of base_link (``x``,
    ``y``, the unit quaternion ``orientation`` x y z w) and its twist (``linear`` x y in
    base_link, ``angular_z``): the yaw coordinate is base_link's yaw plus the base body's
    heading in base_link (``PlanarBase.heading``), in [-pi, pi]. Raises ``invalid_value`` for an
    orientation that is not a unit quaternion or leans more than ``MAX_TILT`` from upright,
    ``non_finite`` for NaN or infinite values."""
    qx, qy, qz, qw = orientation
    norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    if not (math.isfinite(norm) and abs(norm - 1.0) < NORM_TOLERANCE):
        raise InputRejected("invalid_value", f"odometry orientation norm {norm:g}, expected 1")
    tilt = math.acos(max(-1.0, min(1.0, 1.0 - 2.0 * (qx * qx + qy * qy) / norm ** 2)))
    if tilt > MAX_TILT:
        raise InputRejected("invalid_value", f"odometry orientation tilted "
                                             f"{math.degrees(tilt):.0f} deg from upright, "
                                             f"expected a planar base (at most "
                                             f"{math.degrees(MAX_TILT):.0f} deg)")
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    vx, vy = linear
    values = {"pose.position.x": x, "pose.position.y": y, "pose.orientation": yaw,
              "twist.linear.x": vx, "twist.linear.y": vy, "twist.angular.z": angular_z}
    bad = [name for name, value in values.items() if not math.isfinite(value)]
    if bad:
        raise InputRejected("non_finite", f"{', '.join(bad)} not finite")
    c, s = math.cos(yaw), math.sin(yaw)     # the twist turned into the world frame
    return (dict(zip(base.coordinates, (x, y, math.remainder(yaw + base.heading, 2.0 * math.pi)))),
            dict(zip(base.coordinates, (c * vx - s * vy, s * vx + c * vy, angular_z))))
