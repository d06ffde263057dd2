"""URDF export: document structure, roll-pitch-yaw, and Pinocchio's URDF parser as an
independent reader (kinematics, mass and gravity torques against the parameter oracle)."""
import dataclasses
import math
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from charmie_dynamics import auxiliary_segments, forward_kinematics, load_model
from charmie_dynamics.export import matrix_to_rpy, rpy_to_matrix, urdf_from_model
from charmie_dynamics.export.urdf import AUX_RADIUS, UNBOUNDED
from charmie_dynamics.kinematics import inputs_from_dict, resolve_state
from charmie_dynamics.model import ModelError, model_from_dict
from charmie_dynamics.model.urdf import model_from_urdf
from charmie_dynamics.simulation import coordinate_limits
from conftest import ALL_MODELS
from pin_oracle import pin_joint_vector, pinocchio_model
from test_forward_kinematics import random_q

N_RANDOM = 20


def parse(model, **kwargs):
    return ET.fromstring(urdf_from_model(model, **kwargs))


def joints_by_child(root):
    return {j.find("child").get("link"): j for j in root.findall("joint")}


def floats(text):
    return np.array([float(x) for x in text.split()])


# --- structure -----------------------------------------------------------------------------

def body_links(model):
    """The exported links of the bodies, in order: a base turned in REP 103's base_link
    (``base:``, CHARMIE's) gets that link before its own."""
    turned = model.base is not None and not np.allclose(model.base.rotation, np.eye(3))
    return [n for b in model.body_names
            for n in (["base_link", b] if turned and b == model.base.body else [b])]


def test_structure(any_model):
    root = parse(any_model, include_auxiliary=False)
    assert root.tag == "robot" and root.get("name") == any_model.name
    links = [link.get("name") for link in root.findall("link")]
    assert links == ["world", *body_links(any_model)]
    joints = root.findall("joint")
    names = [j.get("name") for j in joints]
    assert len(names) == len(set(names)) == len(links) - 1
    assert set(any_model.coordinate_names) <= set(names)
    by_child = joints_by_child(root)
    assert set(by_child) == set(links[1:])
    for i, body in enumerate(any_model.bodies):
        joint = by_child[body.name]
        parent = "world" if any_model.parent[i] < 0 else any_model.body_names[any_model.parent[i]]
        origin = joint.find("origin")
        if "base_link" in by_child and body.name == any_model.base.body:
            # the yaw joint moves base_link (turned back by the base's rotation, which
            # commutes with it), base_link carries the body's frame
            yaw = by_child["base_link"]
            assert yaw.find("parent").get("link") == parent and yaw.get("name") == body.coordinate
            turn = any_model.base.rotation
            assert np.abs(rpy_to_matrix(*floats(yaw.find("origin").get("rpy")))
                          - any_model.rotation[i] @ turn.T).max() < 1e-13
            assert joint.get("type") == "fixed" and joint.find("parent").get("link") == "base_link"
            assert np.abs(rpy_to_matrix(*floats(origin.get("rpy"))) - turn).max() < 1e-13
            continue
        turn = np.eye(3)
        if "base_link" in by_child and parent == any_model.base.body:
            # the base body's children hang from base_link, in its axes
            parent, turn = "base_link", any_model.base.rotation
        assert joint.find("parent").get("link") == parent
        assert np.abs(floats(origin.get("xyz")) - turn @ any_model.origin[i]).max() < 1e-15
        assert np.abs(rpy_to_matrix(*floats(origin.get("rpy")))
                      - turn @ any_model.rotation[i]).max() < 1e-13
        link = root.find(f"link[@name='{body.name}']")
        inertial = link.find("inertial")
        if body.virtual:
            assert inertial is None
        else:
            assert float(inertial.find("mass").get("value")) == body.mass
            assert np.array_equal(floats(inertial.find("origin").get("xyz")), body.com)
            I = inertial.find("inertia")
            for key, (r, c) in {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1),
                                "iyz": (1, 2), "izz": (2, 2)}.items():
                assert float(I.get(key)) == body.inertia[r, c]
            assert link.findall("visual/geometry/sphere")
        for cyl in link.findall("visual/geometry/cylinder"):
            assert float(cyl.get("length")) > 0 and 0.01 <= float(cyl.get("radius")) <= 0.02
        if body.coordinate is None:
            assert joint.get("name") == f"{body.name}_joint" and joint.get("type") == "fixed"
            assert joint.find("axis") is None and joint.find("limit") is None
            continue
        first = [b for b in any_model.bodies if b.coordinate == body.coordinate][0]
        if body is first:
            assert joint.get("name") == body.coordinate and joint.find("mimic") is None
        else:
            assert joint.get("name") == f"{body.coordinate}_{body.name}"
            assert joint.find("mimic").get("joint") == body.coordinate
        kind = joint.get("type")
        assert kind in (("prismatic",) if body.joint_type == 2 else ("revolute", "continuous"))
        axis = floats(joint.find("axis").get("xyz"))
        assert np.array_equal(np.abs(axis), np.abs(any_model.axis[i]))
        limit = joint.find("limit")
        assert float(limit.get("effort")) >= 0 and float(limit.get("velocity")) >= 0
        if kind != "continuous":
            assert float(limit.get("lower")) < float(limit.get("upper"))


def test_cylinders_reach_points(charmie):
    """Each visual cylinder of body_3 runs from its origin to a child joint or named point."""
    root = parse(charmie, include_auxiliary=False)
    link = root.find("link[@name='body_3']")
    ends = []
    for visual in link.findall("visual"):
        cyl = visual.find("geometry/cylinder")
        if cyl is None:
            continue
        o = visual.find("origin")
        R = rpy_to_matrix(*floats(o.get("rpy")))
        half = R[:, 2] * float(cyl.get("length")) / 2
        c = floats(o.get("xyz"))
        ends.append((c - half, c + half))
    i = charmie.body_index("body_3")
    targets = [charmie.origin[k] for k in charmie.children(i)] + list(charmie.bodies[i].points.values())
    assert len(ends) == len({tuple(np.round(t, 12)) for t in targets})
    for t in targets:
        assert any(np.abs(a).max() < 1e-12 and np.abs(b - t).max() < 1e-12 for a, b in ends), t


def test_charmie_joints_mimic_and_limits(charmie):
    root = parse(charmie, include_auxiliary=False)
    j = {joint.get("name"): joint for joint in root.findall("joint")}
    assert j["d1"].get("type") == "prismatic"                 # no lower/upper in the model
    assert float(j["d1"].find("limit").get("lower")) == -UNBOUNDED
    assert float(j["d1"].find("limit").get("upper")) == UNBOUNDED
    assert j["theta3"].get("type") == "continuous"
    assert j["d4"].get("type") == "prismatic" and j["theta5"].get("type") == "revolute"
    assert float(j["d4"].find("limit").get("lower")) == pytest.approx(0.05)
    assert float(j["d4"].find("limit").get("effort")) == pytest.approx(6000)
    for name in ("body_6a_joint", "body_6b_joint", "body_6c_joint", "body_9c_joint"):
        assert j[name].get("type") == "fixed"
    # theta13a: body_13a1 (m = +1) leads, body_13a2 (m = -1) mimics with -1.
    mimic = j["theta13a_body_13a2"].find("mimic")
    assert mimic.get("joint") == "theta13a" and float(mimic.get("multiplier")) == -1.0
    assert float(mimic.get("offset")) == 0.0
    assert np.array_equal(floats(j["theta13a"].find("axis").get("xyz")), [0, 1, 0])
    # theta13b: body_13b1 has m = -1, so the URDF joint turns about -y to carry theta13b itself,
    # and body_13b2 (m = +1) mimics it with +1; the joint limits [-0.8, 0.2] of body_13b1
    # become the coordinate's [-0.2, 0.8].
    assert np.array_equal(floats(j["theta13b"].find("axis").get("xyz")), [0, -1, 0])
    assert float(j["theta13b_body_13b2"].find("mimic").get("multiplier")) == 1.0
    lim = j["theta13b"].find("limit")
    assert (float(lim.get("lower")), float(lim.get("upper"))) == pytest.approx((-0.2, 0.8))
    assert j["theta13a_body_13a2"].get("type") == "revolute"
    lim = j["theta13a_body_13a2"].find("limit")
    assert (float(lim.get("lower")), float(lim.get("upper"))) == pytest.approx((-0.8, 0.2))
    assert not root.findall("joint/mimic[@joint='theta13a_body_13a2']")


def test_examples_are_continuous():
    for name in ("puma", "stanford_arm"):
        root = parse(load_model(ALL_MODELS[name]))
        kinds = {j.get("name"): j.get("type") for j in root.findall("joint")}
        assert all(k == "continuous" for n, k in kinds.items() if n.startswith("theta")), kinds
    kinds = {j.get("name"): j.get("type") for j in parse(load_model(ALL_MODELS["stanford_arm"])).findall("joint")}
    assert kinds["b3"] == "prismatic"


def test_frame_prefix(any_model):
    plain = parse(any_model)
    root = parse(any_model, frame_prefix="robot1/")
    assert [l.get("name") for l in root.findall("link")] == \
        ["robot1/" + l.get("name") for l in plain.findall("link")]
    assert [j.get("name") for j in root.findall("joint")] == \
        [j.get("name") for j in plain.findall("joint")]
    for joint in root.findall("joint"):
        assert joint.find("parent").get("link").startswith("robot1/")
        assert joint.find("child").get("link").startswith("robot1/")
    assert [m.get("joint") for m in root.iter("mimic")] == [m.get("joint") for m in plain.iter("mimic")]


def test_auxiliary_links(any_model):
    root = parse(any_model)
    state = resolve_state(any_model, *inputs_from_dict(any_model))
    fk = forward_kinematics(any_model, state.q)
    segments = auxiliary_segments(any_model, fk)
    links = [l.get("name") for l in root.findall("link")]
    assert links == ["world", *body_links(any_model), *[s.name for s in segments]]
    assert [l.get("name") for l in parse(any_model, include_auxiliary=False).findall("link")] == \
        ["world", *body_links(any_model)]
    by_child = joints_by_child(root)
    radius = {}
    for seg in segments:
        joint = by_child[seg.name]
        assert joint.get("name") == f"{seg.name}_joint" and joint.get("type") == "floating"
        parent, R_parent = any_model.body_names[seg.body], fk.rotation_world[seg.body]
        if "base_link" in by_child and parent == any_model.base.body:
            parent, R_parent = "base_link", R_parent @ any_model.base.rotation.T
        assert joint.find("parent").get("link") == parent
        o = joint.find("origin")
        # parent placement * joint origin = the segment's frame at the reference configuration
        R = R_parent @ rpy_to_matrix(*floats(o.get("rpy")))
        p = fk.origin_world[seg.body] + R_parent @ floats(o.get("xyz"))
        assert np.abs(R - seg.rotation).max() < 1e-12 and np.abs(p - seg.start).max() < 1e-12
        link = root.find(f"link[@name='{seg.name}']")
        assert link.find("inertial") is None
        (visual,) = link.findall("visual")
        cyl = visual.find("geometry/cylinder")
        assert float(cyl.get("length")) == pytest.approx(float(seg.length), abs=1e-12)
        assert np.abs(floats(visual.find("origin").get("xyz")) - [0, 0, seg.length / 2]).max() < 1e-12
        assert np.abs(rpy_to_matrix(*floats(visual.find("origin").get("rpy"))) - np.eye(3)).max() < 1e-12
        radius.setdefault(seg.kind, float(cyl.get("radius")))
    if "actuator" in radius:
        assert radius["actuator"] > radius["spring"] == AUX_RADIUS["spring"]


def test_charmie_auxiliary_names(charmie):
    names = [l.get("name") for l in parse(charmie).findall("link")][2 + charmie.n_bodies:]
    assert names == ["act4", "act5", "spring_5s", "balancer_left_lever", "balancer_left_hanger",
                     "balancer_left_spring", "balancer_right_lever", "balancer_right_hanger",
                     "balancer_right_spring"]


# --- roll-pitch-yaw ------------------------------------------------------------------------

def rpy_roundtrip_error(R):
    roll, pitch, yaw = matrix_to_rpy(R)
    assert -math.pi / 2 <= pitch <= math.pi / 2
    return np.abs(rpy_to_matrix(roll, pitch, yaw) - R).max()


def test_rpy_convention_matches_scipy():
    rng = np.random.default_rng(5)
    for _ in range(50):
        r, p, y = rng.uniform(-np.pi, np.pi, 3)
        expected = Rotation.from_euler("xyz", [r, p, y]).as_matrix()   # extrinsic: Rz Ry Rx
        assert np.abs(rpy_to_matrix(r, p, y) - expected).max() < 1e-15


def test_rpy_roundtrip_random():
    rotations = Rotation.random(500, random_state=7).as_matrix()
    assert max(rpy_roundtrip_error(R) for R in rotations) < 1e-14
    rng = np.random.default_rng(8)
    for _ in range(100):                          # away from the lock the angles come back
        r, y = rng.uniform(-np.pi, np.pi, 2)
        p = rng.uniform(-1.5, 1.5)
        assert np.allclose(matrix_to_rpy(rpy_to_matrix(r, p, y)), (r, p, y), rtol=0, atol=1e-12)


@pytest.mark.parametrize("pitch", [math.pi / 2, -math.pi / 2, math.pi / 2 - 1e-7,
                                   -math.pi / 2 + 1e-9, math.pi / 2 - 1e-13, -math.pi / 2 + 1e-15])
def test_rpy_roundtrip_gimbal_lock(pitch):
    rng = np.random.default_rng(9)
    for _ in range(50):
        r, y = rng.uniform(-np.pi, np.pi, 2)
        assert rpy_roundtrip_error(rpy_to_matrix(r, pitch, y)) < 1e-14
    # exact matrices with signed zeros and a pitch of exactly +-90 degrees
    for R in (np.array([[0, 0, 1.0], [0, 1, 0], [-1, 0, 0]]), np.array([[-0.0, 0, -1.0], [0, -1, 0], [-1, -0.0, 0]]),
              np.array([[0, 1.0, 0], [0, 0, -1], [-1, 0, 0]]), np.array([[0, -1.0, 0], [0, 0, -1], [1, 0, 0]])):
        assert rpy_roundtrip_error(R) < 1e-15


# --- Pinocchio's URDF parser as the reader -------------------------------------------------

def pin_from_urdf(model, mimic):
    """Pinocchio 4.1 reads <mimic> only with mimic=True (JointModelMimic, no q of its own);
    by default (mimic=False) a mimic joint is an independent joint with its own q and v."""
    xml = urdf_from_model(model, include_auxiliary=False)
    return pin.buildModelFromXML(xml, mimic) if mimic else pin.buildModelFromXML(xml), ET.fromstring(xml)


def urdf_joint_values(model, root, q):
    """URDF joint name -> value for coordinates q, a mimic joint from its <mimic> element."""
    values = {c: q[k] for k, c in enumerate(model.coordinate_names)}
    for joint in root.findall("joint"):
        m = joint.find("mimic")
        if m is not None:
            values[joint.get("name")] = (float(m.get("multiplier")) * values[m.get("joint")]
                                         + float(m.get("offset")))
    return values


def pin_configuration(pm, values):
    qp = pin.neutral(pm)
    for jid in range(1, pm.njoints):
        joint = pm.joints[jid]
        if joint.nq == 0:                          # JointModelMimic: follows its leader
            continue
        value = values[pm.names[jid]]
        if joint.nq == 2:                          # continuous: RevoluteUnbounded (cos, sin)
            qp[joint.idx_q:joint.idx_q + 2] = math.cos(value), math.sin(value)
        else:
            qp[joint.idx_q] = value
    return qp


@pytest.mark.parametrize("mimic", [False, True], ids=["mimic_as_joint", "mimic_as_mimic"])
def test_pinocchio_urdf_kinematics(any_model, mimic):
    pm, root = pin_from_urdf(any_model, mimic)
    pd = pm.createData()
    n_mimic = len(root.findall("joint/mimic"))
    assert sorted(pm.names[1:]) == sorted(j.get("name") for j in root.findall("joint")
                                          if j.get("type") != "fixed")
    assert pm.nv == any_model.n_coordinates + (0 if mimic else n_mimic)
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(N_RANDOM):
        q = random_q(any_model, rng)
        pin.framesForwardKinematics(pm, pd, pin_configuration(pm, urdf_joint_values(any_model, root, q)))
        fk = forward_kinematics(any_model, q)
        for i, name in enumerate(any_model.body_names):
            assert pm.existFrame(name)
            M = pd.oMf[pm.getFrameId(name)]
            worst = max(worst, np.abs(fk.rotation_world[i] - M.rotation).max(),
                        np.abs(fk.origin_world[i] - M.translation).max())
    assert worst < 1e-12, worst


@pytest.mark.parametrize("mimic", [False, True], ids=["mimic_as_joint", "mimic_as_mimic"])
def test_pinocchio_urdf_mass_and_gravity(any_model, mimic):
    pm, root = pin_from_urdf(any_model, mimic)
    pd = pm.createData()
    assert pin.computeTotalMass(pm) == pytest.approx(any_model.total_mass, rel=1e-14, abs=0)
    pm.gravity = pin.Motion(np.asarray(any_model.gravity), np.zeros(3))   # URDF has no gravity
    oracle = pinocchio_model(any_model)
    od = oracle.createData()
    mimics = {j.get("name"): (j.find("mimic").get("joint"), float(j.find("mimic").get("multiplier")))
              for j in root.findall("joint") if j.find("mimic") is not None}
    rng = np.random.default_rng(12)
    worst = 0.0
    for _ in range(N_RANDOM):
        q = random_q(any_model, rng)
        tau_o = pin.rnea(oracle, od, pin_joint_vector(any_model, q),
                         np.zeros(oracle.nv), np.zeros(oracle.nv))
        expected = np.zeros(any_model.n_coordinates)        # generalized gravity, per coordinate
        for i in range(any_model.n_bodies):
            if any_model.coordinate_index[i] >= 0:
                expected[any_model.coordinate_index[i]] += any_model.multiplier[i] * tau_o[i]
        qp = pin_configuration(pm, urdf_joint_values(any_model, root, q))
        tau = pin.rnea(pm, pd, qp, np.zeros(pm.nv), np.zeros(pm.nv))
        got = np.zeros(any_model.n_coordinates)
        for jid in range(1, pm.njoints):
            name = pm.names[jid]
            if name in any_model.coordinate_names:
                got[any_model.coordinate(name)] += tau[pm.joints[jid].idx_v]
            elif not mimic:                                  # chain rule through the mimic
                leader, m = mimics[name]
                got[any_model.coordinate(leader)] += m * tau[pm.joints[jid].idx_v]
        worst = max(worst, np.abs(got - expected).max())
    assert worst < 1e-9, worst


def test_pinocchio_reads_auxiliary_links(charmie):
    pm = pin.buildModelFromXML(urdf_from_model(charmie))
    state = resolve_state(charmie, *inputs_from_dict(charmie))
    n_aux = len(auxiliary_segments(charmie, forward_kinematics(charmie, state.q)))
    assert n_aux == 9
    free = [pm.names[j] for j in range(1, pm.njoints) if pm.joints[j].shortname() == "JointModelFreeFlyer"]
    assert len(free) == n_aux and all(n.endswith("_joint") for n in free)
    assert all(pm.existFrame(n[:-len("_joint")]) for n in free)


def with_multipliers(model, multipliers):
    bodies = tuple(dataclasses.replace(b, multiplier=multipliers.get(b.name, b.multiplier))
                   for b in model.bodies)
    return dataclasses.replace(model, bodies=bodies)


def test_non_unit_multiplier_leader(charmie):
    """body_13a1 with multiplier 2: body_13a2 (m = -1) leads theta13a, body_13a1 mimics it."""
    model = with_multipliers(charmie, {"body_13a1": 2.0})
    pm, root = pin_from_urdf(model, False)
    j = {joint.get("name"): joint for joint in root.findall("joint")}
    assert j["theta13a"].find("child").get("link") == "body_13a2"
    assert float(j["theta13a_body_13a1"].find("mimic").get("multiplier")) == 2.0
    pd = pm.createData()
    rng = np.random.default_rng(13)
    for _ in range(5):
        q = random_q(model, rng)
        pin.framesForwardKinematics(pm, pd, pin_configuration(pm, urdf_joint_values(model, root, q)))
        fk = forward_kinematics(model, q)
        for i, name in enumerate(model.body_names):
            M = pd.oMf[pm.getFrameId(name)]
            assert np.abs(fk.rotation_world[i] - M.rotation).max() < 1e-12
            assert np.abs(fk.origin_world[i] - M.translation).max() < 1e-12
    with pytest.raises(ModelError, match="theta13a") as error:
        urdf_from_model(with_multipliers(charmie, {"body_13a1": 2.0, "body_13a2": 0.5}))
    assert error.value.args[0].startswith(f"{charmie.source}: ")
    assert "body_13a1" in error.value.args[0] and "\n" not in error.value.args[0]


def _body(name, parent, joint, origin=(0.0, 0.0, 0.1)):
    return {"name": name, "parent": parent, "origin": list(origin), "joint": joint,
            "rotation": {"rpy": [0.3, -0.2, 0.5]}, "mass": 1.0, "com": [0.01, 0.02, 0.03],
            "inertia": {"ixx": 0.01, "iyy": 0.02, "izz": 0.015}}


#: coupled joints whose offsets differ: q's first unit joint (a) has an offset, its second (b)
#: none; every unit joint of p (c, d) and the lone joint of r have one (folded into <origin>)
OFFSET_COUPLINGS = {"format": "charmie_dynamics/model/1", "name": "offsets", "bodies": [
    _body("a", "world", {"type": "R", "axis": [0.6, 0.0, 0.8], "coordinate": "q",
                         "offset": 0.4}),
    _body("b", "world", {"type": "R", "axis": "x", "coordinate": "q"}, (0.2, 0.0, 0.0)),
    _body("e", "b", {"type": "R", "axis": "-y", "coordinate": "q", "multiplier": 0.5,
                     "offset": -0.3}),
    _body("c", "a", {"type": "P", "axis": [0.0, 0.6, 0.8], "coordinate": "p", "offset": 0.05,
                     "limits": {"lower": -0.1, "upper": 0.2}}),
    _body("d", "a", {"type": "P", "axis": "z", "coordinate": "p", "multiplier": -1.0,
                     "offset": 0.02}),
    _body("f", "c", {"type": "R", "axis": "z", "coordinate": "r", "multiplier": -1.0,
                     "offset": 0.7, "limits": {"lower": -1.0, "upper": 2.0}}),
]}


def test_mimic_leader_offsets_survive_the_round_trip():
    """Exported and loaded back, a model whose coupled joints have different offsets gives
    the same FK of every body (1e-12) and the same coordinate limits: the leader is a joint
    without offset where there is one, else its offset is in its <origin>. (The code before
    took the first unit joint as leader and dropped its offset: FK off by 0.4 rad.)"""
    model = model_from_dict(OFFSET_COUPLINGS)
    xml = urdf_from_model(model, include_auxiliary=False)
    joints = {j.get("name"): j for j in ET.fromstring(xml).findall("joint")}
    assert joints["q"].find("child").get("link") == "b"         # the joint without offset
    assert float(joints["q_a"].find("mimic").get("offset")) == 0.4
    back = model_from_urdf(xml)
    order = [back.coordinate_names.index(c) for c in model.coordinate_names]
    bodies = [back.body_index(name) for name in model.body_names]
    rng = np.random.default_rng(12)
    q = rng.uniform(-2.0, 2.0, (N_RANDOM, model.n_coordinates))
    q_back = np.empty_like(q)
    q_back[:, order] = q
    ours, theirs = forward_kinematics(model, q), forward_kinematics(back, q_back)
    np.testing.assert_allclose(theirs.rotation_world[:, bodies], ours.rotation_world,
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(theirs.origin_world[:, bodies], ours.origin_world,
                               rtol=0, atol=1e-12)
    for ours, theirs in zip(coordinate_limits(model), coordinate_limits(back)):
        np.testing.assert_allclose(theirs[order], ours, rtol=0, atol=1e-12)
    assert np.isfinite(coordinate_limits(model)[0]).tolist() == [False, True, True]


def test_duplicate_names_are_model_errors():
    """A fixed joint ``a_joint`` (body a) beside a coordinate ``a_joint``: the loader accepts
    the model, URDF cannot hold two joints of one name."""
    model = model_from_dict({"format": "charmie_dynamics/model/1", "name": "clash", "bodies": [
        {"name": "a", "parent": "world", "origin": [0, 0, 0.1], "joint": {"type": "F"},
         "mass": 1.0, "com": [0, 0, 0], "inertia": {"ixx": 0.01, "iyy": 0.01, "izz": 0.01}},
        {"name": "b", "parent": "a", "origin": [0, 0, 0.1],
         "joint": {"type": "R", "axis": "z", "coordinate": "a_joint"},
         "mass": 1.0, "com": [0, 0, 0], "inertia": {"ixx": 0.01, "iyy": 0.01, "izz": 0.01}}]})
    with pytest.raises(ModelError, match="duplicate joint names a_joint"):
        urdf_from_model(model)
    with pytest.raises(ModelError, match="duplicate joint names a_joint"):
        urdf_from_model(model, include_auxiliary=False)


# --- a third reader: urdf_parser_py (ROS's Python URDF parser), when installed --------------

def test_urdf_parser_py(any_model):
    urdf = pytest.importorskip("urdf_parser_py.urdf")
    xml = urdf_from_model(any_model, frame_prefix="p/")
    robot = urdf.URDF.from_xml_string(xml)
    assert robot.get_root() == "p/world"
    root = ET.fromstring(xml)
    assert [l.name for l in robot.links] == [l.get("name") for l in root.findall("link")]
    assert [j.name for j in robot.joints] == [j.get("name") for j in root.findall("joint")]
    assert robot.child_map["p/world"][0][1] == "p/" + any_model.body_names[0]
    for joint in robot.joints:
        ref = root.find(f"joint[@name='{joint.name}']")
        assert joint.type == ref.get("type")
        if joint.type in ("revolute", "prismatic"):
            assert joint.limit.lower < joint.limit.upper
        if ref.find("mimic") is not None:
            assert joint.mimic.joint == ref.find("mimic").get("joint")
    masses = [l.inertial.mass for l in robot.links if l.inertial is not None]
    assert sum(masses) == pytest.approx(any_model.total_mass, rel=1e-14)
