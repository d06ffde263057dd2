"""The dynamics node's pure pieces, without ROS: odometry to base coordinates, reference
trajectories, the stale policy of the feedforward, the stamp checks, the outputs' helpers,
the diagnostics status, the parameter checks and the model sources (URDF + overlay)."""
import dataclasses
import math
import struct
import subprocess
import sys
from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from charmie_dynamics.export.urdf import overlay_from_model, urdf_from_model
from charmie_dynamics.kinematics.limits import InputLimits
from charmie_dynamics.model import ModelError, load_model
from charmie_dynamics.ros.common.inputs import InputRejected
from charmie_dynamics.ros.common.log_throttle import LogThrottle
from charmie_dynamics.ros.common.model_source import model_from_description, model_to_publish
from charmie_dynamics.ros.common.model_updates import (UNKNOWN_NODE_NAME, prepare_model,
                                                       publisher_problem, senders_problem)
from charmie_dynamics.ros.common.odometry import base_from_odometry
from charmie_dynamics.ros.common.outputs import (FeedforwardMap, StampGrid, wrench_bodies,
                                                 wrench_topic)
from charmie_dynamics.ros.common.stamps import StampGuard, to_nanoseconds
from charmie_dynamics.ros.dynamics_parts.dynamics_parameters import (PARAMETERS, check_parameters,
                                                                     with_defaults)
from charmie_dynamics.ros.dynamics_parts.node_status import Level, StatusCounts, dynamics_status
from charmie_dynamics.ros.dynamics_parts.reference import check_serialized_reference, read_reference
from charmie_dynamics.ros.dynamics_parts.stale_policy import Action, StalePolicy
from conftest import CHARMIE
from domains import domain_id

MODEL = load_model(CHARMIE)


def yaw_quaternion(yaw):
    return (0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def test_odometry_yaw_and_twist_in_the_world_frame():
    """REP 103: base_link faces x; CHARMIE's body_3 faces its y, turned by -pi/2 in
    base_link (the model file's base.rotation), so its yaw is the odometry's minus pi/2."""
    base = MODEL.base
    yaw = 0.7
    pos, vel = base_from_odometry(base, 1.5, -2.0, yaw_quaternion(yaw), (0.3, 0.1), 0.25)
    assert pos == pytest.approx({"d1": 1.5, "d2": -2.0, "theta3": yaw - math.pi / 2}, abs=1e-15)
    # the twist in base_link turned by base_link's yaw
    assert vel["d1"] == pytest.approx(0.3 * math.cos(yaw) - 0.1 * math.sin(yaw), abs=1e-15)
    assert vel["d2"] == pytest.approx(0.3 * math.sin(yaw) + 0.1 * math.cos(yaw), abs=1e-15)
    assert vel["theta3"] == 0.25
    # a turn past pi comes back wrapped
    assert base_from_odometry(base, 0, 0, yaw_quaternion(-2.0), (0, 0), 0)[0]["theta3"] == \
        pytest.approx(-2.0 - math.pi / 2 + 2 * math.pi, abs=1e-12)
    # facing forward: body_3's y axis (its front) along the odometry's x
    theta = base_from_odometry(base, 0, 0, yaw_quaternion(0.0), (0, 0), 0)[0]["theta3"]
    assert (-math.sin(theta), math.cos(theta)) == pytest.approx((1.0, 0.0), abs=1e-15)


@pytest.mark.parametrize("orientation, reason", [
    ((0.0, 0.0, 0.0, 0.0), "invalid_value"),
    ((0.0, 0.0, 0.0, 2.0), "invalid_value"),
    ((0.0, 0.0, math.nan, 1.0), "invalid_value"),
])
def test_odometry_orientation_must_be_a_unit_quaternion(orientation, reason):
    with pytest.raises(InputRejected, match="norm") as info:
        base_from_odometry(MODEL.base, 0.0, 0.0, orientation, (0.0, 0.0), 0.0)
    assert info.value.reason == reason


def _tilted(roll: float, yaw: float) -> tuple[float, float, float, float]:
    """x y z w of Rz(yaw) Rx(roll)."""
    cr, sr, cy, sy = math.cos(roll / 2), math.sin(roll / 2), math.cos(yaw / 2), math.sin(yaw / 2)
    return (cy * sr, sy * sr, sy * cr, cy * cr)


def test_odometry_of_a_rolled_base_is_refused_and_a_ramp_is_taken():
    """Issue 34's attack: a 180-degree roll (qx = 1) was read as yaw 0; a base that leans
    more than MAX_TILT has no planar pose. A 10-degree ramp keeps its yaw."""
    for roll, shown in ((math.pi, "180"), (math.radians(31), "31"), (-math.radians(90), "90")):
        with pytest.raises(InputRejected, match=f"tilted {shown} deg from upright, expected a "
                                                "planar base .at most 30 deg.") as info:
            base_from_odometry(MODEL.base, 0.0, 0.0, _tilted(roll, 0.4), (0.0, 0.0), 0.0)
        assert info.value.reason == "invalid_value"
    theta = base_from_odometry(MODEL.base, 0, 0, _tilted(math.radians(10), 0.4), (0, 0), 0)[0]
    assert theta["theta3"] == pytest.approx(0.4 - math.pi / 2, abs=1e-12)


@pytest.mark.parametrize("args", [(math.inf, 0.0, (0.0, 0.0), 0.0),
                                  (0.0, math.nan, (0.0, 0.0), 0.0),
                                  (0.0, 0.0, (math.inf, 0.0), 0.0),
                                  (0.0, 0.0, (0.0, 0.0), math.nan)])
def test_odometry_non_finite(args):
    x, y, linear, angular = args
    with pytest.raises(InputRejected) as info:
        base_from_odometry(MODEL.base, x, y, (0.0, 0.0, 0.0, 1.0), linear, angular)
    assert info.value.reason == "non_finite"


INPUTS = ("a", "b", "c", "d")
NO_LIMITS = InputLimits({}, {}, {})          # only the plausibility bound
CAP = 100


def test_reference_is_placed_in_its_input_slots():
    points = [(0, [1.0, 2.0]), (1_000_000_000, [3.0, 4.0])]
    ref = read_reference(["c", "a"], points, 5_000_000_000, INPUTS, NO_LIMITS, CAP)
    assert ref.slots == (2, 0)
    np.testing.assert_allclose(ref.times, [5.0, 6.0])
    np.testing.assert_allclose(ref.input_accelerations(5.5, 4), [3.0, 0.0, 2.0, 0.0])
    np.testing.assert_allclose(ref.input_accelerations(9.0, 4), [4.0, 0.0, 3.0, 0.0])
    # points without accelerations are zeros
    ref = read_reference(["b"], [(0, []), (10, [])], 0, INPUTS, NO_LIMITS, CAP)
    np.testing.assert_array_equal(ref.input_accelerations(0.0, 4), np.zeros(4))


@pytest.mark.parametrize("names, points, reason", [
    (["a"], [], "invalid_value"),
    (["a", "a"], [(0, [1.0, 1.0])], "duplicate_name"),
    (["a", "zz"], [(0, [1.0, 1.0])], "unknown_name"),
    (["a", "b"], [(0, [1.0])], "length_mismatch"),
    (["a"], [(0, [math.nan])], "non_finite"),
    (["a"], [(0, [1.0]), (0, [1.0])], "invalid_value"),
    (["a"], [(10, [1.0]), (5, [1.0])], "invalid_value"),
    (["a"], [(k, [1.0]) for k in range(CAP + 1)], "invalid_value"),        # over the cap
    (["a", "b"], [(0, [1.0, 1.0]), (1, [1.0, -1.0000001e6])], "beyond_limits"),
    (["a"], [(0, [1e300])], "beyond_limits"),
])
def test_reference_rejections(names, points, reason):
    with pytest.raises(InputRejected) as info:
        read_reference(names, points, 0, INPUTS, NO_LIMITS, CAP)
    assert info.value.reason == reason


def test_reference_accelerations_at_the_plausible_bound_are_taken_and_named_beyond_it():
    ref = read_reference(["a", "b"], [(0, [1e6, -1e6])], 0, INPUTS, NO_LIMITS, CAP)
    np.testing.assert_array_equal(ref.accelerations, [[1e6, -1e6]])
    with pytest.raises(InputRejected, match=r"point 1: b acceleration -2e\+06 is implausible"):
        read_reference(["a", "b"], [(0, [0.0, 0.0]), (1, [0.0, -2e6])], 0, INPUTS, NO_LIMITS, CAP)


def cdr_trajectory(names, n_points: int, little: bool = True, frame: str = "base") -> bytes:
    """A JointTrajectory's CDR bytes as a raw subscription gets them (points empty)."""
    e = "<" if little else ">"

    def string(text: str, at: int) -> bytes:
        raw = text.encode() + b"\0"
        out = struct.pack(e + "I", len(raw)) + raw
        return out + b"\0" * (-(at + len(out)) % 4)

    body = struct.pack(e + "iI", 5, 7)
    body += string(frame, len(body))
    body += struct.pack(e + "I", len(names))
    for name in names:
        body += string(name, len(body))
    body += struct.pack(e + "I", n_points)
    point = struct.pack(e + "IIIIiI", 0, 0, 0, 0, 0, 0)
    return bytes([0, 1 if little else 0, 0, 0]) + body + point * min(n_points, 3)


def test_serialized_reference_counts_are_read_before_deserializing():
    serialize_message = pytest.importorskip("rclpy.serialization").serialize_message
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    # the bytes rclpy makes: the reader finds the same counts
    msg = JointTrajectory(joint_names=["d1", "theta7a", "x"], points=[JointTrajectoryPoint()] * 5)
    msg.header.frame_id = "odd"
    data = serialize_message(msg)
    check_serialized_reference(data, 3, 5)
    for names, points, match in ((2, 5, "3 joint names"), (3, 4, "5 points, max_reference_points 4")):
        with pytest.raises(InputRejected, match=match) as info:
            check_serialized_reference(data, names, points)
        assert info.value.reason == "invalid_value"
    for little in (True, False):
        data = cdr_trajectory(["ab", "abc", "abcd"], 200_000, little, frame="")
        check_serialized_reference(data, 3, 200_000)
        with pytest.raises(InputRejected, match="200000 points"):
            check_serialized_reference(data, 3, 10_000)
    with pytest.raises(InputRejected, match="truncated"):
        check_serialized_reference(cdr_trajectory(["a"], 1)[:20], 3, 10)
    with pytest.raises(InputRejected, match="truncated"):            # a name longer than the message
        check_serialized_reference(bytes([0, 1, 0, 0]) + struct.pack("<iII", 0, 0, 2**31), 3, 10)
    check_serialized_reference(bytes([0, 3, 0, 0]) + b"\xff" * 8, 3, 10)   # another encoding: left


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


# ---------------------------------------------------------------------------- stamps
S = 10**9


def test_stamp_guard_future_backwards_and_advance_on_accept_only():
    guard = StampGuard(max_lead_ns=S, rearm_after_ns=S // 5)
    with pytest.raises(InputRejected, match="ahead of the node clock") as info:
        guard.check(100 * S + S + 1, 100 * S)
    assert info.value.reason == "future_stamp" and guard.last is None   # poisons nothing
    assert guard.check(100 * S + S, 100 * S) is None                    # exactly the lead: taken
    assert guard.check(5 * S, 0) is None                                 # no clock yet: no lead check
    guard.accept(100 * S)
    with pytest.raises(InputRejected) as info:
        guard.check(100 * S - 1, 100 * S)
    assert info.value.reason == "time_backwards"
    assert guard.check(100 * S, 100 * S) is None                         # the same stamp again
    with pytest.raises(InputRejected) as info:
        guard.check_rate(100 * S + S // 20, 10.0)                        # 50 ms < 1/10 Hz
    assert info.value.reason == "throttled"
    guard.check_rate(100 * S + S // 10, 10.0)                            # exactly the period
    guard.check_rate(100 * S + 1, 0.0)                                   # no limit


def test_stamp_lead_alone_and_malformed_nanoseconds():
    guard = StampGuard(max_lead_ns=S, rearm_after_ns=S // 5)
    guard.accept(100 * S)
    guard.check_lead(50 * S, 100 * S)                # no order: an older stamp is fine
    guard.check_lead(101 * S, 100 * S)
    with pytest.raises(InputRejected, match="ahead") as info:
        guard.check_lead(101 * S + 1, 100 * S)
    assert info.value.reason == "future_stamp" and guard.last == 100 * S
    assert to_nanoseconds(SimpleNamespace(sec=3, nanosec=999_999_999)) == 3 * S + S - 1
    assert to_nanoseconds(SimpleNamespace(sec=-1, nanosec=0)) == -S
    for bad in (S, 2**32 - 1):
        with pytest.raises(InputRejected, match=f"time_from_start.nanosec {bad} is not below 1e9") as info:
            to_nanoseconds(SimpleNamespace(sec=0, nanosec=bad), "time_from_start")
        assert info.value.reason == "invalid_value"


def test_stamp_guard_rearms_after_a_clock_restart_or_a_long_run_back():
    guard = StampGuard(max_lead_ns=S, rearm_after_ns=S // 5)
    guard.accept(100 * S)
    jump = guard.check(3 * S, 2 * S)                 # /clock restarted: node clock 98 s behind
    assert jump is not None and jump.back_s == pytest.approx(97.0) and "behind" in jump.why
    assert guard.last is None
    guard.accept(3 * S)
    guard.last = 100 * S                            # a source clock reset, node clock steady
    for now in (100 * S, 100 * S + S // 10, 100 * S + S // 5):
        with pytest.raises(InputRejected, match="before"):
            guard.check(50 * S, now)
    jump = guard.check(50 * S, 100 * S + S // 5 + 1)  # back for longer than rearm_after
    assert jump is not None and "stale_timeout" in jump.why and guard.last is None
    guard.accept(100 * S)
    with pytest.raises(InputRejected):
        guard.check(50 * S, 200 * S)
    assert guard.check(100 * S, 200 * S + 1) is None  # a good stamp ends the run back
    with pytest.raises(InputRejected):
        guard.check(50 * S, 300 * S)                  # a new run starts its own count


# ---------------------------------------------------------------------------- outputs
def test_tf_grid_keeps_the_average_rate_under_jitter():
    grid = StampGrid()
    period = S // 100
    rng = np.random.default_rng(5)                  # inputs at 1 kHz, +-0.3 ms of jitter
    stamps = [k * S // 1000 + int(rng.uniform(-3e5, 3e5)) for k in range(1, 1001)]
    taken = [t for t in stamps if grid.due(t, 100.0)]
    assert 99 <= len(taken) <= 100                  # 100 Hz, not fewer because of the jitter
    grid = StampGrid()
    assert grid.due(10 * S, 100.0) and not grid.due(10 * S + period // 2, 100.0)
    assert grid.due(5 * S, 100.0)                    # time went back: restart
    assert all(StampGrid().due(t, 0.0) for t in (1, 1, 0))   # rate 0: every stamp


def test_tf_grid_publishes_every_input_slower_than_its_rate():
    """Inputs at 70-99 Hz with tf_rate 100 are each published, and 100 Hz inputs with +-2 ms
    of jitter nearly all: a grid half a period after the loads' (tried, reverted) gave 41 /tf
    a second for 75 Hz inputs, a fixed lattice 75 for jittered 100 Hz ones."""
    rng = np.random.default_rng(8)
    for rate_in in (70, 75, 80, 90, 99):
        grid = StampGrid()
        assert all(grid.due(S + k * S // rate_in, 100.0) for k in range(10 * rate_in))
    stamps = sorted(S + k * S // 100 + int(rng.uniform(-2e6, 2e6)) for k in range(1000))
    grid = StampGrid()
    assert sum(grid.due(t, 100.0) for t in stamps) >= 990


def test_feedforward_map_order_clamp_and_flags():
    model = load_model(CHARMIE)
    joints = ["act5", "theta3", "act4"]
    ff = FeedforwardMap(model, model.input_names, joints)
    limit = ff.effort_limit
    efforts = np.zeros(len(model.input_names))
    i = model.input_names.index("act4")
    efforts[i] = 2 * limit[i]
    assert ff.beyond_limits(efforts) == ("act4",)
    assert ff.beyond_limits(np.zeros_like(efforts)) == ()
    np.testing.assert_array_equal(ff(efforts, False), [0.0, 0.0, 2 * limit[i]])
    np.testing.assert_array_equal(ff(efforts, True), [0.0, 0.0, limit[i]])
    np.testing.assert_array_equal(ff.zeros(), np.zeros(3))


# ---------------------------------------------------------------------------- diagnostics
def _status(reported=Counter(), **changes):
    args = dict(rejected=Counter(), received=Counter(), events=Counter(),
                stats={"evaluated": 0, "latency_sum": 0.0, "latency_max": 0.0}, model="m",
                pending=None, parsing=False, superseded=0, repeated=0, arrivals=[],
                last_valid_age=0.01,
                stale=False, acceleration_source="zero", effort_flags=())
    return dynamics_status(StatusCounts(**(args | changes)), reported)


def test_status_levels_values_and_what_is_new():
    status = _status(stats={"evaluated": 4, "latency_sum": 0.002, "latency_max": 0.001},
                     arrivals=[0.0, 0.5, 1.0])
    assert (status.level, status.message) == (Level.OK, "ok")
    v = status.values
    assert v["evaluations"] == "4" and v["compute_latency_mean_ms"] == "0.500"
    assert v["input_rate_hz"] == "2.0" and v["rejected_bad_model"] == "0"
    assert v["model_pending"] == "none" and v["last_valid_input_age_s"] == "0.010"
    assert _status(model=None).level is Level.ERROR
    assert _status(last_valid_age=None).message == "inputs stale or missing"
    rejected = Counter(non_finite=1, throttled=3)
    status = _status(rejected=rejected)
    assert status.level is Level.WARN and "rejected" in status.message
    assert status.values["rejected_non_finite"] == "1"
    # reported again with nothing new: ok; throttling alone never warns
    assert _status(rejected=rejected, reported=status.reported).level is Level.OK
    assert _status(rejected=Counter(throttled=3)).level is Level.OK
    status = _status(events=Counter(clock_jumps=1, efforts_beyond_limits=2),
                     effort_flags=("act4",))
    assert "clock jumped back" in status.message and "act4" in status.message
    assert status.values["clock_jumps"] == "1"


# ---------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("changes, problem", [
    ({}, None),
    ({"acceleration_source": "fast"}, "acceleration_source 'fast'"),
    ({"model_source": "param"}, "model_source 'param': expected one of topic, robot_description, file"),
    ({"tf_rate": 0.5}, "tf_rate 0.5: expected 0 (off) or 1"),
    ({"output_rate": 0.9}, "output_rate 0.9: expected 0 (off) or 1"),
    ({"model_source": "file"}, "expected a model_file"),
    ({"model_source": "file", "model_file": "m.yaml"}, None),
    ({"overlay_file": "o.yaml"}, "overlay_file 'o.yaml' with model_source 'topic'"),
    ({"overlay_file": "o.yaml", "model_file": "r.urdf"}, None),
    ({"overlay_file": "o.yaml", "model_source": "robot_description"}, None),
])
def test_parameter_checks(changes, problem):
    found = check_parameters(with_defaults(changes))
    assert found == problem if problem is None else problem in found


def test_every_number_has_a_range_and_every_parameter_a_description():
    for name, p in PARAMETERS.items():
        assert p.description, name
        if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
            assert p.low is not None and p.low <= p.default <= p.high, name


def test_pure_pieces_import_no_ros():
    modules = ("common.stamps common.outputs dynamics_parts.node_status common.model_source "
               "dynamics_parts.dynamics_parameters common.param_spec common.model_updates "
               "dynamics_parts.reference common.joint_map")
    code = "import sys\n" + "".join(f"import charmie_dynamics.ros.{m}\n" for m in modules.split()) + \
        "print([m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rcl_interfaces')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------- model sources
@pytest.fixture(scope="module")
def charmie_urdf(tmp_path_factory):
    """CHARMIE as charmie-dynamics export-urdf writes it: the URDF and its overlay."""
    model = load_model(CHARMIE)
    d = tmp_path_factory.mktemp("urdf")
    (d / "charmie.urdf").write_text(urdf_from_model(model, include_auxiliary=False))
    (d / "overlay.yaml").write_text(yaml.safe_dump(overlay_from_model(model), sort_keys=False))
    return model, d / "charmie.urdf", d / "overlay.yaml"


def _same_model(a, b):
    assert a.input_names == b.input_names and a.body_names == b.body_names
    for field in ("rotation", "origin", "parent", "joint_type", "gravity"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    assert [x.mass for x in a.bodies] == [x.mass for x in b.bodies]


def test_published_urdf_model_is_the_urdf_with_its_overlay(charmie_urdf):
    _, urdf, overlay = charmie_urdf
    published = model_to_publish(urdf, overlay, 4 * 2**20)
    assert published.description == urdf.read_text()          # robot_description: as read
    assert not published.text.lstrip().startswith("<")          # a model document
    _same_model(published.model, load_model(urdf, overlay=overlay))
    # the document alone (what the dynamics node gets) is the same model
    from charmie_dynamics.model import model_from_text
    _same_model(model_from_text(published.text, "charmie/model"), published.model)
    _same_model(model_from_description(urdf.read_text(), "robot_description", 4 * 2**20, overlay),
                published.model)


def test_published_yaml_model_is_unchanged(charmie_urdf):
    model, _, _ = charmie_urdf
    published = model_to_publish(CHARMIE, None, 4 * 2**20)
    assert published.text == CHARMIE.read_text(encoding="utf-8")
    assert published.description == urdf_from_model(model)
    _same_model(published.model, model)


def test_model_source_errors(charmie_urdf, tmp_path):
    _, urdf, overlay = charmie_urdf
    with pytest.raises(ModelError, match="overlay .* was given for a YAML model"):
        model_to_publish(CHARMIE, overlay, 4 * 2**20)
    with pytest.raises(ModelError, match="frame_prefix 'r1/' with a URDF model file"):
        model_to_publish(urdf, overlay, 4 * 2**20, "r1/")
    with pytest.raises(ModelError, match="cannot read"):
        model_to_publish(urdf, tmp_path / "missing.yaml", 4 * 2**20)
    with pytest.raises(ModelError, match="expected a URDF"):
        model_from_description(CHARMIE.read_text(), "robot_description", 4 * 2**20, None)
    with pytest.raises(ModelError, match="2056 bytes of text, expected at most 1024 bytes"):
        model_from_description("<robot" + " " * 2048 + "/>", "robot_description", 1024, None)


def test_model_parser_survives_any_exception_and_parses_the_next_text():
    import time

    from charmie_dynamics.ros.common.model_updates import ModelParser
    calls = []

    def parse(text):
        calls.append(text)
        if text == "bad":
            raise MemoryError("x" * 10000)
        return text.upper()

    parser = ModelParser(parse)
    try:
        def wait_results():
            deadline = time.monotonic() + 5.0
            while time.monotonic() < deadline:
                got = parser.results()
                if got:
                    return got
                time.sleep(0.01)
            return []

        parser.submit("bad")
        (failed,) = wait_results()
        assert failed.value is None and isinstance(failed.error, ModelError)
        assert "MemoryError" in str(failed.error) and "\n" not in str(failed.error)
        assert len(str(failed.error)) < 1000
        parser.submit("good")
        (ok,) = wait_results()
        assert ok.value == "GOOD" and ok.error is None
        deadline = time.monotonic() + 5.0
        while not parser.idle() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert parser.idle()
    finally:
        parser.close()


def chain_model_text(n: int) -> str:
    """A valid YAML model of ``n`` bodies in a chain (about 210 bytes a body)."""
    lines = ["format: charmie_dynamics/model/1", "name: chain", "gravity: [0, 0, -9.81]",
             "bodies:"]
    for k in range(n):
        lines += [f"  - name: link{k}", f"    parent: {'world' if k == 0 else f'link{k - 1}'}",
                  "    origin: [0, 0, 0.1]", "    rotation: [0, 0, 0]",
                  f"    joint: {{type: R, axis: z, coordinate: q{k}}}", "    mass: 1.0",
                  "    com: [0, 0, 0.05]", "    inertia: {ixx: 0.01, iyy: 0.01, izz: 0.01}"]
    return "\n".join(lines) + "\n"


def test_child_check_refuses_as_the_loader_and_kills_a_slow_child():
    """check_in_child decides as model_from_text does, in another process; a child past its
    time is killed and the text refused."""
    from charmie_dynamics.model import model_from_text
    from charmie_dynamics.model.isolated import check_in_child
    text = chain_model_text(3)
    check_in_child(text, "chain", 2**20)                  # valid: no error
    model_from_text(text, "chain", 2**20)
    bad = text.replace("mass: 1.0", "mass: -2.0", 1)
    with pytest.raises(ModelError) as in_process:
        model_from_text(bad, "chain", 2**20)
    with pytest.raises(ModelError) as in_child:
        check_in_child(bad, "chain", 2**20)
    assert str(in_child.value) == str(in_process.value)
    with pytest.raises(ModelError, match=r"^chain: .*expected at most 100 bytes"):
        check_in_child(text, "chain", 100)
    with pytest.raises(ModelError, match=r"^big: validating the model took longer than 0.05 s"):
        check_in_child(chain_model_text(3000), "big", 4 * 2**20, timeout=0.05)


def test_a_small_model_is_not_queued_behind_a_large_one():
    """A large text (checked in a child process first: over a second for 3,000 bodies) is
    submitted, then a small one: the small one's outcome comes first, and the large one's,
    finished later for an older text, is dropped as superseded (the newest text wins)."""
    import time

    from charmie_dynamics.model import model_from_text
    from charmie_dynamics.model.isolated import check_in_child
    from charmie_dynamics.ros.common.model_updates import ModelParser
    checked = []

    def check(text):
        checked.append(len(text))
        check_in_child(text, "t", 4 * 2**20)

    parser = ModelParser(lambda text: model_from_text(text, "t", 4 * 2**20), check,
                         large=64 * 1024)
    large, small = chain_model_text(3000), CHARMIE.read_text()
    assert len(large) > 64 * 1024 > len(small)
    try:
        parser.submit(large)
        parser.submit(small)
        got = []
        deadline = time.monotonic() + 60.0
        while not parser.idle() and time.monotonic() < deadline:
            got += parser.results()
            time.sleep(0.01)
        got += parser.results()
        assert [outcome.text for outcome in got] == [small]
        assert got[0].value.name == "charmie" and parser.superseded == 1
        assert checked == [len(large)]                   # the small text went straight on
    finally:
        parser.close()


def test_a_large_valid_model_is_not_remembered_beside_the_nodes():
    """Issue 34, M1: 20 texts of 10,000 bodies left +243 MB in the node: the parser kept the
    outcomes of the last 4 (each a prepared model of tens of MB). A large text's valid
    outcome is now handed out and not kept; its refusal is kept, without the text."""
    import time

    from charmie_dynamics.model import ModelError
    from charmie_dynamics.ros.common.model_updates import ModelParser

    class Prepared:                         # stands for a prepared model of that size
        def __init__(self, size: int) -> None:
            self.data = bytearray(size)
    parses = []

    def parse(text):
        parses.append(text[:4])
        if text.startswith("bad"):
            raise ModelError("t: bad")
        return Prepared(len(text))

    def settle() -> list:
        got, deadline = [], time.monotonic() + 30.0
        while not parser.idle() and time.monotonic() < deadline:
            got += parser.results()
            time.sleep(0.005)
        return got + parser.results()

    parser = ModelParser(parse, lambda text: None, large=1000)
    try:
        held = [o.value for text in ("good" + "x" * 5000, "bad" + "x" * 5000, "small")
                for o in (parser.submit(text) or settle()) if o.value is not None]
        kept = list(parser._known.values())
        assert kept[1].text.startswith("<5003 characters, sha256 ") and kept[1].error
        assert kept[2].text == "small"
        # the large valid one: only a weak reference, which finds it while the node holds it
        assert kept[0]() is held[0]
        parser.submit("good" + "x" * 5000)
        assert [o.value for o in settle()] == [held[0]] and parses.count("good") == 1
        del held[:]
        parser.submit("good" + "x" * 5000)                          # gone: parsed again
        settle()
        assert parses.count("good") == 2
        parser.submit("bad" + "x" * 5000)                           # a flood: no new parse
        assert parses.count("bad" + "x") == 1 and parser.repeated == 2
    finally:
        parser.close()


def test_a_flood_of_one_bad_text_does_not_displace_the_loader_model():
    """The attack: a 125 kB invalid text (the in-node lane) re-published at 100 Hz kept the
    loader's model, published once, from ever being parsed (each new copy replaced it while it
    waited). A text seen before is answered from its remembered outcome: one parse for the
    whole flood, the loader's text parsed and delivered, and a rejected text supersedes
    nothing (the valid outcome is not dropped for being older)."""
    import threading
    import time

    from charmie_dynamics.ros.common.model_updates import ModelParser
    calls, gate = [], threading.Event()

    def parse(text):
        calls.append(text[:4])
        gate.wait(5.0)                                   # the first parse holds the lane
        if text.startswith("bad"):
            raise ModelError("not a model")
        return text

    parser = ModelParser(parse)
    try:
        hostile = "bad " + "x" * 125_000
        parser.submit(hostile)                           # being parsed (held by the gate)
        time.sleep(0.1)
        parser.submit("good model")                      # the loader's text waits
        for _ in range(200):
            parser.submit(hostile)                       # before: each one replaced it
        gate.set()
        got, deadline = [], time.monotonic() + 10.0
        while time.monotonic() < deadline and not any(o.error is None for o in got):
            got += parser.results()
            time.sleep(0.01)
        assert [o.value for o in got if o.error is None] == ["good model"]
        assert calls == ["bad ", "good"]                 # the flood cost one parse
        assert parser.repeated >= 199 and parser.superseded == 0
    finally:
        gate.set()
        parser.close()


def test_model_update_policy_installs_holds_and_accepts_by_hash():
    """once: the first model installed, a different one held until its hash is given, a
    known text unchanged, a bad text rejected; always: every valid model installed."""
    from charmie_dynamics.ros.common.model_updates import (Decision, ModelUpdates, Parsed,
                                                           UpdateRefused)
    first, second = (SimpleNamespace(text=t, hash=f"hash-{t}") for t in ("a", "b"))
    parsed = lambda p: Parsed(p.text, p, None)                      # noqa: E731
    once = ModelUpdates("once")
    assert once.decide(Parsed("x", None, ModelError("bad"))) is Decision.REJECT
    assert once.decide(parsed(first)) is Decision.INSTALL
    once.installed(first, "a as a document")
    assert once.decide(parsed(first)) is Decision.UNCHANGED
    assert once.decide(Parsed("a as a document", first, None)) is Decision.UNCHANGED
    with pytest.raises(UpdateRefused, match="no model update is pending"):
        once.accept_pending("hash-b")
    assert once.decide(parsed(second)) is Decision.HOLD and once.pending is second
    with pytest.raises(UpdateRefused, match="does not name the pending model"):
        once.accept_pending("")
    assert once.pending is second
    assert once.accept_pending("hash-b") is second and once.pending is None
    always = ModelUpdates("always")
    always.installed(first)
    assert always.decide(parsed(second)) is Decision.INSTALL and always.pending is None


def test_reference_times_increase_on_integer_nanoseconds():
    """1 ns apart in 2026 (about 1.8e9 s since 1970): the same float of seconds, yet
    increasing; the same nanosecond twice is refused."""
    start = 1_800_000_000 * 10**9
    ref = read_reference(["a"], [(0, [1.0]), (1, [2.0])], start, INPUTS, NO_LIMITS, CAP)
    assert len(ref.times) == 2
    with pytest.raises(InputRejected) as err:
        read_reference(["a"], [(5, [1.0]), (5, [2.0])], start, INPUTS, NO_LIMITS, CAP)
    assert err.value.reason == "invalid_value"


@pytest.mark.ros
def test_urdf_model_file_then_its_published_document_is_not_held(charmie_urdf, monkeypatch):
    """A URDF model_file (model_source topic) and the loader's document of the same file on
    the model topic: the same model (models_unchanged), not a held update."""
    rclpy = pytest.importorskip("rclpy")
    import time

    from rclpy.parameter import Parameter
    from std_msgs.msg import String

    from charmie_dynamics.ros.dynamics_node import DynamicsNode
    _, urdf, overlay = charmie_urdf
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    published = model_to_publish(urdf, overlay, 10**7)
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        node = DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(urdf)), Parameter("overlay_file", value=str(overlay))])
        node.autostart()
        node.intake.on_model(String(data=published.text), None)
        deadline = time.monotonic() + 60.0
        while not node.intake.parser.idle() or not (node.events["models_unchanged"]
                                             or node.events["models_held"]):
            node.intake.collect()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert node.events["models_unchanged"] == 1 and node.events["models_held"] == 0
        assert node.intake.updates.pending is None
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


# ---------------------------------------------------------------- wrench bodies and topics

def test_wrench_joints_default_is_the_base_body(charmie):
    """The default [""] names the first body with mass: CHARMIE's body_3 (as the old default
    said), a URDF's mounted link; given names are kept, empty entries dropped."""
    assert wrench_bodies(charmie, [""]) == ["body_3"]
    assert wrench_bodies(charmie, ["", "body_4", "body_5"]) == ["body_4", "body_5"]
    prepared = prepare_model(charmie, "", "t", [""], [""])
    assert prepared.wrench_bodies == ["body_3"]
    with pytest.raises(ModelError, match="wrench_joints name\\(s\\) body_99 not in the model"):
        prepare_model(charmie, "", "t", [""], ["body_99"])


@pytest.mark.parametrize("body,topic", [
    ("body_3", "joint_wrenches/body_3"),
    ("robot-1.base", "joint_wrenches/robot_1_base"),
    ("LFoot/FSR/HeelLeft_sensor", "joint_wrenches/LFoot/FSR/HeelLeft_sensor"),
    ("a//b/", "joint_wrenches/a/b"),
    ("arm/1st.link", "joint_wrenches/arm/_1st_link"),
    ("épaule", "joint_wrenches/_paule"),
])
def test_wrench_topics_are_valid_topic_names(body, topic):
    assert wrench_topic(body) == topic
    rclpy_names = pytest.importorskip("rclpy.validate_full_topic_name")
    rclpy_names.validate_full_topic_name("/" + topic)          # raises if invalid


def test_two_wrench_bodies_on_one_topic_are_refused(charmie):
    bodies = tuple(dataclasses.replace(b, name="a-b" if b.name == "body_4" else
                                       "a.b" if b.name == "body_5" else b.name)
                   for b in charmie.bodies)
    assert wrench_topic("a-b") == wrench_topic("a.b")
    with pytest.raises(ModelError,
                       match="'a-b' and 'a.b' would share the topic joint_wrenches/a_b"):
        prepare_model(dataclasses.replace(charmie, bodies=bodies), "", "t", [""], ["a-b", "a.b"])


def test_input_check_cache_is_bounded_for_shuffled_names():
    """A publisher that sends its names in a new order every message: the node's cache of
    bounds by order stays small (it grew by about 1.2 kB a message, without bound)."""
    from charmie_dynamics.ros.common.inputs import MAX_CACHED_ORDERS
    from charmie_dynamics.ros.common.inputs import InputLimits as NodeLimits
    model = load_model(CHARMIE)
    limits, names = NodeLimits.of(model), list(model.input_names)
    rng = np.random.default_rng(5)
    for _ in range(200):
        rng.shuffle(names)
        limits.check(dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0), 0.01, 0.1)
    assert 1 <= len(limits.__dict__["_bounds_by_names"]) <= MAX_CACHED_ORDERS
    names[0], names[1] = names[1], names[0]
    beyond = dict.fromkeys(names, 0.0) | {names[0]: 2e6}
    with pytest.raises(InputRejected, match="implausible"):     # checks still right after it
        limits.check(beyond, dict.fromkeys(names, 0.0), 0.01, 0.1)


def test_models_only_while_the_allowed_nodes_alone_publish():
    """model_publishers (issue 34, T2): a name in the node's namespace or fully qualified."""
    loader = [("/robot", "model_loader")]
    assert publisher_problem(loader, ["model_loader"], "/robot") == ""
    assert publisher_problem(loader, ["/robot/model_loader"], "/") == ""
    assert publisher_problem([("/", "model_loader")], ["model_loader"], "/") == ""
    problem = publisher_problem(loader + [("/", "intruder")], ["model_loader"], "/robot")
    assert problem == "published by /intruder too, expected only /robot/model_loader"
    assert publisher_problem([("/", "model_loader")], ["model_loader"], "/robot").startswith(
        "published by /model_loader too")
    assert publisher_problem([], ["model_loader"], "/").startswith("no publisher left")


def test_a_text_waits_for_the_names_of_the_publishers_it_may_have_come_from():
    """rmw knows a publisher's endpoint before its node's name: the loader's first, latched
    text comes then. The decision waits (None) for the names of the publishers that were on
    the topic when the text came; one that left before its name was known may have sent it."""
    loader = ("/", "model_loader")
    unknown = ("_NODE_NAMESPACE_UNKNOWN_", UNKNOWN_NODE_NAME)
    assert senders_problem({b"a": unknown}, ["model_loader"], "/") is None
    assert senders_problem({b"a": loader}, ["model_loader"], "/") == ""
    assert senders_problem({b"a": loader, b"b": unknown}, ["model_loader"], "/") is None
    assert "left before" in senders_problem({b"a": loader, b"b": None}, ["model_loader"], "/")
    assert "/intruder" in senders_problem({b"a": loader, b"b": ("/", "intruder")},
                                          ["model_loader"], "/")


def test_reference_in_the_robots_names_and_units():
    """reference_trajectory speaks the robot's names and units, as joint_states: the map's
    hardware names are read as the model's inputs and the accelerations scaled into SI; a
    model name the map renames is unknown."""
    from charmie_dynamics.ros.common.joint_map import JointMap
    joint_map = JointMap({"a": "lift_actuator"}, {"a": 0.001})
    ref = read_reference(joint_map.message_to_model(["lift_actuator", "b"]),
                         [(0, [200.0, 1.0]), (10**9, [100.0, 2.0])], 0, INPUTS, NO_LIMITS, CAP,
                         joint_map.scale)
    np.testing.assert_allclose(ref.accelerations, [[0.2, 1.0], [0.1, 2.0]], rtol=1e-15)
    with pytest.raises(InputRejected) as info:
        read_reference(joint_map.message_to_model(["a"]), [(0, [1.0])], 0, INPUTS, NO_LIMITS,
                       CAP, joint_map.scale)
    assert info.value.reason == "unknown_name"


def test_a_log_throttle_lets_one_line_through_per_period():
    now = [100.0]
    throttle = LogThrottle(2.0, clock=lambda: now[0])
    passed = []
    for _ in range(50):                     # 0.125 s apart (exact in binary): 6.25 s
        passed.append(throttle())
        now[0] += 0.125
    assert [k for k, p in enumerate(passed) if p] == [0, 16, 32, 48]


def test_a_hostile_joint_name_is_clipped_in_the_log():
    """The attack: one 100,000-character name on joint_states gave a 100 KB WARN line."""
    from charmie_dynamics.ros.dynamics_parts.control_path import MAX_LOGGED_NAME, shown
    line = shown(["x" * 100_000, "theta7a"])
    assert len(line) < 2 * MAX_LOGGED_NAME + 10 and line.endswith(", theta7a")
