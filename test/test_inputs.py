"""The dynamics node's input checks (pure functions of charmie_dynamics/ros/inputs.py) and
the time conversions of its messages."""
import numpy as np
import pytest

from charmie_dynamics.ros.inputs import (AccelerationEstimator, InputRejected, StateAssembler,
                                         read_joint_state)


def test_required_names_and_empty_messages(charmie):
    assembler = StateAssembler(charmie)
    required = assembler.required_names()
    assert "act4" not in required and "theta8a" in required
    with pytest.raises(InputRejected) as info:
        read_joint_state([], [], [], assembler.accepted_names(), required)
    assert info.value.reason == "missing_name"
    names = [n for n in required if n != "theta8a"]
    with pytest.raises(InputRejected, match="theta8a not in the message"):
        read_joint_state(names, [0.0] * len(names), [], assembler.accepted_names(), required)


def test_values_older_than_the_stale_timeout_are_rejected(charmie):
    assembler = StateAssembler(charmie)
    joints = {n: 0.0 for n in assembler.required_names()}
    assembler.update({"act4": 0.4, "act5": 0.4}, {}, now=10.0)
    assembler.update(joints, {}, now=10.25)
    assembler.assemble(now=10.25, max_age=0.3)                 # both fresh enough
    with pytest.raises(InputRejected, match="act4, act5 older than 0.2 s") as info:
        assembler.assemble(now=10.25, max_age=0.2)
    assert info.value.reason == "stale_input"


def test_estimate_holds_on_a_repeated_stamp():
    e = AccelerationEstimator(20.0)
    e.update(1.00, np.array([0.0]))
    e.update(1.01, np.array([0.1]))
    before = e.update(1.02, np.array([0.2]))
    assert before[0] > 0
    np.testing.assert_array_equal(e.update(1.02, np.array([0.2])), before)
    np.testing.assert_array_equal(e.update(0.5, np.array([0.2])), [0.0])   # time reset


def test_durations_carry_the_rounding():
    rclpy = pytest.importorskip("rclpy")       # builtin_interfaces comes with the ROS wheels
    assert rclpy
    from charmie_dynamics.ros.messages import duration_from_seconds, stamp_from_seconds
    d = duration_from_seconds(2.9999999999999996)
    assert (d.sec, d.nanosec) == (3, 0)
    t = stamp_from_seconds(1.9999999999)
    assert (t.sec, t.nanosec) == (2, 0)
    t = stamp_from_seconds(5.25)
    assert (t.sec, t.nanosec) == (5, 250_000_000)


def test_odometry_orientation_must_be_a_unit_quaternion(monkeypatch):
    """The node's odometry callback, called in-process: a scaled or zero quaternion is
    rejected (invalid_value), a unit one gives theta3 = its yaw."""
    rclpy = pytest.importorskip("rclpy")
    import os

    from nav_msgs.msg import Odometry
    from rclpy.parameter import Parameter

    from charmie_dynamics.ros.dynamics_node import DynamicsNode
    from conftest import CHARMIE
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(200 + os.getpid() % 30))
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        node = DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(CHARMIE)), Parameter("odometry_topic", value="odom")])
        msg = Odometry()
        h = np.sqrt(0.5)
        for w, z in ((2 * h, 2 * h), (0.0, 0.0)):
            msg.pose.pose.orientation.w, msg.pose.pose.orientation.z = w, z
            node._on_odometry(msg)
        assert node.rejected["invalid_value"] == 2
        assert "theta3" not in node.assembler.positions
        msg.pose.pose.orientation.w, msg.pose.pose.orientation.z = h, h
        node._on_odometry(msg)
        assert node.assembler.positions["theta3"] == pytest.approx(np.pi / 2)
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
