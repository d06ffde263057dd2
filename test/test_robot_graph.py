"""The dynamics node on a ros2_control robot's graph, over real DDS, every node its own process
(stand-ins in robot_standins.py):

* two joint_state_broadcasters share /joint_states: one at 500 Hz with the arms' joints and
  the four wheels, one at 100 Hz with the claws, the neck, both linear actuators (in
  millimetres from another zero) and the claws' fingers; every model name under a hardware
  name (joint_map_file);
* the base controller publishes /odom and odom -> base_link on /tf;
* robot_state_publisher publishes /robot_description and the frames of the designers' URDF
  (test/data/charmie_robot: its own link and joint names, base_link REP 103) for the joints
  it gets on /joint_states;
* the dynamics node: merge policy, that URDF's joint map (names, the actuators' units,
  links), odometry_topic odom, publish_tf not_in_urdf, publish_solved_joint_states,
  publish_base_transform false, base_frame base_link, world_frame odom.

Checked: every message is accounted for (evaluated, or counted by reason while the second
publisher or the odometry had not been heard yet; the node's own solved joint states skipped
and counted apart), the feedforward equals the core's inverse dynamics for the merged state
the node reports to 1e-9, its stamped copy is the same numbers, no frame on /tf or
/tf_static has two publishers and every frame reaches odom through one parent chain (one
TF tree), robot_state_publisher places the solved lower body and torso from the node's
message, /joint_states holds every movable joint of the URDF, robot_description has one
publisher, the loads carry a frame, completed_joint_states every coordinate in hardware
names and units.
"""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from conftest import CHARMIE  # noqa: E402
from node_process import Child  # noqa: E402
from robot_graph_config import (FINGERS, ROBOT_MAP, ROBOT_URDF, WHEELS, broadcasters,  # noqa: E402
                                copies_out_of_order, frame_chains, movable_joints, robot_map)
from ros_harness import (LATE, MODEL, STATUS_NAME, core, dump_on_failure,  # noqa: E402,F401
                         log_dir, node_argv, params, ros, ros_env, stamp_key)

HERE = Path(__file__).resolve().parent
JOINT_MAP = robot_map()          # actuators in mm from 0.33 m: model = mm / 1000 + 0.33
HARDWARE = dict(JOINT_MAP.hardware)
SOLVED = {"lift_joint", "torso_pitch_joint"}       # d4, theta5: the node's


@pytest.fixture(scope="module")
def graph(ros, ros_env, log_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("robot_graph")

    def config(name: str, value: dict) -> str:
        path = folder / f"{name}.json"
        path.write_text(json.dumps(value))
        return str(path)
    fast, slow = broadcasters(MODEL, JOINT_MAP, frequency=0.2)
    standin = lambda role, cfg: [sys.executable, str(HERE / "robot_standins.py"), role, cfg]  # noqa: E731
    dynamics = Child("graph_dynamics", node_argv("dynamics_node", *params(
        model_file=CHARMIE, joint_map_file=str(ROBOT_MAP), odometry_topic="odom",
        publish_tf="not_in_urdf", publish_solved_joint_states="true",
        publish_base_transform="false", base_frame="base_link",
        world_frame="odom", acceleration_source="zero", output_rate=100.0, tf_rate=50.0,
        max_joint_age=1.0, stale_timeout=1.0, diagnostics_period=0.2)), ros_env, log_dir)
    children = [dynamics]
    received = defaultdict(list)
    tf_sources = defaultdict(set)                      # child frame -> {(publisher, parent)}
    last_tf = received["last_tf"] = {}                 # child frame -> its last transform

    def on_tf(msg, info):
        gid = bytes(info["publisher_gid"]["data"]) if info.get("publisher_gid") else None
        for t in msg.transforms:
            tf_sources[t.child_frame_id].add((gid, t.header.frame_id))
            last_tf[t.child_frame_id] = t
    joint_state_names: set = set()                     # every name heard on /joint_states
    def on_joint_states(msg):
        received["joint_states"].append(msg)
        joint_state_names.update(msg.name)
        if set(msg.name) == SOLVED:               # the node's own (publish_solved_joint_states)
            received["solved_count"].append(1)
    node = ros.node
    # deep queues: this process reads ~1,500 messages a second and must lose none
    deep = QoSProfile(depth=2000, reliability=ReliabilityPolicy.RELIABLE)
    subs = [node.create_subscription(JointState, "feedforward_states",
                                     received["feedforward_states"].append, deep),
            node.create_subscription(Float64MultiArray, "feedforward_efforts",
                                     received["feedforward"].append, deep),
            node.create_subscription(JointState, "actuator_loads", received["actuator_loads"].append, deep),
            node.create_subscription(JointState, "joint_loads", received["joint_loads"].append, deep),
            node.create_subscription(JointState, "completed_joint_states",
                                     received["completed"].append, deep),
            node.create_subscription(JointState, "/joint_states", on_joint_states, deep),
            node.create_subscription(DiagnosticArray, "/diagnostics", received["diagnostics"].append, deep),
            node.create_subscription(TFMessage, "/tf", on_tf, deep),
            node.create_subscription(TFMessage, "/tf_static", on_tf, LATE)]
    try:
        ros.watched = children
        # the robot's nodes start once the dynamics node has its model (its diagnostics
        # name it): their first messages would otherwise wait for the model
        def has_model():
            return any(status(received).get("model", "none") != "none"
                       for _ in received["diagnostics"][-1:])
        assert ros.spin_until(has_model, 60.0)
        children += [Child("jsb_fast", standin("broadcaster", config("fast", fast)), ros_env, log_dir),
                     Child("jsb_slow", standin("broadcaster", config("slow", slow)), ros_env, log_dir),
                     Child("base_controller", standin("odometry", config("odom", dict(rate=50.0))),
                           ros_env, log_dir),
                     Child("rsp", standin("rsp", config("rsp", dict(urdf=ROBOT_URDF.read_text()))),
                           ros_env, log_dir)]
        ros.watched = children
        # every stand-in heard (robot_state_publisher's frames too, both broadcasters by this
        # reader: a loaded machine can match this process to one of them seconds after the
        # dynamics node), 200 evaluations, and as many of their copies and solved joint
        # states as the tests below look at (waited on, never a fixed time)
        movable = movable_joints(ROBOT_URDF.read_text())
        assert ros.spin_until(lambda: len(received["actuator_loads"]) >= 200
                              and len(received["feedforward_states"]) >= 200
                              and len(received["solved_count"]) >= 20
                              and movable <= joint_state_names
                              and {"left_arm_link_1", "left_arm_mount_link", "base_link",
                                   "lift_link", "act4"} <= set(tf_sources), 180.0), \
            ({k: len(v) for k, v in received.items()}, sorted(tf_sources),
             sorted(movable - joint_state_names))
        received["description_publishers"] = node.get_publishers_info_by_topic("/robot_description")
        for child in children[1:]:
            child.stop()                                # inputs end; the counts settle
        ros.watched = [dynamics]
        ros.spin_for(0.6)
        mark = len(received["diagnostics"])
        assert ros.spin_until(lambda: len(received["diagnostics"]) > mark + 1, 5.0)
        yield received, tf_sources
    finally:
        ros.watched = []
        for child in children:
            child.stop()
        for sub in subs:
            node.destroy_subscription(sub)


def status_values(msg: DiagnosticArray) -> dict:
    """The dynamics node's status values in one message ({} for another node's)."""
    for s in msg.status:
        if s.name == STATUS_NAME:
            return {kv.key: kv.value for kv in s.values}
    return {}


def status(received) -> dict:
    """The dynamics node's last status values ({} before the first)."""
    return next(filter(None, map(status_values, reversed(received["diagnostics"]))), {})


@dump_on_failure
def test_every_merged_message_is_evaluated_or_counted(graph):
    received, _ = graph
    values = status(received)
    evaluated, taken = int(values["evaluations"]), int(values["received_joint_states"])
    rejected = {k[len("rejected_"):]: int(v) for k, v in values.items()
                if k.startswith("rejected_") and int(v)}
    # before the first message of each publisher and of the odometry: missing_name, never
    # again once evaluations began; joint_too_old only where a broadcaster starved on a
    # loaded machine fell more than max_joint_age (1 s) behind the other
    assert set(rejected) <= {"missing_name", "joint_too_old"}, rejected
    snapshots = [v for v in map(status_values, received["diagnostics"]) if v]
    first = next(v for v in snapshots if int(v["evaluations"]) > 0)
    assert first["rejected_missing_name"] == values["rejected_missing_name"], (first, values)
    assert evaluated + sum(rejected.values()) == taken, values
    assert evaluated >= 200
    assert values["ignored_joint_names"] == ", ".join(sorted(WHEELS + FINGERS))
    assert int(values["messages_with_ignored_names"]) == taken
    assert int(values["solved_joint_states_skipped"]) > 0      # its own, not counted above


@dump_on_failure
def test_feedforward_is_the_core_for_the_merged_state_and_its_stamped_copy(graph):
    received, _ = graph
    names = [HARDWARE.get(n, n) for n in MODEL.input_names]
    copies = defaultdict(list)
    for msg in received["feedforward_states"]:
        assert list(msg.name) == names
        copies[stamp_key(msg.header.stamp)].append(np.array(msg.effort))
    # the copy holds what was sent on the feedforward topic, in order: every copy whose
    # original this reader received comes in the same order (a loaded reader misses runs of
    # either topic: copies_out_of_order), and at least 100 of them
    sent = [list(m.data) for m in received["feedforward"]]
    copied = [list(m.effort) for m in received["feedforward_states"]]
    disordered, matched = copies_out_of_order(sent, copied)
    assert disordered == 0 and matched >= 100, (disordered, matched, len(copied), len(sent))
    checked = 0
    for msg in received["actuator_loads"]:
        assert list(msg.name) == names and msg.header.frame_id == "base_link"
        by_name = dict(zip(MODEL.input_names, zip(msg.position, msg.velocity)))
        pos = {n: p for n, (p, _) in by_name.items()}
        vel = {n: v for n, (_, v) in by_name.items()}
        assert 0.0 < pos["act4"] < 140.0                # published as the hardware reports it
        JOINT_MAP.convert(pos, vel)                     # mm from 0.33 m -> m
        if stamp_key(msg.header.stamp) not in copies:
            # the node's writers keep the last 10 samples (reliable, as robot_state_publisher's):
            # at 500 Hz a copy can be overwritten before a loaded reader takes it (CI: one)
            continue
        *_, efforts = core(pos, vel)
        np.testing.assert_allclose(copies[stamp_key(msg.header.stamp)][0], efforts,
                                   rtol=1e-9, atol=1e-9)
        checked += 1
    # every copy this reader received is the core's; how many it received depends on its
    # load (beside two busy loops: 122 of 203), so only enough of them are required
    assert checked >= 100, (checked, len(received["actuator_loads"]))


@dump_on_failure
def test_one_tf_tree_beside_rsp_and_odometry(graph, ros):
    received, tf_sources = graph
    shared = {frame: sources for frame, sources in tf_sources.items()
              if len({gid for gid, _ in sources}) != 1}
    assert not shared, shared
    parents = {frame: {parent for _, parent in sources} for frame, sources in tf_sources.items()}
    assert parents["base_link"] == {"odom"}
    assert frame_chains(parents) == {}
    # robot_state_publisher places the solved lower body and torso (the node's joint
    # states); the node only what no URDF joint describes: actuators, springs, balancers
    links = {e.get("name") for e in ET.fromstring(ROBOT_URDF.read_text()).iter("link")}
    publisher = {frame: next(iter(sources))[0] for frame, sources in tf_sources.items()}
    rsp = publisher["left_arm_link_1"]
    if rsp is not None:          # the sender's gid (Kilted; Jazzy's MessageInfo has none)
        assert publisher["lift_link"] == publisher["torso_link"] == rsp
        assert {f for f, gid in publisher.items() if gid == publisher["act4"]} \
            == set(parents) - links - {"odom"}
    ours = set(parents) - links - {"odom"}         # no URDF link: the node's frames
    assert {"act4", "act5", "spring_5s"} <= ours and {"lift_link", "torso_link"} <= set(parents)
    # ... hung from the robot's links (or from one another: a balancer's hanger on its lever)
    links = set(JOINT_MAP.links.values()) | ours
    assert all(parents[frame] <= links for frame in ours), {f: parents[f] for f in ours}
    # the lift actuator starts at body_3's E3, which the model gives with y forward; in
    # REP 103's base_link x is forward: (y, -x, z)
    e3 = MODEL.bodies[MODEL.body_index("body_3")].points["E3"]
    start = received["last_tf"]["act4"].transform.translation
    np.testing.assert_allclose([start.x, start.y, start.z], [e3[1], -e3[0], e3[2]], atol=1e-9)
    assert [p.node_name for p in received["description_publishers"]] == ["robot_state_publisher"]
    for msg in received["joint_loads"][:5]:
        assert msg.header.frame_id == "base_link"
    completed = received["completed"][-1]
    assert list(completed.name) == [HARDWARE.get(n, n) for n in MODEL.coordinate_names]
    assert len(completed.position) == MODEL.n_coordinates and not completed.effort


@dump_on_failure
def test_joint_states_hold_every_movable_urdf_joint(graph):
    """The broadcasters' joints and the node's solved ones: MoveIt's current state is complete;
    the node's message carries the completed state's values at the evaluated input's stamp."""
    received, _ = graph
    names = set().union(*(set(m.name) for m in received["joint_states"]))
    assert movable_joints(ROBOT_URDF.read_text()) <= names, \
        movable_joints(ROBOT_URDF.read_text()) - names
    solved = [m for m in received["joint_states"] if set(m.name) == SOLVED]
    assert len(solved) >= 20               # tf_rate 50 Hz for the 200 evaluations
    completed = {stamp_key(m.header.stamp): dict(zip(m.name, m.position)) for m in received["completed"]}
    matched = 0
    for msg in solved:
        key = stamp_key(msg.header.stamp)
        if key in completed:              # the same evaluation (a loaded reader may miss one)
            assert dict(zip(msg.name, msg.position)) == {n: completed[key][n] for n in msg.name}
            matched += 1
    assert matched >= 0.9 * len(solved)
