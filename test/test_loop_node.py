"""The dynamics node and the model loader on a model with loops (issue 13): the five-bar of
seed 002 (config/examples/five_bar.yaml), each node in its own process over real DDS
(helpers: ros_harness.py).

joint_states carries the two actuated angles (the loops' independent coordinates); the node
solves the elbows. The reference values come from the core's closed-chain inverse dynamics
(dynamics/closed_chain.py: mass matrix and bias forces, not the node's loop evaluator) and
forward kinematics, computed in this process. A singular or unassemblable input is counted
(``rejected_loop_singular``) and never published."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from charmie_dynamics import forward_kinematics, load_model  # noqa: E402
from charmie_dynamics.dynamics import closed_chain as cc  # noqa: E402
from charmie_dynamics.mechanisms.closed_chains import ClosedChain  # noqa: E402
from conftest import ROOT  # noqa: E402
from node_process import Child  # noqa: E402
from ros_harness import (RELIABLE, STATUS_NAME, Ros, dump_on_failure,  # noqa: E402,F401
                         joint_state_msg, log_dir, namespaced_dynamics, node_argv, params,
                         quaternion_matrix, ros, ros_env, stamp_key, vec)

FIVE_BAR = ROOT / "config" / "examples" / "five_bar.yaml"
MODEL = load_model(FIVE_BAR)
CHAIN = ClosedChain.build(MODEL)
INDEPENDENT = ("theta1_1", "theta1_2")
NS = "/five_bar"


class LoopNode:
    """The five-bar's dynamics node seen from the test node: its topics under ``NS``."""

    def __init__(self, ros: Ros, child: Child, ns: str = NS) -> None:
        self.ros, self.child = ros, child
        node = ros.node
        NS = ns                                              # noqa: N806 (the topics' namespace)
        self.pub = node.create_publisher(JointState, f"{NS}/joint_states", RELIABLE)
        self.joint_loads: dict = {}
        self.actuator_loads: dict = {}
        self.tf: dict = {}
        self.wrenches: dict = {}
        self.feedforward: list = []
        self.diagnostics: list = []
        self.subs = [
            node.create_subscription(JointState, f"{NS}/joint_loads",
                                     lambda m: self.joint_loads.__setitem__(stamp_key(m.header.stamp), m), RELIABLE),
            node.create_subscription(JointState, f"{NS}/actuator_loads",
                                     lambda m: self.actuator_loads.__setitem__(stamp_key(m.header.stamp), m), RELIABLE),
            node.create_subscription(TFMessage, f"{NS}/tf", self._on_tf, RELIABLE),
            node.create_subscription(WrenchStamped, f"{NS}/joint_wrenches/link1_1",
                                     lambda m: self.wrenches.__setitem__(stamp_key(m.header.stamp), m), RELIABLE),
            node.create_subscription(Float64MultiArray, f"{NS}/feedforward_efforts",
                                     lambda m: self.feedforward.append(np.array(m.data)), RELIABLE),
            node.create_subscription(DiagnosticArray, f"{NS}/diagnostics", self._on_diagnostics, RELIABLE),
        ]

    def _on_tf(self, msg: TFMessage) -> None:
        self.tf[stamp_key(msg.transforms[0].header.stamp)] = msg

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name == STATUS_NAME:
                self.diagnostics.append({kv.key: kv.value for kv in status.values})

    def ready(self) -> bool:
        return self.pub.get_subscription_count() >= 1 and bool(self.diagnostics) \
            and all(sub.get_publisher_count() >= 1 for sub in self.subs)

    def count(self, reason: str) -> int:
        return int(self.diagnostics[-1][f"rejected_{reason}"])

    def wait_count(self, reason: str, at_least: int, timeout: float = 30.0) -> int:
        self.ros.spin_until(lambda: self.count(reason) >= at_least, timeout)
        return self.count(reason)

    def send(self, names, positions, velocities) -> tuple:
        """Publish one joint_states; its stamp key."""
        stamp = self.ros.next_stamp()
        self.pub.publish(joint_state_msg(stamp, names, positions, velocities))
        return stamp_key(stamp)

    def outputs(self, key, timeout: float = 30.0) -> bool:
        return self.ros.spin_until(lambda: key in self.joint_loads and key in self.actuator_loads
                                   and key in self.tf and key in self.wrenches, timeout)


@pytest.fixture(scope="module")
def system(ros, ros_env, log_dir):
    """The model loader and the dynamics node on the five-bar, in namespace ``NS`` (the
    dynamics node's /tf, /tf_static, /diagnostics moved under it)."""
    loader = Child("loop_model_loader", node_argv(
        "model_loader_node", "-r", f"__ns:={NS}", *params(model_file=FIVE_BAR)), ros_env, log_dir)
    # strict: the bad-input test sends partial messages and foreign names as rejections;
    # max_loop_jump 10: its singular inputs lie 0.6 rad from the last (else loop_jump)
    dynamics = namespaced_dynamics(NS[1:], ros_env, log_dir, model_file=FIVE_BAR,
                                   joint_state_policy="strict", max_loop_jump=10.0)
    children = [loader, dynamics]
    try:
        ros.watched = list(children)
        node = LoopNode(ros, dynamics)
        assert ros.spin_until(node.ready, 60.0), "the five-bar's dynamics node is not ready in 60 s"
        yield dict(node=node, loader=loader)
    finally:
        ros.watched = []
        for child in children:
            child.stop()


def world_poses(tf: TFMessage) -> dict:
    """World rotation and origin of every frame, composed from one /tf message."""
    local = {t.child_frame_id: (t.header.frame_id, quaternion_matrix(t.transform.rotation),
                                vec(t.transform.translation)) for t in tf.transforms}
    poses = {"world": (np.eye(3), np.zeros(3))}

    def pose(name: str):
        if name not in poses:
            parent, R, p = local[name]
            R0, O0 = pose(parent)
            poses[name] = (R0 @ R, O0 + R0 @ p)
        return poses[name]
    for name in local:
        pose(name)
    return poses


def close(got, want, atol: float = 1e-9) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=0,
                               atol=atol * max(1.0, float(np.max(np.abs(want)))))


@dump_on_failure
def test_loads_tf_and_loop_closure_equal_the_core(ros, system):
    node: LoopNode = system["node"]
    rng = np.random.default_rng(13)
    start = None
    for k in range(5):
        x = np.radians([45.0 + 4.0 * k, 50.0 - 3.0 * k])
        xd = rng.normal(0.0, 0.5, 2)
        names, positions, velocities = INDEPENDENT, list(x), list(xd)
        if k == 4:            # a dependent name too: accepted and ignored
            names, positions, velocities = names + ("theta2_1",), positions + [3.0], velocities + [9.0]
        mark = len(node.feedforward)
        key = node.send(names, positions, velocities)
        assert node.outputs(key), f"state {k}: no outputs ({node.diagnostics[-1:]})"
        # the feedforward carries no stamp, and its topic may deliver after the loads'
        assert node.ros.spin_until(lambda: len(node.feedforward) > mark, 30.0), \
            f"state {k}: no feedforward"
        ref = cc.inverse_dynamics(CHAIN, x, xd, np.zeros(2), start)   # acceleration_source zero
        start = ref.q
        fk = forward_kinematics(MODEL, ref.q)

        jl = node.joint_loads[key]
        assert tuple(jl.name) == MODEL.coordinate_names
        close(jl.position, ref.q)
        close(jl.velocity, ref.qd)
        expected = np.zeros(MODEL.n_coordinates)
        expected[CHAIN.independent] = ref.effort          # passive elbows: no torque
        close(jl.effort, expected)
        al = node.actuator_loads[key]
        assert tuple(al.name) == INDEPENDENT
        close(al.position, x)
        close(al.velocity, xd)
        close(al.effort, ref.effort)
        close(node.feedforward[-1], ref.effort)

        tf = node.tf[key]
        frames = {t.child_frame_id: t for t in tf.transforms}
        assert set(frames) == set(MODEL.body_names)
        for name in ("link2_1", "link2_2"):              # the dependent joints' links
            i = MODEL.body_index(name)
            t = frames[name]
            assert t.header.frame_id == MODEL.body_names[MODEL.parent[i]]
            close(vec(t.transform.translation), fk.origin_parent[i])
            close(quaternion_matrix(t.transform.rotation), fk.rotation_parent[i])
        poses = world_poses(tf)
        tips = [poses[b][1] + poses[b][0] @ MODEL.point(f"{b}.tip").local
                for b in ("link2_1", "link2_2")]
        np.testing.assert_allclose(tips[0], tips[1], rtol=0, atol=1e-9)   # the loop closes
        w = node.wrenches[key]
        assert w.header.frame_id == "link1_1"
        assert np.isfinite(vec(w.wrench.force)).all() and np.isfinite(vec(w.wrench.torque)).all()
    assert node.count("unknown_name") == 0


@dump_on_failure
def test_singular_unassemblable_and_bad_inputs_are_counted_never_published(ros, system):
    node: LoopNode = system["node"]
    good = np.radians([50.0, 55.0])
    key = node.send(INDEPENDENT, list(good), [0.0, 0.0])
    assert node.outputs(key)
    t1 = np.radians(85.0)
    e1 = 0.6 * np.array([np.cos(t1), np.sin(t1)]) - np.array([0.2, 0.0])   # elbow 1 from base 2
    d0, phi = float(np.linalg.norm(e1)), float(np.arctan2(e1[1], e1[0]))
    singular = [t1, phi + float(np.arccos((d0**2 + 0.49 - 0.01) / (1.4 * d0)))]  # elbows 0.1 m apart
    apart = [t1, phi]                                   # elbows 0.084 m apart: the loop cannot close
    bad = [("loop_singular", INDEPENDENT, singular), ("loop_singular", INDEPENDENT, apart),
           ("non_finite", INDEPENDENT, [float("nan"), 0.5]),
           ("missing_name", INDEPENDENT[:1], [0.5]),
           ("unknown_name", INDEPENDENT + ("act4",), [0.8, 0.9, 0.4])]
    for reason, names, positions in bad:
        before = node.count(reason)
        key = node.send(names, positions, [0.0] * len(names))
        assert node.wait_count(reason, before + 1) == before + 1, (reason, node.diagnostics[-1])
        assert key not in node.joint_loads and key not in node.actuator_loads \
            and key not in node.tf and key not in node.wrenches, reason
        assert all(np.isfinite(f).all() for f in node.feedforward)
        assert node.child.alive()
    # and the next valid input (near the last valid one) is evaluated as before
    x = np.radians([51.0, 55.0])
    key = node.send(INDEPENDENT, list(x), [0.0, 0.0])
    assert node.outputs(key)
    close(node.actuator_loads[key].effort, cc.inverse_dynamics(CHAIN, x, np.zeros(2), np.zeros(2)).effort)


@dump_on_failure
def test_stale_inputs_give_gravity_compensation_of_the_loop(ros, system):
    """stale_policy gravity (stale_timeout 0.3 s): the watchdog's feedforward is the closed
    chain's gravity compensation at the last valid positions."""
    node: LoopNode = system["node"]
    x = np.radians([52.0, 56.0])
    key = node.send(INDEPENDENT, list(x), [0.4, -0.3])
    assert node.outputs(key)
    mark = len(node.feedforward)
    gravity = cc.inverse_dynamics(CHAIN, x, np.zeros(2), np.zeros(2)).effort
    assert ros.spin_until(lambda: any(np.allclose(f, gravity, rtol=0, atol=1e-9 * np.abs(gravity).max())
                                      for f in node.feedforward[mark:]), 3.0), node.feedforward[mark:]


@dump_on_failure
def test_model_loader_publishes_the_spanning_tree_urdf(ros, system):
    text = ros.late(f"{NS}/charmie/model", String, lambda got: got)[-1].data
    assert text == FIVE_BAR.read_text(encoding="utf-8")
    description = ros.late(f"{NS}/robot_description", String, lambda got: got)[-1].data
    assert "URDF cannot express them" in description and "end_effector" in description
    robot = ET.fromstring(description)
    assert {link.get("name") for link in robot.iter("link")} == {"world", *MODEL.body_names}
    joints = {j.get("name"): j for j in robot.iter("joint")}
    assert set(joints) == set(MODEL.coordinate_names)    # the tree's joints, no cut joint
    assert all(j.get("type") == "continuous" for j in joints.values())


def test_dynamics_node_refuses_loops_that_cannot_assemble(ros_env, tmp_path):
    """Leg 2's base 10 m away: the loop cannot close at the file's guess; the node ends at
    start-up with one line naming the loop (exit status 1), as validate-model does."""
    import subprocess
    apart = tmp_path / "apart.yaml"
    apart.write_text(FIVE_BAR.read_text().replace("origin: [0.2, 0, 0]", "origin: [10, 0, 0]"))
    proc = subprocess.run(node_argv("dynamics_node", "-r", "__ns:=/loops_apart_dynamics",
                                    *params(model_file=apart)),
                          env=ros_env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "DynamicsNode: error:" in proc.stderr and "cannot be assembled" in proc.stderr, \
        proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


@dump_on_failure
def test_far_inputs_are_reached_while_the_watchdog_keeps_the_last_valid_gravity(ros, ros_env,
                                                                                 log_dir):
    """max_loop_jump 0.5 (its default), stale_timeout 0.2 s: one valid input, then an input
    1.2 rad away four times, each after the node went stale. The attacks: the watchdog's
    gravity compensation at the last valid input was itself a jump (zeros published, an
    exception that ended the node before that), and its calls walked the solution back, so
    that far inputs slower than the watchdog were never reached. Now the watchdog publishes
    the closed chain's gravity compensation at the last valid input between them, and the
    fourth far input (remembered, followed 0.5, followed 0.5, then 0.2 away) is evaluated."""
    child = namespaced_dynamics("lj", ros_env, log_dir, model_file=FIVE_BAR, stale_timeout=0.2,
                                diagnostics_period=0.1)
    try:
        ros.watched = [child]
        node = LoopNode(ros, child, "/lj")
        assert ros.spin_until(node.ready, 60.0)
        good, zero, rates = np.radians([50.0, 55.0]), np.zeros(2), np.array([0.4, -0.3])
        assert node.outputs(node.send(INDEPENDENT, list(good), list(rates)))
        gravity = cc.inverse_dynamics(CHAIN, good, zero, zero).effort
        # the input's own feedforward (held before the node goes stale) is not the gravity's
        assert not np.allclose(cc.inverse_dynamics(CHAIN, good, rates, zero).effort, gravity,
                               rtol=0, atol=1e-6 * np.abs(gravity).max())
        far = good + 1.2
        for k in range(3):
            mark = len(node.feedforward)
            node.send(INDEPENDENT, list(far), [0.0, 0.0])
            assert node.wait_count("loop_jump", k + 1) == k + 1, node.diagnostics[-1]
            assert ros.spin_until(lambda: any(np.allclose(f, gravity, rtol=0, atol=1e-9 * np.abs(gravity).max())
                                              for f in node.feedforward[mark:]), 3.0), node.feedforward[mark:]
        key = node.send(INDEPENDENT, list(far), [0.0, 0.0])
        assert node.outputs(key), node.diagnostics[-1]
        close(node.actuator_loads[key].effort, cc.inverse_dynamics(CHAIN, far, zero, zero).effort)
        assert child.alive() and int(node.diagnostics[-1]["gravity_fallback_zero"]) == 0
        assert all(np.isfinite(f).all() for f in node.feedforward)
    finally:
        ros.watched = []
        child.stop()


@dump_on_failure
def test_dependent_coordinates_beyond_their_limits_are_rejected(ros, ros_env, log_dir, tmp_path):
    """theta2_1 limited to 95 deg: an input whose solved theta2_1 is beyond it (105 deg, the
    core's solution, checked here) is counted as ``dependent_beyond_limits`` and not published; one
    within is evaluated."""
    limited = tmp_path / "limited.yaml"
    limited.write_text(FIVE_BAR.read_text().replace(
        "coordinate: theta2_1}", "coordinate: theta2_1, limits: {lower: -170, upper: 95}}"))
    model = load_model(limited)
    chain = ClosedChain.build(model)
    within, beyond = np.radians([50.0, 55.0]), np.radians([45.0, 55.0])
    theta2_1 = model.coordinate_names.index("theta2_1")
    assert chain.positions(within)[theta2_1] < np.radians(95.0) - 0.01
    assert chain.positions(beyond)[theta2_1] > np.radians(95.0) + 0.01
    child = namespaced_dynamics("limits", ros_env, log_dir, model_file=str(limited),
                                diagnostics_period=0.1, max_loop_jump=10.0)
    try:
        ros.watched = [child]
        node = LoopNode(ros, child, "/limits")
        assert ros.spin_until(node.ready, 60.0)
        assert node.outputs(node.send(INDEPENDENT, list(within), [0.0, 0.0]))
        key = node.send(INDEPENDENT, list(beyond), [0.0, 0.0])
        assert node.wait_count("dependent_beyond_limits", 1) == 1, node.diagnostics[-1]
        ros.spin_for(0.3)
        assert key not in node.joint_loads and child.alive()
        assert node.outputs(node.send(INDEPENDENT, list(within), [0.0, 0.0]))
    finally:
        ros.watched = []
        child.stop()
