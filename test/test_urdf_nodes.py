"""The nodes with URDF models (issue 12 item 6), over real DDS in separate processes.

* The model loader reads CHARMIE as ``charmie-dynamics export-urdf`` writes it (a URDF and
  its mechanism overlay) and publishes robot_description (the URDF as read) and, on its
  model topic, the model document of URDF + overlay. Dynamics node /ut takes the model
  topic; dynamics node /u (beside the loader) builds its model from robot_description and
  the same overlay file. Both must give the YAML model's feedforward to 1e-9.
* Dynamics node /e starts from robot_description alone: example-robot-data's UR5 URDF (no
  overlay) published by the test, then hostile texts, each counted as ``bad_model``, and a
  different robot (the Panda), held by ``accept_model_updates: once``.
* Dynamics node /s: a URDF whose names hold '/', '-' and '.', started without
  ``wrench_joints``: names on joint_loads and TF as in the URDF, the base body's wrench on
  its topic.
"""
from __future__ import annotations

import importlib.metadata
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from geometry_msgs.msg import WrenchStamped  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from charmie_dynamics.dynamics import inverse_dynamics  # noqa: E402
from charmie_dynamics.export.urdf import overlay_from_model, urdf_from_model  # noqa: E402
from charmie_dynamics.kinematics import inputs_from_dict, resolve_state  # noqa: E402
from charmie_dynamics.model import load_model  # noqa: E402
from conftest import CHARMIE  # noqa: E402
from node_process import Child  # noqa: E402
from ros_harness import (LATE, MODEL, RELIABLE, TOL, Dynamics, core,  # noqa: E402,F401
                         dump_children, dump_on_failure, log_dir, namespaced_dynamics, node_argv,
                         params, quaternion_matrix, random_state, ros, ros_env, stamp_key, vec)


def _erd(name: str) -> Path:
    files = importlib.metadata.files("example-robot-data") or []
    return next(Path(f.locate()) for f in files if str(f).endswith(f"/urdf/{name}"))


UR5 = _erd("ur5_robot.urdf")
PANDA = _erd("panda.urdf")
NO_FILE = "''"                     # model_file: '' (the model comes from a topic)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """CHARMIE's URDF and overlay, as ``charmie-dynamics export-urdf`` writes them."""
    d = tmp_path_factory.mktemp("export")
    (d / "charmie.urdf").write_text(urdf_from_model(MODEL, include_auxiliary=False))
    (d / "overlay.yaml").write_text(yaml.safe_dump(overlay_from_model(MODEL), sort_keys=False))
    return d / "charmie.urdf", d / "overlay.yaml"


@pytest.fixture(scope="module")
def nodes(ros, ros_env, log_dir, exported):
    urdf, overlay = exported
    children = [
        Child("model_loader_u", node_argv("model_loader_node", "-r", "__ns:=/u", *params(
            model_file=urdf, overlay_file=overlay)), ros_env, log_dir),
        # stale_timeout long: the feedforward compared is the evaluation's, not the watchdog's
        namespaced_dynamics("ut", ros_env, log_dir, model_file=NO_FILE, model_topic="/u/charmie/model",
                            stale_timeout=1000.0),
        namespaced_dynamics("u", ros_env, log_dir, model_file=NO_FILE, model_source="robot_description",
                            overlay_file=overlay, stale_timeout=1000.0),
        # no wrench_joints: the default publishes the UR5's base body's wrench
        namespaced_dynamics("e", ros_env, log_dir, model_file=NO_FILE, model_source="robot_description",
                            diagnostics_period=0.05, stale_timeout=1000.0),
    ]
    try:
        ros.watched = list(children)
        ut = Dynamics(ros, children[1], "/ut", with_tf=False)
        u = Dynamics(ros, children[2], "/u", with_tf=False)
        e = Dynamics(ros, children[3], "/e", with_tf=False)
        description = ros.node.create_publisher(String, "/e/robot_description", LATE)
        ok = ros.spin_until(lambda: ut.ready() and u.ready()
                            and description.get_subscription_count() >= 1, 90.0)
        if not ok:
            dump_children()
        assert ok, f"nodes not ready in 90 s: ut {ut.ready()}, u {u.ready()}"
        yield dict(ut=ut, u=u, e=e, description=description)
    finally:
        ros.watched = []
        for child in children:
            child.stop()


# ---------------------------------------------------------------------------- CHARMIE as URDF
@dump_on_failure
def test_urdf_with_overlay_gives_the_yaml_models_feedforward(ros, nodes, exported):
    urdf, _ = exported
    description = ros.late("/u/robot_description", String, lambda got: got)[-1].data
    assert description == urdf.read_text()                      # the URDF as read
    rng = np.random.default_rng(612)
    for name in ("ut", "u"):
        d: Dynamics = nodes[name]
        for _ in range(3):
            pos, vel = random_state(rng)
            _, out = d.send_state(pos, vel)
            x, xd, state, loads, efforts = core(pos, vel)      # the YAML model's
            np.testing.assert_allclose(out["feedforward"], efforts, **TOL, err_msg=name)
            np.testing.assert_allclose(out["joint_loads"].effort, loads.coordinate_effort,
                                       **TOL, err_msg=name)
    for name in ("ut", "u"):
        assert nodes[name].counts_after(3)["rejected_bad_model"] == 0, name
        assert nodes[name].diagnostics[-1]["model"] == "charmie", name


# ---------------------------------------------------------------------------- a real robot's URDF
UR5_MODEL = load_model(UR5)
HOSTILE_DESCRIPTIONS = {
    "billion laughs": '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
                      '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><robot name="&b;"/>',
    "not XML": "<robot name='x'><link name='a'>",
    "binary": "<\x00\x01\ufffe\x7f garbage",
    "a YAML model": CHARMIE.read_text(encoding="utf-8"),
    "empty": "",
    "floating joint": '<robot name="f"><link name="a"/><link name="b"/><joint name="j" '
                      'type="floating"><parent link="a"/><child link="b"/></joint></robot>',
    "100,000 nested elements": "<robot>" + "<a>" * 100_000 + "</a>" * 100_000 + "</robot>",
    "over max_model_bytes": "<robot>" + " " * (4 * 2**20) + "</robot>",
}


def ur5_feedforward(ros, e: Dynamics, pos: dict, vel: dict) -> np.ndarray:
    stamp = ros.next_stamp()
    mark = len(e.feedforward)
    e.publish_joints(stamp, pos, vel, names=UR5_MODEL.input_names)
    assert ros.spin_until(lambda: stamp_key(stamp) in e.joint_loads
                          and len(e.feedforward) > mark, 10.0), "no outputs for the UR5 state"
    return e.feedforward[-1][1]


def counter(e: Dynamics, key: str) -> int:
    return int(e.diagnostics[-1][key]) if e.diagnostics else -1


@dump_on_failure
def test_example_robot_data_urdf_runs_and_hostile_descriptions_are_counted(ros, nodes):
    e: Dynamics = nodes["e"]
    nodes["description"].publish(String(data=UR5.read_text()))
    assert ros.spin_until(e.ready, 60.0), "UR5 model not installed"
    rng = np.random.default_rng(5)
    names = UR5_MODEL.input_names
    pos = {n: float(rng.uniform(-1.0, 1.0)) for n in names}
    vel = {n: float(rng.uniform(-1.0, 1.0)) for n in names}
    x, xd, xdd = inputs_from_dict(UR5_MODEL, pos, vel)
    expected = inverse_dynamics(UR5_MODEL, resolve_state(UR5_MODEL, x, xd, xdd)).coordinate_effort
    ff = ur5_feedforward(ros, e, pos, vel)
    assert ff.shape == (6,) and np.all(np.isfinite(ff))
    assert np.abs(ff).max() > 1.0                                # gravity on the arm
    np.testing.assert_allclose(ff, expected, **TOL)

    for label, text in HOSTILE_DESCRIPTIONS.items():
        base = counter(e, "rejected_bad_model")
        nodes["description"].publish(String(data=text))
        ros.spin_until(lambda: counter(e, "rejected_bad_model") > base, 30.0)
        assert counter(e, "rejected_bad_model") == base + 1, label
        assert e.child.alive(), label
    log = e.child.text()
    assert "expected a URDF" in log and "DOCTYPE" in log and "floating" in log
    # a different valid robot: held (accept_model_updates: once), the UR5 still runs
    held = counter(e, "models_held")
    nodes["description"].publish(String(data=PANDA.read_text()))
    assert ros.spin_until(lambda: counter(e, "models_held") == held + 1, 30.0)
    assert e.diagnostics[-1]["model_pending"] == "panda"
    assert e.diagnostics[-1]["model"] == UR5_MODEL.name
    np.testing.assert_allclose(ur5_feedforward(ros, e, pos, vel), expected, **TOL)
    assert int(e.diagnostics[-1]["received_model"]) == len(HOSTILE_DESCRIPTIONS) + 2
    assert "wrench_joints" not in e.child.text()


# ---------------------------------------------------------------------------- names with '/'
SLASHED_URDF = """<robot name="ns/arm">
  <link name="world"/>
  <link name="robot-1.base"><inertial><origin xyz="0 0 0.05"/><mass value="4"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="arm/upper"><inertial><origin xyz="0.15 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="arm/fore.arm"><inertial><origin xyz="0.1 0 0.02"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="arm/tool0"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="robot-1.base"/>
    <origin xyz="0 0 0.2" rpy="0 0 0.3"/></joint>
  <joint name="arm/shoulder" type="revolute"><parent link="robot-1.base"/>
    <child link="arm/upper"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="100" velocity="3"/></joint>
  <joint name="arm/elbow.joint" type="continuous"><parent link="arm/upper"/>
    <child link="arm/fore.arm"/><origin xyz="0.3 0 0" rpy="0.2 0 0"/><axis xyz="0 0.6 0.8"/>
  </joint>
  <joint name="arm/tool" type="fixed"><parent link="arm/fore.arm"/><child link="arm/tool0"/>
    <origin xyz="0.2 0 0"/></joint>
</robot>
"""


@dump_on_failure
def test_names_with_slashes_and_the_default_wrench_body(ros, ros_env, log_dir, tmp_path):
    """Started without wrench_joints, a URDF model whose names hold '/', '-' and '.':
    joint_loads carries the URDF's joint names, /tf and /tf_static its link names (inner '/'
    kept), and joint_wrenches/robot_1_base the wrench of the base body robot-1.base (the
    first with mass) in its frame, equal to the core's (1e-9)."""
    urdf = tmp_path / "slashed.urdf"
    urdf.write_text(SLASHED_URDF)
    model = load_model(urdf)
    assert set(model.body_names) == {"robot-1.base", "arm/upper", "arm/fore.arm", "arm/tool0"}
    child = namespaced_dynamics("s", ros_env, log_dir, model_file=urdf, stale_timeout=1000.0)
    try:
        ros.watched = [child]
        s = Dynamics(ros, child, "/s", with_tf=False)
        tf, wrenches = {}, {}
        subs = [ros.node.create_subscription(
                    TFMessage, "/s/tf", lambda m: tf.__setitem__(
                        stamp_key(m.transforms[0].header.stamp), m), RELIABLE),
                ros.node.create_subscription(
                    WrenchStamped, "/s/joint_wrenches/robot_1_base",
                    lambda m: wrenches.__setitem__(stamp_key(m.header.stamp), m), RELIABLE)]
        assert ros.spin_until(lambda: s.ready() and all(sub.get_publisher_count() >= 1
                                                        for sub in subs), 90.0), "not ready"
        static = {t.child_frame_id: t.header.frame_id for t in s.tf_static[-1].transforms}
        assert static == {"robot-1.base": "world", "arm/tool0": "arm/fore.arm"}, static
        pos = {"arm/shoulder": 0.4, "arm/elbow.joint": -0.7}
        vel = {"arm/shoulder": 0.5, "arm/elbow.joint": 1.5}
        for _ in range(4):                  # a first message may beat the node's discovery
            stamp = ros.next_stamp()
            key = stamp_key(stamp)
            s.publish_joints(stamp, pos, vel, names=model.input_names)
            if ros.spin_until(lambda: key in s.joint_loads and key in tf and key in wrenches,
                              5.0):
                break
        assert key in s.joint_loads and key in tf and key in wrenches, \
            (key in s.joint_loads, key in tf, key in wrenches, s.diagnostics[-1:])
        x, xd, xdd = inputs_from_dict(model, pos, vel)
        loads = inverse_dynamics(model, resolve_state(model, x, xd, xdd))
        assert list(s.joint_loads[key].name) == ["arm/shoulder", "arm/elbow.joint"]
        np.testing.assert_allclose(s.joint_loads[key].effort, loads.coordinate_effort, **TOL)
        frames = {t.child_frame_id: t for t in tf[key].transforms}
        assert {c: t.header.frame_id for c, t in frames.items()} == \
            {"arm/upper": "robot-1.base", "arm/fore.arm": "arm/upper"}
        fore = model.body_index("arm/fore.arm")
        R = quaternion_matrix(frames["arm/fore.arm"].transform.rotation)
        np.testing.assert_allclose(R, loads.placements.rotation_parent[fore], **TOL)
        base = model.body_index("robot-1.base")
        assert loads.base_body == base
        w = wrenches[key]
        assert w.header.frame_id == "robot-1.base"
        np.testing.assert_allclose(vec(w.wrench.force), loads.joint_force[base], **TOL)
        np.testing.assert_allclose(vec(w.wrench.torque), loads.joint_torque[base], **TOL)
        # the floor load carries the robot's weight (6 kg plus its motion)
        assert abs(loads.joint_force_world[base][2]) > 6 * 9.0
    finally:
        ros.watched = []
        child.stop()


# ---------------------------------------------------------------------------- start-up errors
@pytest.mark.parametrize("module,args,message", [
    ("model_loader_node", ["-p", "frame_prefix:=r1/"], "frame_prefix 'r1/' with a URDF model file"),
    ("dynamics_node", ["-p", "model_source:=file"], "model_source 'file' with model_file ''"),
    ("dynamics_node", ["-p", "model_source:=robot_description", "-p", "overlay_file:=/nonexistent/o.yaml"],
     "/nonexistent/o.yaml"),
])
def test_urdf_start_up_errors_are_one_line(ros_env, exported, module, args, message):
    urdf, overlay = exported
    if module == "model_loader_node":
        args = [*params(model_file=urdf, overlay_file=overlay), *args]
    proc = subprocess.run(node_argv(module, "-r", "__ns:=/urdf_startup", *args), env=ros_env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
