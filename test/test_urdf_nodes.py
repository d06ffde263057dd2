"""The nodes with URDF models (issue 12 item 6), over real DDS in separate processes.

* The model loader reads CHARMIE as ``charmie-dynamics export-urdf`` writes it (a URDF and
  its mechanism overlay) and publishes robot_description (the URDF as read) and, on its
  model topic, the model document of URDF + overlay. Dynamics node /ut takes the model
  topic; dynamics node /u (beside the loader) builds its model from robot_description and
  the same overlay file. Both must give the YAML model's feedforward to 1e-9.
* Dynamics node /e starts from robot_description alone: example-robot-data's UR5 URDF (no
  overlay) published by the test, then hostile texts, each counted as ``bad_model``, and a
  different robot (the Panda), held by ``accept_model_updates: once``.
"""
from __future__ import annotations

import importlib.metadata
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from std_msgs.msg import String  # noqa: E402

from charmie_dynamics.dynamics import inverse_dynamics  # noqa: E402
from charmie_dynamics.export.urdf import overlay_from_model, urdf_from_model  # noqa: E402
from charmie_dynamics.kinematics import inputs_from_dict, resolve_state  # noqa: E402
from charmie_dynamics.model import load_model  # noqa: E402
from conftest import CHARMIE  # noqa: E402
from node_process import Child  # noqa: E402
from ros_harness import (LATE, MODEL, TOL, Dynamics, core, dump_children,  # noqa: E402,F401
                         dump_on_failure, log_dir, namespaced_dynamics, node_argv, params,
                         random_state, ros, ros_env, stamp_key)


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
        namespaced_dynamics("e", ros_env, log_dir, model_file=NO_FILE, model_source="robot_description",
                            wrench_joints='[""]', diagnostics_period=0.05,
                            stale_timeout=1000.0),
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
