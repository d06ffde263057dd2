"""The dynamics node on a ros2_control robot's graph, over real DDS, every node its own process
(stand-ins in robot_standins.py):

* two joint_state_broadcasters share /joint_states: one at 500 Hz with the arms' joints and
  the four wheels, one at 100 Hz with the claws, the neck, both linear actuators (in
  millimetres from another zero) and the claws' fingers; every model name under a hardware
  name (joint_map_file);
* the base controller publishes /odom and odom -> base_link on /tf;
* robot_state_publisher publishes /robot_description and the URDF joints it gets on
  /joint_states;
* the dynamics node: merge policy, odometry_topic odom, publish_tf not_in_urdf,
  publish_base_transform false, base_frame base_link, world_frame odom.

Checked: every message is accounted for (evaluated, or counted by reason while the second
publisher or the odometry had not been heard yet), the feedforward equals the core's inverse
dynamics for the merged state the node reports to 1e-9, its stamped copy is the same numbers,
no frame on /tf or /tf_static has two publishers and base_link one parent, robot_description
one publisher, the loads carry a frame, completed_joint_states every coordinate in hardware
names.
"""
from __future__ import annotations

import json
import sys
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

from charmie_dynamics.export.urdf import urdf_from_model  # noqa: E402
from charmie_dynamics.ros.joint_map import JointMap  # noqa: E402
from conftest import CHARMIE  # noqa: E402
from node_process import Child  # noqa: E402
from robot_graph_config import (BASE, FINGERS, WHEELS, broadcasters, copies_in_order,  # noqa: E402
                                state_publisher_joints)
from ros_harness import (LATE, MODEL, STATUS_NAME, core,  # noqa: E402,F401
                         dump_on_failure, log_dir, node_argv, params, ros, ros_env, stamp_key)

HERE = Path(__file__).resolve().parent
HARDWARE = {n: f"charmie/{n}_joint" for n in MODEL.input_names if n not in BASE}
MM, ZERO = 1000.0, 0.3          # actuators reported in mm from 0.3 m: model = mm / 1000 + 0.3
JOINT_MAP = JointMap(HARDWARE, {a: 1 / MM for a in MODEL.actuator_names},
                     {a: ZERO for a in MODEL.actuator_names})


@pytest.fixture(scope="module")
def graph(ros, ros_env, log_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("robot_graph")

    def config(name: str, value: dict) -> str:
        path = folder / f"{name}.json"
        path.write_text(json.dumps(value))
        return str(path)
    joint_map = folder / "joint_map.yaml"
    joint_map.write_text(json.dumps({"names": HARDWARE, "scale": dict(JOINT_MAP.scale),
                                     "offset": dict(JOINT_MAP.offset)}))
    fast, slow = broadcasters(MODEL, JOINT_MAP, frequency=0.2)
    standin = lambda role, cfg: [sys.executable, str(HERE / "robot_standins.py"), role, cfg]  # noqa: E731
    dynamics = Child("graph_dynamics", node_argv("dynamics_node", *params(
        model_file=CHARMIE, joint_map_file=str(joint_map), odometry_topic="odom",
        publish_tf="not_in_urdf", publish_base_transform="false", base_frame="base_link",
        world_frame="odom", acceleration_source="zero", output_rate=100.0, tf_rate=50.0,
        max_joint_age=1.0, stale_timeout=1.0, diagnostics_period=0.2)), ros_env, log_dir)
    children = [dynamics]
    received = defaultdict(list)
    tf_sources = defaultdict(set)                      # child frame -> {(publisher, parent)}

    def on_tf(msg, info):
        gid = bytes(info["publisher_gid"]["data"]) if info.get("publisher_gid") else None
        for t in msg.transforms:
            tf_sources[t.child_frame_id].add((gid, t.header.frame_id))
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
            node.create_subscription(DiagnosticArray, "/diagnostics", received["diagnostics"].append, deep),
            node.create_subscription(TFMessage, "/tf", on_tf, deep),
            node.create_subscription(TFMessage, "/tf_static", on_tf, LATE)]
    try:
        ros.watched = children
        # the robot's nodes start once the dynamics node has its model (its diagnostics
        # name it): their first messages would otherwise be no_model
        def has_model():
            return any(status(received).get("model", "none") != "none"
                       for _ in received["diagnostics"][-1:])
        assert ros.spin_until(has_model, 60.0)
        children += [Child("jsb_fast", standin("broadcaster", config("fast", fast)), ros_env, log_dir),
                     Child("jsb_slow", standin("broadcaster", config("slow", slow)), ros_env, log_dir),
                     Child("base_controller", standin("odometry", config("odom", dict(rate=50.0))),
                           ros_env, log_dir),
                     Child("rsp", standin("rsp", config("rsp", dict(
                               urdf=urdf_from_model(MODEL), joints=state_publisher_joints(MODEL, JOINT_MAP)))),
                           ros_env, log_dir)]
        ros.watched = children
        # every stand-in heard (robot_state_publisher's frames too), and 200 evaluations
        assert ros.spin_until(lambda: len(received["actuator_loads"]) >= 200
                              and {"body_7a", "body_6a", "base_link"} <= set(tf_sources), 60.0), \
            ({k: len(v) for k, v in received.items()}, sorted(tf_sources))
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


@dump_on_failure
def test_feedforward_is_the_core_for_the_merged_state_and_its_stamped_copy(graph):
    received, _ = graph
    names = [HARDWARE.get(n, n) for n in MODEL.input_names]
    copies = defaultdict(list)
    for msg in received["feedforward_states"]:
        assert list(msg.name) == names
        copies[stamp_key(msg.header.stamp)].append(np.array(msg.effort))
    # the copy holds what was sent on the feedforward topic, in order: the writers keep the
    # last 10 samples, so a loaded reader can miss a message of either topic (seen on Jazzy's
    # run: 1167 of each, one pair apart). Matched in order, each copy looked for among the
    # next 20 sent: at least 90 % of the copies found, and as many copies as 90 % of the sent
    sent = [list(m.data) for m in received["feedforward"]]
    copied = [list(m.effort) for m in received["feedforward_states"]]
    matched = copies_in_order(sent, copied)
    assert matched >= 0.9 * len(copied) and len(copied) >= 0.9 * len(sent), (matched, len(copied),
                                                                            len(sent))
    checked = 0
    for msg in received["actuator_loads"]:
        assert list(msg.name) == names and msg.header.frame_id == "base_link"
        by_name = dict(zip(MODEL.input_names, zip(msg.position, msg.velocity)))
        pos = {n: p for n, (p, _) in by_name.items()}
        vel = {n: v for n, (_, v) in by_name.items()}
        assert 0.33 < pos["act4"] < 0.47                # mm from another zero, converted
        if stamp_key(msg.header.stamp) not in copies:
            # the node's writers keep the last 10 samples (reliable, as robot_state_publisher's):
            # at 500 Hz a copy can be overwritten before a loaded reader takes it (CI: one)
            continue
        *_, efforts = core(pos, vel)
        np.testing.assert_allclose(copies[stamp_key(msg.header.stamp)][0], efforts,
                                   rtol=1e-9, atol=1e-9)
        checked += 1
    assert checked >= 0.9 * len(received["actuator_loads"]) and checked >= 150


@dump_on_failure
def test_one_authority_per_frame_beside_rsp_and_odometry(graph, ros):
    received, tf_sources = graph
    shared = {frame: sources for frame, sources in tf_sources.items()
              if len({gid for gid, _ in sources}) != 1}
    assert not shared, shared
    assert {parent for _, parent in tf_sources["base_link"]} == {"odom"}
    ours = {frame for frame, sources in tf_sources.items()
            if any(parent == "base_link" for _, parent in sources) and frame == "body_4"}
    assert ours == {"body_4"}                           # the solved lower body hangs there
    for frame in ("body_4", "body_5", "act4", "act5", "body_7a", "body_6a"):
        assert frame in tf_sources, (frame, sorted(tf_sources))
    assert [p.node_name for p in received["description_publishers"]] == ["robot_state_publisher"]
    for msg in received["joint_loads"][:5]:
        assert msg.header.frame_id == "base_link"
    completed = received["completed"][-1]
    assert list(completed.name) == [HARDWARE.get(n, n) for n in MODEL.coordinate_names]
    assert len(completed.position) == MODEL.n_coordinates and not completed.effort
