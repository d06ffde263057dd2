"""The dynamics node's pure pieces, without ROS: odometry to base coordinates, reference
trajectories, and the stale policy of the feedforward."""
import math

import numpy as np
import pytest

from charmie_dynamics.ros.inputs import InputRejected
from charmie_dynamics.ros.odometry import base_from_odometry
from charmie_dynamics.ros.reference import read_reference
from charmie_dynamics.ros.stale_policy import Action, StalePolicy


def yaw_quaternion(yaw):
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def test_odometry_yaw_and_twist_in_the_world_frame():
    yaw = 0.7
    pos, vel = base_from_odometry(1.5, -2.0, yaw_quaternion(yaw), (0.3, 0.1), 0.25)
    assert pos == pytest.approx({"d1": 1.5, "d2": -2.0, "theta3": yaw}, abs=1e-15)
    # the robot-frame twist turned by the yaw
    assert vel["d1"] == pytest.approx(0.3 * math.cos(yaw) - 0.1 * math.sin(yaw), abs=1e-15)
    assert vel["d2"] == pytest.approx(0.3 * math.sin(yaw) + 0.1 * math.cos(yaw), abs=1e-15)
    assert vel["theta3"] == 0.25
    # a turn past pi comes back wrapped; a roll does not change the yaw
    assert base_from_odometry(0, 0, yaw_quaternion(3.5), (0, 0), 0)[0]["theta3"] == \
        pytest.approx(3.5 - 2 * math.pi, abs=1e-12)


@pytest.mark.parametrize("orientation, reason", [
    ((0.0, 0.0, 0.0, 0.0), "invalid_value"),
    ((0.0, 0.0, 0.0, 2.0), "invalid_value"),
    ((0.0, 0.0, math.nan, 1.0), "invalid_value"),
])
def test_odometry_orientation_must_be_a_unit_quaternion(orientation, reason):
    with pytest.raises(InputRejected, match="norm") as info:
        base_from_odometry(0.0, 0.0, orientation, (0.0, 0.0), 0.0)
    assert info.value.reason == reason


@pytest.mark.parametrize("args", [(math.inf, 0.0, (0.0, 0.0), 0.0),
                                  (0.0, math.nan, (0.0, 0.0), 0.0),
                                  (0.0, 0.0, (math.inf, 0.0), 0.0),
                                  (0.0, 0.0, (0.0, 0.0), math.nan)])
def test_odometry_non_finite(args):
    x, y, linear, angular = args
    with pytest.raises(InputRejected) as info:
        base_from_odometry(x, y, (0.0, 0.0, 0.0, 1.0), linear, angular)
    assert info.value.reason == "non_finite"


INPUTS = ("a", "b", "c", "d")


def test_reference_is_placed_in_its_input_slots():
    points = [(0, [1.0, 2.0]), (1_000_000_000, [3.0, 4.0])]
    ref = read_reference(["c", "a"], points, 5_000_000_000, INPUTS)
    assert ref.slots == (2, 0)
    np.testing.assert_allclose(ref.times, [5.0, 6.0])
    np.testing.assert_allclose(ref.input_accelerations(5.5, 4), [3.0, 0.0, 2.0, 0.0])
    np.testing.assert_allclose(ref.input_accelerations(9.0, 4), [4.0, 0.0, 3.0, 0.0])
    # points without accelerations are zeros
    ref = read_reference(["b"], [(0, []), (10, [])], 0, INPUTS)
    np.testing.assert_array_equal(ref.input_accelerations(0.0, 4), np.zeros(4))


@pytest.mark.parametrize("names, points, reason", [
    (["a"], [], "invalid_value"),
    (["a", "a"], [(0, [1.0, 1.0])], "duplicate_name"),
    (["a", "zz"], [(0, [1.0, 1.0])], "unknown_name"),
    (["a", "b"], [(0, [1.0])], "length_mismatch"),
    (["a"], [(0, [math.nan])], "non_finite"),
    (["a"], [(0, [1.0]), (0, [1.0])], "invalid_value"),
    (["a"], [(10, [1.0]), (5, [1.0])], "invalid_value"),
])
def test_reference_rejections(names, points, reason):
    with pytest.raises(InputRejected) as info:
        read_reference(names, points, 0, INPUTS)
    assert info.value.reason == reason


def test_stale_policy_holds_once_per_rejection_run_then_falls_back():
    policy = StalePolicy(timeout_ns=100, policy="gravity")
    assert policy.tick(0) is Action.NOTHING                 # nothing valid yet
    policy.rejected()
    assert not policy.hold_due                              # nothing to hold yet
    ff, x = np.array([1.0, 2.0]), np.array([0.1, 0.2])
    policy.accepted(10, ff, x)
    assert policy.tick(20) is Action.NOTHING
    for _ in range(50):                                     # a flood of bad input
        policy.rejected()
    assert policy.tick(30) is Action.HOLD
    assert policy.tick(40) is Action.NOTHING                # held once, not once per message
    assert policy.tick(111) is Action.GRAVITY and policy.stale
    assert policy.last_x is x and policy.last_feedforward is ff
    policy.rejected()                                       # stale: no more holding
    assert policy.tick(120) is Action.GRAVITY
    policy.accepted(130, ff, x)
    assert not policy.stale and policy.tick(140) is Action.NOTHING


def test_stale_policy_zero_clock_back_and_new_model():
    policy = StalePolicy(timeout_ns=100, policy="zero")
    policy.accepted(1000, np.zeros(2), np.zeros(2))
    assert policy.tick(1200) is Action.ZERO
    policy = StalePolicy(timeout_ns=100)
    policy.accepted(1000, np.zeros(2), np.zeros(2))
    assert policy.tick(500) is Action.GRAVITY               # the clock went back: stale
    policy.forget()                                         # a new model: nothing to reuse
    policy.rejected()
    assert policy.tick(1000) is Action.NOTHING or policy.stale
    assert policy.tick(5000) is Action.ZERO                 # no positions for gravity
    with pytest.raises(ValueError, match="stale policy"):
        StalePolicy(timeout_ns=1, policy="hold")
