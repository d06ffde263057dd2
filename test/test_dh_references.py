"""Tests of the independent DH reference (test/dh_reference.py) for the PUMA and Stanford arm of
seed 002, of the YAML models config/examples/{puma,stanford_arm}.yaml against it, and (when the
package is there) of charmie_dynamics' forward kinematics of those YAML files against it."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dh_reference as ref  # noqa: E402

pin = pytest.importorskip("pinocchio")

ROOT = Path(__file__).resolve().parents[1]
YAML_FILES = {"puma": ROOT / "config" / "examples" / "puma.yaml",
              "stanford_arm": ROOT / "config" / "examples" / "stanford_arm.yaml"}
ARMS = [ref.PUMA, ref.STANFORD]
IDS = [a.name for a in ARMS]
N_CONFIGS = 20
TOL = 1e-12


def random_configs(arm, seed=2002, n=N_CONFIGS):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        q = rng.uniform(-np.pi, np.pi, len(arm.dh))
        for k, row in enumerate(arm.dh):
            if row.joint == "P":
                q[k] = rng.uniform(-0.3, 0.5)
        out.append(q)
    return out


def pin_fk(model, q):
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    pin.updateFramePlacements(model, data)
    return data


def as_h(m):
    return np.asarray(m.homogeneous)


# ------------------------------------------------------------ the reference against itself
@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_pinocchio_dh_frames_match_dh_product(arm):
    model = ref.arm_pinocchio_model(arm)
    assert model.nq == model.nv == 6
    for q in random_configs(arm):
        data = pin_fk(model, q)
        dh = ref.dh_forward(arm.dh, q)
        for k in range(6):
            fid = model.getFrameId(f"dh{k + 1}")
            np.testing.assert_allclose(as_h(data.oMf[fid]), dh[k], atol=TOL, rtol=0)
        # the last DH frame, as the brief asks explicitly
        np.testing.assert_allclose(as_h(data.oMf[model.getFrameId("dh6")]), dh[-1], atol=TOL,
                                   rtol=0)


@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_pinocchio_joint_frames_match(arm):
    model = ref.arm_pinocchio_model(arm)
    for q in random_configs(arm, seed=7):
        data = pin_fk(model, q)
        jf = ref.joint_frames(arm.dh, q)
        dh = ref.dh_forward(arm.dh, q)
        for k in range(6):
            np.testing.assert_allclose(as_h(data.oMi[k + 1]), jf[k], atol=TOL, rtol=0)
            # DH frame k = joint frame k * constant end of row k
            np.testing.assert_allclose(jf[k] @ ref.joint_to_dh_frame(arm.dh[k]), dh[k],
                                       atol=TOL, rtol=0)


def test_hand_computed_configurations():
    # PUMA, theta = 0: O6 = (a2 + a3, b2, -b4 + b6), forearm along -z0, joint-6 axis along +z0
    t = ref.dh_forward(ref.PUMA.dh, np.zeros(6))
    np.testing.assert_allclose(t[5][:3, 3], [0.452, 0.149, -0.382], atol=1e-15)
    np.testing.assert_allclose(t[2][:3, 2], [0, 0, -1], atol=1e-15)
    np.testing.assert_allclose(t[4][:3, 2], [0, 0, 1], atol=1e-15)
    # Stanford, all zero: boom along -z0, O6 = (0, b2, b1 - b4)
    t = ref.dh_forward(ref.STANFORD.dh, np.zeros(6))
    np.testing.assert_allclose(t[5][:3, 3], [0.0, 0.1, -0.5], atol=1e-15)
    # Stanford, theta2 = pi/2, b3 = 0.1: boom along -x0, O6 = (-(b3 + b4), b2, b1)
    t = ref.dh_forward(ref.STANFORD.dh, [0, np.pi / 2, 0.1, 0, 0, 0])
    np.testing.assert_allclose(t[5][:3, 3], [-0.7, 0.1, 0.1], atol=1e-15)
    np.testing.assert_allclose(t[2][:3, 2], [-1, 0, 0], atol=1e-15)


@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_pinocchio_inertias_placed_as_in_dh_frames(arm):
    """World com and world inertia of each link from pinocchio equal those obtained by moving the
    table's data (DH frame i) with dh_forward."""
    model = ref.arm_pinocchio_model(arm)
    assert sum(model.inertias[k].mass for k in range(1, 7)) == pytest.approx(sum(arm.masses))
    for q in random_configs(arm, seed=11, n=5):
        data = pin_fk(model, q)
        dh = ref.dh_forward(arm.dh, q)
        for k in range(6):
            y = model.inertias[k + 1]
            m = data.oMi[k + 1]
            r, p = dh[k][:3, :3], dh[k][:3, 3]
            np.testing.assert_allclose(m.rotation @ y.lever + m.translation,
                                       p + r @ arm.coms[k], atol=TOL, rtol=0)
            np.testing.assert_allclose(m.rotation @ y.inertia @ m.rotation.T,
                                       r @ arm.inertias[k] @ r.T, atol=TOL, rtol=0)


def test_gravity_direction():
    model = ref.arm_pinocchio_model(ref.PUMA)
    np.testing.assert_allclose(model.gravity.linear, [0, 0, -9.81])
    # a pure vertical load: base joint torque of gravity is zero (joint 1 axis is vertical)
    for q in random_configs(ref.PUMA, n=3):
        data = model.createData()
        g = pin.computeGeneralizedGravity(model, data, q)
        assert abs(g[0]) < 1e-12


@pytest.mark.parametrize("name", ["puma", "stanford_arm"])
def test_trajectories(name):
    traj = ref.TRAJECTORIES[name]
    q0, qT = (ref.PUMA_Q0, ref.PUMA_QT) if name == "puma" else (ref.STANFORD_Q0, ref.STANFORD_QT)
    q, qd, qdd = traj(np.array([0.0, ref.T_FINAL]))
    np.testing.assert_allclose(q[0], q0, atol=1e-15)
    np.testing.assert_allclose(q[1], qT, atol=1e-14)
    np.testing.assert_allclose(qd, 0.0, atol=1e-15)
    np.testing.assert_allclose(qdd, 0.0, atol=1e-15)
    # derivatives by central differences
    t = np.linspace(0.3, 9.7, 25)
    h = 1e-5
    qp, qdp, _ = traj(t + h)
    qm, qdm, _ = traj(t - h)
    q, qd, qdd = traj(t)
    np.testing.assert_allclose((qp - qm) / (2 * h), qd, atol=1e-9)
    np.testing.assert_allclose((qdp - qdm) / (2 * h), qdd, atol=1e-9)
    # mid-point: half way, peak velocity 2 (qT - q0)/T
    q, qd, _ = traj(ref.T_FINAL / 2)
    np.testing.assert_allclose(q, (q0 + qT) / 2, atol=1e-14)
    np.testing.assert_allclose(qd, 2 * (qT - q0) / ref.T_FINAL, atol=1e-14)
    assert ref.STANFORD_Q0[1] == np.pi / 2 and ref.STANFORD_QT[2] == 0.1


# ------------------------------------- the YAML files, read here WITHOUT charmie_dynamics
def _rz(a):
    return ref.rot_z(a)


def _zxz(z1, x2, z3):
    return ref.rot_z(z1) @ ref.rot_x(x2) @ ref.rot_z(z3)


def _axis_rot(axis, q):
    """Rotation by q about a unit axis (Rodrigues)."""
    k = np.asarray(axis, float)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(q) * kx + (1 - np.cos(q)) * kx @ kx


AXIS = {"x": (1, 0, 0), "y": (0, 1, 0), "z": (0, 0, 1)}


def _yaml_bodies(name):
    doc = yaml.safe_load(YAML_FILES[name].read_text())
    assert doc["units"] == {"length": "m", "angle": "rad"}
    return doc, {b["name"]: b for b in doc["bodies"]}


def _yaml_chain_fk(name, q):
    """Body frames (world -> link{i}) per docs/model_format.md: R = R_c Rot(axis, q),
    r = origin + q R_c axis (prismatic)."""
    doc, bodies = _yaml_bodies(name)
    arm = ref.ARMS[name]
    qmap = dict(zip(arm.coordinate_names, q))
    frames = {"world": np.eye(4)}
    for i in range(1, 7):
        b = bodies[f"link{i}"]
        j = b["joint"]
        sign = -1.0 if j["axis"].startswith("-") else 1.0
        axis = sign * np.array(AXIS[j["axis"].lstrip("+-")], float)
        rc = _zxz(*b.get("rotation", [0, 0, 0]))
        qi = qmap[j["coordinate"]] * j.get("multiplier", 1.0)
        local = np.eye(4)
        local[:3, 3] = b.get("origin", [0, 0, 0])
        if j["type"] == "R":
            local[:3, :3] = rc @ _axis_rot(axis, qi)
        elif j["type"] == "P":
            local[:3, :3] = rc
            local[:3, 3] += qi * (rc @ axis)
        frames[b["name"]] = frames[b["parent"]] @ local
    return doc, bodies, frames


@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_yaml_structure(arm):
    doc, bodies = _yaml_bodies(arm.name)
    assert doc["format"] == "charmie_dynamics/model/1"
    assert doc["gravity"] == [0, 0, -9.81]
    assert [b["name"] for b in doc["bodies"]] == [f"link{i}" for i in range(1, 7)]
    assert [b["joint"]["coordinate"] for b in doc["bodies"]] == list(arm.coordinate_names)
    assert [b["parent"] for b in doc["bodies"]] == ["world"] + [f"link{i}" for i in range(1, 6)]
    assert [b["mass"] for b in doc["bodies"]] == list(arm.masses)
    assert "tool" in bodies["link6"]["points"]


@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_yaml_kinematics_match_dh(arm):
    for q in random_configs(arm, seed=3):
        doc, bodies, frames = _yaml_chain_fk(arm.name, q)
        jf = ref.joint_frames(arm.dh, q)
        dh = ref.dh_forward(arm.dh, q)
        for k in range(6):
            f = frames[f"link{k + 1}"]
            np.testing.assert_allclose(f, jf[k], atol=TOL, rtol=0)
            pts = bodies[f"link{k + 1}"]["points"]
            name = f"dh{k + 1}" if k < 5 else "tool"
            np.testing.assert_allclose(f[:3, :3] @ pts[name] + f[:3, 3], dh[k][:3, 3],
                                       atol=TOL, rtol=0)
        # tool orientation: alpha6 = 0, so DH frame 6 has the link6 orientation
        np.testing.assert_allclose(frames["link6"][:3, :3], dh[5][:3, :3], atol=TOL, rtol=0)


def _yaml_inertia(b):
    i = b["inertia"]
    return np.array([[i["ixx"], i.get("ixy", 0), i.get("ixz", 0)],
                     [i.get("ixy", 0), i["iyy"], i.get("iyz", 0)],
                     [i.get("ixz", 0), i.get("iyz", 0), i["izz"]]], float)


@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_yaml_mass_properties_match_table(arm):
    """World com and inertia of every link: YAML (our body frames) == table (DH frames)."""
    for q in random_configs(arm, seed=5, n=5):
        doc, bodies, frames = _yaml_chain_fk(arm.name, q)
        dh = ref.dh_forward(arm.dh, q)
        for k in range(6):
            b = bodies[f"link{k + 1}"]
            f = frames[b["name"]]
            r, p = dh[k][:3, :3], dh[k][:3, 3]
            np.testing.assert_allclose(f[:3, :3] @ b["com"] + f[:3, 3], p + r @ arm.coms[k],
                                       atol=1e-12, rtol=0)
            np.testing.assert_allclose(f[:3, :3] @ _yaml_inertia(b) @ f[:3, :3].T,
                                       r @ arm.inertias[k] @ r.T, atol=1e-12, rtol=0)


def _pinocchio_from_yaml(name):
    """A second pinocchio model, from the YAML (all joints are z-axis R/P here)."""
    doc, bodies = _yaml_bodies(name)
    model = pin.Model()
    model.gravity = pin.Motion(np.concatenate([doc["gravity"], np.zeros(3)]))
    ids = {"world": 0}
    for b in doc["bodies"]:
        assert b["joint"]["axis"] == "z"
        jm = pin.JointModelRZ() if b["joint"]["type"] == "R" else pin.JointModelPZ()
        placement = pin.SE3(_zxz(*b["rotation"]), np.array(b["origin"], float))
        jid = model.addJoint(ids[b["parent"]], jm, placement, b["name"])
        model.appendBodyToJoint(jid, pin.Inertia(float(b["mass"]), np.array(b["com"], float),
                                                 _yaml_inertia(b)), pin.SE3.Identity())
        ids[b["name"]] = jid
    return model


@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_yaml_dynamics_match_dh_pinocchio(arm):
    m_dh = ref.arm_pinocchio_model(arm)
    m_y = _pinocchio_from_yaml(arm.name)
    d_dh, d_y = m_dh.createData(), m_y.createData()
    rng = np.random.default_rng(17)
    for q in random_configs(arm, seed=13, n=5):
        v, a = rng.normal(size=6), rng.normal(size=6)
        np.testing.assert_allclose(pin.crba(m_y, d_y, q), pin.crba(m_dh, d_dh, q), atol=1e-12,
                                   rtol=0)
        np.testing.assert_allclose(pin.rnea(m_y, d_y, q, v, a), pin.rnea(m_dh, d_dh, q, v, a),
                                   atol=1e-11, rtol=0)


# --------------------------------------------------- charmie_dynamics against the reference
@pytest.mark.parametrize("arm", ARMS, ids=IDS)
def test_package_fk_matches_dh(arm):
    load_model = pytest.importorskip("charmie_dynamics.model").load_model
    kin = pytest.importorskip("charmie_dynamics.kinematics")
    m = load_model(YAML_FILES[arm.name])
    assert list(m.coordinate_names) == list(arm.coordinate_names)
    _, bodies = _yaml_bodies(arm.name)
    tool = np.array(bodies["link6"]["points"]["tool"], float)
    for q in random_configs(arm, seed=19):
        fk = kin.forward_kinematics(m, np.asarray(q))
        jf = ref.joint_frames(arm.dh, q)
        dh = ref.dh_forward(arm.dh, q)
        for k in range(6):
            i = m.body_index(f"link{k + 1}")
            np.testing.assert_allclose(fk.rotation_world[i], jf[k][:3, :3], atol=TOL, rtol=0)
            np.testing.assert_allclose(fk.origin_world[i], jf[k][:3, 3], atol=TOL, rtol=0)
        i6 = m.body_index("link6")
        np.testing.assert_allclose(fk.rotation_world[i6] @ tool + fk.origin_world[i6],
                                   dh[5][:3, 3], atol=TOL, rtol=0)
        np.testing.assert_allclose(fk.rotation_world[i6], dh[5][:3, :3], atol=TOL, rtol=0)
