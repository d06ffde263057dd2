"""The ROS 2 nodes over real DDS: each node in its own process (``python -m``), this process
owning one rclpy context and a test node whose executor is advanced with ``spin_once`` until
a condition holds or a timeout passes (never a blind sleep for discovery).

DDS stays on loopback (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) in a domain of its own per
run. Shared by the tests (module scope):

* ``model_loader`` (bundled model) and dynamics node A (root namespace, model from the
  loader, tf_rate 0: one /tf per evaluation, stale watchdog out of the way);
* dynamics nodes B and C in namespaces /b and /c (model from model_file; /tf, /tf_static,
  /diagnostics remapped under the namespace), diagnostics every 0.2 s, stale_timeout 0.3 s:
  B for the bad-input test (it needs a node that has never seen a complete state), C for
  the stale-feedforward test.

The whole module is skipped only when rclpy cannot be imported. The helpers are in
``ros_harness.py``.
"""
from __future__ import annotations

import math
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from charmie_dynamics.export.urdf import urdf_from_model  # noqa: E402
from charmie_dynamics.mechanisms.auxiliary import auxiliary_segments  # noqa: E402
from charmie_dynamics.model import model_from_text  # noqa: E402
from charmie_dynamics.model.model import JointType  # noqa: E402
from conftest import CHARMIE  # noqa: E402
from domains import domain_id  # noqa: E402
from node_process import Child  # noqa: E402
from ros_harness import (ACTUATORS, JOINT_INPUTS, MODEL, TOL, Dynamics, Ros,  # noqa: E402,F401
                         core, dump_children, dump_on_failure, joint_state_msg, log_dir,
                         namespaced_dynamics, node_argv, params, quaternion_matrix, random_state,
                         ros, ros_env, stamp_key, vec)

RELIABLE_DEEP = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
BRINGUP_DOMAIN = domain_id(10, 90)         # the in-process bring-up (test 6): apart from them
FIXED_BODIES = ("body_6a", "body_6b", "body_6c", "body_9c")
#: body_3 (x to the robot's right) is published as REP 103's base_link (x forward), its own
#: frame base_link's fixed child: the model's base: rotation (test_rep103_base.py checks it
#: against the designers' URDF and Pinocchio)
TURN = MODEL.base.rotation


def frame_of(body: str) -> str:
    return "base_link" if body == "body_3" else body


@pytest.fixture(scope="module")
def system(ros, ros_env, log_dir):
    """Started together: model_loader + dynamics A (root namespace, model from the loader);
    dynamics B (/b, for the bad-input test: no input before it) and C (/c, stale inputs)."""
    started = time.monotonic()
    loader = Child("model_loader", node_argv("model_loader_node"), ros_env, log_dir)
    dyn_a = Child("dynamics_A", node_argv("dynamics_node", *params(
        acceleration_source="zero", tf_rate=0.0, output_rate=0.0, stale_timeout=1000.0,
        diagnostics_period=0.2)),
        ros_env, log_dir)
    # B reads strictly: its bad-input test counts partial messages and foreign names
    dyn_b = namespaced_dynamics("b", ros_env, log_dir, joint_state_policy="strict")
    dyn_c = namespaced_dynamics("c", ros_env, log_dir)
    children = [loader, dyn_a, dyn_b, dyn_c]
    try:
        ros.watched = list(children)
        nodes = dict(a=Dynamics(ros, dyn_a, "", with_tf=True),
                     b=Dynamics(ros, dyn_b, "/b", with_tf=False),
                     c=Dynamics(ros, dyn_c, "/c", with_tf=False))
        ok = ros.spin_until(lambda: all(d.ready() for d in nodes.values()), 60.0)
        if not ok:
            dump_children()
        assert ok, f"nodes not ready in 60 s: {({k: d.ready() for k, d in nodes.items()})}"
        yield dict(nodes, loader=loader, started=started)
    finally:
        ros.watched = []
        for child in children:
            child.stop()


# ---------------------------------------------------------------------------- 1
@dump_on_failure
def test_loads_and_tf_equal_the_core(ros, system):
    a: Dynamics = system["a"]
    rng = np.random.default_rng(20240611)
    body3 = MODEL.body_index("body_3")
    moving = [i for i in range(MODEL.n_bodies) if MODEL.joint_type[i] != JointType.FIXED]
    for k in range(6):
        pos, vel = random_state(rng, *((0.42, 0.39) if k == 0 else (None, None)))
        key, out = a.send_state(pos, vel)
        x, xd, state, loads, efforts = core(pos, vel)

        jl = out["joint_loads"]
        assert tuple(jl.name) == tuple(MODEL.coordinate_names)
        np.testing.assert_allclose(jl.position, state.q, **TOL)
        np.testing.assert_allclose(jl.velocity, state.qd, **TOL)
        np.testing.assert_allclose(jl.effort, loads.coordinate_effort, **TOL)

        al = out["actuator_loads"]
        assert stamp_key(al.header.stamp) == key
        assert tuple(al.name) == tuple(MODEL.input_names)
        np.testing.assert_allclose(al.position, x, **TOL)
        np.testing.assert_allclose(al.velocity, xd, **TOL)
        np.testing.assert_allclose(al.effort, efforts, **TOL)
        for j, name in enumerate(ACTUATORS):
            assert al.effort[MODEL.input_names.index(name)] == pytest.approx(
                loads.actuator_force[j], rel=1e-9, abs=1e-9)
        assert len(out["feedforward_new"]) == 1, out["feedforward_new"]   # one per evaluation
        np.testing.assert_allclose(out["feedforward"], al.effort, **TOL)

        w = out["wrench"]
        assert stamp_key(w.header.stamp) == key and w.header.frame_id == "base_link"
        np.testing.assert_allclose(vec(w.wrench.force), TURN @ loads.joint_force[body3], **TOL)
        np.testing.assert_allclose(vec(w.wrench.torque), TURN @ loads.joint_torque[body3], **TOL)

        fk = loads.placements
        segments = {s.name: s for s in auxiliary_segments(MODEL, fk)}
        tf = {t.child_frame_id: t for t in out["tf"].transforms}
        assert set(tf) == {frame_of(MODEL.body_names[i]) for i in moving} | set(segments)
        for i in moving:
            t = tf[frame_of(MODEL.body_names[i])]
            parent = MODEL.parent[i]
            assert t.header.frame_id == ("world" if parent < 0 else frame_of(MODEL.body_names[parent]))
            assert stamp_key(t.header.stamp) == key
            # in base_link's axes below it; base_link itself turned back from body_3's
            before = TURN if parent == body3 else np.eye(3)
            after = TURN.T if i == body3 else np.eye(3)
            np.testing.assert_allclose(vec(t.transform.translation), before @ fk.origin_parent[i], **TOL)
            np.testing.assert_allclose(quaternion_matrix(t.transform.rotation),
                                       before @ fk.rotation_parent[i] @ after, **TOL)
        for name, seg in segments.items():             # auxiliary bodies: their world pose
            t = tf[name]
            b = seg.body
            assert t.header.frame_id == frame_of(MODEL.body_names[b])
            R_body, O_body = fk.rotation_world[b] @ (TURN.T if b == body3 else np.eye(3)), fk.origin_world[b]
            np.testing.assert_allclose(O_body + R_body @ vec(t.transform.translation), seg.start, **TOL)
            np.testing.assert_allclose(R_body @ quaternion_matrix(t.transform.rotation), seg.rotation, **TOL)


# ---------------------------------------------------------------------------- 2
@dump_on_failure
def test_late_subscriber_gets_description_model_and_static_frames(ros, system):
    ros.spin_until(lambda: time.monotonic() - system["started"] > 4.0, 10.0)   # nodes up a while
    description = ros.late("/robot_description", String, lambda got: got)[-1].data
    assert "<robot" in description
    assert description == urdf_from_model(MODEL)
    text = ros.late("/charmie/model", String, lambda got: got)[-1].data
    assert model_from_text(text, "charmie/model").n_bodies == 27
    assert text == CHARMIE.read_text(encoding="utf-8")
    static = ros.late("/tf_static", TFMessage, lambda got: got)
    assert any(set(FIXED_BODIES) <= {t.child_frame_id for t in msg.transforms} for msg in static), static
    msg = next(m for m in static if set(FIXED_BODIES) <= {t.child_frame_id for t in m.transforms})
    for t in msg.transforms:
        if t.child_frame_id == "body_3":          # base_link -> the base body's own frame
            assert t.header.frame_id == "base_link"
            np.testing.assert_allclose(quaternion_matrix(t.transform.rotation), TURN, **TOL)
            continue
        i = MODEL.body_index(t.child_frame_id)
        assert t.header.frame_id == MODEL.body_names[MODEL.parent[i]]
        np.testing.assert_allclose(vec(t.transform.translation), MODEL.origin[i], **TOL)
        np.testing.assert_allclose(quaternion_matrix(t.transform.rotation), MODEL.rotation[i], **TOL)


# ---------------------------------------------------------------------------- 3
@dump_on_failure
def test_bad_input_is_counted_never_published_and_the_node_lives_on(ros, system):
    b: Dynamics = system["b"]
    rng = np.random.default_rng(7)
    pos, vel = random_state(rng, 0.42, 0.39)

    # missing_name: a fresh node has no actuator lengths yet
    assert not b.loads_order, "dynamics B evaluated before this test"
    stamp = ros.next_stamp()
    b.publish_joints(stamp, pos, vel)
    assert b.wait_count("missing_name", 1) == 1, b.diagnostics[-1:]
    assert b.diagnostics[-1]["evaluations"] == "0"
    assert stamp_key(stamp) not in b.joint_loads

    key, _ = b.send_state(pos, vel)
    last_valid = dict(pos)
    last_key = key

    def expect_rejected(reason: str, send_bad, bad_stamp: Time | None):
        nonlocal last_key
        base = b.counts_after(len(b.loads_order))
        send_bad()
        # the node keeps only the newest sample (depth 1): the bad one must be taken before
        # the good one is sent
        seen = b.wait_count(reason, base[f"rejected_{reason}"] + 1)
        assert seen == base[f"rejected_{reason}"] + 1, (reason, base, b.diagnostics[-1])
        good = ros.next_stamp()
        # the actuator lengths inside: those of actuator_states are older than stale_timeout
        b.publish_joints(good, last_valid, vel, names=MODEL.input_names)
        assert ros.spin_until(lambda: stamp_key(good) in b.joint_loads
                              and stamp_key(good) in b.actuator_loads, 5.0), \
            f"{reason}: no joint_loads for the valid state after the bad one"
        assert b.wait_count(reason, seen) == seen       # and nothing else was rejected
        if bad_stamp is not None:
            assert stamp_key(bad_stamp) not in b.joint_loads, f"{reason}: loads published for a bad message"
        al = b.actuator_loads[stamp_key(good)]
        echo = dict(zip(al.name, al.position))
        assert all(echo[n] == last_valid[n] for n in MODEL.input_names), (reason, echo)
        assert b.child.alive()
        last_key = stamp_key(good)

    # arrays of different lengths
    s = ros.next_stamp()
    expect_rejected("length_mismatch", lambda: b.pub_joints.publish(joint_state_msg(
        s, JOINT_INPUTS, [pos[n] for n in JOINT_INPUTS][:-1])), s)
    s2 = ros.next_stamp()
    expect_rejected("length_mismatch", lambda: b.pub_joints.publish(joint_state_msg(
        s2, JOINT_INPUTS, [pos[n] for n in JOINT_INPUTS], [0.1, 0.2])), s2)
    # a NaN position
    s = ros.next_stamp()
    bad = dict(pos, theta8a=float("nan"))
    expect_rejected("non_finite", lambda: b.publish_joints(s, bad, vel), s)
    # an unknown name
    s = ros.next_stamp()
    expect_rejected("unknown_name", lambda: b.pub_joints.publish(joint_state_msg(
        s, JOINT_INPUTS + ("not_a_joint",), [pos[n] for n in JOINT_INPUTS] + [0.0])), s)
    # an actuator length outside its stroke, on actuator_states and on joint_states
    expect_rejected("out_of_range", lambda: b.publish_actuators(dict(pos, act4=0.9), vel), None)
    s = ros.next_stamp()
    expect_rejected("out_of_range", lambda: b.publish_joints(s, dict(pos, act4=0.9), vel,
                                                             names=MODEL.input_names), s)
    # a stamp earlier than the last accepted one
    earlier = Time(sec=last_key[0] - 1, nanosec=last_key[1])
    expect_rejected("time_backwards", lambda: b.publish_joints(earlier, pos, vel), earlier)
    # finite but absurd: beyond the model's velocity limit (the loads would overflow)
    s = ros.next_stamp()
    expect_rejected("beyond_limits", lambda: b.publish_joints(s, pos, dict(vel, theta7a=1e200),
                                                              names=MODEL.input_names), s)
    # a joint_states without every joint coordinate (an empty one too)
    s = ros.next_stamp()
    expect_rejected("missing_name", lambda: b.publish_joints(
        s, pos, vel, names=tuple(n for n in MODEL.input_names if n != "theta8a")), s)
    s = ros.next_stamp()
    expect_rejected("missing_name", lambda: b.pub_joints.publish(joint_state_msg(s, (), ())), s)
    # joint coordinates alone, the last actuator_states older than stale_timeout (0.3 s)
    s = ros.next_stamp()
    ros.spin_for(0.4)
    expect_rejected("stale_input", lambda: b.publish_joints(s, pos, vel), s)

    # and a later valid input still gives loads equal to the core's
    pos2, vel2 = random_state(rng)
    key, out = b.send_state(pos2, vel2)
    np.testing.assert_allclose(out["joint_loads"].effort, core(pos2, vel2)[3].coordinate_effort, **TOL)
    assert b.child.alive()


# ---------------------------------------------------------------------------- 4
def set_parameter(ros: Ros, node_name: str, name: str, value) -> None:
    client = ros.node.create_client(SetParameters, f"{node_name}/set_parameters")
    try:
        result = ros.call(client, SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()]))
        assert result.results[0].successful, result.results[0].reason
    finally:
        ros.node.destroy_client(client)


@dump_on_failure
def test_stale_inputs_give_the_safe_feedforward(ros, system):
    c: Dynamics = system["c"]
    rng = np.random.default_rng(11)
    timeout = 0.3
    try:
        for policy in ("gravity", "zero"):
            set_parameter(ros, "/c/dynamics", "stale_policy", policy)
            pos, vel = random_state(rng)
            key, out = c.send_state(pos, vel, settle=0.1)
            full = out["feedforward"]
            np.testing.assert_allclose(full, core(pos, vel)[4], **TOL)
            t_eval = out["feedforward_time"]
            mark = len(c.feedforward)
            # nothing more until the timeout, then the policy's value every watchdog period
            assert ros.spin_until(lambda: len(c.feedforward) >= mark + 3, 3.0), c.feedforward[mark:]
            first_time, first = c.feedforward[mark]
            assert first_time - t_eval > timeout - 0.05, \
                f"{policy}: feedforward changed {first_time - t_eval:.3f} s after the last input"
            assert first_time - t_eval < timeout + 0.5
            expected = core(pos, vel, gravity_only=True)[4] if policy == "gravity" \
                else np.zeros(len(MODEL.input_names))
            assert not np.allclose(expected, full), "the test needs velocities that matter"
            for _, value in c.feedforward[mark:]:
                np.testing.assert_allclose(value, expected, **TOL)

        # a bad input within the timeout holds (republishes) the last valid feedforward
        set_parameter(ros, "/c/dynamics", "stale_policy", "zero")
        pos, vel = random_state(rng)
        key, out = c.send_state(pos, vel, settle=0.1)
        mark = len(c.feedforward)
        bad_stamp = ros.next_stamp()
        c.publish_joints(bad_stamp, dict(pos, theta9a=float("nan")), vel)
        assert ros.spin_until(lambda: len(c.feedforward) > mark, 1.0)
        held_time, held = c.feedforward[mark]
        assert held_time - out["feedforward_time"] < timeout, "no feedforward held within the timeout"
        np.testing.assert_allclose(held, out["feedforward"], **TOL)
        assert stamp_key(bad_stamp) not in c.joint_loads
    finally:
        set_parameter(ros, "/c/dynamics", "stale_policy", "gravity")


# ---------------------------------------------------------------------------- 5
@dump_on_failure
def test_model_loader_reload_and_bad_file(ros, system, ros_env, log_dir, tmp_path):
    original = CHARMIE.read_text(encoding="utf-8")
    assert "    mass: 30.0\n" in original
    heavier = original.replace("    mass: 30.0\n", "    mass: 31.5\n", 1)
    invalid = original.replace("    mass: 30.0\n", "    mass: -1\n", 1)
    model_file = tmp_path / "charmie.yaml"
    model_file.write_text(original, encoding="utf-8")
    bad_file = tmp_path / "bad.yaml"
    bad_file.write_text(invalid, encoding="utf-8")

    # an invalid file at start-up: exit status 1 and the loader's message on stderr
    failing = subprocess.Popen(node_argv("model_loader_node", "-r", "__ns:=/t5bad",
                                         *params(model_file=bad_file)),
                               env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    loader = Child("model_loader_t5", node_argv("model_loader_node", "-r", "__ns:=/t5",
                                                *params(model_file=model_file)), ros_env, log_dir)
    try:
        _, stderr = failing.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        failing.kill()
        _, stderr = failing.communicate()
        pytest.fail(f"model_loader with an invalid file still running after 30 s: {stderr}")
    assert failing.returncode == 1, stderr
    assert "ModelLoaderNode: error:" in stderr and "body_3" in stderr and "mass" in stderr, stderr
    assert "Traceback" not in stderr, stderr

    try:
        ros.watched.append(loader)
        client = ros.node.create_client(Trigger, "/t5/model_loader/reload")
        first = ros.late("/t5/charmie/model", String, lambda got: got, timeout=30.0)[-1].data
        assert first == original
        model_file.write_text(heavier, encoding="utf-8")
        answer = ros.call(client, Trigger.Request(), timeout=30.0)
        assert answer.success, answer.message
        model_file.write_text(invalid, encoding="utf-8")
        answer = ros.call(client, Trigger.Request())
        assert not answer.success
        assert "body_3" in answer.message and "mass" in answer.message, answer.message
        assert loader.alive()
        # a late subscriber still gets the last valid (heavier) model and its URDF
        text = ros.late("/t5/charmie/model", String, lambda got: got)[-1].data
        assert text == heavier
        assert model_from_text(text, "t5").bodies[MODEL.body_index("body_3")].mass == 31.5
        description = ros.late("/t5/robot_description", String, lambda got: got)[-1].data
        assert description == urdf_from_model(model_from_text(heavier, "t5"))
        assert '<mass value="31.5"' in description
    finally:
        ros.watched.remove(loader)
        loader.stop()


# ---------------------------------------------------------------------------- 6
@dump_on_failure
def test_bringup_runs_the_validation_motion(ros_env):
    env = dict(ros_env, ROS_DOMAIN_ID=str(BRINGUP_DOMAIN))
    proc = subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", "bringup",
                           "--mode", "sim", "--duration", "7"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stdout.splitlines() if "joint_loads" in line and "Hz" in line]
    rates = [float(re.search(r"joint_loads\s+([\d.]+) Hz", line).group(1)) for line in lines]
    assert rates and max(rates) > 20.0, proc.stdout
    busy = [line for line, rate in zip(lines, rates) if rate > 20.0]
    assert len(busy) >= 3, proc.stdout
    for line in busy:
        values = {m.group(1): float(m.group(2))
                  for m in re.finditer(r"\b(act4|act5)\s+([+-][\d.]+) N\b", line)}
        assert set(values) == {"act4", "act5"}, line
        assert all(math.isfinite(v) and v != 0.0 for v in values.values()), line


# ---------------------------------------------------------------------------- 7
@dump_on_failure
def test_urdf_names_match_tf_frames_and_joint_loads(ros, system):
    a: Dynamics = system["a"]
    description = ros.late("/robot_description", String, lambda got: got)[-1].data
    static = ros.late("/tf_static", TFMessage, lambda got: got)
    pos, vel = random_state(np.random.default_rng(3))
    key, out = a.send_state(pos, vel)
    edges = {(t.header.frame_id, t.child_frame_id) for msg in static for t in msg.transforms}
    edges |= {(t.header.frame_id, t.child_frame_id) for t in out["tf"].transforms}
    children = {child for _, child in edges}

    root = ET.fromstring(description)
    links = [link.get("name") for link in root.findall("link")]
    assert "world" in links
    for link in links:
        if link != "world":
            assert link in children, f"URDF link {link} is no TF child frame"
    for joint in root.findall("joint"):
        pair = (joint.find("parent").get("link"), joint.find("child").get("link"))
        assert pair in edges, f"URDF joint {joint.get('name')} {pair} is no TF transform"
    moving = [j.get("name") for j in root.findall("joint")
              if j.get("type") in ("revolute", "prismatic", "continuous") and j.find("mimic") is None]
    assert moving
    names = set(out["joint_loads"].name)
    for name in moving:
        assert name in names, f"URDF joint {name} not in joint_loads"


# ---------------------------------------------------------------------------- start-up errors
@pytest.mark.parametrize("args,message", [
    (["-p", "tf_rate:=0"], "tf_rate"),                              # an integer, not a double
    (["-p", "acceleration_source:=fast"], "acceleration_source 'fast'"),
    (["-p", "model_file:=/nonexistent/model.yaml"], "cannot read the model file"),
    (["-p", "joint_name_map:=[theta8a=a, theta9a=a]"], "'theta8a' and 'theta9a' both map to 'a'"),
    (["-p", f"model_file:={CHARMIE}", "-p", "joint_name_map:=[elbow=elbow_joint]"],
     "'elbow' is not an input or coordinate of the model"),
    (["-p", "joint_state_policy:=lenient"], "joint_state_policy 'lenient'"),
])
def test_dynamics_node_start_up_errors_are_one_line(ros_env, args, message):
    """A bad parameter or model file ends the node with exit status 1 and its message."""
    proc = subprocess.run(node_argv("dynamics_node", "-r", "__ns:=/startup", *args),
                          env=ros_env, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "DynamicsNode: error:" in proc.stderr and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------- RViz
#: The message type each RViz display of config/charmie.rviz subscribes with
RVIZ_TYPES = {"rviz_default_plugins/RobotModel": "std_msgs/msg/String",
              "rviz_default_plugins/Effort": "sensor_msgs/msg/JointState",
              "rviz_default_plugins/MarkerArray": "visualization_msgs/msg/MarkerArray",
              "rviz_default_plugins/Wrench": "geometry_msgs/msg/WrenchStamped"}


@dump_on_failure
def test_every_rviz_display_topic_is_published_with_its_type(ros, system):
    """Each topic a display of config/charmie.rviz reads (Topic, Description Topic) has a
    publisher among the running nodes (model_loader and dynamics A, as sim.launch.py starts
    them), of the type that display takes; the frames it names are published; the loads
    carry the frame RViz's Effort display needs."""
    import yaml
    config = yaml.safe_load((Path(__file__).resolve().parent.parent / "config" / "charmie.rviz")
                            .read_text())["Visualization Manager"]
    wanted = set()
    for display in config["Displays"]:
        for key in ("Topic", "Description Topic"):
            if key in display:
                topic_type = RVIZ_TYPES["rviz_default_plugins/RobotModel" if key == "Description Topic"
                                        else display["Class"]]
                wanted.add((display[key]["Value"], topic_type))
    assert len(wanted) == 4, wanted
    published = dict(ros.node.get_topic_names_and_types())
    for topic, topic_type in sorted(wanted):
        assert topic in published and topic_type in published[topic], (topic, published.get(topic))
        assert ros.node.get_publishers_info_by_topic(topic), topic
    assert config["Global Options"]["Fixed Frame"] == "world"
    a: Dynamics = system["a"]
    pos, vel = random_state(np.random.default_rng(11))
    _, out = a.send_state(pos, vel)
    assert out["joint_loads"].header.frame_id == "world"
    assert out["actuator_loads"].header.frame_id == "world"


@dump_on_failure
def test_player_reference_points_carry_the_inverse_dynamics_effort(ros, ros_env, log_dir):
    """The trajectory player's reference_trajectory, the form a joint_trajectory_controller
    takes: every point's effort is the inverse dynamics of its position, velocity and
    acceleration (the core's recursive Newton-Euler, actuator forces in their slots). The
    reference goes out at each start of the (looping, 5 s) motion: the first one after this
    subscriber matched is taken."""
    from trajectory_msgs.msg import JointTrajectory

    from charmie_dynamics.dynamics import inverse_dynamics
    from charmie_dynamics.kinematics import resolve_state
    player = Child("player_p", node_argv("trajectory_player_node", "-r", "__ns:=/p",
                                         *params(rate=50.0, repeat="true")), ros_env, log_dir)
    got: list = []
    sub = ros.node.create_subscription(JointTrajectory, "/p/reference_trajectory", got.append, RELIABLE_DEEP)
    try:
        ros.watched = [player]
        assert ros.spin_until(lambda: got, 60.0), player.tail()
    finally:
        ros.watched = []
        player.stop()
        ros.node.destroy_subscription(sub)
    msg = got[0]
    assert list(msg.joint_names) == list(MODEL.input_names) and len(msg.points) > 100
    for point in msg.points[::97]:
        x, xd, xdd = (np.array(v) for v in (point.positions, point.velocities, point.accelerations))
        loads = inverse_dynamics(MODEL, resolve_state(MODEL, x, xd, xdd))
        expected = np.array(loads.coordinate_effort, dtype=float)
        for k, name in enumerate(ACTUATORS):
            expected[MODEL.input_names.index(name)] = loads.actuator_force[k]
        np.testing.assert_allclose(point.effort, expected, rtol=1e-9, atol=1e-9)
