"""Issue 35, item 4: the FollowJointTrajectory proxy (ros/trajectory_effort_proxy.py) over DDS,
every party its own process: a joint_trajectory_controller's action (robot_standins.py
``trajectory_controller``: it records each goal it receives, publishes one feedback and
succeeds, or holds a goal until it is canceled), the proxy, two joint_state_broadcasters
splitting the robot (hardware names, the actuators in millimetres from 0.33 m, each a subset),
and this process's client. The efforts the controller receives are the core's inverse
dynamics (resolve_state + inverse_dynamics, evaluated here) to 1e-9 at every point; result,
feedback and cancel are relayed; goals it cannot fill are aborted with their reason and never
reach the controller, while the proxy keeps serving."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rclpy")
pytest.importorskip("control_msgs.action")
pytestmark = [pytest.mark.ros]

from action_msgs.msg import GoalStatus  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402
from control_msgs.action import FollowJointTrajectory  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

from charmie_dynamics.dynamics import inverse_dynamics  # noqa: E402
from charmie_dynamics.kinematics import inputs_from_dict, resolve_state  # noqa: E402
from charmie_dynamics.ros.common.joint_map import read_joint_map  # noqa: E402
from node_process import Child  # noqa: E402
from robot_graph_config import BASE, ROBOT_MAP, broadcasters  # noqa: E402
from ros_harness import (MODEL, dump_on_failure, log_dir, node_argv, params, ros,  # noqa: E402,F401
                         ros_env)

HERE = Path(__file__).resolve().parent
Result = FollowJointTrajectory.Result
JOINTS = ["left_arm_joint_1", "left_arm_joint_2", "left_arm_joint_3", "left_arm_joint_4",
          "lift_actuator"]
CONTROLLER = "/effort_proxy_test/follow_joint_trajectory"
PROXY = "/trajectory_effort_proxy/follow_joint_trajectory"


def trajectory_goal(n: int = 20, names=JOINTS, frame_id: str = "") -> FollowJointTrajectory.Goal:
    """``n`` points of a smooth motion of ``names`` (the lift actuator in mm from 0.33 m)."""
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.header.frame_id = frame_id
    goal.trajectory.joint_names = list(names)
    for k in range(n):
        t = 0.1 * k
        amp = np.array([0.3, 0.2, 0.25, 0.15, 40.0])[:len(names)]
        center = np.array([0.1, 0.2, -0.1, 0.3, 70.0])[:len(names)]
        w = 2.0
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=list(center + amp * math.sin(w * t)),
            velocities=list(amp * w * math.cos(w * t)),
            accelerations=list(-amp * w * w * math.sin(w * t)),
            time_from_start=Duration(sec=int(t), nanosec=int(round((t % 1) * 1e9)))))
    return goal


class Client:
    """This process's action client of the proxy."""

    def __init__(self, ros) -> None:
        self.ros = ros
        self.client = ActionClient(ros.node, FollowJointTrajectory, PROXY)

    def send(self, goal, timeout: float = 60.0):
        feedback: list = []
        ok = self.ros.spin_until(self.client.server_is_ready, timeout)
        assert ok, "the proxy's action is not available"
        future = self.client.send_goal_async(goal, feedback_callback=feedback.append)
        assert self.ros.spin_until(future.done, timeout), "no answer to the goal"
        handle = future.result()
        assert handle.accepted
        return handle, feedback

    def result(self, handle, timeout: float = 60.0):
        future = handle.get_result_async()
        assert self.ros.spin_until(future.done, timeout), "no result"
        return future.result()

    def run(self, goal, timeout: float = 60.0):
        handle, feedback = self.send(goal, timeout)
        response = self.result(handle, timeout)
        return response.status, response.result, feedback


def expected_efforts(goal, held: dict, effort_scale: dict) -> np.ndarray:
    """The core's inverse dynamics at every point (model names and units), the other inputs
    held at ``held`` with zero rates, the base at 0; the trajectory's joints' efforts in their
    drives' units."""
    joint_map = read_joint_map([], str(ROBOT_MAP))
    names = joint_map.to_model(goal.trajectory.joint_names)
    scale = np.array([joint_map.scale.get(n, 1.0) for n in names])
    offset = np.array([joint_map.offset.get(n, 0.0) for n in names])
    rows = []
    for point in goal.trajectory.points:
        pos = dict(held) | dict(zip(names, scale * np.array(point.positions) + offset))
        vel = dict(zip(names, scale * np.array(point.velocities)))
        acc = dict(zip(names, scale * np.array(point.accelerations)))
        x, xd, xdd = inputs_from_dict(MODEL, pos, vel, acc)
        loads = inverse_dynamics(MODEL, resolve_state(MODEL, x, xd, xdd))
        efforts = np.array(loads.coordinate_effort, dtype=float)
        for k, name in enumerate(MODEL.actuator_names):
            efforts[MODEL.input_names.index(name)] = loads.actuator_force[k]
        rows.append([efforts[MODEL.input_names.index(n)] * effort_scale.get(n, 1.0)
                     for n in names])
    return np.array(rows)


def held_inputs(configs) -> dict:
    """The broadcasters' still joints (frequency 0) in the model's names and units, as the
    proxy converts them."""
    joint_map = read_joint_map([], str(ROBOT_MAP))
    held = dict.fromkeys(BASE, 0.0)
    for config in configs:
        for hardware, center, amplitude, _, phase in config["joints"]:
            name = joint_map.to_model([hardware])[0]
            if name in MODEL.input_names:
                value = center + amplitude * math.sin(phase)
                held[name] = joint_map.scale.get(name, 1.0) * value + joint_map.offset.get(name, 0.0)
    return held


@dump_on_failure
def test_the_proxy_fills_efforts_relays_and_refuses(ros, ros_env, log_dir, tmp_path):
    joint_map = tmp_path / "joint_map.yaml"
    joint_map.write_text(ROBOT_MAP.read_text() + "effort_scale:\n  theta7a: 0.5\n")
    record = tmp_path / "goals"
    record.mkdir()
    fast, slow = broadcasters(MODEL, read_joint_map([], str(ROBOT_MAP)), frequency=0.0)
    for config in (fast, slow):
        config["rate"] = 20.0                 # still joints: a low rate spares the CPUs
    configs = {}
    for name, config in (("jsb_arms", fast), ("jsb_body", slow),
                         ("jtc", dict(record=str(record), action=CONTROLLER))):
        configs[name] = tmp_path / f"{name}.json"
        configs[name].write_text(json.dumps(config))
    standin = lambda role, name: [sys.executable, str(HERE / "robot_standins.py"), role,  # noqa: E731
                                  str(configs[name])]
    children = [Child("jtc", standin("trajectory_controller", "jtc"), ros_env, log_dir),
                Child("effort_proxy", node_argv("trajectory_effort_proxy", *params(
                    joint_map_file=str(joint_map), controller_action=CONTROLLER)),
                    ros_env, log_dir)]
    client = Client(ros)
    goals = lambda: sorted(record.glob("goal_*.json"))  # noqa: E731
    try:
        ros.watched = list(children)
        # before any joint_states: refused with the reason, never sent to the controller
        status, result, _ = client.run(trajectory_goal())
        assert status == GoalStatus.STATUS_ABORTED
        assert result.error_code == Result.INVALID_GOAL
        assert "no joint_states yet" in result.error_string, result.error_string

        children += [Child(name, standin("broadcaster", name), ros_env, log_dir)
                     for name in ("jsb_arms", "jsb_body")]
        ros.watched = list(children)
        # until both broadcasters' joints have arrived, "no joint_states yet (of ...)"
        goal = trajectory_goal()
        for _ in range(300):
            status, result, feedback = client.run(goal)
            if "no joint_states yet" not in result.error_string:
                break
            ros.spin_for(0.2)
        assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
        assert result.error_string == "stand-in: done"
        assert len(feedback) == 1 and list(feedback[0].feedback.joint_names) == JOINTS
        assert len(goals()) == 1
        received = json.loads(goals()[0].read_text())
        assert received["joint_names"] == JOINTS
        assert len(received["points"]) == 20
        expected = expected_efforts(goal, held_inputs((fast, slow)), {"theta7a": 0.5})
        got = np.array([p["effort"] for p in received["points"]])
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
        assert np.abs(expected).max() > 1.0
        for sent, point in zip(goal.trajectory.points, received["points"]):   # unchanged
            assert point["positions"] == list(sent.positions)
            assert point["accelerations"] == list(sent.accelerations)

        # a cancel reaches the controller, and its answer the client
        handle, _ = client.send(trajectory_goal(frame_id="hold"))
        assert ros.spin_until(lambda: len(goals()) == 2, 60.0), "the held goal did not arrive"
        cancel = handle.cancel_goal_async()
        assert ros.spin_until(cancel.done, 60.0)
        assert len(cancel.result().goals_canceling) == 1
        response = client.result(handle)
        assert response.status == GoalStatus.STATUS_CANCELED
        assert response.result.error_string == "canceled by request"

        # goals it cannot fill: aborted with the reason, never sent on; the proxy serves on
        nan = trajectory_goal()
        nan.trajectory.points[7].positions[2] = float("nan")
        empty = trajectory_goal()
        empty.trajectory.points = []
        for bad, code, reason in (
                (trajectory_goal(names=JOINTS[:3] + ["wheel_front_left_joint"]),
                 Result.INVALID_JOINTS, "unknown joints wheel_front_left_joint"),
                (nan, Result.INVALID_GOAL, "point 7: a position, velocity or acceleration is "
                                           "not finite"),
                (empty, Result.INVALID_GOAL, "the trajectory has no points")):
            status, result, _ = client.run(bad)
            assert status == GoalStatus.STATUS_ABORTED, result
            assert result.error_code == code and reason in result.error_string, result
        status, result, _ = client.run(trajectory_goal())
        assert status == GoalStatus.STATUS_SUCCEEDED, result.error_string
        assert len(goals()) == 3
        assert all(child.alive() for child in children)
    finally:
        ros.watched = []
        client.client.destroy()
        for child in reversed(children):
            child.stop()
