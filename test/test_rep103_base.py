"""The model's mobile base against REP 103's base_link, end to end through the dynamics
node's pure pieces (no rclpy).

CHARMIE's base body, body_3, has x to the robot's right and y forward; base_link (the frame
of nav_msgs/Odometry and of the robot's URDF) has x forward. ``base:`` in config/charmie.yaml
gives body_3's frame in base_link, and the node uses it twice: to turn the odometry into the
model's base coordinates (``odometry.base_from_odometry``) and to publish body_3's children
in base_link (``outputs.FramePlan.turned``, ``outputs.static_frames``). Dropping either turn
puts the robot a quarter turn off, which no test of the parts alone sees. So:

* a forward acceleration reported by the odometry loads the arms as Pinocchio says a robot
  accelerating towards body_3's ``front`` point is loaded (the oracle never reads
  ``base.rotation``), and pushes the base forward with total_mass * a;
* the transforms the node publishes, chained up to base_link, place every link of the
  designers' URDF (test/data/charmie_robot) where Pinocchio places it;
* the joint map's units: hardware -> model -> hardware round trip, the feedforward scaled
  after clamping, and ``links:`` errors that name the file and the field;
* ``export-urdf --joint-map`` and the loader's robot_description: the designers' links where
  their URDF has them, the passive joints in the SRDF; alone (simulation), the node's /tf
  and the exported URDF place every link alike; no static frame hangs from a frame left to
  the odometry.

Each of the first two tests also runs the mutation (base rotation or turn dropped) and
asserts that it is caught.
"""
from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from charmie_dynamics import load_model
from charmie_dynamics.model.model import JointType
from charmie_dynamics.ros.common.inputs import InputLimits
from charmie_dynamics.ros.common.joint_map import JointMapError, read_joint_map
from charmie_dynamics.ros.common.model_updates import prepare_model
from charmie_dynamics.ros.common.odometry import base_from_odometry
from charmie_dynamics.ros.common.outputs import (FeedforwardMap, OutputUnits, frame_plan,
                                                 hardware_efforts, hardware_positions,
                                                 static_frames)
from pin_oracle import pin_joint_vector, pinocchio_model

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "config" / "charmie.yaml"
URDF = ROOT / "test" / "data" / "charmie_robot" / "charmie.urdf"
JOINT_MAP = ROOT / "test" / "data" / "charmie_robot" / "joint_map.yaml"
WORLD, BASE_LINK = "odom", "base_link"
ARMS = tuple(f"theta{j}{side}" for side in "ab" for j in range(7, 13))
ARM_POSITIONS = dict(zip(ARMS, (0.3, -0.7, 0.5, 1.1, -0.4, 0.8,
                                -0.2, 0.6, -0.9, -1.0, 0.3, -0.5)))


@pytest.fixture(scope="module")
def model():
    return load_model(MODEL)


@pytest.fixture(scope="module")
def joint_map():
    return read_joint_map([], str(JOINT_MAP))


@pytest.fixture(scope="module")
def prepared(model, joint_map):
    """The model as the dynamics node prepares it (its evaluator, with the map's checks)."""
    return prepare_model(model, "", str(MODEL), [""], [""], joint_map,
                         frames=(WORLD, BASE_LINK))


def odometry_quaternion(yaw: float) -> tuple[float, float, float, float]:
    return 0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)


# ---------------------------------------------------------------- 1: dynamics

PSI, ACCELERATION, V0, DT = 0.4, 2.0, 0.3, 1e-3
X0, Y0 = 1.5, -0.8


def odometry_inputs(model, base):
    """x, xd, xdd (input order) from two odometry samples DT apart of base_link moving
    forward (its x axis, yaw PSI) at V0 and then V0 + ACCELERATION * DT; the arms at
    ARM_POSITIONS, the actuators at 0.40 m, every other joint at 0 and at rest."""
    heading = np.array([math.cos(PSI), math.sin(PSI)])
    step = (V0 * DT + 0.5 * ACCELERATION * DT ** 2) * heading
    q = odometry_quaternion(PSI)
    _, v0 = base_from_odometry(base, X0, Y0, q, (V0, 0.0), 0.0)
    p1, v1 = base_from_odometry(base, X0 + step[0], Y0 + step[1], q,
                                (V0 + ACCELERATION * DT, 0.0), 0.0)
    names = model.input_names
    x, xd, xdd = (np.zeros(len(names)) for _ in range(3))
    for c in base.coordinates:
        k = names.index(c)
        x[k], xd[k], xdd[k] = p1[c], v1[c], (v1[c] - v0[c]) / DT
    for name, value in {**ARM_POSITIONS, "act4": 0.40, "act5": 0.40}.items():
        x[names.index(name)] = value
    return x, xd, xdd


def oracle_base_state(model):
    """d1, d2, theta3 and their rates of a robot at the second odometry sample, moving
    towards body_3's ``front`` point (never ``base.rotation``): theta3 turns that point's
    direction, found with theta3 = 0 by Pinocchio, onto (cos PSI, sin PSI)."""
    pm = pinocchio_model(model)
    pd = pm.createData()
    body = model.body_index("body_3")
    pin.forwardKinematics(pm, pd, np.zeros(pm.nq))
    front = pd.oMi[body + 1].rotation @ model.bodies[body].points["front"]
    theta3 = PSI - math.atan2(front[1], front[0])
    heading = np.array([math.cos(PSI), math.sin(PSI)])
    v1 = V0 + ACCELERATION * DT
    position = (X0 + (V0 * DT + 0.5 * ACCELERATION * DT ** 2) * heading[0],
                Y0 + (V0 * DT + 0.5 * ACCELERATION * DT ** 2) * heading[1], theta3)
    return (dict(zip(("d1", "d2", "theta3"), position)),
            dict(zip(("d1", "d2", "theta3"), (*(v1 * heading), 0.0))),
            dict(zip(("d1", "d2", "theta3"), (*(ACCELERATION * heading), 0.0))))


def pinocchio_arm_torques(model, q, qd, qdd) -> np.ndarray:
    """RNEA on the model's open tree (pin_oracle); the arms' joints are one body each."""
    pm = pinocchio_model(model)
    tau = pin.rnea(pm, pm.createData(), *(pin_joint_vector(model, v) for v in (q, qd, qdd)))
    body = {b.coordinate: i for i, b in enumerate(model.bodies)}
    return np.array([tau[body[c]] for c in ARMS])


def test_forward_acceleration_of_base_link_loads_the_arms_as_pinocchio_does(model, prepared):
    evaluator = prepared.evaluator
    names = evaluator.input_names
    position, velocity, acceleration = oracle_base_state(model)

    def arm_error(base) -> tuple[float, np.ndarray]:
        result = evaluator(*odometry_inputs(model, base))
        # the oracle's state: base from `front`, the rest as resolved (d4, theta5 from the
        # actuators, at rest)
        q, qd, qdd = (np.array(v, dtype=float) for v in
                      (result.state.q, result.state.qd, result.state.qdd))
        for c in position:
            k = model.coordinate_names.index(c)
            q[k], qd[k], qdd[k] = position[c], velocity[c], acceleration[c]
        expected = pinocchio_arm_torques(model, q, qd, qdd)
        got = np.array([result.efforts[names.index(c)] for c in ARMS])
        return float(np.abs(got - expected).max() / max(1.0, np.abs(expected).max())), \
            result.efforts.copy()

    error, efforts = arm_error(model.base)
    assert error < 1e-9, error
    # the whole robot is pushed forward (the inverse dynamics has no friction: rigid body,
    # springs and balancers are internal): F = total mass * a along base_link's x
    force = np.array([efforts[names.index("d1")], efforts[names.index("d2")]])
    expected = model.total_mass * ACCELERATION * np.array([math.cos(PSI), math.sin(PSI)])
    assert np.abs(force - expected).max() < 1e-9 * np.abs(expected).max(), (force, expected)
    # mutation: a base whose body_3 were base_link (rotation dropped) is caught
    unturned = dataclasses.replace(model.base, rotation=np.eye(3))
    assert arm_error(unturned)[0] > 1e-3


# ---------------------------------------------------------------- 2: frames

def node_plan(model, prepared, joint_map):
    """frame_plan as DynamicsNode._install builds it: publish_tf all, the base transform left
    to the odometry, base_link, odom, no prefix, the map's links."""
    frames, inputs = prepared.evaluator.frames, prepared.evaluator.input_names
    return frame_plan(model, frames.parents, frames.children,
                      sum(1 for j in model.joint_type if j != JointType.FIXED), inputs,
                      "all", False, BASE_LINK, WORLD, "", joint_map.links)


def published(model, plan, result, world: str = WORLD) -> dict[str, tuple[str, pin.SE3]]:
    """child -> (parent, pose): /tf as monitoring._publish fills it, then /tf_static
    (DynamicsNode._publish_static_frames); no frame twice."""
    out: dict[str, tuple[str, pin.SE3]] = {}
    transforms = []
    poses = list(plan.poses)
    translations, quaternions = result.translations[poses], result.quaternions[poses]
    plan.turn_poses(translations, quaternions)
    for j, (t, xyzw) in enumerate(zip(translations, quaternions)):
        R = pin.Quaternion(xyzw[3], xyzw[0], xyzw[1], xyzw[2]).toRotationMatrix()
        transforms.append((plan.parents[j], plan.children[j], R, np.asarray(t)))
    transforms += static_frames(model, plan, world)
    for parent, child, R, t in transforms:
        assert child not in out, f"{child} published twice"
        out[child] = (parent, pin.SE3(np.array(R), np.array(t, dtype=float)))
    return out


def in_frame(frames, child: str, root: str = BASE_LINK) -> pin.SE3:
    """Compose parents up to ``root`` (fails for a frame that does not reach it)."""
    pose = pin.SE3.Identity()
    for _ in range(len(frames) + 1):
        if child == root:
            return pose
        assert child in frames, f"{child} does not reach {root}"
        parent, M = frames[child]
        pose, child = M * pose, parent
    raise AssertionError(f"a loop in the parents of {child}")


def random_inputs(model, rng):
    """Inputs within the limits: joints uniform in theirs, the actuators in their stroke,
    the base anywhere near the odometry's origin."""
    limits = InputLimits.of(model)
    strokes = {a.name: a.stroke for a in model.actuators}
    x = np.empty(len(model.input_names))
    for k, name in enumerate(model.input_names):
        if name in strokes:
            x[k] = rng.uniform(*strokes[name])
        elif name in limits.lower:
            x[k] = rng.uniform(limits.lower[name], limits.upper[name])
        elif name == "theta3":
            x[k] = rng.uniform(-math.pi, math.pi)
        else:
            x[k] = rng.uniform(-5.0, 5.0)
    return x


def urdf_configuration(pm, urdf, model, joint_map, q) -> np.ndarray:
    """Pinocchio's q of the URDF: each mapped joint its coordinate, a mimic joint
    multiplier * leader + offset, the wheels at 0."""
    angle = {joint: q[model.coordinate_names.index(c)]
             for c, joint in joint_map.hardware.items() if c in model.coordinate_names}
    for e in urdf.findall("joint"):
        mimic = e.find("mimic")
        if mimic is not None:
            angle[e.get("name")] = float(mimic.get("multiplier", "1")) \
                * angle[mimic.get("joint")] + float(mimic.get("offset", "0"))
    out = pin.neutral(pm)
    for joint, value in angle.items():
        jm = pm.joints[pm.getJointId(joint)]
        assert jm.nq == 1, joint
        out[jm.idx_q] = value
    return out


def test_published_frames_coincide_with_the_robots_urdf_links(model, prepared, joint_map):
    text = URDF.read_text(encoding="utf-8")
    pm = pin.buildModelFromXML(text)
    pd = pm.createData()
    urdf = ET.fromstring(text)
    links = {e.get("name") for e in urdf.findall("link")}
    plan = node_plan(model, prepared, joint_map)
    evaluator = prepared.evaluator
    zeros = np.zeros(len(evaluator.input_names))
    rng = np.random.default_rng(3)

    def worst(plan) -> float:
        error = 0.0
        for _ in range(10):
            result = evaluator(random_inputs(model, rng), zeros, zeros)
            frames = published(model, plan, result)
            assert BASE_LINK not in frames
            compared = set(frames) & links
            assert compared == links & set(joint_map.links.values()) - {BASE_LINK}
            pin.framesForwardKinematics(pm, pd, urdf_configuration(
                pm, urdf, model, joint_map, np.asarray(result.state.q)))
            base = pd.oMf[pm.getFrameId(BASE_LINK, pin.FrameType.BODY)]
            for link in compared:
                expected = base.actInv(pd.oMf[pm.getFrameId(link, pin.FrameType.BODY)])
                got = in_frame(frames, link)
                error = max(error, np.abs(got.translation - expected.translation).max(),
                            np.abs(got.rotation - expected.rotation).max())
            for child in frames:                 # the segments too reach base_link
                in_frame(frames, child)
        return error

    assert plan.root == BASE_LINK and plan.turn is not None
    assert worst(plan) < 1e-9
    # mutation: the same frames published without the turn into base_link are caught
    assert worst(dataclasses.replace(plan, turn=None)) > 1e-3


# ---------------------------------------------------------------- 3: units

MAP_FILE = """\
names: {theta8a: left_arm_joint_2, act4: lift_actuator}
scale: {act4: 0.001, theta8a: -0.5}
offset: {act4: 0.33, theta8a: 0.1}
effort_scale: {act4: 0.0125, theta8a: 2.0}
links: {body_3: base_link, body_4: lift_link}
"""


def test_hardware_units_round_trip_and_feedforward_scaled_after_clamping(model, tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text(MAP_FILE)
    jm = read_joint_map([], str(path))
    assert jm.links == {"body_3": "base_link", "body_4": "lift_link"}
    jm.check_links(model.body_names, "body_3", BASE_LINK, WORLD, "charmie.yaml")
    inputs, coordinates = model.input_names, model.coordinate_names
    units = OutputUnits.of(jm, coordinates, inputs, ("d4", "theta5"))
    assert units.solved == (3, 4)
    # hardware -> model (JointMap.convert) -> hardware (hardware_positions): the same numbers
    rng = np.random.default_rng(5)
    hardware = dict(zip(inputs, rng.uniform(-1.0, 1.0, len(inputs))))
    hardware["act4"] = 70.0                                    # mm of extension: 0.40 m
    rates = dict(zip(inputs, rng.uniform(-1.0, 1.0, len(inputs))))
    positions, velocities = dict(hardware), dict(rates)
    jm.convert(positions, velocities)
    assert positions["act4"] == pytest.approx(0.40, abs=1e-15)
    q, qd = hardware_positions(units.inputs, np.array([positions[n] for n in inputs]),
                               np.array([velocities[n] for n in inputs]))
    assert np.abs(q - [hardware[n] for n in inputs]).max() < 1e-12
    assert np.abs(qd - [rates[n] for n in inputs]).max() < 1e-12
    scale, offset = units.coordinates                          # act4 is not a coordinate
    k = coordinates.index("theta8a")
    assert (scale[k], offset[k]) == (-0.5, 0.1) and np.count_nonzero(scale != 1.0) == 1
    efforts = rng.normal(size=len(inputs))
    factors = np.ones(len(inputs))
    factors[[inputs.index("act4"), inputs.index("theta8a")]] = 0.0125, 2.0
    assert np.array_equal(hardware_efforts(units.input_efforts, efforts), efforts * factors)
    assert hardware_efforts(None, efforts) is efforts
    # the feedforward: clamped at the model's limits (act4 4000 N, theta8a 30 N m), then scaled
    joints = ["act4", "theta8a", "theta9a"]
    feedforward = FeedforwardMap(model, inputs, joints, jm.effort_out(joints))
    u = np.zeros(len(inputs))
    u[[inputs.index(j) for j in joints]] = 5000.0, -40.0, 5.0
    assert feedforward.beyond_limits(u) == ("act4", "theta8a")
    np.testing.assert_allclose(feedforward(u, clamp=True), [50.0, -60.0, 5.0], rtol=1e-15)
    np.testing.assert_allclose(feedforward(u, clamp=False), [62.5, -80.0, 5.0], rtol=1e-15)


@pytest.mark.parametrize("section, problem", [
    ("links: {body_4: lift_link, body_5: lift_link}", r"links: 'body_4' and 'body_5' both map "
                                                      r"to link 'lift_link'"),
    ("links: {body_99: nowhere_link}", r"links\.body_99: not a body of the model"),
    ("links: {body_3: chassis_link}", r"links\.body_3: 'chassis_link', but base_frame"),
    # names tf2 or a URDF parser refuses (the attack's: published as frames before)
    ("links: {body_5: /torso_link}", r"links\.body_5: got '/torso_link', expected a name"),
    ("links: {body_5: 'torso link'}", r"links\.body_5: got 'torso link', expected a name"),
    ("names: {theta8a: 'left arm joint 2'}", r"names\.theta8a: got 'left arm joint 2'"),
    # a factor that turns a finite effort into inf (the attack's: inf on the feedforward)
    ("effort_scale: {act4: 1.7e+308}", r"effort_scale\.act4: 1\.7e\+308, expected a finite "
                                       r"number, not 0, at least 1e-06 and at most 1e\+06"),
    # the review's: a tiny scale divides published positions into inf
    ("scale: {act4: 1.0e-308}", r"scale\.act4: 1e-308, expected a finite number, not 0, at "
                                r"least 1e-06"),
    # links onto the turned base's frames (review): two parents for base_link
    ("links: {body_9c: base_link}", r"bodies 'body_3' and 'body_9c' would both be frame "
                                    r"'base_link'"),
])
def test_bad_maps_name_the_file_and_the_field(model, tmp_path, section, problem):
    path = tmp_path / "map.yaml"
    path.write_text(f"{section}\n")
    with pytest.raises(JointMapError) as info:
        read_joint_map([], str(path)).check_links(model.body_names, "body_3", BASE_LINK,
                                                  WORLD, "charmie.yaml")
    assert str(info.value).startswith(f"{path}: ")
    assert info.match(problem)


def test_exported_urdf_with_the_joint_map_is_the_robots(model, tmp_path):
    """``export-urdf --joint-map``: joints and links under the robot's names, base_link
    turned as the designers' URDF has it (every shared link at the same place in base_link,
    at random joint values), and the SRDF's passive joints the ones the node solves."""
    from charmie_dynamics.cli.main import main as cli
    assert cli(["export-urdf", "--out", str(tmp_path), "--joint-map", str(JOINT_MAP)]) == 0
    exported = pin.buildModelFromXML((tmp_path / "charmie.urdf").read_text())
    robot = pin.buildModelFromXML(URDF.read_text())
    rng = np.random.default_rng(11)
    shared = [f.name for f in robot.frames if f.type == pin.FrameType.BODY
              and exported.existFrame(f.name) and f.name != BASE_LINK]
    assert len(shared) == 24, shared            # every mapped link but base_link
    for _ in range(5):
        values = {name: rng.uniform(-0.5, 0.5) for name in robot.names[1:]}
        placements = []
        for pm, text in ((exported, (tmp_path / "charmie.urdf").read_text()), (robot, URDF.read_text())):
            # a mimic joint follows its leader (Pinocchio reads it as a joint of its own)
            mimic = {j.get("name"): (m.get("joint"), float(m.get("multiplier", 1)),
                                     float(m.get("offset", 0)))
                     for j in ET.fromstring(text).iter("joint") if (m := j.find("mimic")) is not None}
            q = pin.neutral(pm)
            for j in range(1, pm.njoints):
                name = pm.names[j]
                if name in mimic:
                    leader, k, offset = mimic[name]
                    q[pm.joints[j].idx_q] = k * values[leader] + offset
                elif name in values and pm.joints[j].nq == 1:
                    q[pm.joints[j].idx_q] = values[name]
            data = pm.createData()
            pin.framesForwardKinematics(pm, data, q)
            base = data.oMf[pm.getFrameId(BASE_LINK)]
            placements.append({n: base.actInv(data.oMf[pm.getFrameId(n)]) for n in shared})
        for name in shared:
            assert np.abs(placements[0][name].homogeneous - placements[1][name].homogeneous).max() \
                < 1e-9, name
    # and loads back, with its overlay, as the model under the robot's names
    from charmie_dynamics.dynamics.inverse import inverse_dynamics
    from charmie_dynamics.kinematics.state import resolve_state
    back = load_model(tmp_path / "charmie.urdf", overlay=tmp_path / "overlay.yaml")
    hardware = read_joint_map([], str(JOINT_MAP)).to_hardware
    assert back.input_names == tuple(n if n in model.actuator_names else hardware([n])[0]
                                     for n in model.input_names)     # actuators keep theirs
    x = random_inputs(model, np.random.default_rng(2))
    xd = np.random.default_rng(4).normal(size=x.size) * 0.1
    efforts = [inverse_dynamics(m, resolve_state(m, x, xd, xd)).coordinate_effort
               for m in (model, back)]
    order = [back.coordinate_names.index(n) for n in hardware(model.coordinate_names)]
    np.testing.assert_allclose(efforts[1][order], efforts[0], rtol=1e-10, atol=1e-10)
    # the yaw joint, now base_link's, keeps body_3's friction (the review's: it was dropped)
    assert back.bodies[back.body_index(BASE_LINK)].friction == \
        model.bodies[model.body_index("body_3")].friction
    srdf = ET.fromstring((tmp_path / "charmie.srdf").read_text())
    assert [p.get("name") for p in srdf.findall("passive_joint")] == ["lift_joint",
                                                                       "torso_pitch_joint"]


def test_no_static_frame_hangs_from_a_frame_left_to_the_odometry(model, prepared):
    """A fixed body on one of the planar base's massless bodies (not published with
    publish_base_transform false) is left out of /tf_static, where it would hang from a frame
    no one publishes; with the base's transforms published it is there."""
    import yaml

    from charmie_dynamics.model import model_from_dict
    document = yaml.safe_load(MODEL.read_text())
    document["bodies"].append({"name": "floor_marker", "parent": "body_2", "joint": {"type": "F"},
                              "virtual": True})
    marked = model_from_dict(document, "charmie + floor_marker")
    frames = prepare_model(marked, "", "test", [""], [""], frames=(WORLD, BASE_LINK)).evaluator.frames
    n_moving = sum(1 for j in marked.joint_type if j != JointType.FIXED)
    for publish_base, expected in ((False, set()), (True, {"floor_marker"})):
        plan = frame_plan(marked, frames.parents, frames.children, n_moving, marked.input_names,
                          "all", publish_base, BASE_LINK, WORLD, "")
        children = {child for _, child, _, _ in static_frames(marked, plan, WORLD)}
        assert children & {"floor_marker"} == expected


def test_alone_the_node_and_the_loaders_urdf_agree_on_every_link(model, prepared):
    """Simulation (config/sim.yaml: publish_tf all, the base's transforms published, no
    base_frame, the loader's robot_description from export): the turned base body is
    published as base_link with the body's own frame its fixed child, as the exported URDF
    has them, so RViz draws every link of that URDF where the node's /tf puts it."""
    from charmie_dynamics.export.urdf import urdf_from_model
    text = urdf_from_model(model, include_auxiliary=False)
    pm = pin.buildModelFromXML(text)
    pd = pm.createData()
    mimic = {j.get("name"): (m.get("joint"), float(m.get("multiplier")), float(m.get("offset")))
             for j in ET.fromstring(text).iter("joint") if (m := j.find("mimic")) is not None}
    frames = prepared.evaluator.frames
    plan = frame_plan(model, frames.parents, frames.children,
                      sum(1 for j in model.joint_type if j != JointType.FIXED),
                      prepared.evaluator.input_names, "all", True, "", "world", "")
    assert plan.frame[model.base.body] == BASE_LINK
    zeros = np.zeros(len(prepared.evaluator.input_names))
    rng = np.random.default_rng(5)
    links = [f.name for f in pm.frames if f.type == pin.FrameType.BODY and f.name != "world"]
    assert {BASE_LINK, "body_3", "body_4", "body_13a2"} <= set(links)
    for _ in range(5):
        result = prepared.evaluator(random_inputs(model, rng), zeros, zeros)
        node = published(model, plan, result, "world")
        q = pin.neutral(pm)
        value = dict(zip(model.coordinate_names, result.state.q))
        for j in range(1, pm.njoints):
            name = pm.names[j]
            leader, k, offset = mimic.get(name, (name, 1.0, 0.0))
            angle, at = k * value[leader] + offset, pm.joints[j].idx_q
            if pm.joints[j].nq == 2:           # continuous (theta3): cos, sin
                q[at:at + 2] = math.cos(angle), math.sin(angle)
            else:
                q[at] = angle
        pin.framesForwardKinematics(pm, pd, q)
        for link in links:
            got = in_frame(node, link, "world")
            expected = pd.oMf[pm.getFrameId(link, pin.FrameType.BODY)]
            assert np.abs(got.homogeneous - expected.homogeneous).max() < 1e-9, link


def test_an_overlay_base_may_not_take_a_urdf_joints_name(tmp_path):
    """The attack's: a mimic joint's name as the base's yaw read the gripper's angle as the
    base's heading from joint_states."""
    from charmie_dynamics.model import ModelError
    overlay = tmp_path / "overlay.yaml"
    for names, field in (("[x, y, left_gripper_mimic_joint]", "base.coordinates"),
                         ("[x, y, left_arm_mount_joint]", "base.coordinates"),
                         ("[x, ' y', yaw]", r"base.coordinates\[1\]")):
        overlay.write_text(f"format: charmie_dynamics/overlay/1\nbase: {{coordinates: {names}}}\n")
        with pytest.raises(ModelError, match=f"overlay.yaml: {field}: got"):
            load_model(URDF, overlay=overlay)


def test_the_loaders_robot_description_takes_the_joint_map(tmp_path):
    """model_loader's ``joint_map_file``: the URDF it publishes for a YAML model carries the
    robot's joint and link names; a map naming a body the model lacks is the file's error."""
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.ros.common.model_source import model_to_publish
    published = model_to_publish(MODEL, None, 1 << 22, "", read_joint_map([], str(JOINT_MAP)))
    robot = ET.fromstring(published.description)
    assert {"lift_link", "torso_link", BASE_LINK, "body_3"} <= {e.get("name") for e in robot.iter("link")}
    assert {"lift_joint", "left_gripper_joint"} <= {e.get("name") for e in robot.iter("joint")}
    bad = tmp_path / "map.yaml"
    bad.write_text("links: {body_99: somewhere_link}\n")
    with pytest.raises(ModelError, match=r"map\.yaml: links\.body_99"):
        model_to_publish(MODEL, None, 1 << 22, "", read_joint_map([], str(bad)))
    # a URDF is published as read: a map for it is a mistake, said (the attack's: ignored)
    with pytest.raises(ModelError, match=r"charmie\.urdf: joint_map_file .* with a URDF"):
        model_to_publish(URDF, None, 1 << 22, "", read_joint_map([], str(JOINT_MAP)))


def test_the_urdf_path_keeps_a_planar_base_under_the_robots_names(tmp_path):
    """model_source robot_description with an overlay's base: the designers' base_link rides
    x, y, yaw fed by the odometry (REP 103 already: no turn), its links and joints keep
    their names, and the node's evaluator takes the odometry's coordinates as inputs."""
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("format: charmie_dynamics/overlay/1\n"
                       "base: {coordinates: [base_x, base_y, base_yaw]}\n")
    robot = load_model(URDF, overlay=overlay)
    assert robot.base.coordinates == ("base_x", "base_y", "base_yaw")
    assert robot.base.body == BASE_LINK and robot.base.heading == 0.0
    assert {"lift_link", "left_arm_link_1"} <= set(robot.body_names)
    prepared = prepare_model(robot, "", "robot_description", [""], [""], frames=(WORLD, ""))
    assert prepared.evaluator.input_names[:3] == robot.base.coordinates
    positions, velocities = base_from_odometry(robot.base, 1.0, 2.0, odometry_quaternion(0.3),
                                               (0.5, 0.0), 0.1)
    assert positions == pytest.approx({"base_x": 1.0, "base_y": 2.0, "base_yaw": 0.3})
    assert velocities == pytest.approx({"base_x": 0.5 * math.cos(0.3),
                                        "base_y": 0.5 * math.sin(0.3), "base_yaw": 0.1})
    frames = prepared.evaluator.frames
    plan = frame_plan(robot, frames.parents, frames.children,
                      sum(1 for j in robot.joint_type if j != JointType.FIXED),
                      prepared.evaluator.input_names, "not_in_urdf", False, "", WORLD, "")
    assert plan.root == BASE_LINK and plan.turn is None
