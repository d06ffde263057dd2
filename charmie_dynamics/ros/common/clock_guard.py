"""/clock messages that no ROS time can hold, dropped before rclpy's time source reads them.

With ``use_sim_time``, rclpy's time source subscribes to /clock and turns each message into a
``Time``; one with negative seconds (any participant on the domain can send it) raises
"Seconds value must not be negative" inside the executor, which ended every node of the
package (exit 1, a traceback). The guard wraps that subscription's callback: a message with
``sec < 0`` or ``nanosec >= 1e9`` is counted and named in a throttled warning, and the clock
keeps its last time; every other message reaches rclpy as before. Only the public
subscription API is used (``Node.subscriptions``, ``topic_name``, ``msg_type``,
``callback``), the same on Humble, Jazzy and Kilted.
"""
from __future__ import annotations

from rclpy.node import Node
from rosgraph_msgs.msg import Clock

from .log_throttle import LogThrottle

NANOSECONDS_PER_SECOND = 1_000_000_000


def clock_problem(msg: Clock) -> str:
    """Why ``msg`` holds no ROS time, or ""."""
    sec, nanosec = msg.clock.sec, msg.clock.nanosec
    if sec < 0:
        return f"sec = {sec}, expected >= 0"
    if nanosec >= NANOSECONDS_PER_SECOND:
        return f"nanosec = {nanosec}, expected < 1e9"
    return ""


class ClockGuard:
    """The guard on ``node``'s /clock subscription (none where use_sim_time is false);
    ``rejected`` counts the messages dropped."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.rejected = 0
        self.log_throttle = LogThrottle(2.0)
        for subscription in node.subscriptions:
            if subscription.msg_type is Clock:          # /clock, however remapped
                subscription.callback = self._guarded(subscription.callback)

    def _guarded(self, callback):
        def guarded(msg: Clock) -> None:
            problem = clock_problem(msg)
            if problem:
                self.rejected += 1
                if self.log_throttle():
                    self.node.get_logger().warning(
                        f"/clock message rejected ({problem}): the clock keeps its last time "
                        f"({self.rejected} rejected so far)")
                return
            callback(msg)
        return guarded
