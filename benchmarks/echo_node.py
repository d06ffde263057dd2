"""The floor of benchmarks/bench_node.py: the least an rclpy node can do with each input.

    .venv/bin/python benchmarks/echo_node.py --ros-args [-r __ns:=/x]

Subscribes sensor_msgs/JointState on ``joint_states`` with the dynamics node's input QoS
(best effort, depth 1: a message that arrives while the callback runs overwrites the older
one) and publishes, for each message, one std_msgs/Float64MultiArray on ``echo`` with the
dynamics node's output QoS: the input's stamp (sec, nanosec: exact as doubles) followed by
its positions, converted as the dynamics node converts its outputs
(``ros.messages.float_array``). It spins the executor the dynamics node spins
(``ros.run.make_executor``), so the difference between the two is the dynamics node's own
work.
"""
from __future__ import annotations

import sys

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from charmie_dynamics.ros import qos
from charmie_dynamics.ros.messages import float_array
from charmie_dynamics.ros.run import run_node


class EchoNode(Node):
    """joint_states in, one Float64MultiArray out per message (module docstring)."""

    def __init__(self) -> None:
        super().__init__("echo")
        self.msg = Float64MultiArray()
        self.pub = self.create_publisher(Float64MultiArray, "echo", qos.OUTPUT)
        self.create_subscription(JointState, "joint_states", self._on_joint_state,
                                 qos.NEWEST_SAMPLE)

    def _on_joint_state(self, msg: JointState) -> None:
        stamp = msg.header.stamp
        values = np.empty(len(msg.position) + 2)
        values[0], values[1] = stamp.sec, stamp.nanosec
        values[2:] = msg.position
        self.msg.data = float_array(values)
        self.pub.publish(self.msg)


def main(args=None) -> int:
    return run_node(EchoNode, args)


if __name__ == "__main__":
    sys.exit(main())
