"""Stand-ins for the nodes of a ros2_control robot's graph, each run as its own process:

    python robot_standins.py broadcaster CONFIG.json   # joint_state_broadcaster
    python robot_standins.py odometry CONFIG.json      # the base controller's odometry
    python robot_standins.py rsp CONFIG.json           # robot_state_publisher
    python robot_standins.py effort_controller CONFIG.json  # spawner + effort controller
    python robot_standins.py trajectory_controller CONFIG.json  # a JTC's action
    python robot_standins.py managed CONFIG.json       # a managed node, slow to configure

They behave as the real ones do where the dynamics node meets them:

- ``broadcaster``: publishes every joint of its hardware (the model's joints under hardware
  names, wheels, fingers) on ``/joint_states`` at ``rate`` Hz, stamped with the node clock,
  reliable (SystemDefaultsQoS, as joint_state_broadcaster); positions
  ``center + amplitude sin(2 pi f t + phase)`` (or a sum of such terms: robot_graph_config's
  ``sinusoids``) with their exact velocities; efforts 0 (its
  effort state interfaces; a frequency 0 holds a joint still). Two of them split one robot's
  joints (several hardware boards). With ``efforts`` ({"model": a model file, "motion":
  every joint of the robot as ``joints`` gives them, "joint_map": the joint map file}), the
  efforts of its own model joints are instead the model's inverse dynamics (the package's
  evaluator) at the whole robot's state at the message's stamp (robot_graph_config's
  ``sinusoid_state``: the base held still), times the map's ``effort_scale``; its other
  joints (wheels, fingers) 0. With ``stop_file``, it stops publishing once that file
  exists (the robot falls silent) and runs on until it is stopped.
- ``odometry``: ``nav_msgs/Odometry`` on ``/odom`` (pose in ``odom``, twist in
  ``base_link``) and ``odom -> base_link`` on ``/tf`` at ``rate`` Hz (REP 105); ``scale`` 0
  holds the base still at the origin.
- ``rsp``: ``/robot_description`` (transient local) and, for every movable joint of the
  URDF whose value (or, a mimic joint, whose leader's) arrives on ``/joint_states``,
  ``parent -> child`` on ``/tf`` at that value; fixed joints on ``/tf_static``, as
  robot_state_publisher does.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
from geometry_msgs.msg import TransformStamped
from lifecycle_msgs.srv import GetState
from nav_msgs.msg import Odometry
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from tf2_msgs.msg import TFMessage

from charmie_dynamics.ros.common.run import run_node
from robot_graph_config import sinusoids

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
TF = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def seconds(node: Node) -> float:
    return node.get_clock().now().nanoseconds * 1e-9


class Broadcaster(Node):
    def __init__(self, config: dict) -> None:
        super().__init__(config.get("name", "joint_state_broadcaster"))
        self.joints = config["joints"]   # [name, center, amplitude, frequency, phase, ...]
        self.pub = self.create_publisher(JointState, "/joint_states", RELIABLE)
        self.stop_file = config.get("stop_file")
        self.efforts = config.get("efforts") and TruthEfforts(config["efforts"], self.joints)
        self.timer = self.create_timer(1.0 / config["rate"], self.tick)

    def tick(self) -> None:
        if self.stop_file and os.path.exists(self.stop_file):   # the robot falls silent
            self.timer.cancel()
            return
        now = self.get_clock().now()
        t = now.nanoseconds * 1e-9                  # the values are those at the stamp
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.name = [j[0] for j in self.joints]
        values = [sinusoids(center, terms, t) for _, center, *terms in self.joints]
        msg.position = [v[0] for v in values]
        msg.velocity = [v[1] for v in values]
        msg.effort = self.efforts(t) if self.efforts else [0.0] * len(self.joints)
        self.pub.publish(msg)


class TruthEfforts:
    """A broadcaster's efforts from a model (Broadcaster's ``efforts`` config): the model's
    inverse dynamics at the whole robot's motion, for ``joints`` (its own, in order)."""

    def __init__(self, config: dict, joints: list) -> None:
        from charmie_dynamics import load_model
        from charmie_dynamics.evaluators import evaluator_for
        from charmie_dynamics.ros.common.joint_map import read_joint_map
        from robot_graph_config import sinusoid_state
        self.state = sinusoid_state
        model = load_model(config["model"])
        self.joint_map = read_joint_map([], config["joint_map"])
        self.motion, self.names = config["motion"], model.input_names
        self.evaluate = evaluator_for(model)
        model_names = self.joint_map.to_model(j[0] for j in joints)
        # (slot in the message, slot in the model's efforts, effort_scale) of its model joints
        self.slots = [(k, self.names.index(n), self.joint_map.effort_scale.get(n, 1.0))
                      for k, n in enumerate(model_names) if n in self.names]
        self.n = len(joints)

    def __call__(self, t: float) -> list[float]:
        x, xd, xdd = self.state(self.motion, self.joint_map, self.names, t)
        tau = self.evaluate(np.array(x), np.array(xd), np.array(xdd)).efforts
        out = [0.0] * self.n
        for k, i, scale in self.slots:
            out[k] = float(tau[i]) * scale
        return out


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


def _rotation(rpy) -> np.ndarray:
    """URDF's fixed-axis roll, pitch, yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _about(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' rotation about a unit axis."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * k @ k


def _quaternion(R: np.ndarray) -> tuple[float, float, float, float]:
    """x, y, z, w of a rotation matrix (w >= 0 branch first, then the largest diagonal)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * math.sqrt(1.0 + t)
        return ((R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, s / 4)
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * math.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
    q = [0.0, 0.0, 0.0, (R[k, j] - R[j, k]) / s]
    q[i], q[j], q[k] = s / 4, (R[j, i] + R[i, j]) / s, (R[k, i] + R[i, k]) / s
    return tuple(q)


def urdf_joints(text: str) -> list[dict]:
    """Every joint of a URDF: name, type, parent and child links, origin (xyz, rpy), unit
    axis, mimic (leader, multiplier, offset) or None."""
    def numbers(element, attribute, default):
        return np.array([float(v) for v in element.get(attribute, default).split()]) \
            if element is not None else np.array([float(v) for v in default.split()])
    joints = []
    for joint in ET.fromstring(text).iter("joint"):
        origin, axis, mimic = joint.find("origin"), joint.find("axis"), joint.find("mimic")
        direction = numbers(axis, "xyz", "1 0 0")
        joints.append(dict(
            name=joint.get("name"), type=joint.get("type"),
            parent=joint.find("parent").get("link"), child=joint.find("child").get("link"),
            xyz=numbers(origin, "xyz", "0 0 0"), rpy=numbers(origin, "rpy", "0 0 0"),
            axis=direction / np.linalg.norm(direction),
            mimic=None if mimic is None else (mimic.get("joint"), float(mimic.get("multiplier", 1)),
                                              float(mimic.get("offset", 0)))))
    return joints


class StatePublisher(Node):
    """robot_state_publisher from a URDF text (``urdf``): each joint's transform is its
    origin times its motion at the value received (a mimic joint: its leader's, times the
    multiplier plus the offset); fixed joints once on /tf_static."""

    def __init__(self, config: dict) -> None:
        super().__init__("robot_state_publisher")
        self.joints = urdf_joints(config["urdf"])
        self.create_publisher(String, "/robot_description", LATCHED).publish(
            String(data=config["urdf"]))
        self.pub_tf = self.create_publisher(TFMessage, "/tf", TF)
        static = self.create_publisher(TFMessage, "/tf_static", LATCHED)
        stamp = self.get_clock().now().to_msg()
        static.publish(TFMessage(transforms=[self.transform(j, 0.0, stamp) for j in self.joints
                                             if j["type"] == "fixed"]))
        self.create_subscription(JointState, "/joint_states", self.on_joint_states, RELIABLE)

    @staticmethod
    def transform(joint: dict, value: float, stamp) -> TransformStamped:
        R, p = _rotation(joint["rpy"]), joint["xyz"]
        if joint["type"] == "prismatic":
            p = p + R @ joint["axis"] * value
        elif joint["type"] in ("revolute", "continuous"):
            R = R @ _about(joint["axis"], value)
        tf = TransformStamped()
        tf.header.stamp, tf.header.frame_id, tf.child_frame_id = stamp, joint["parent"], joint["child"]
        t, r = tf.transform.translation, tf.transform.rotation
        t.x, t.y, t.z = (float(v) for v in p)
        r.x, r.y, r.z, r.w = (float(v) for v in _quaternion(R))
        return tf

    def on_joint_states(self, msg: JointState) -> None:
        values = dict(zip(msg.name, msg.position))
        moved = []
        for joint in self.joints:
            if joint["type"] == "fixed":
                continue
            leader, k, offset = joint["mimic"] or (joint["name"], 1.0, 0.0)
            if leader in values:
                moved.append(self.transform(joint, k * values[leader] + offset, msg.header.stamp))
        if moved:
            self.pub_tf.publish(TFMessage(transforms=moved))


class EffortController(Node):
    """The effort controller's spawner and controller in one: started by the hardware
    launch's ``controller_command`` once the dynamics node is active. It asks the dynamics
    node's lifecycle state as it starts and writes it to ``record`` (the order the launch
    promises), then takes the feedforward as a forward controller takes its commands."""

    def __init__(self, config: dict) -> None:
        super().__init__("effort_controller")
        self.record = config["record"]
        self.commands = 0
        self.create_subscription(Float64MultiArray, config["topic"], self.on_command, RELIABLE)
        self.client = self.create_client(GetState, config["state_service"])
        self.create_timer(0.05, self.ask)
        self.asked = False

    def ask(self) -> None:
        if self.asked or not self.client.service_is_ready():
            return
        self.asked = True
        self.client.call_async(GetState.Request()).add_done_callback(
            lambda future: self.write(future.result().current_state.label))

    def write(self, state: str) -> None:
        with open(self.record + ".part", "w", encoding="utf-8") as f:
            json.dump({"dynamics_state_at_start": state}, f)
        os.replace(self.record + ".part", self.record)      # whole, for the test's reader

    def on_command(self, msg: Float64MultiArray) -> None:
        self.commands += 1


class TrajectoryController(Node):
    """A joint_trajectory_controller's FollowJointTrajectory action (control_msgs, imported
    here only): each goal it receives is written whole to ``record``/goal_N.json (joint names,
    each point's positions, velocities, accelerations and efforts); it publishes one feedback
    (the first point as ``desired``) and succeeds, or, where the trajectory's
    ``header.frame_id`` is ``hold``, waits until it is canceled."""

    def __init__(self, config: dict) -> None:
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionServer, CancelResponse
        from rclpy.task import Future
        super().__init__("joint_trajectory_controller")
        self.future = Future
        self.action = FollowJointTrajectory
        self.record = config["record"]
        self.goals = 0
        self.cancelled: dict = {}                      # goal id -> a future done on cancel
        self.accept = CancelResponse.ACCEPT
        self.server = ActionServer(self, FollowJointTrajectory, config["action"], self.execute,
                                   cancel_callback=self.cancel)

    def cancel(self, goal_handle):
        future = self.cancelled.get(bytes(goal_handle.goal_id.uuid))
        if future is not None and not future.done():
            future.set_result(True)
        return self.accept

    async def execute(self, goal_handle):
        traj = goal_handle.request.trajectory
        goal = {"joint_names": list(traj.joint_names), "frame_id": traj.header.frame_id,
                "points": [{field: list(getattr(p, field)) for field in
                            ("positions", "velocities", "accelerations", "effort")}
                           for p in traj.points]}
        path = os.path.join(self.record, f"goal_{self.goals}.json")
        self.goals += 1
        with open(path + ".part", "w", encoding="utf-8") as f:
            json.dump(goal, f)
        os.replace(path + ".part", path)
        Result = self.action.Result
        goal_handle.publish_feedback(self.action.Feedback(
            joint_names=list(traj.joint_names), desired=traj.points[0]))
        if traj.header.frame_id == "hold":
            key = bytes(goal_handle.goal_id.uuid)
            self.cancelled[key] = future = self.future()
            if not goal_handle.is_cancel_requested:
                await future
            goal_handle.canceled()
            return Result(error_code=Result.SUCCESSFUL, error_string="canceled by request")
        goal_handle.succeed()
        return Result(error_code=Result.SUCCESSFUL, error_string="stand-in: done")


class Managed(LifecycleNode):
    """A managed node whose configure takes ``configure_s`` seconds, as the dynamics node's
    (its model read, its kernels loaded) takes about a second: it prints "configuring" as
    the transition starts, for a test to time a Ctrl-C into it."""

    def __init__(self, config: dict) -> None:
        super().__init__(config.get("name", "managed"))
        self.configure_s = float(config["configure_s"])

    def on_configure(self, state) -> TransitionCallbackReturn:
        print("configuring", flush=True)
        time.sleep(self.configure_s)
        return TransitionCallbackReturn.SUCCESS


ROLES = {"broadcaster": Broadcaster, "odometry": BaseOdometry, "rsp": StatePublisher,
         "effort_controller": EffortController, "trajectory_controller": TrajectoryController,
         "managed": Managed}


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
