"""The helical joint (type H, Pinocchio's JointModelHelicalUnaligned): what the random trees of
test_joint_transform.py cover with it, a hand-written helical chain against Pinocchio
(pin_oracle.py) and against finite differences of forward kinematics, its pitch in the model
file (units, errors) and the places that refuse it (actuators, URDF export, loops)."""
import re

import numpy as np
import pytest

import test_inverse_dynamics
import test_motion_pass
from charmie_dynamics import forward_kinematics
from charmie_dynamics.export.urdf import urdf_from_model
from charmie_dynamics.layout import KIND
from charmie_dynamics.mechanisms.closed_chains import ClosedChain, LoopAssemblyError
from charmie_dynamics.model import JointType, ModelError, model_from_dict
from charmie_dynamics.model.joint import HELICAL_KIND, PRISMATIC_KIND
from test_closed_chains import five_bar_doc
from test_joint_transform import SEEDS, aba_paths, random_tree

BOX = {"mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]}}


def chain(units=None, pitch=(5.0, -2.5, 8.0)):
    """A chain of three helical joints (lengths in mm: pitch in mm/rad) beside a prismatic
    and a revolute joint, one helical joint coupled to the first with a multiplier."""
    def body(name, parent, joint, origin):
        return {"name": name, "parent": parent, "origin": origin, "joint": joint,
                "mass": 1.5, "com": [10, -20, 30],
                "inertia": {"ixx": 2e3, "iyy": 3e3, "izz": 4e3, "ixy": 100}}
    return {"format": "charmie_dynamics/model/1", "name": "helical_chain",
            "units": units or {"length": "mm"}, "gravity": [0.1, 0.2, -9.81], "bodies": [
                body("h0", "world", {"type": "H", "axis": "z", "coordinate": "q0",
                                     "pitch": pitch[0]}, [0, 0, 100]),
                body("p1", "h0", {"type": "P", "axis": [1, 1, 0], "coordinate": "q1"},
                     [50, 0, 0]),
                body("h2", "p1", {"type": "H", "axis": [0.3, -1, 2], "coordinate": "q2",
                                  "pitch": pitch[1]}, [0, 80, 0]),
                body("r3", "h2", {"type": "R", "axis": "-x", "coordinate": "q3"}, [0, 0, 60]),
                body("h4", "r3", {"type": "H", "axis": [1, 0, 1], "coordinate": "q0",
                                  "multiplier": -0.7, "pitch": pitch[2]}, [30, 30, 0])]}


@pytest.fixture(scope="module")
def helical_chain():
    return model_from_dict(chain(), "helical_chain.yaml")


def test_random_helical_trees_cover_the_cases():
    """The helical trees that test_joint_transform.py checks against Pinocchio hold helical
    joints beside prismatic and revolute ones, helical mimic joints with a multiplier and an
    offset, and coupled coordinates of both ABA paths (reduced in the recursion, Cholesky)."""
    mimics, models = 0, []
    for seed in SEEDS:
        document, params = random_tree(seed, helical=True)
        models.append(model_from_dict(document))
        kinds = set(models[-1].compiled.packed.body_int[:, KIND].tolist())
        assert {HELICAL_KIND, PRISMATIC_KIND} <= kinds and np.any(
            models[-1].joint_type == JointType.REVOLUTE), seed
        mimics += any(p["type"] == "H" and p["coordinate"] and not p["leader"]
                      and p["offset"] != 0.0 and p["multiplier"] != 1.0 for p in params)
    reduced, across = aba_paths(models)
    assert mimics >= 3 and reduced >= 2 and across >= 2, (mimics, reduced, across)


def test_chain_against_pinocchio(helical_chain):
    """Body velocities and accelerations, and the inverse dynamics, against Pinocchio's
    JointModelHelicalUnaligned (pin_oracle.py), through the tests written for every model."""
    test_motion_pass.test_against_pinocchio(helical_chain)
    test_inverse_dynamics.test_open_tree_against_pinocchio_rnea(helical_chain)


def test_chain_against_finite_differences(helical_chain):
    """omega, the origin's and the com's velocity and acceleration of the motion pass against
    central differences of forward kinematics along a smooth motion."""
    test_motion_pass.test_against_finite_differences(helical_chain)


def test_root_joint_turns_and_slides_by_the_pitch(helical_chain):
    """h0 (axis z, 5 mm/rad) at angle t: its origin rises by 0.005 t m and its frame is
    turned by t about z; h4's joint value is -0.7 q0."""
    t = np.array([[0.0, 0, 0, 0], [1.3, 0, 0, 0], [-2.0, 0, 0, 0]])
    fk = forward_kinematics(helical_chain, t)
    np.testing.assert_allclose(fk.origin_world[:, 0], [[0, 0, 0.1 + 0.005 * a] for a in t[:, 0]],
                               rtol=0, atol=1e-15)
    c, s = np.cos(1.3), np.sin(1.3)
    np.testing.assert_allclose(fk.rotation_world[1, 0], [[c, -s, 0], [s, c, 0], [0, 0, 1]],
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(fk.joint_values[:, 4], -0.7 * t[:, 0], rtol=1e-15)


def test_pitch_and_angles_in_the_files_units(helical_chain):
    """A pitch in mm/rad is m/rad / 1000 (converted once at load); the joint is angular:
    limits and offset in units.angle, friction in N m s/rad, whatever the length unit."""
    assert helical_chain.pitch.tolist() == pytest.approx([0.005, 0.0, -0.0025, 0.0, 0.008],
                                                         abs=1e-18)
    si = chain({"length": "m"}, (0.005, -0.0025, 0.008))
    for body in si["bodies"]:
        body["origin"] = [x / 1000 for x in body["origin"]]
        body["com"] = [x / 1000 for x in body["com"]]
        body["inertia"] = {k: v * 1e-6 for k, v in body["inertia"].items()}
    q = np.random.default_rng(3).uniform(-2, 2, (4, helical_chain.n_coordinates))
    np.testing.assert_allclose(forward_kinematics(model_from_dict(si), q).origin_world,
                               forward_kinematics(helical_chain, q).origin_world,
                               rtol=0, atol=1e-15)
    document = chain({"length": "mm", "angle": "deg"})
    document["bodies"][0]["joint"].update(limits={"lower": -90, "upper": 180, "velocity": 90},
                                          friction={"viscous": 0.5, "coulomb": 2.0},
                                          offset=45)
    h0 = model_from_dict(document).bodies[0]
    assert JointType.HELICAL.angular and not JointType.HELICAL.linear
    assert JointType.HELICAL.unit == "rad"
    assert (h0.limits.lower, h0.limits.upper, h0.limits.velocity) == pytest.approx(
        (-np.pi / 2, np.pi, np.pi / 2))
    assert (h0.offset, h0.friction.viscous, h0.friction.coulomb) == pytest.approx(
        (np.pi / 4, 0.5, 2.0))


@pytest.mark.parametrize("units, value, expected", [
    ("mm", float("nan"), "got nan, expected a finite number"),
    ("m", float("inf"), "got inf, expected a finite number"),
    ("m", "steep", "got 'steep', expected a number"),
    ("m", 1.5, "got 1.5, expected |pitch| <= 1 m/rad: are the units (units.length) right?"),
    ("mm", -2000, "got -2000 (-2 m/rad), expected |pitch| <= 1 m/rad: are the units"),
])
def test_bad_pitch_names_file_field_and_range(units, value, expected):
    document = chain({"length": units}, {"m": (0.005, 0, 0.008), "mm": (5, 0, 8)}[units])
    document["bodies"][2]["joint"]["pitch"] = value
    with pytest.raises(ModelError, match=re.escape(
            f"bad.yaml: bodies[2] (h2).joint.pitch: {expected}")):
        model_from_dict(document, "bad.yaml")


def test_pitch_missing_or_on_another_joint_is_refused():
    document = chain()
    del document["bodies"][0]["joint"]["pitch"]
    with pytest.raises(ModelError, match=re.escape(
            "bad.yaml: bodies[0] (h0).joint.pitch: missing required field")):
        model_from_dict(document, "bad.yaml")
    # the file, the field path to pitch itself, the type as written and the valid range (it
    # named bodies[k].joint and the enum's name)
    for k, kind in ((1, "prismatic"), (3, "revolute")):
        document = chain()
        document["bodies"][k]["joint"]["pitch"] = 1.0
        written = document["bodies"][k]["joint"]["type"]
        name = document["bodies"][k]["name"]
        with pytest.raises(ModelError, match=re.escape(
                f"bad.yaml: bodies[{k}] ({name}).joint.pitch: got 1.0 on a '{written}' joint "
                f"({kind}), expected pitch only on a helical joint (type H): a number, "
                "|pitch| <= 1 m/rad")):
            model_from_dict(document, "bad.yaml")


def test_actuator_urdf_export_and_loops_refuse_a_helical_joint(helical_chain):
    document = chain()
    document["bodies"][1]["points"] = {"F": [0, 0, 50]}
    document["bodies"][2]["points"] = {"G": [0, 0, 10]}
    document["actuators"] = [{"name": "act", "drives": "h2", "base": "p1.F", "end": "h2.G",
                              "branch": 1, "stroke": [30, 90], "default_length": 60}]
    with pytest.raises(ModelError, match=re.escape(
            "bad.yaml: actuators[0] (act).drives: h2 has a helical joint, expected R or P")):
        model_from_dict(document, "bad.yaml")
    with pytest.raises(ModelError, match=re.escape(
            "helical_chain.yaml: URDF export of 'helical_chain': body 'h0' has a helical joint")):
        urdf_from_model(helical_chain)
    five_bar = five_bar_doc()
    next(b for b in five_bar["bodies"] if b["name"] == "link2_1")["joint"].update(
        type="H", pitch=0.0)
    with pytest.raises(LoopAssemblyError, match=re.escape(
            "five_bar.yaml: body link2_1: joint.type: a helical joint (type H) in a model with "
            "loops, expected revolute (R), prismatic (P) or fixed (F) joints only")):
        ClosedChain.build(model_from_dict(five_bar, "five_bar.yaml"))
    # the slide pitch x angle limit is a length, bounded as every length (100 m)
    long_slide = five_bar_doc()                      # degrees: 10,000 deg = 174.5 rad
    joint = next(b for b in long_slide["bodies"] if b["name"] == "link1_1")["joint"]
    joint.update(type="H", pitch=1.0, limits={"lower": -10, "upper": 10000})
    with pytest.raises(ModelError, match=re.escape(
            "five_bar.yaml: bodies[0] (link1_1).joint.limits.upper: got 10000 with pitch 1.0: a "
            "slide of 174.533 m, expected |pitch x limit| <= 100 m")):
        model_from_dict(long_slide, "five_bar.yaml")
