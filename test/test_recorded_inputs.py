"""The robot's recorded messages read as the dynamics node reads them (ros/tools/recorded_inputs.py):
two joint_state_broadcasters with hardware names (the arms at 500 Hz, the rest at 100 Hz, out
of phase), wheels and fingers the model does not use, the actuators in millimetres, the base
from odometry. The truth is a motion of the model with its inverse-dynamics efforts
(identification.recording.record), so every value read back is checked against it."""
from __future__ import annotations

import math
from types import SimpleNamespace as NS

import numpy as np
import pytest

from charmie_dynamics.identification.logs import LogError
from charmie_dynamics.identification.recording import record
from charmie_dynamics.kinematics.limits import POSITION_TOLERANCE
from charmie_dynamics.ros.common.joint_map import read_joint_map
from charmie_dynamics.ros.tools.recorded_inputs import read_recorded, summary
from charmie_dynamics.ros.tools.robot_inputs import RobotTopics
from charmie_dynamics.trajectories import motion
from robot_graph_config import BASE, FINGERS, ROBOT_MAP, WHEELS, split

DT = 0.002
TOPICS = RobotTopics(("/joint_states",), "", "/odom")


def _stamp(t: float, t0_ns: int = 0) -> NS:
    """The stamp of ``t0_ns`` + ``t`` s, in integer nanoseconds (as a clock stamps)."""
    ns = t0_ns + int(round(t * 1e9))
    return NS(stamp=NS(sec=ns // 10**9, nanosec=ns % 10**9))


def joint_state(t, names, position, velocity, effort, t0_ns: int = 0) -> NS:
    return NS(header=_stamp(t, t0_ns), name=list(names), position=list(position),
              velocity=list(velocity), effort=list(effort))


def odometry(t, base, x, y, yaw, vx, vy, wz, t0_ns: int = 0) -> NS:
    """The odometry of base coordinates (x, y, the base body's yaw) and their world rates:
    base_link's pose and its twist in base_link (the inverse of odometry.base_from_odometry)."""
    link_yaw = yaw - base.heading
    c, s = math.cos(link_yaw), math.sin(link_yaw)
    q = NS(x=0.0, y=0.0, z=math.sin(link_yaw / 2), w=math.cos(link_yaw / 2))
    return NS(header=_stamp(t, t0_ns), pose=NS(pose=NS(position=NS(x=x, y=y, z=0.0), orientation=q)),
              twist=NS(twist=NS(linear=NS(x=c * vx + s * vy, y=-s * vx + c * vy, z=0.0),
                                angular=NS(x=0.0, y=0.0, z=wz))))


@pytest.fixture(scope="module")
def truth(charmie):
    return record(charmie, motion(charmie, "validation", DT))


def robot_messages(model, joint_map, log, t0=1000.0, slow_every=5, silent=None, t0_ns=0):
    """The messages a ros2_control CHARMIE would record of ``log`` (module docstring), in
    recorded order; ``silent`` (s, s): the slow broadcaster sends nothing then."""
    fast, slow = split(model)
    index = {n: k for k, n in enumerate(model.input_names)}
    scale, offset = joint_map.scale, joint_map.offset
    messages = []
    for s, t in enumerate(log.t):
        def hardware(names):
            cols = [index[n] for n in names]
            k = np.array([scale.get(n, 1.0) for n in names])
            b = np.array([offset.get(n, 0.0) for n in names])
            return (joint_map.to_hardware(names), (log.x[s, cols] - b) / k,
                    log.xd[s, cols] / k, log.effort[s, cols])
        names, p, v, e = hardware(fast)
        messages.append(("/joint_states", joint_state(
            t0 + t, names + WHEELS, list(p) + [0.1] * 4, list(v) + [0.0] * 4,
            list(e) + [0.0] * 4, t0_ns)))
        if s % slow_every == 1 and not (silent and silent[0] <= t <= silent[1]):
            names, p, v, e = hardware(slow)
            messages.append(("/joint_states", joint_state(
                t0 + t, names + FINGERS, list(p) + [0.01, 0.01], list(v) + [0.0, 0.0],
                list(e) + [0.0, 0.0], t0_ns)))
        if s % slow_every == 2:
            b = [index[n] for n in BASE]
            messages.append(("/odom", odometry(t0 + t, model.base, *log.x[s, b], *log.xd[s, b],
                                               t0_ns=t0_ns)))
    return messages


def test_two_broadcasters_with_hardware_names_and_odometry_merge_into_the_truth(charmie, truth):
    joint_map = read_joint_map([], str(ROBOT_MAP))
    out = read_recorded(charmie, robot_messages(charmie, joint_map, truth), TOPICS,
                        joint_map, 0.1, "robot.bag")
    log = out.log
    assert out.period == pytest.approx(DT)
    assert not out.rejected
    assert set(out.ignored_names) >= set(WHEELS) | set(FINGERS)
    assert out.unmeasured == BASE
    # the log spans the times where every input has a value on both sides: from the
    # odometry's first sample (2 times before it) to the slow broadcaster's last (4 after)
    t = log.t - 1000.0
    assert t[0] == pytest.approx(0.004, abs=1e-6) and t[-1] == pytest.approx(4.992, abs=1e-6)
    assert out.dropped == {"missing_name": 6}
    rows = np.rint(t / DT).astype(int)
    assert np.allclose(t, truth.t[rows], atol=1e-6)
    # interpolated over at most 5 samples of a smooth motion: positions to 1e-5 of their unit
    assert np.abs(log.x - truth.x[rows]).max() < 1e-4
    assert np.abs(log.xd - truth.xd[rows]).max() < 2e-3
    measured = [k for k, n in enumerate(charmie.input_names) if n not in BASE]
    fast = [charmie.input_names.index(n) for n in split(charmie)[0]]
    assert np.array_equal(log.effort[:, fast], truth.effort[rows][:, fast])   # on its own grid
    # the slow broadcaster's, interpolated over 10 ms: within 2 % of each input's largest
    # (the lift actuator's force: 1.7 %) and 0.05 N m (the claws' small, quick efforts)
    error = np.abs(log.effort[:, measured] - truth.effort[rows][:, measured]).max(axis=0)
    assert np.all(error <= 0.02 * np.abs(truth.effort[:, measured]).max(axis=0) + 0.05)
    assert np.isnan(log.effort[:, [charmie.input_names.index(n) for n in BASE]]).all()


def test_refused_messages_are_counted_by_the_nodes_reasons(charmie, truth):
    joint_map = read_joint_map([], str(ROBOT_MAP))
    messages = robot_messages(charmie, joint_map, truth)
    bad = messages[40][1]
    messages[40] = ("/joint_states", joint_state(
        1000.0 + 0.0805, bad.name, [math.nan] + bad.position[1:], bad.velocity, bad.effort))
    messages.insert(50, ("/joint_states", joint_state(1000.0 + 0.09, ["x"] * 1001, [0.0] * 1001,
                                                       [], [])))
    messages.insert(60, messages[10])                          # recorded twice: older
    lift = joint_map.to_hardware(["act4"])[0]
    messages.insert(70, ("/joint_states", joint_state(1000.1001, [lift], [900.0], [0.0], [0.0])))
    out = read_recorded(charmie, messages, TOPICS, joint_map, 0.1, "robot.bag")
    assert dict(out.rejected) == {"non_finite": 1, "too_many_names": 1, "time_backwards": 1,
                                  "out_of_range": 1}
    assert out.first_rejection["out_of_range"] == "/joint_states: lift_actuator = 1.23 m " \
                                                  "outside [0.31, 0.51] m"
    # the node's position_limit_tolerance (not checked by default: a recording is what the
    # robot did): the validation motion takes the claw 1 cm beyond its limit
    out = read_recorded(charmie, messages, TOPICS, joint_map, 0.1, "robot.bag",
                        POSITION_TOLERANCE)
    assert out.rejected["beyond_limits"] > 0
    assert out.first_rejection["beyond_limits"].startswith("/joint_states: left_gripper_joint ")


def test_a_broadcaster_that_falls_silent_is_a_gap_in_one_line(charmie, truth):
    joint_map = read_joint_map([], str(ROBOT_MAP))
    messages = robot_messages(charmie, joint_map, truth, silent=(2.0, 2.15))
    with pytest.raises(LogError, match=r"^robot.bag: a gap after 1001\.992 s: \d+ grid times "
                                       r"without every input \(dropped: joint_too_old \d+, missing_name 6; "
                                       r"max_joint_age 0.1 s\)"):
        read_recorded(charmie, messages, TOPICS, joint_map, 0.1, "robot.bag")
    # a longer max_joint_age bridges it: the node's parameter, the same meaning
    out = read_recorded(charmie, messages, TOPICS, joint_map, 0.2, "robot.bag")
    assert not out.dropped.get("joint_too_old")


def test_an_input_never_recorded_is_named(charmie, truth):
    joint_map = read_joint_map([], str(ROBOT_MAP))
    messages = [m for m in robot_messages(charmie, joint_map, truth) if m[0] != "/odom"]
    with pytest.raises(LogError, match=r"^robot.bag: no samples \(two at least\) of d1, d2, "
                                       r"theta3 on /joint_states, /odom"):
        read_recorded(charmie, messages, TOPICS, joint_map, 0.1, "robot.bag")


def test_an_epoch_time_origin_reads_as_any_other(charmie, truth):
    """Stamps of today's clock (1.7e18 ns) are integers to the nanosecond: the grid and the
    interpolation give what a recording stamped from 1000 s gives."""
    joint_map = read_joint_map([], str(ROBOT_MAP))
    near = read_recorded(charmie, robot_messages(charmie, joint_map, truth), TOPICS, joint_map,
                         0.1, "robot.bag")
    epoch = read_recorded(charmie, robot_messages(charmie, joint_map, truth, t0=0.0,
                                                  t0_ns=1_732_000_000_123_456_789),
                          TOPICS, joint_map, 0.1, "robot.bag")
    assert len(epoch.log.t) == len(near.log.t) and epoch.dropped == near.dropped
    for a, b in ((near.log.x, epoch.log.x), (near.log.xd, epoch.log.xd)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    np.testing.assert_allclose(near.log.effort, epoch.log.effort, rtol=0, atol=1e-3)


def test_two_publishers_of_a_joint_and_bad_stamps_are_said(charmie, truth):
    joint_map = read_joint_map([], str(ROBOT_MAP))
    messages = robot_messages(charmie, joint_map, truth)
    first = messages[0][1]
    # a second publisher of the first arm joint alone, and a stamp nanosec beyond 1e9
    messages.insert(20, ("/joint_states", joint_state(1000.0305, first.name[:1],
                                                      first.position[:1], [0.0], [0.0])))
    bad = joint_state(1000.5, first.name, first.position, first.velocity, first.effort)
    bad.header.stamp.nanosec = 1_500_000_000
    messages.insert(30, ("/joint_states", bad))
    out = read_recorded(charmie, messages, TOPICS, joint_map, 0.1, "robot.bag")
    assert out.conflicting == (first.name[0],)
    # the fast broadcaster's next two messages are older than the second publisher's: refused
    assert out.rejected == {"invalid_value": 1, "time_backwards": 2}
    assert "header.stamp.nanosec 1500000000 is not below 1e9" in out.first_rejection["invalid_value"]
    line = summary(out)
    assert f"WARNING: joints given by two publishers (messages of different joint sets), their " \
           f"values merged as they came: {first.name[0]}" in line
    assert "d1" not in line.split("ignored: ")[1].split(";")[0]     # the base: from odometry
