"""Issue 35, item 4: the trajectory player's reference as a joint_trajectory_controller takes
it (``controller_topic``): the controller's joints only, under the robot's names and in its
units (the designers' joint map: the lift actuator in millimetres from 0.33 m), each point's
effort the inverse dynamics of the motion at that point (the core's, to 1e-9)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros]

from trajectory_msgs.msg import JointTrajectory  # noqa: E402

from charmie_dynamics.dynamics import inverse_dynamics  # noqa: E402
from charmie_dynamics.kinematics import inputs_from_dict, resolve_state  # noqa: E402
from node_process import Child  # noqa: E402
from robot_graph_config import ROBOT_MAP  # noqa: E402
from ros_harness import (MODEL, RELIABLE, dump_on_failure, log_dir, node_argv,  # noqa: E402,F401
                         params, ros, ros_env)

JOINTS = ["left_arm_joint_1", "left_arm_joint_2", "left_arm_joint_3", "left_arm_joint_4",
          "left_arm_joint_5", "left_arm_joint_6", "lift_actuator"]
MODEL_NAMES = ["theta7a", "theta8a", "theta9a", "theta10a", "theta11a", "theta12a", "act4"]


def _efforts(names, point) -> np.ndarray:
    """The core's inverse dynamics at a reference point (model names and units)."""
    x, xd, xdd = inputs_from_dict(MODEL, *(dict(zip(names, values)) for values in (
        point.positions, point.velocities, point.accelerations)))
    loads = inverse_dynamics(MODEL, resolve_state(MODEL, x, xd, xdd))
    efforts = np.array(loads.coordinate_effort, dtype=float)
    for k, name in enumerate(MODEL.actuator_names):
        efforts[MODEL.input_names.index(name)] = loads.actuator_force[k]
    return efforts


@dump_on_failure
def test_the_reference_as_a_joint_trajectory_controller_takes_it(ros, ros_env, log_dir,
                                                                  tmp_path):
    # the designers' map, with the first arm joint's drive in its own effort units
    joint_map = tmp_path / "joint_map.yaml"
    joint_map.write_text(ROBOT_MAP.read_text() + "effort_scale:\n  theta7a: 0.5\n")
    got: dict = {}
    subs = [ros.node.create_subscription(JointTrajectory, topic,
                                         lambda m, key=key: got.setdefault(key, m), RELIABLE)
            for key, topic in (("reference", "/jtc/reference_trajectory"),
                               ("controller", "/arm_controller/joint_trajectory"))]
    player = Child("player_jtc", node_argv(
        "trajectory_player_node", "-r", "__ns:=/jtc", *params(
            repeat="true", controller_topic="/arm_controller/joint_trajectory",
            joint_map_file=str(joint_map), controller_joints="[" + ", ".join(JOINTS) + "]")),
        ros_env, log_dir)
    try:
        ros.watched = [player]
        assert ros.spin_until(lambda: len(got) == 2, 60.0), player.tail()
    finally:
        ros.watched = []
        for sub in subs:
            ros.node.destroy_subscription(sub)
        player.stop()
    reference, controller = got["reference"], got["controller"]
    assert list(controller.joint_names) == JOINTS
    assert len(controller.points) == len(reference.points) > 100
    names = list(reference.joint_names)
    columns = [names.index(n) for n in MODEL_NAMES]
    for ref, point in zip(reference.points, controller.points):
        assert point.time_from_start == ref.time_from_start
        expected = np.array(ref.positions)[columns]
        expected[-1] = (expected[-1] - 0.33) / 0.001                  # mm from 0.33 m
        np.testing.assert_allclose(point.positions, expected, rtol=0, atol=1e-9)
        for field in ("velocities", "accelerations"):
            got_values, ref_values = getattr(point, field), np.array(getattr(ref, field))
            np.testing.assert_allclose(got_values[:-1], ref_values[columns[:-1]], rtol=0, atol=0)
            np.testing.assert_allclose(got_values[-1], ref_values[columns[-1]] / 0.001, rtol=1e-12)
        efforts = _efforts(names, ref)[[MODEL.input_names.index(n) for n in MODEL_NAMES]]
        efforts[0] *= 0.5                                             # its drive units
        np.testing.assert_allclose(point.effort, efforts, rtol=1e-9, atol=1e-9)
    assert any(abs(a) > 1e-3 for p in reference.points for a in p.accelerations)


def test_a_controller_joint_the_motion_does_not_play_is_one_line(ros_env):
    done = subprocess.run(node_argv("trajectory_player_node", *params(
        controller_topic="/c", joint_map_file=str(ROBOT_MAP),
        controller_joints="[left_arm_joint_1, wheel_front_left_joint]")),
        env=ros_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "controller_joints: wheel_front_left_joint: not inputs the " \
                                "motion plays" in lines[0], done.stderr


@dump_on_failure
def test_controller_efforts_false_leaves_the_efforts_out(ros, ros_env, log_dir):
    """A joint_trajectory_controller without an effort command interface (or an older one)
    refuses a trajectory whose points carry efforts."""
    got: list = []
    sub = ros.node.create_subscription(JointTrajectory, "/bare/joint_trajectory", got.append,
                                       RELIABLE)
    player = Child("player_bare", node_argv("trajectory_player_node", "-r", "__ns:=/bare", *params(
        repeat="true", controller_topic="/bare/joint_trajectory", controller_efforts="false",
        controller_joints="[theta7a, theta8a]")), ros_env, log_dir)
    try:
        ros.watched = [player]
        assert ros.spin_until(lambda: got, 60.0), player.tail()
    finally:
        ros.watched = []
        ros.node.destroy_subscription(sub)
        player.stop()
    assert list(got[0].joint_names) == ["theta7a", "theta8a"]
    assert got[0].points and all(len(p.effort) == 0 and len(p.positions) == 2
                                 for p in got[0].points)
