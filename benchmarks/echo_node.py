"""The floor of benchmarks/bench_node.py: the least an rclpy node can do with each input.

    .venv/bin/python benchmarks/echo_node.py --ros-args [-r __ns:=/x]
        [-p busy_us:=0] [-p publishes:=1] [-p raw:=false] [-p joint_state_policy:=merge]

Subscribes sensor_msgs/JointState on ``joint_states`` with the dynamics node's input QoS
for its ``joint_state_policy`` (``qos.joint_states_input``: merge, the node's default, best
effort with a queue of 10, so an input that arrives while the callback runs waits its turn;
strict, best effort depth 1, so it overwrites the older one) and publishes, for each
message, one std_msgs/Float64MultiArray on ``echo`` with the dynamics node's output QoS: the
input's stamp (sec, nanosec: exact as doubles) followed by its positions, converted as the
dynamics node converts its outputs (``ros.messages.float_array``). It spins the executor the
dynamics node spins (``ros.run.make_executor``), so the difference between the two is the
dynamics node's own work.

Parameters (read at start), for the variants bench_node.py runs beside the plain echo:

* ``busy_us`` (int, default 0): per message, a pure-Python busy loop of that many
  microseconds (``time.perf_counter``) before publishing; it holds the GIL, as the dynamics
  node's own work does;
* ``publishes`` (int, default 1): Float64MultiArray messages published per input: the one on
  ``echo``, and the others (the same message) on ``echo_copy``, which the benchmark does not
  subscribe to, as it does not to the dynamics node's stamped ``feedforward_states`` copy (2:
  the dynamics node's two publishes per input on its control path);
* ``raw`` (bool, default false): subscribe with ``raw=True`` (no deserialization) and read
  only the stamp from the CDR bytes; the echo then carries the stamp alone, no positions;
* ``joint_state_policy`` (merge or strict, default merge, the dynamics node's default): the
  input QoS, as the dynamics node's with that policy.
"""
from __future__ import annotations

import struct
import sys
import time
from array import array

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from charmie_dynamics.ros.common import qos
from charmie_dynamics.ros.common.messages import float_array
from charmie_dynamics.ros.common.run import run_node

# JointState's CDR: a 4-byte encapsulation header (0x0001: little-endian, as every publisher
# of this machine writes it), then header.stamp's sec (int32) and nanosec (uint32)
_STAMP = struct.Struct("<iI")


class EchoNode(Node):
    """joint_states in, ``publishes`` Float64MultiArray out per message (module docstring)."""

    def __init__(self) -> None:
        super().__init__("echo")
        self.busy_s = self.declare_parameter(
            "busy_us", 0, ParameterDescriptor(
                description="per message, microseconds of pure-Python busy loop (holds the "
                            "GIL) before publishing")).value * 1e-6
        publishes = self.declare_parameter(
            "publishes", 1, ParameterDescriptor(
                description="messages published per input: one on echo, the others on "
                            "echo_copy")).value
        raw = self.declare_parameter(
            "raw", False, ParameterDescriptor(
                description="subscribe raw (CDR bytes) and echo the stamp alone")).value
        policy = self.declare_parameter(
            "joint_state_policy", "merge", ParameterDescriptor(
                description="the input QoS of the dynamics node with this policy: merge "
                            "(queue of 10) or strict (depth 1)")).value
        if publishes < 1:
            raise ValueError(f"publishes: expected >= 1, got {publishes}")
        if policy not in ("merge", "strict"):
            raise ValueError(f"joint_state_policy: expected merge or strict, got {policy!r}")
        self.copies = publishes - 1
        self.msg = Float64MultiArray()
        self.pub = self.create_publisher(Float64MultiArray, "echo", qos.OUTPUT)
        self.copy_pub = (self.create_publisher(Float64MultiArray, "echo_copy", qos.OUTPUT)
                         if self.copies else None)
        self.create_subscription(JointState, "joint_states",
                                 self._on_raw if raw else self._on_joint_state,
                                 qos.joint_states_input(policy), raw=raw)

    def _on_joint_state(self, msg: JointState) -> None:
        stamp = msg.header.stamp
        values = np.empty(len(msg.position) + 2)
        values[0], values[1] = stamp.sec, stamp.nanosec
        values[2:] = msg.position
        self._send(float_array(values))

    def _on_raw(self, data: bytes) -> None:
        self._send(array("d", _STAMP.unpack_from(data, 4)))

    def _send(self, data: array) -> None:
        """The busy work, then the publishes."""
        if self.busy_s:
            end = time.perf_counter() + self.busy_s
            while time.perf_counter() < end:
                pass
        self.msg.data = data
        self.pub.publish(self.msg)
        for _ in range(self.copies):
            self.copy_pub.publish(self.msg)


def main(args=None) -> int:
    return run_node(EchoNode, args)


if __name__ == "__main__":
    sys.exit(main())
