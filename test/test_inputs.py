"""The dynamics node's input checks (pure functions of charmie_dynamics/ros/common/inputs.py) and
the time conversions of its messages."""
import contextlib

import numpy as np
import pytest

from charmie_dynamics.ros.common.inputs import (AccelerationEstimator, InputLimits, InputRejected,
                                                StateAssembler, read_joint_state)
from domains import domain_id


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
    e.update(1_000_000_000, np.array([0.0]))
    e.update(1_010_000_000, np.array([0.1]))
    before = e.update(1_020_000_000, np.array([0.2]))
    assert before[0] > 0
    np.testing.assert_array_equal(e.update(1_020_000_000, np.array([0.2])), before)
    np.testing.assert_array_equal(e.update(500_000_000, np.array([0.2])), [0.0])   # time reset


def test_estimate_uses_exact_nanosecond_steps():
    """1 kHz samples at epoch-scale stamps: the step is exactly 1 ms (a float of seconds since
    1970 would be off by up to 240 ns, 0.02 %), so a constant slope is estimated exactly
    once the filter has settled."""
    e = AccelerationEstimator(1e6)                     # filter fast enough to follow at once
    t0 = 1_700_000_000_123_456_789
    for k in range(50):
        got = e.update(t0 + k * 1_000_000, np.array([0.003 * k]))
    np.testing.assert_allclose(got, [3.0], rtol=1e-9)


def test_effort_array_length_is_checked(charmie):
    assembler = StateAssembler(charmie)
    names = list(assembler.required_names())
    zeros = [0.0] * len(names)
    for effort in ([], zeros):                          # empty (not measured) or one per name
        read_joint_state(names, zeros, [], assembler.accepted_names(), effort=effort)
    with pytest.raises(InputRejected, match="3 efforts") as info:
        read_joint_state(names, zeros, [], assembler.accepted_names(), effort=[0.0] * 3)
    assert info.value.reason == "length_mismatch"


def test_input_limits_from_the_model(charmie):
    """Coordinate limits are the joint's divided by the multiplier (theta13b: -1, its joint
    range [-0.8, 0.2] is [-0.2, 0.8] of the coordinate); actuators have none here (their
    stroke is the assembler's out_of_range)."""
    limits = InputLimits.of(charmie)
    assert (limits.lower["theta13b"], limits.upper["theta13b"]) == (pytest.approx(-0.2), pytest.approx(0.8))
    assert (limits.lower["theta13a"], limits.upper["theta13a"]) == (pytest.approx(-0.2), pytest.approx(0.8))
    assert limits.velocity["theta11a"] == 3.0 and "d1" not in limits.lower
    limits.check({"theta13b": 0.805}, {"theta11a": -3.2}, 0.01, 0.1)          # within tolerance
    for pos, vel, name in (({"theta13b": 0.82}, {}, "theta13b position"),
                           ({}, {"theta11a": 3.4}, "theta11a velocity"),
                           ({}, {"d1": -1e150}, "d1 velocity -1e\\+150 is implausible"),
                           ({"d1": 1e308}, {}, "d1 position 1e\\+308 is implausible")):
        with pytest.raises(InputRejected, match=name) as info:
            limits.check(pos, vel, 0.01, 0.1)
        assert info.value.reason == "beyond_limits"
    limits.check({"theta13b": 1e3}, {}, float("inf"), 0.1)                   # positions off


@pytest.mark.parametrize("position_tolerance", [0.01, 0.0, float("inf")])
def test_the_fast_check_passes_only_what_violation_passes(charmie, position_tolerance):
    """``within`` (the node's per-message path) is True exactly where ``violation`` finds
    nothing, on states near and beyond every bound, NaN and implausible values included."""
    limits = InputLimits.of(charmie)
    names = list(charmie.input_names)
    rng = np.random.default_rng(3)
    lower = np.array([limits.lower.get(n, -2.0) for n in names])
    upper = np.array([limits.upper.get(n, 2.0) for n in names])
    speed = np.array([limits.velocity.get(n, 5.0) for n in names])
    verdicts = set()
    for k in range(400):
        p = rng.uniform(lower - 0.02, upper + 0.02)
        v = rng.uniform(-1.15, 1.15) * speed
        if k % 50 == 0:
            p[k % len(names)] = [np.nan, 1e7, -np.inf][k % 3]
        order = rng.permutation(len(names))[:rng.integers(1, len(names) + 1)]
        pos = {names[i]: float(p[i]) for i in order}
        vel = {names[i]: float(v[i]) for i in order}
        fast = limits.within(tuple(pos), p[order], v[order], position_tolerance, 0.1)
        assert fast == (limits.violation(pos, vel, position_tolerance, 0.1) is None), (pos, vel)
        verdicts.add(fast)
    assert verdicts == {True, False}
    # velocities of other names than the positions': violation decides
    with pytest.raises(InputRejected, match="theta11a velocity"):
        limits.check({"d1": 0.0}, {"theta11a": 3.4}, 0.01, 0.1)


def test_durations_carry_the_rounding():
    rclpy = pytest.importorskip("rclpy")       # builtin_interfaces comes with the ROS wheels
    assert rclpy
    from charmie_dynamics.ros.common.messages import duration_from_seconds, stamp_from_seconds
    d = duration_from_seconds(2.9999999999999996)
    assert (d.sec, d.nanosec) == (3, 0)
    t = stamp_from_seconds(1.9999999999)
    assert (t.sec, t.nanosec) == (2, 0)
    t = stamp_from_seconds(5.25)
    assert (t.sec, t.nanosec) == (5, 250_000_000)


@contextlib.contextmanager
def dynamics_in_process(monkeypatch, **parameters):
    """A DynamicsNode on CHARMIE in this process (its callbacks called directly), with
    ``parameters``; destroyed and its context shut down after."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.parameter import Parameter

    from charmie_dynamics.ros.dynamics_node import DynamicsNode
    from conftest import CHARMIE
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        node = DynamicsNode(context=context, parameter_overrides=[
            Parameter(name, value=value)
            for name, value in {"model_file": str(CHARMIE), **parameters}.items()])
        node.autostart()
        yield node
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


@pytest.mark.ros
def test_odometry_orientation_must_be_a_unit_quaternion(monkeypatch):
    """The node's odometry callback, called in-process: a scaled or zero quaternion is
    rejected (invalid_value), a unit one gives theta3 = its yaw less pi/2 (body_3 faces its
    y axis, base_link its x)."""
    from nav_msgs.msg import Odometry
    with dynamics_in_process(monkeypatch, odometry_topic="odom") as node:
        msg = Odometry()
        h = np.sqrt(0.5)
        for w, z in ((2 * h, 2 * h), (0.0, 0.0)):
            msg.pose.pose.orientation.w, msg.pose.pose.orientation.z = w, z
            node.control.on_odometry(msg)
        assert node.rejected["invalid_value"] == 2
        assert "theta3" not in node.slot.assembler.positions
        msg.pose.pose.orientation.w, msg.pose.pose.orientation.z = h, h
        node.control.on_odometry(msg)
        # base_link's yaw pi/2; body_3 faces its y, so theta3 is pi/2 less (REP 103)
        assert node.slot.assembler.positions["theta3"] == pytest.approx(0.0, abs=1e-12)
        # its stamp: more than max_stamp_lead ahead is future_stamp, nanosec >= 1e9 malformed
        msg.pose.pose.orientation.z = 0.0
        msg.pose.pose.orientation.w = 1.0
        msg.header.stamp.sec = 2**31 - 1
        node.control.on_odometry(msg)
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1, 10**9
        node.control.on_odometry(msg)
        assert node.rejected["future_stamp"] == 1 and node.rejected["invalid_value"] == 3
        assert node.slot.assembler.positions["theta3"] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.ros
def test_reference_acceleration_source(monkeypatch):
    """acceleration_source=reference: the loads use the reference's accelerations sampled at
    the state's stamp (linear interpolation); stamp 0 starts the reference at the newest
    joint_states; a reference whose times go back is rejected."""
    rclpy = pytest.importorskip("rclpy")
    import time

    from builtin_interfaces.msg import Duration, Time
    from rclpy.parameter import Parameter
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from charmie_dynamics import inputs_from_dict, load_model, resolve_state
    from charmie_dynamics.dynamics import inverse_dynamics
    from charmie_dynamics.ros.dynamics_node import DynamicsNode
    from conftest import CHARMIE
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    model = load_model(CHARMIE)
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        node = DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(CHARMIE)),
            Parameter("acceleration_source", value="reference"),
            Parameter("stale_timeout", value=1000.0)])
        node.autostart()
        published = []          # joint_loads' efforts, from the monitoring thread

        def loads_published(n: int) -> bool:
            deadline = time.monotonic() + 5.0
            while len(published) < n and time.monotonic() < deadline:
                time.sleep(0.001)
            return len(published) == n
        monkeypatch.setattr(node.monitoring.pub_joint_loads, "publish",      # serialized
                            lambda data: published.append(np.array(
                                deserialize_message(data, JointState).effort)))
        traj = JointTrajectory()
        traj.header.stamp = Time(sec=100, nanosec=0)
        traj.joint_names = ["theta8a", "act4"]
        for t, acc in ((0.0, [0.0, 0.0]), (1.0, [2.0, 0.02])):
            traj.points.append(JointTrajectoryPoint(accelerations=acc,
                                                    time_from_start=Duration(sec=int(t))))
        node.control.on_reference(serialize_message(traj))   # as the raw subscription
        positions = {"act4": 0.41, "act5": 0.40, "theta8a": 0.3}
        x, xd, _ = inputs_from_dict(model, positions)
        msg = JointState(name=list(model.input_names), position=[float(v) for v in x],
                         velocity=[0.0] * len(x))
        msg.header.stamp = Time(sec=100, nanosec=250_000_000)          # a quarter of the way
        node.control.on_joint_state(msg)
        assert loads_published(1)
        _, _, xdd = inputs_from_dict(model, positions, None, {"theta8a": 0.5, "act4": 0.005})
        expected = inverse_dynamics(model, resolve_state(model, x, xd, xdd)).coordinate_effort
        np.testing.assert_allclose(published[0], expected, rtol=1e-12, atol=1e-12)
        traj.header.stamp = Time(sec=0, nanosec=0)          # "now": the newest state, 100.25 s
        node.control.on_reference(serialize_message(traj))
        msg.header.stamp = Time(sec=100, nanosec=750_000_000)          # half way
        node.control.on_joint_state(msg)
        _, _, xdd = inputs_from_dict(model, positions, None, {"theta8a": 1.0, "act4": 0.01})
        expected = inverse_dynamics(model, resolve_state(model, x, xd, xdd)).coordinate_effort
        assert loads_published(2)
        np.testing.assert_allclose(published[1], expected, rtol=1e-12, atol=1e-12)
        backwards = JointTrajectory(joint_names=["theta8a"], points=[
            JointTrajectoryPoint(accelerations=[1.0], time_from_start=Duration(sec=2)),
            JointTrajectoryPoint(accelerations=[1.0], time_from_start=Duration(sec=1))])
        node.control.on_reference(serialize_message(backwards))
        assert node.rejected["invalid_value"] == 1
        assert node.control.reference.names == ("theta8a", "act4")           # the previous one stays
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def test_reference_sampling_equals_numpy_interp():
    from charmie_dynamics.ros.common.inputs import ReferenceTrajectory
    rng = np.random.default_rng(0)
    times = np.cumsum(rng.uniform(0.01, 0.1, 20))
    acc = rng.normal(size=(20, 3))
    reference = ReferenceTrajectory(("a", "b", "c"), times, acc)
    # inside, at every point, and before and after the ends (the end values hold)
    for t in np.concatenate([rng.uniform(times[0] - 1.0, times[-1] + 1.0, 500), times]):
        expected = [np.interp(t, times, acc[:, k]) for k in range(3)]
        np.testing.assert_allclose(reference.sample(t), expected, rtol=0, atol=1e-15)


@pytest.mark.ros
def test_start_up_error_leaves_no_parser_thread_and_cutoff_changes_at_run_time(monkeypatch):
    """A start-up error (a bad parameter) leaves no model_parser thread running; a run-time
    change of acceleration_filter_cutoff rebuilds the estimator at once."""
    rclpy = pytest.importorskip("rclpy")
    import threading

    from rclpy.parameter import Parameter

    from charmie_dynamics.ros.dynamics_node import DynamicsNode
    from conftest import CHARMIE
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))

    def parsers():
        return [t for t in threading.enumerate() if t.name == "model_parser" and t.is_alive()]

    before = len(parsers())
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        failed = DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(CHARMIE) + ".missing")])
        with pytest.raises(Exception):
            failed.autostart()
        failed.destroy_node()
        assert len(parsers()) == before
        node = DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(CHARMIE))])
        node.autostart()
        assert node.control.estimator.cutoff_hz == 20.0
        assert node.set_parameters([Parameter("acceleration_filter_cutoff", value=5.0)])[0].successful
        assert node.control.estimator.cutoff_hz == 5.0
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


@pytest.mark.ros
def test_view_feed_checks_inputs_as_the_dynamics_node(monkeypatch):
    """The view's feed refuses an effort array of the wrong length (length_mismatch) and a
    velocity beyond the model's limits (beyond_limits), as the dynamics node does."""
    rclpy = pytest.importorskip("rclpy")

    from sensor_msgs.msg import JointState

    from charmie_dynamics import inputs_from_dict, load_model
    from charmie_dynamics.ros.tools.view_feed import ViewFeed
    from conftest import CHARMIE
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    model = load_model(CHARMIE)
    rclpy.init()                      # ViewFeed runs in the default context
    try:
        feed = ViewFeed(model, lambda x: None, lambda a: None, rate=10.0)
        x, _, _ = inputs_from_dict(model)
        names = list(model.input_names)
        good = JointState(name=names, position=[float(v) for v in x], velocity=[0.0] * len(x))
        feed._on_joint_state(good, True)
        assert feed.pending is not None and not feed.rejected
        feed.pending = None
        feed._on_joint_state(JointState(name=names, position=good.position,
                                        velocity=good.velocity, effort=[0.0]), True)
        feed._on_joint_state(JointState(name=names, position=good.position,
                                        velocity=[1e3] * len(x)), True)
        assert feed.rejected == {"length_mismatch": 1, "beyond_limits": 1}
        assert feed.pending is None
        feed.destroy_node()
    finally:
        rclpy.try_shutdown()


@pytest.mark.ros
def test_view_ros_draws_a_loop_model_closed(monkeypatch):
    """``view --ros`` with the five-bar: the feed reads the independent coordinates only (a
    driver's dependent ones accepted and ignored), and the pose drawn closes the loop: the
    cut joint's point lies at one place on both of its links (computed here from the
    placements), for inputs moved from the assembled pose; an input too far to follow is
    refused and the next pose is solved from the assembled branch."""
    rclpy = pytest.importorskip("rclpy")

    from sensor_msgs.msg import JointState

    from charmie_dynamics import load_model
    from charmie_dynamics.kinematics import forward_kinematics, point_positions
    from charmie_dynamics.mechanisms.closed_chains import LoopSingularityError
    from charmie_dynamics.ros.tools.view_feed import ViewFeed
    from charmie_dynamics.view.cli import live_pose
    from conftest import ROOT
    model = load_model(ROOT / "config" / "examples" / "five_bar.yaml")
    live = live_pose(model)
    assert live.inputs == ("theta1_1", "theta1_2") and set(live.ignored) == {"theta2_1", "theta2_2"}
    tips = ["link2_1.tip", "link2_2.tip"]
    for dx in ([0.0, 0.0], [0.2, -0.1], [0.5, 0.3], [-0.3, 0.4]):
        q = live.coordinates(live.start + np.array(dx))
        a, b = point_positions(model, forward_kinematics(model, q), tips).values()
        assert np.linalg.norm(a - b) < 1e-9, (dx, a, b)
        assert q[model.coordinate("theta1_1")] == pytest.approx(live.start[0] + dx[0])
    with pytest.raises(LoopSingularityError):
        live.coordinates(live.start + np.array([100.0, 0.0]))     # too far to follow
    q = live.coordinates(live.start + np.array([0.1, 0.1]))
    a, b = point_positions(model, forward_kinematics(model, q), tips).values()
    assert np.linalg.norm(a - b) < 1e-9

    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    rclpy.init()
    try:
        feed = ViewFeed(model, lambda x: None, lambda a: None, 10.0, 0.0, live.inputs,
                        live.ignored)
        every = list(live.inputs + live.ignored)
        feed._on_joint_state(JointState(name=every, position=[0.5] * 4, velocity=[0.0] * 4), True)
        np.testing.assert_array_equal(feed.pending, [0.5, 0.5])
        feed.pending = None
        # the dependent coordinates alone (a partial message, merged as the node merges):
        # checked, and the independent ones drawn keep their values
        feed._on_joint_state(JointState(name=list(live.ignored), position=[0.7] * 2,
                                        velocity=[0.0] * 2), True)
        np.testing.assert_array_equal(feed.pending, [0.5, 0.5])
        feed._on_joint_state(JointState(name=list(live.ignored), position=[1e7] * 2,
                                        velocity=[0.0] * 2), True)
        assert sum(feed.rejected.values()) == 1
        feed.destroy_node()
    finally:
        rclpy.try_shutdown()


@pytest.mark.ros
def test_two_publishers_of_one_joint_and_a_flood_of_names_are_said(monkeypatch):
    """Issue 34's G2 and G1, the node's callback called in-process: a joint given by two
    publishers (messages of different joint sets: theta7a 0.1 from one, 0.6 from another)
    is counted at every switch and warned; a message of more than MAX_JOINT_NAMES names is
    too_many_names before its names are read."""
    from sensor_msgs.msg import JointState

    from charmie_dynamics.ros.common.inputs import MAX_JOINT_NAMES
    with dynamics_in_process(monkeypatch) as node:
        arms = [f"theta{k}a" for k in range(7, 13)]
        one = JointState(name=arms, position=[0.1] * 6)
        other = JointState(name=["theta7a", "wheel_joint"], position=[0.6, 0.0])
        for msg in (one, one, other, one, other):
            msg.header.stamp = node.get_clock().now().to_msg()
            node.control.on_joint_state(msg)
        assert node.events["joint_source_conflicts"] == 3          # every switch after the first
        assert node.control.conflicting == {"theta7a"}
        flood = JointState(name=[f"foreign_{k}" for k in range(MAX_JOINT_NAMES + 1)],
                           position=[0.0] * (MAX_JOINT_NAMES + 1))
        node.control.on_joint_state(flood)
        assert node.rejected["too_many_names"] == 1


@pytest.mark.ros
def test_view_ros_follows_the_robot_graph(monkeypatch, charmie):
    """Issue 36: ``view --ros`` reads the robot as the dynamics node does: two broadcasters
    each with part of the joints under hardware names (wheels and fingers ignored), the
    actuators in millimetres through the joint map, the base from odometry; a pose is drawn
    once every joint has a value within max_joint_age of the newest, in the model's units."""
    rclpy = pytest.importorskip("rclpy")
    from builtin_interfaces.msg import Time
    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Header

    from charmie_dynamics import inputs_from_dict
    from charmie_dynamics.ros.common.joint_map import read_joint_map
    from charmie_dynamics.ros.tools.robot_inputs import RobotTopics
    from charmie_dynamics.ros.tools.view_feed import ViewFeed
    from robot_graph_config import FINGERS, ROBOT_MAP, WHEELS, split
    joint_map = read_joint_map([], str(ROBOT_MAP))
    x = dict(zip(charmie.input_names, inputs_from_dict(charmie)[0]))
    x.update(d1=0.3, d2=-0.2, theta3=0.4, theta7a=0.2)

    def broadcast(names, extra, sec):
        hw = [(x[n] - joint_map.offset.get(n, 0.0)) / joint_map.scale.get(n, 1.0) for n in names]
        return JointState(header=Header(stamp=Time(sec=sec)), name=joint_map.to_hardware(names)
                          + extra, position=hw + [0.0] * len(extra),
                          velocity=[0.0] * (len(names) + len(extra)))
    fast, slow = split(charmie)
    odom = Odometry(header=Header(stamp=Time(sec=10)))
    odom.pose.pose.position.x, odom.pose.pose.position.y = x["d1"], x["d2"]
    yaw = x["theta3"] - charmie.base.heading
    odom.pose.pose.orientation.z, odom.pose.pose.orientation.w = np.sin(yaw / 2), np.cos(yaw / 2)
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    rclpy.init()
    try:
        feed = ViewFeed(charmie, lambda _: None, lambda _: None, 10.0,
                        topics=RobotTopics(("/joint_states",), "", "/odom"),
                        joint_map=joint_map, max_joint_age=0.1)
        feed._on_odometry(odom)
        feed._on_joint_state(broadcast(fast, WHEELS, 10), True)
        assert feed.pending is None and feed.waiting == 2   # the slow joints not yet received
        feed._on_joint_state(broadcast(slow, FINGERS, 10), True)
        np.testing.assert_allclose(feed.pending, [x[n] for n in charmie.input_names],
                                   rtol=0, atol=1e-12)
        feed.pending = None
        feed._on_joint_state(broadcast(fast, WHEELS, 11), True)   # the slow ones 1 s old
        assert feed.pending is None and feed.waiting == 3 and not feed.rejected
        feed.destroy_node()
    finally:
        rclpy.try_shutdown()
