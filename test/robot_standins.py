"""Stand-ins for the nodes of a ros2_control robot's graph, each run as its own process:

    python robot_standins.py broadcaster CONFIG.json   # joint_state_broadcaster
    python robot_standins.py odometry CONFIG.json      # the base controller's odometry
    python robot_standins.py rsp CONFIG.json           # robot_state_publisher

They behave as the real ones do where the dynamics node meets them:

- ``broadcaster``: publishes every joint of its hardware (the model's joints under hardware
  names, wheels, fingers) on ``/joint_states`` at ``rate`` Hz, stamped with the node clock,
  reliable (SystemDefaultsQoS, as joint_state_broadcaster); positions
  ``center + amplitude sin(2 pi f t + phase)`` with their exact velocities; efforts 0 (its
  effort state interfaces; a frequency 0 holds a joint still). Two of them split one robot's
  joints (several hardware boards). With ``stop_file``, it stops publishing once that file
  exists (the robot falls silent) and runs on until it is stopped.
- ``odometry``: ``nav_msgs/Odometry`` on ``/odom`` (pose in ``odom``, twist in
  ``base_link``) and ``odom -> base_link`` on ``/tf`` at ``rate`` Hz (REP 105); ``scale`` 0
  holds the base still at the origin.
- ``rsp``: ``/robot_description`` (transient local) and, for every movable URDF joint whose
  value arrives on ``/joint_states``, ``parent -> child`` on ``/tf``; fixed joints on
  ``/tf_static``. The transforms' values are the joints' origins only (the test checks who
  publishes which frame, not robot_state_publisher's arithmetic).
"""
from __future__ import annotations

import json
import math
import os
import sys

import rclpy
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from charmie_dynamics.ros.run import run_node

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
TF = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def seconds(node: Node) -> float:
    return node.get_clock().now().nanoseconds * 1e-9


class Broadcaster(Node):
    def __init__(self, config: dict) -> None:
        super().__init__(config.get("name", "joint_state_broadcaster"))
        self.joints = config["joints"]          # [name, center, amplitude, frequency, phase]
        self.pub = self.create_publisher(JointState, "/joint_states", RELIABLE)
        self.stop_file = config.get("stop_file")
        self.timer = self.create_timer(1.0 / config["rate"], self.tick)

    def tick(self) -> None:
        if self.stop_file and os.path.exists(self.stop_file):   # the robot falls silent
            self.timer.cancel()
            return
        t = seconds(self)
        msg = JointState()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.name = [j[0] for j in self.joints]
        w = [2 * math.pi * j[3] for j in self.joints]
        msg.position = [c + a * math.sin(wk * t + p) for (_, c, a, _, p), wk in zip(self.joints, w)]
        msg.velocity = [a * wk * math.cos(wk * t + p) for (_, _, a, _, p), wk in zip(self.joints, w)]
        msg.effort = [0.0] * len(self.joints)
        self.pub.publish(msg)


class BaseOdometry(Node):
    def __init__(self, config: dict) -> None:
        super().__init__("base_controller")
        self.scale = config.get("scale", 1.0)
        self.pub_odom = self.create_publisher(Odometry, "/odom", RELIABLE)
        self.pub_tf = self.create_publisher(TFMessage, "/tf", TF)
        self.create_timer(1.0 / config["rate"], self.tick)

    def tick(self) -> None:
        t = seconds(self)
        k = self.scale
        x, y, yaw = k * 0.2 * math.sin(0.5 * t), k * 0.1 * math.cos(0.5 * t), k * 0.3 * math.sin(0.25 * t)
        vx_world, vy_world, wz = k * 0.1 * math.cos(0.5 * t), -k * 0.05 * math.sin(0.5 * t), \
            k * 0.075 * math.cos(0.25 * t)
        c, s = math.cos(yaw), math.sin(yaw)
        stamp = self.get_clock().now().to_msg()
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, "odom", "base_link"
        odom.pose.pose.position.x, odom.pose.pose.position.y = x, y
        odom.pose.pose.orientation.z, odom.pose.pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)
        odom.twist.twist.linear.x = c * vx_world + s * vy_world       # in base_link
        odom.twist.twist.linear.y = -s * vx_world + c * vy_world
        odom.twist.twist.angular.z = wz
        self.pub_odom.publish(odom)
        tf = TransformStamped()
        tf.header.stamp, tf.header.frame_id, tf.child_frame_id = stamp, "odom", "base_link"
        tf.transform.translation.x, tf.transform.translation.y = x, y
        tf.transform.rotation = odom.pose.pose.orientation
        self.pub_tf.publish(TFMessage(transforms=[tf]))


class StatePublisher(Node):
    def __init__(self, config: dict) -> None:
        super().__init__("robot_state_publisher")
        # name (a mimic joint: its leader's), parent, child, fixed, origin
        self.joints = config["joints"]
        self.create_publisher(String, "/robot_description", LATCHED).publish(
            String(data=config["urdf"]))
        self.pub_tf = self.create_publisher(TFMessage, "/tf", TF)
        static = self.create_publisher(TFMessage, "/tf_static", LATCHED)
        stamp = self.get_clock().now().to_msg()
        static.publish(TFMessage(transforms=[self.transform(j, stamp) for j in self.joints
                                             if j["fixed"]]))
        self.create_subscription(JointState, "/joint_states", self.on_joint_states, RELIABLE)

    @staticmethod
    def transform(joint: dict, stamp) -> TransformStamped:
        tf = TransformStamped()
        tf.header.stamp, tf.header.frame_id, tf.child_frame_id = stamp, joint["parent"], joint["child"]
        x, y, z = joint["origin"]
        tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = x, y, z
        tf.transform.rotation.w = 1.0
        return tf

    def on_joint_states(self, msg: JointState) -> None:
        names = set(msg.name)
        moved = [j for j in self.joints if not j["fixed"] and j["name"] in names]
        if moved:
            self.pub_tf.publish(TFMessage(transforms=[self.transform(j, msg.header.stamp)
                                                      for j in moved]))


ROLES = {"broadcaster": Broadcaster, "odometry": BaseOdometry, "rsp": StatePublisher}


def main() -> None:
    role, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    role_class = ROLES[role]

    class Configured(role_class):
        def __init__(self) -> None:
            super().__init__(config)

    Configured.__name__ = role_class.__name__
    # the package's node runner: SIGINT/SIGTERM at any moment end it with status 0, and a
    # second SIGINT during teardown is ignored (rclpy.spin here once ignored launch's SIGINT
    # and SIGTERM for 125 s in CI, a broadcaster whose only timer was cancelled)
    sys.exit(run_node(Configured))


if __name__ == "__main__":
    main()
