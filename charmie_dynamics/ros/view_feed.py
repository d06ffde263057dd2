"""The ROS side of ``charmie-dynamics view --ros``: the robot's inputs from joint_states (and
actuator_states), the reaction-force arrows from the dynamics node's wrench_markers.

Poses come from the inputs, not from /tf: the package's own forward kinematics gives every
body and auxiliary segment exactly (the dynamics node computes /tf with the same code), and
no tf2 buffer is needed (tf2_ros has no PyPI wheel). The arrows are the node's own markers,
so they show what it computed (its acceleration source, its ``marker_scale``).

Inputs are checked as the dynamics node checks them with its default parameters
(``inputs.read_joint_state`` with the effort-length check, ``InputLimits`` with the default
position and velocity tolerances, ``StateAssembler``): a bad message is counted and logged,
never drawn; the page keeps the last valid pose.
"""
from __future__ import annotations

from collections import Counter
from typing import Callable, Optional

import numpy as np
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState
from visualization_msgs.msg import Marker, MarkerArray

from ..model.model import Model
from . import qos
from ..kinematics.limits import POSITION_TOLERANCE, VELOCITY_TOLERANCE
from .inputs import InputLimits, InputRejected, StateAssembler, read_joint_state
from .run import run_node

StateCallback = Callable[[np.ndarray], None]              # inputs in ``inputs`` order
ArrowsCallback = Callable[[np.ndarray], None]             # (n, 2, 3) start and tip, world


class ViewFeed(Node):
    """Forwards the newest valid inputs at most ``rate`` times a second, and every valid
    wrench_markers message, to the view; shuts rclpy down after ``duration`` s when > 0.
    ``inputs``: the names forwarded (default the model's inputs; a model with loops: its
    independent coordinates, the dependent ones ``ignored`` as the dynamics node does)."""

    def __init__(self, model: Model, on_state: StateCallback, on_arrows: ArrowsCallback,
                 rate: float, duration: float = 0.0, inputs: tuple[str, ...] = (),
                 ignored: tuple[str, ...] = ()) -> None:
        super().__init__("charmie_view")
        self.model = model
        self.on_state, self.on_arrows = on_state, on_arrows
        self.assembler = StateAssembler(model, inputs=inputs, ignored=ignored)
        self.limits = InputLimits.of(model)
        self.pending: Optional[np.ndarray] = None
        self.rejected: Counter[str] = Counter()
        self.create_subscription(JointState, "joint_states",
                                 lambda m: self._on_joint_state(m, True), qos.NEWEST_SAMPLE)
        self.create_subscription(JointState, "actuator_states",
                                 lambda m: self._on_joint_state(m, False), qos.NEWEST_SAMPLE)
        self.create_subscription(MarkerArray, "wrench_markers", self._on_markers, qos.OUTPUT)
        self.create_timer(1.0 / rate, self._tick)
        if duration > 0:
            self.create_timer(duration, lambda: rclpy.try_shutdown(context=self.context))

    def _reject(self, reason: str, detail: str) -> None:
        self.rejected[reason] += 1
        self.get_logger().warning(f"input rejected ({reason}): {detail}; the view keeps the last "
                               "valid pose", throttle_duration_sec=2.0)

    def _on_joint_state(self, msg: JointState, is_joint_states: bool) -> None:
        required = self.assembler.required_names() if is_joint_states else ()
        allowed = self.assembler.accepted_names() if is_joint_states else self.model.actuator_names
        try:
            pos, vel, _ = read_joint_state(msg.name, msg.position, msg.velocity, allowed, required,
                                        effort=msg.effort)
            self.limits.check(pos, vel, POSITION_TOLERANCE, VELOCITY_TOLERANCE)
            self.assembler.update(pos, vel)
            if is_joint_states:
                self.pending = self.assembler.assemble()[0]
        except InputRejected as exc:
            self._reject(exc.reason, exc.detail)

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


def run_view_feed(model: Model, on_state: StateCallback, on_arrows: ArrowsCallback,
                  rate: float, duration: float, inputs: tuple[str, ...] = (),
                  ignored: tuple[str, ...] = ()) -> int:
    """Spin a :class:`ViewFeed` until Ctrl-C, or for ``duration`` seconds when > 0."""
    class Feed(ViewFeed):
        def __init__(self) -> None:
            super().__init__(model, on_state, on_arrows, rate, duration, inputs, ignored)

    return run_node(Feed)
