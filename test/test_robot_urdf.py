"""CHARMIE's designers' URDF (test/data/charmie_robot/charmie.urdf, hand-written, not the
package's export) and its joint map (joint_map.yaml next to it) against the model
(config/charmie.yaml).

Every mapped link's frame, relative to base_link, is the model body's frame relative to
body_3's turned by Rz(-pi/2) (base_link is REP 103: x forward; the model's body_3 has y
forward), for random configurations: the model's forward kinematics against Pinocchio's on
the URDF, each URDF joint set from its model coordinate through the map (a mimic joint from its
leader, the wheels at 0). Plus the names: every URDF link is a wheel or a mapped body, every
movable joint a wheel, a mimic or a mapped coordinate, and no model name (body_N) in the URDF.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from charmie_dynamics.kinematics.forward import forward_kinematics
from charmie_dynamics.model import read_model_file

pin = pytest.importorskip("pinocchio")

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "test" / "data" / "charmie_robot"
URDF = DATA / "charmie.urdf"
JOINT_MAP = DATA / "joint_map.yaml"
MODEL = ROOT / "config" / "charmie.yaml"

BASE_BODY, BASE_LINK = "body_3", "base_link"
BASE_COORDINATES = ("d1", "d2", "theta3")     # odom -> base_link: the base controller's
WHEELS = tuple(f"wheel_{side}" for side in ("front_left", "front_right", "rear_left",
                                             "rear_right"))
WHEEL_JOINTS = tuple(w + "_joint" for w in WHEELS)
WHEEL_LINKS = tuple(w + "_link" for w in WHEELS)
MOVABLE = ("revolute", "continuous", "prismatic")
N_RANDOM = 20
TOL = 1e-9

# body_3's frame in base_link: model x -> base_link -y, model y -> base_link +x
R_BASE = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # Rz(-pi/2)


@pytest.fixture(scope="module")
def model():
    return read_model_file(MODEL)[0]


@pytest.fixture(scope="module")
def urdf_text():
    return URDF.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def urdf(urdf_text):
    """links: name -> <link> element; joints: name -> <joint> element (plain XML)."""
    root = ET.fromstring(urdf_text)
    return ({e.get("name"): e for e in root.findall("link")},
            {e.get("name"): e for e in root.findall("joint")})


@pytest.fixture(scope="module")
def joint_map():
    return yaml.safe_load(JOINT_MAP.read_text(encoding="utf-8"))


def mimics(joints) -> dict[str, tuple[str, float, float]]:
    """mimic joint -> (leader, multiplier, offset)."""
    out = {}
    for name, e in joints.items():
        m = e.find("mimic")
        if m is not None:
            out[name] = (m.get("joint"), float(m.get("multiplier", "1")),
                         float(m.get("offset", "0")))
    return out


def coordinate_joints(model, joint_map) -> dict[str, str]:
    """Model coordinate -> URDF joint, from the map's names (actuators left out)."""
    return {c: j for c, j in joint_map["names"].items() if c in model.coordinate_names}


def random_configurations(model, rng, n):
    lower, upper = (np.clip(np.asarray(b, dtype=float), -1.0, 1.0)
                    for b in model.compiled.coordinate_limits)
    names = model.coordinate_names
    for _ in range(n):
        x = rng.uniform(lower, upper)
        x[[names.index(c) for c in BASE_COORDINATES]] = 0.0
        yield dict(zip(names, x))


def model_in_base_link(model, values: dict[str, float]) -> dict[str, pin.SE3]:
    """Every body's placement in base_link: body_3's frame in base_link is Rz(-pi/2), so a
    body's is Rz(-pi/2) * (its placement in body_3); body_3's entry is base_link's own frame
    (the identity)."""
    q = np.array([values[n] for n in model.configuration_names])
    fk = forward_kinematics(model, q)
    world = {name: pin.SE3(np.array(fk.rotation_world[i]), np.array(fk.origin_world[i]))
             for i, name in enumerate(model.body_names)}
    base_from_world = pin.SE3(R_BASE, np.zeros(3)) * world[BASE_BODY].inverse()
    out = {name: base_from_world * M for name, M in world.items()}
    out[BASE_BODY] = pin.SE3.Identity()
    return out


def pinocchio_configuration(pm, joints, model, joint_map, values: dict[str, float]):
    """Pinocchio's q: mapped joints from their coordinates, mimic joints from their leaders,
    the rest (the wheels) neutral (angle 0)."""
    q = pin.neutral(pm)
    angle = {}
    for c, j in coordinate_joints(model, joint_map).items():
        angle[j] = values[c]
    for j, (leader, multiplier, offset) in mimics(joints).items():
        angle[j] = multiplier * angle[leader] + offset
    for j, value in angle.items():
        jm = pm.joints[pm.getJointId(j)]
        assert jm.nq == 1, j
        q[jm.idx_q] = value
    return q


def test_link_frames_match_the_model(model, urdf_text, urdf, joint_map):
    pm = pin.buildModelFromXML(urdf_text)
    pd = pm.createData()
    joints = urdf[1]
    links = joint_map["links"]
    frame = {link: pm.getFrameId(link, pin.FrameType.BODY) for link in links.values()}
    assert all(f < pm.nframes for f in frame.values())
    worst_p = worst_R = 0.0
    rng = np.random.default_rng(7)
    for values in random_configurations(model, rng, N_RANDOM):
        expected = model_in_base_link(model, values)
        pin.forwardKinematics(pm, pd, pinocchio_configuration(pm, joints, model, joint_map,
                                                              values))
        pin.updateFramePlacements(pm, pd)
        base = pd.oMf[frame[BASE_LINK]]
        for body, link in links.items():
            got = base.actInv(pd.oMf[frame[link]])
            dp = np.abs(got.translation - expected[body].translation).max()
            dR = np.abs(got.rotation - expected[body].rotation).max()
            assert dp < TOL and dR < TOL, (body, link, dp, dR)
            worst_p, worst_R = max(worst_p, dp), max(worst_R, dR)
    assert worst_p < TOL and worst_R < TOL


def test_wheels_do_not_move_the_mapped_links(urdf_text, urdf, joint_map):
    """The wheels are leaves under base_link: turning them moves no mapped link."""
    pm = pin.buildModelFromXML(urdf_text)
    pd = pm.createData()
    ids = [pm.getFrameId(link, pin.FrameType.BODY) for link in joint_map["links"].values()]
    q0 = pin.neutral(pm)
    pin.framesForwardKinematics(pm, pd, q0)
    before = [pd.oMf[f].copy() for f in ids]
    q = q0.copy()
    for j in WHEEL_JOINTS:
        jm = pm.joints[pm.getJointId(j)]
        assert jm.nq == 2, j              # continuous: (cos, sin)
        q[jm.idx_q:jm.idx_q + 2] = np.cos(0.7), np.sin(0.7)
    pin.framesForwardKinematics(pm, pd, q)
    for f, M in zip(ids, before):
        assert pd.oMf[f].isApprox(M, 1e-14)
    for j in WHEEL_JOINTS:
        e = urdf[1][j]
        assert e.get("type") == "continuous"
        assert e.find("parent").get("link") == BASE_LINK
        assert abs(float(e.find("origin").get("xyz").split()[2])) < 1e-12   # axle height


def test_names(model, urdf_text, urdf, joint_map):
    links, joints = urdf
    link_map = joint_map["links"]
    names = joint_map["names"]
    # no model name (body_N) in the URDF's names and references (its comments may cite them)
    values = [v for e in ET.fromstring(urdf_text).iter() for v in e.attrib.values()]
    assert values and not [v for v in values if re.search(r"body_\d", v)]
    # every URDF link is a wheel or a mapped body; every links entry names both sides
    assert set(links) == set(WHEEL_LINKS) | set(link_map.values())
    assert set(link_map) <= set(model.body_names)
    assert len(set(link_map.values())) == len(link_map)
    # every non-virtual body is a URDF link; the virtual planar base is not
    assert set(link_map) == {b.name for b in model.bodies if not b.virtual}
    # names: every coordinate but the base's, plus the actuators (not URDF joints)
    mapped = coordinate_joints(model, joint_map)
    assert set(mapped) == set(model.coordinate_names) - set(BASE_COORDINATES)
    assert set(names) - set(mapped) == {a.name for a in model.actuators}
    assert not (set(names.values()) - set(mapped.values())) & set(joints)
    assert set(joint_map["scale"]) == set(joint_map["offset"]) == {"act4", "act5"}
    # every movable URDF joint is a wheel, a mimic of a mapped joint, or a mapped coordinate
    mimic = mimics(joints)
    assert all(leader in mapped.values() for leader, _, _ in mimic.values())
    movable = {n for n, e in joints.items() if e.get("type") in MOVABLE}
    assert movable - set(mimic) == set(WHEEL_JOINTS) | set(mapped.values())
    assert set(mimic) <= movable


def test_limits_match_the_model(model, urdf, joint_map):
    lower, upper = model.compiled.coordinate_limits
    for c, j in coordinate_joints(model, joint_map).items():
        k = model.coordinate_names.index(c)
        limit = urdf[1][j].find("limit")
        assert float(limit.get("lower")) == pytest.approx(lower[k], abs=1e-12), j
        assert float(limit.get("upper")) == pytest.approx(upper[k], abs=1e-12), j
        assert float(limit.get("velocity")) > 0 and float(limit.get("effort")) > 0


def test_inertials_match_the_model(model, urdf, joint_map):
    """Mass, centre of mass and inertia of each mapped link: the model body's (base_link's
    turned by Rz(-pi/2))."""
    links = urdf[0]
    for body, link in joint_map["links"].items():
        b = model.bodies[model.body_names.index(body)]
        R = R_BASE if body == BASE_BODY else np.eye(3)
        inertial = links[link].find("inertial")
        if b.mass == 0:
            assert inertial is None, link
            continue
        assert float(inertial.find("mass").get("value")) == pytest.approx(b.mass, rel=1e-12)
        origin = inertial.find("origin")
        com = np.array([float(v) for v in origin.get("xyz").split()])
        assert np.abs(com - R @ np.asarray(b.com)).max() < 1e-12, link
        assert np.abs(np.array([float(v) for v in origin.get("rpy", "0 0 0").split()])).max() == 0
        e = inertial.find("inertia")
        inertia = np.array([[e.get("ixx"), e.get("ixy"), e.get("ixz")],
                            [e.get("ixy"), e.get("iyy"), e.get("iyz")],
                            [e.get("ixz"), e.get("iyz"), e.get("izz")]], dtype=float)
        expected = R @ np.asarray(b.inertia) @ R.T
        assert np.abs(inertia - expected).max() <= 1e-9 * np.abs(expected).max(), link
