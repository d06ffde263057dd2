"""The ROS side of ``charmie-dynamics view --ros``: the robot's inputs from joint_states (and
actuator_states), the reaction-force arrows from the dynamics node's wrench_markers.

Poses come from the inputs, not from /tf: the package's own forward kinematics gives every
body and auxiliary segment exactly (the dynamics node computes /tf with the same code), and
no tf2 buffer is needed (tf2_ros has no PyPI wheel). The arrows are the node's own markers,
so they show what it computed (its acceleration source, its ``marker_scale``).

Inputs are read as the dynamics node reads them with its default parameters: under the
robot's names and units (``joint_map``), from one or several joint_states topics whose
publishers may each carry part of the joints (``joint_state_policy`` merge: each joint keeps
its own stamp, and a pose is drawn once every joint has a value within ``max_joint_age`` of
the newest), the actuator lengths from actuator_states, the base from odometry where given
(``inputs.read_robot_joint_state``, ``InputLimits`` with the default position and velocity
tolerances, ``StateAssembler``, ``odometry.base_from_odometry``): a bad message is counted and
logged, never drawn; the page keeps the last valid pose.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Optional

import numpy as np
import rclpy
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from ...kinematics.limits import POSITION_TOLERANCE, VELOCITY_TOLERANCE
from ...model.model import Model
from ..common import qos
from ..common.inputs import InputLimits, InputRejected, StateAssembler, read_robot_joint_state
from ..common.joint_map import JointMap
from ..common.log_throttle import LogThrottle
from ..common.odometry import base_from_odometry
from ..common.parameters import check_topic_name
from ..common.run import run_node
from ..common.stamps import to_nanoseconds
from .robot_inputs import RobotTopics

NODE_NAME = "charmie_view"
StateCallback = Callable[[np.ndarray], None]              # inputs in ``inputs`` order
ArrowsCallback = Callable[[np.ndarray], None]             # (n, 2, 3) start and tip, world


class ViewFeed(Node):
    """Forwards the newest valid inputs at most ``rate`` times a second, and every valid
    wrench_markers message, to the view; shuts rclpy down after ``duration`` s when > 0.
    ``inputs``: the names forwarded (default the model's inputs; a model with loops: its
    independent coordinates, the dependent ones ``ignored`` as the dynamics node does)."""

    def __init__(self, model: Model, on_state: StateCallback, on_arrows: ArrowsCallback,
                 rate: float, duration: float = 0.0, inputs: tuple[str, ...] = (),
                 ignored: tuple[str, ...] = (), topics: RobotTopics = RobotTopics(),
                 joint_map: JointMap = JointMap(), max_joint_age: float = 0.1) -> None:
        super().__init__(NODE_NAME)
        self.log_throttle = LogThrottle(2.0)
        self.model, self.joint_map = model, joint_map
        self.max_age_ns = int(max_joint_age * 1e9)
        self.on_state, self.on_arrows = on_state, on_arrows
        base = model.base.coordinates if topics.odometry and model.base else ()
        self.assembler = StateAssembler(model, base_coordinates=base, inputs=inputs,
                                        ignored=ignored, shown=joint_map.hardware)
        self.limits = InputLimits.of(model)
        self.pending: Optional[np.ndarray] = None
        self.rejected: Counter[str] = Counter()
        self.waiting = 0                 # stored messages after which no pose could be drawn
        for topic in topics.joint_states:
            self.create_subscription(JointState, topic, lambda m: self._on_joint_state(m, True),
                                     qos.NEWEST_SAMPLE)
        if topics.actuator_states:
            self.create_subscription(JointState, topics.actuator_states,
                                     lambda m: self._on_joint_state(m, False), qos.NEWEST_SAMPLE)
        if base:
            self.create_subscription(Odometry, topics.odometry, self._on_odometry,
                                     qos.NEWEST_SAMPLE)
        self.create_subscription(MarkerArray, "wrench_markers", self._on_markers, qos.OUTPUT)
        self.create_timer(1.0 / rate, self._tick)
        if duration > 0:
            self.create_timer(duration, lambda: rclpy.try_shutdown(context=self.context))

    def _reject(self, reason: str, detail: str) -> None:
        self.rejected[reason] += 1
        if self.log_throttle():
            self.get_logger().warning(f"input rejected ({reason}): {detail}; the view keeps the "
                                      "last valid pose")

    def _store(self, positions: dict, velocities: dict, stamp: int) -> None:
        self.limits.check(positions, velocities, POSITION_TOLERANCE, VELOCITY_TOLERANCE,
                          self.joint_map.hardware)
        self.assembler.update(positions, velocities, stamp=stamp)
        try:
            self.assembler.merged_stamp(self.max_age_ns)
        except InputRejected:
            # a joint not received yet, or lagging: no pose yet (the message was stored)
            self.waiting += 1
            return
        self.pending = self.assembler.assemble()[0]

    def _on_joint_state(self, msg: JointState, is_joint_states: bool) -> None:
        allowed = self.assembler.accepted_names() if is_joint_states else self.model.actuator_names
        try:
            pos, vel, _ = read_robot_joint_state(self.joint_map, msg.name, msg.position,
                                                 msg.velocity, msg.effort, allowed)
            if pos:
                self._store(pos, vel, to_nanoseconds(msg.header.stamp))
        except InputRejected as exc:
            self._reject(exc.reason, exc.detail)

    def _on_odometry(self, msg: Odometry) -> None:
        pose, twist = msg.pose.pose, msg.twist.twist
        o = pose.orientation
        try:
            positions, velocities = base_from_odometry(
                self.model.base, pose.position.x, pose.position.y, (o.x, o.y, o.z, o.w),
                (twist.linear.x, twist.linear.y), twist.angular.z)
            self._store(positions, velocities, to_nanoseconds(msg.header.stamp))
        except InputRejected as exc:
            self._reject(exc.reason, f"odometry: {exc.detail}")

    def _on_markers(self, msg: MarkerArray) -> None:
        arrows = [[(p.x, p.y, p.z) for p in m.points] for m in msg.markers
                  if m.type == Marker.ARROW and m.action == Marker.ADD and len(m.points) == 2]
        points = np.array(arrows, dtype=float).reshape(-1, 2, 3)
        if not np.isfinite(points).all():
            return self._reject("non_finite", "wrench_markers with NaN or infinite points")
        self.on_arrows(points)

    def _tick(self) -> None:
        if self.pending is not None:
            x, self.pending = self.pending, None
            self.on_state(x)


def check_topics(topics: RobotTopics) -> None:
    """``ValueError`` in one line for a topic option rcl would refuse as a topic name (before
    the page is served: a node refuses it at its first subscription)."""
    options = [("--joint-states", t) for t in topics.joint_states] + [
        ("--actuator-states", topics.actuator_states), ("--odometry", topics.odometry)]
    for option, topic in options:
        if topic:
            check_topic_name(option, topic, NODE_NAME)


def run_view_feed(model: Model, on_state: StateCallback, on_arrows: ArrowsCallback,
                  rate: float, duration: float, inputs: tuple[str, ...] = (),
                  ignored: tuple[str, ...] = (), topics: RobotTopics = RobotTopics(),
                  joint_map: JointMap = JointMap(), max_joint_age: float = 0.1) -> int:
    """Spin a :class:`ViewFeed` until Ctrl-C, or for ``duration`` seconds when > 0."""
    class Feed(ViewFeed):
        def __init__(self) -> None:
            super().__init__(model, on_state, on_arrows, rate, duration, inputs, ignored,
                             topics, joint_map, max_joint_age)

    return run_node(Feed)
