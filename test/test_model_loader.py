"""The model loader: every class of bad model file is rejected with a ModelError whose message
names the file, the entry and field, the bad value and what was expected; good files load to
the right numbers (units, inertia estimates, body order)."""
import copy
import os
import re
import threading
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import yaml

from charmie_dynamics import forward_kinematics
from charmie_dynamics.model import ModelError, load_model, model_from_text, read_model_file
from conftest import CHARMIE

# ---------------------------------------------------------------- helpers

def minimal():
    """A valid 3-body model in metres: revolute base, prismatic link, fixed tool, one spring."""
    return {
        "format": "charmie_dynamics/model/1",
        "name": "mini",
        "units": {"length": "m", "angle": "rad"},
        "bodies": [
            {"name": "base", "parent": "world", "origin": [0, 0, 0.1],
             "joint": {"type": "R", "axis": "z", "coordinate": "q1"},
             "mass": 2.0, "com": [0, 0, 0.05],
             "inertia": [[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0.01]],
             "points": {"tip": [0, 0, 0.2]}},
            {"name": "link", "parent": "base", "origin": [0, 0, 0.2],
             "joint": {"type": "P", "axis": "-z", "coordinate": "d2",
                       "limits": {"lower": 0.0, "upper": 0.1}},
             "mass": 1.0, "com": [0, 0, 0.1],
             "inertia": {"ixx": 0.01, "iyy": 0.01, "izz": 0.005}},
            {"name": "tool", "parent": "link", "origin": [0, 0, 0.3],
             "joint": {"type": "F"},
             "mass": 0.5, "com": [0, 0, 0.02],
             "inertia": {"solid_box": [0.05, 0.05, 0.04]},
             "points": {"tcp": [0, 0, 0.05]}},
        ],
        "springs": [{"name": "spring_a", "between": ["base.tip", "tool.tcp"],
                     "stiffness": 100.0, "free_length": 0.2}],
    }


@pytest.fixture(scope="module")
def charmie_data():
    with open(CHARMIE, encoding="utf-8") as f:
        return yaml.safe_load(f)


def write(tmp_path, data, name="model.yaml"):
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def ordered(*fragments):
    """A regex matching the fragments, literally, in this order."""
    return ".*".join(re.escape(f) for f in fragments)


def expect_error(path, *fragments):
    """load_model(path) raises ModelError starting with the file name, then the fragments."""
    with pytest.raises(ModelError, match=ordered(f"{path}: ", *fragments)) as info:
        load_model(path)
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)
    return str(info.value)


def body(data, name):
    return next(b for b in data["bodies"] if b["name"] == name)


def test_minimal_model_is_valid(tmp_path):
    model = load_model(write(tmp_path, minimal()))
    assert model.body_names == ("base", "link", "tool")
    assert model.coordinate_names == ("q1", "d2")
    assert model.total_mass == pytest.approx(3.5, abs=1e-15)


# ---------------------------------------------------------------- tree structure

def test_unknown_parent(tmp_path):
    data = minimal()
    data["bodies"][1]["parent"] = "nowhere"
    path = write(tmp_path, data)
    expect_error(path, "bodies[1] (link).parent", "'nowhere'", "expected world or one of the bodies")


def test_cycle_in_parents(tmp_path):
    data = minimal()
    data["bodies"][1]["parent"] = "tool"      # link <- tool <- link, base hangs from world
    path = write(tmp_path, data)
    msg = expect_error(path, "bodies", "cycle", "link, tool", "expected a tree rooted at world")
    assert "base" not in msg.split("cycle", 1)[1]


def test_self_parent_is_a_cycle(tmp_path):
    data = minimal()
    data["bodies"][2]["parent"] = "tool"
    expect_error(write(tmp_path, data), "cycle", "tool", "expected a tree rooted at world")


def test_duplicate_body_names(tmp_path):
    data = minimal()
    data["bodies"][2]["name"] = "link"
    data["springs"][0]["between"][1] = "link.tcp"
    path = write(tmp_path, data)
    expect_error(path, "bodies[2].name", "duplicate body name 'link'")


@pytest.mark.parametrize("section,index", [("springs", 0), ("actuators", 0)])
def test_duplicate_names_across_sections(tmp_path, charmie_data, section, index):
    data = copy.deepcopy(charmie_data)
    data[section][index]["name"] = "body_5"          # the name of a body
    path = write(tmp_path, data)
    expect_error(path, "duplicate name(s) body_5", "across bodies, actuators, springs")


def test_duplicate_names_actuator_and_spring(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    data["springs"][0]["name"] = "act4"
    expect_error(write(tmp_path, data), "duplicate name(s) act4")


def test_world_cannot_be_declared(tmp_path):
    data = minimal()
    data["bodies"][0]["name"] = "world"
    expect_error(write(tmp_path, data), "bodies[0] (world).name", "'world' is the ground")


# ---------------------------------------------------------------- missing / unknown fields

@pytest.mark.parametrize("field", ["name", "parent", "joint", "mass", "com", "inertia"])
def test_missing_required_body_field(tmp_path, field):
    data = minimal()
    del data["bodies"][1][field]
    path = write(tmp_path, data)
    where = "bodies[1].name" if field == "name" else f"bodies[1] (link).{field}"
    expect_error(path, where, "missing required field")


def test_missing_format(tmp_path):
    data = minimal()
    del data["format"]
    expect_error(write(tmp_path, data), "format", "missing required field")


def test_wrong_format(tmp_path):
    data = minimal()
    data["format"] = "charmie_dynamics/model/2"
    expect_error(write(tmp_path, data), "format", "'charmie_dynamics/model/2'",
                 "expected 'charmie_dynamics/model/1'")


@pytest.mark.parametrize("where,key", [("body", "colour"), ("joint", "damping"),
                                       ("top", "author"), ("inertia", "ixw")])
def test_unknown_field(tmp_path, where, key):
    data = minimal()
    if where == "body":
        data["bodies"][1][key] = "red"
        loc = "bodies[1] (link)"
    elif where == "joint":
        data["bodies"][1]["joint"][key] = 0.1
        loc = "bodies[1] (link).joint"
    elif where == "inertia":
        data["bodies"][1]["inertia"][key] = 0.0
        loc = "bodies[1] (link).inertia"
    else:
        data[key] = "me"
        loc = "top level"
    expect_error(write(tmp_path, data), loc, f"unknown field(s) {key}", "expected some of")


# ---------------------------------------------------------------- joints

def test_unknown_joint_type(tmp_path):
    data = minimal()
    data["bodies"][1]["joint"]["type"] = "Q"
    expect_error(write(tmp_path, data), "bodies[1] (link).joint.type", "'Q'",
                 "expected R, P, H, F, floating or C")


@pytest.mark.parametrize("axis", ["w", "xy", "X", "--x", "+-z", 1])
def test_unknown_axis(tmp_path, axis):
    data = minimal()
    data["bodies"][0]["joint"]["axis"] = axis
    expect_error(write(tmp_path, data), "bodies[0] (base).joint.axis", repr(axis),
                 "expected x, y, z, -x, -y or -z")


def test_axis_given_as_zero_vector(tmp_path):
    """An axis may be a vector (test_joint_transform.py), but not one without a direction."""
    data = minimal()
    data["bodies"][0]["joint"]["axis"] = [0, 0, 0]
    expect_error(write(tmp_path, data), "bodies[0] (base).joint.axis", "[0, 0, 0]",
                 "expected a nonzero vector")


def test_huge_directions_keep_their_direction(tmp_path):
    """|v| of [0, 0, 1e200] overflows to inf: the axis loaded as [0, 0, 0] and a quaternion
    as the identity, silently (the attack of 2026-11-23); they are z and 90 deg about z."""
    data = minimal()
    data["bodies"][0]["joint"]["axis"] = [0, 1e-300, 1e200]
    data["bodies"][2]["rotation"] = {"quaternion": [0, 0, 1e200, 1e200]}
    model = load_model(write(tmp_path, data))
    reference = minimal()
    reference["bodies"][0]["joint"]["axis"] = "z"
    reference["bodies"][2]["rotation"] = {"quaternion": [0, 0, 0.5 ** 0.5, 0.5 ** 0.5]}
    expected = load_model(write(tmp_path, reference, "reference.yaml"))
    q = np.array([0.7, 0.05])
    np.testing.assert_allclose(forward_kinematics(model, q).rotation_world,
                               forward_kinematics(expected, q).rotation_world, atol=1e-15)


@pytest.mark.parametrize("where", ["joint.type", "units.length", "units.angle",
                                   "solid_cylinder.axis"])
def test_list_where_a_word_is_expected(tmp_path, where):
    """A list where a keyword is expected: a ModelError, not a TypeError (unhashable)."""
    data = minimal()
    if where == "joint.type":
        data["bodies"][0]["joint"]["type"] = ["R"]
        loc, expected = "bodies[0] (base).joint.type", "expected R, P, H, F, floating or C"
    elif where.startswith("units"):
        data["units"][where.split(".")[1]] = ["m"]
        loc, expected = where, "expected "
    else:
        data["bodies"][2]["inertia"] = {"solid_cylinder": {"radius": 0.1, "length": 0.6,
                                                           "axis": ["z"]}}
        loc, expected = "bodies[2] (tool).inertia.solid_cylinder.axis", "expected x, y or z"
    expect_error(write(tmp_path, data), loc, "[", expected)


@pytest.mark.parametrize("key,value", [("axis", "z"), ("coordinate", "q9"), ("multiplier", 2.0)])
def test_fixed_joint_takes_no_axis(tmp_path, key, value):
    data = minimal()
    data["bodies"][2]["joint"][key] = value
    expect_error(write(tmp_path, data), "bodies[2] (tool).joint",
                 f"got {key} for a fixed joint (type F), expected none")


@pytest.mark.parametrize("value", [0, 0.0])
def test_multiplier_zero(tmp_path, value):
    data = minimal()
    data["bodies"][0]["joint"]["multiplier"] = value
    expect_error(write(tmp_path, data), "bodies[0] (base).joint.multiplier", "got 0",
                 "expected a non-zero number")


def test_limits_lower_not_below_upper(tmp_path):
    data = minimal()
    data["bodies"][1]["joint"]["limits"] = {"lower": 0.2, "upper": 0.1}
    expect_error(write(tmp_path, data), "bodies[1] (link).joint.limits", "lower 0.2 >= upper 0.1",
                 "expected lower < upper")


# ---------------------------------------------------------------- numbers

@pytest.mark.parametrize("mass", [-1.5, -1e-300])
def test_negative_mass(tmp_path, mass):
    data = minimal()
    data["bodies"][1]["mass"] = mass
    expect_error(write(tmp_path, data), "bodies[1] (link).mass", f"got {float(mass)!r}",
                 "expected a number >= 0")


def test_mass_zero_with_inertia(tmp_path):
    """Mass 0 with an inertia (URDF dummy links) loads, as Pinocchio takes it."""
    data = minimal()
    data["bodies"][1]["mass"] = 0
    assert load_model(write(tmp_path, data)).bodies[1].mass == 0.0


@pytest.mark.parametrize("text,where,shown", [
    ("mass: .nan", "bodies[1] (link).mass", "nan"),
    ("mass: .inf", "bodies[1] (link).mass", "inf"),
    ("com: [0, -.inf, 0.1]", "bodies[1] (link).com[1]", "-inf"),
    ("origin: [.nan, 0, 0.2]", "bodies[1] (link).origin[0]", "nan"),
])
def test_nan_and_inf(tmp_path, text, where, shown):
    field, value = text.split(": ", 1)
    data = minimal()
    data["bodies"][1][field] = "@@PLACEHOLDER@@"
    source = yaml.safe_dump(data, sort_keys=False).replace("'@@PLACEHOLDER@@'", value)
    assert value in source
    path = write(tmp_path, source)
    expect_error(path, where, f"got {shown}", "expected a finite number")


def test_huge_integer_is_rejected(tmp_path):
    """An integer too large for a float: a ModelError, not an OverflowError."""
    data = minimal()
    data["bodies"][1]["mass"] = "@@PLACEHOLDER@@"
    source = yaml.safe_dump(data, sort_keys=False).replace("'@@PLACEHOLDER@@'", "1" + "0" * 400)
    expect_error(write(tmp_path, source), "bodies[1] (link).mass", "expected a finite number")


@pytest.mark.parametrize("value", ["1.0", True, None])
def test_mass_not_a_number(tmp_path, value):
    data = minimal()
    data["bodies"][1]["mass"] = value
    expect_error(write(tmp_path, data), "bodies[1] (link).mass", f"got {value!r}",
                 "expected a number")


@pytest.mark.parametrize("text", ["1e3", "1.0e3", "2.5E2", "1e-3"])
def test_yaml_1_1_exponent_text_says_how_to_write_it(tmp_path, text):
    """PyYAML (YAML 1.1) reads an exponent without a dot or a sign as a string, which JSON
    and YAML 1.2 read as a number: the error says so, not just "expected a number"."""
    data = minimal()
    data["bodies"][1]["mass"] = "@@PLACEHOLDER@@"
    source = yaml.safe_dump(data, sort_keys=False).replace("'@@PLACEHOLDER@@'", text)
    expect_error(write(tmp_path, source), "bodies[1] (link).mass", f"got '{text}'",
                 "text to YAML 1.1", "1.0e+17", "expected a number")
    ok = yaml.safe_dump(data, sort_keys=False).replace("'@@PLACEHOLDER@@'", "1.0e+3")
    assert load_model(write(tmp_path, ok)).bodies[1].mass == 1000.0


# ---------------------------------------------------------------- inertia

def test_inertia_not_symmetric(tmp_path):
    data = minimal()
    data["bodies"][0]["inertia"] = [[0.02, 0.001, 0], [0, 0.02, 0], [0, 0, 0.01]]
    expect_error(write(tmp_path, data), "bodies[0] (base).inertia",
                 "got [[0.02, 0.001, 0.0], [0.0, 0.02, 0.0]", "expected a symmetric matrix")


@pytest.mark.parametrize("matrix", [
    [[0.02, 0, 0], [0, 0.02, 0], [0, 0, -0.01]],
    [[0.02, 0, 0], [0, 0.02, 0], [0, 0, -2e-7]],   # past the tolerance 1e-7 kg m^2
    [[1, 2, 0], [2, 1, 0], [0, 0, 1]],            # eigenvalues -1, 1, 3
])
def test_inertia_not_positive_semidefinite(tmp_path, matrix):
    data = minimal()
    data["bodies"][0]["inertia"] = matrix
    expect_error(write(tmp_path, data), "bodies[0] (base).inertia", "eigenvalues [",
                 "expected a positive semi-definite matrix")


@pytest.mark.parametrize("later", [
    ("bodies", 1, "mass", -1.0),                  # a later body's field
    ("bodies", 0, "points", {"tip": "x"}),        # a field of the same body read after it
    ("bodies", 2, "parent", "nowhere"),           # checked after every body is read
])
def test_inertia_error_comes_before_what_the_file_has_after_it(tmp_path, later):
    """The inertias are checked together once the bodies are read (one numpy pass), yet a
    bad inertia is reported before any error the file has after it, as read in order."""
    data = minimal()
    data["bodies"][0]["inertia"] = [[0.02, 0, 0], [0, 0.02, 0], [0, 0, -0.01]]
    section, k, key, value = later
    data[section][k][key] = value
    expect_error(write(tmp_path, data), "bodies[0] (base).inertia", "eigenvalues [",
                 "expected a positive semi-definite matrix")


def test_an_error_before_an_inertia_comes_first(tmp_path):
    data = minimal()
    data["bodies"][1]["inertia"] = [[0.02, 0, 0], [0, 0.02, 0], [0, 0, -0.01]]
    data["bodies"][0]["mass"] = -1.0
    expect_error(write(tmp_path, data), "bodies[0] (base).mass", "expected a number >= 0")


@pytest.mark.parametrize("inertia,warning", [
    ([[0.02, 0, 0], [0, 0.02, 0], [0, 0, 0]], "singular inertia"),             # a rod
    ([[0.02, 0, 0], [0, 0.02, 0], [0, 0, -5e-8]], "singular inertia"),         # rounding noise
    ([[0, 0, 0], [0, 0, 0], [0, 0, 0]], "singular inertia"),                    # a point mass
    ([[1, 0, 0], [0, 1, 0], [0, 0, 3]], "violate the triangle inequality"),
    ({"ixx": 0.01, "iyy": 0.05, "izz": 0.01}, "violate the triangle inequality"),
])
def test_inertia_accepted_with_a_warning(tmp_path, caplog, inertia, warning):
    """What Pinocchio accepts loads, with a warning naming the file and field."""
    data = minimal()
    data["bodies"][0]["inertia"] = inertia
    with caplog.at_level("WARNING", logger="charmie_dynamics"):
        load_model(write(tmp_path, data))
    assert "model.yaml: bodies[0] (base).inertia: " in caplog.text and warning in caplog.text


def test_inertia_missing_diagonal_component(tmp_path):
    data = minimal()
    data["bodies"][1]["inertia"] = {"ixx": 0.01, "iyy": 0.01}
    expect_error(write(tmp_path, data), "bodies[1] (link).inertia.izz", "missing required field")


# ---------------------------------------------------------------- units

@pytest.mark.parametrize("key,value,expected", [("length", "cm", "expected m or mm"),
                                                ("angle", "grad", "expected rad or deg"),
                                                ("length", "M", "expected m or mm")])
def test_unknown_units(tmp_path, key, value, expected):
    data = minimal()
    data["units"][key] = value
    expect_error(write(tmp_path, data), f"units.{key}", f"got {value!r}", expected)


def test_millimetres_declared_as_metres(tmp_path):
    data = minimal()
    data["bodies"][1]["origin"] = [0, 0, 290]
    msg = expect_error(write(tmp_path, data), "bodies[1] (link).origin[2]", "got 290",
                       "expected |length| <=")
    assert "units" in msg


def test_charmie_declared_as_metres(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    data["units"]["length"] = "m"
    # body_1's velocity limit (1000 mm/s read as m/s) is the first value out of bounds
    msg = expect_error(write(tmp_path, data), "bodies[0] (body_1).joint.limits.velocity",
                       "got 1000", "expected |velocity| <= 100 m/s")
    assert "units.length" in msg


# ---------------------------------------------------------------- mechanisms

def test_actuator_base_not_on_parent(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    data["actuators"][0]["base"] = "body_4.G4"      # on the driven body, not on body_3
    expect_error(write(tmp_path, data), "actuators[0] (act4).base", "got a point of body_4",
                 "expected a point of body_3")


def test_actuator_stroke_outside_assembly_range(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    data["actuators"][0]["stroke"] = [50, 510]      # the mechanism assembles above 95 mm
    expect_error(write(tmp_path, data), "act4", "stroke [0.05, 0.51] m",
                 "expected a range inside (0.095,", "assembles")


def test_actuator_default_outside_stroke(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    data["actuators"][0]["default_length"] = 600
    expect_error(write(tmp_path, data), "actuators[0] (act4).default_length", "got 600",
                 "within the stroke")


@pytest.mark.parametrize("branch", [0, 2, True, "+1"])
def test_actuator_bad_branch(tmp_path, charmie_data, branch):
    data = copy.deepcopy(charmie_data)
    data["actuators"][1]["branch"] = branch
    expect_error(write(tmp_path, data), "actuators[1] (act5).branch", f"got {branch!r}",
                 "expected +1 or -1")


@pytest.mark.parametrize("ref,fragments", [
    ("body_4.S4X", ["unknown point 'body_4.S4X'", "points of body_4", "S4"]),
    ("body_99.S4", ["unknown body 'body_99'", "bodies: body_1"]),
    ("S4", ["got 'S4'", "expected BODY.POINT"]),
])
def test_point_reference_unknown(tmp_path, charmie_data, ref, fragments):
    data = copy.deepcopy(charmie_data)
    data["springs"][0]["between"][0] = ref
    expect_error(write(tmp_path, data), "springs[0] (spring_5s).between[0]", *fragments)


def test_actuator_point_unknown(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    data["actuators"][1]["end"] = "body_5.E6"
    expect_error(write(tmp_path, data), "actuators[1] (act5).end", "unknown point 'body_5.E6'")


def test_balancer_point_unknown(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    data["balancers"][0]["spring"]["anchor"] = "body_3.S3X"
    expect_error(write(tmp_path, data), "balancers[0] (balancer_left).spring.anchor",
                 "unknown point 'body_3.S3X'")


# ---------------------------------------------------------------- file level

@pytest.mark.parametrize("text", ["bodies: [unclosed\n", "a: b: c\n", "name: x\n\t- tab\n"])
def test_not_yaml(tmp_path, text):
    expect_error(write(tmp_path, text), "not valid YAML")


@pytest.mark.parametrize("text,shown", [("just a string\n", "13 characters of text"),
                                        ("", "NoneType None"), ("[1, 2]\n", "list [1, 2]")])
def test_yaml_not_a_mapping(tmp_path, text, shown):
    expect_error(write(tmp_path, text), "top level", f"got {shown}", "expected a mapping")


def test_missing_file(tmp_path):
    path = tmp_path / "no_such_model.yaml"
    expect_error(path, "cannot read the model file", "No such file or directory")


def test_python_tag_is_rejected_and_not_run(tmp_path):
    marker = tmp_path / "pwned"
    text = f'format: !!python/object/apply:os.system ["touch {marker}"]\nname: evil\nbodies: []\n'
    path = write(tmp_path, text)
    expect_error(path, "not valid YAML", "python/object/apply:os.system")
    assert not marker.exists()


def test_python_tag_echo_hi(tmp_path):
    path = write(tmp_path, '!!python/object/apply:os.system ["echo hi"]\n')
    expect_error(path, "not valid YAML")


# ---------------------------------------------------------------- good files

def test_bundled_charmie(charmie_data):
    model = load_model(CHARMIE)
    assert model.n_bodies == 27
    assert model.n_coordinates == 21
    stated = float(re.search(r"Total mass of the estimate: ([0-9.]+) kg",
                             CHARMIE.read_text(encoding="utf-8")).group(1))
    assert stated == 54.67
    assert abs(model.total_mass - stated) < 1e-9
    assert model.total_mass == pytest.approx(sum(b.get("mass", 0.0)
                                                 for b in charmie_data["bodies"]), abs=1e-12)
    assert model.actuator_names == ("act4", "act5")
    assert [s.name for s in model.springs] == ["spring_5s"]
    assert len(model.balancers) == 2
    # mm -> m once, at load: body_4 origin 290 mm, E3 anchor
    assert model.origin[model.body_index("body_4")].tolist() == [0.0, 0.0, 0.29]
    np.testing.assert_allclose(model.point("body_3.E3").local, [0, 0.2575, 0.0995], atol=1e-15)
    assert model.actuators[0].stroke == pytest.approx((0.31, 0.51), abs=1e-15)


def _shift(value, digits):
    """A decimal number as a person would rewrite it in other units (exact decimal shift)."""
    return float(Decimal(str(value)).scaleb(digits))


def _mm_model():
    return {
        "format": "charmie_dynamics/model/1", "name": "units_test",
        "units": {"length": "mm", "angle": "rad"},
        "bodies": [
            {"name": "b1", "parent": "world", "origin": [12.5, -3, 290],
             "rotation": [0.1, 0.2, 0.3],
             "joint": {"type": "R", "axis": "z", "coordinate": "q1"},
             "mass": 2.5, "com": [1.5, 2.25, 110],
             "inertia": [[21000, 150, -20], [150, 19000, 35], [-20, 35, 9000]],
             "points": {"p": [100, 0, 434]}},
            {"name": "b2", "parent": "b1", "origin": [0, 162.5, 383],
             "joint": {"type": "P", "axis": "-z", "coordinate": "d2"},
             "mass": 1.25, "com": [0, 60, 220],
             "inertia": {"ixx": 4100, "iyy": 3400, "izz": 2500, "ixy": 12.5}},
        ],
    }


def _to_metres(data):
    data = copy.deepcopy(data)
    data["units"]["length"] = "m"
    for b in data["bodies"]:
        b["origin"] = [_shift(v, -3) for v in b["origin"]]
        b["com"] = [_shift(v, -3) for v in b["com"]]
        b["points"] = {k: [_shift(v, -3) for v in p] for k, p in b.get("points", {}).items()}
        inertia = b["inertia"]
        if isinstance(inertia, list):
            b["inertia"] = [[_shift(v, -6) for v in row] for row in inertia]
        else:
            b["inertia"] = {k: _shift(v, -6) for k, v in inertia.items()}
    return data


def test_mm_and_m_models_are_identical(tmp_path):
    mm = _mm_model()
    m = _to_metres(mm)
    assert m["bodies"][0]["origin"] == [0.0125, -0.003, 0.29]
    assert m["bodies"][0]["inertia"][0][0] == 0.021
    a = load_model(write(tmp_path, mm, "mm.yaml"))
    b = load_model(write(tmp_path, m, "m.yaml"))
    for field in ("mass", "com", "inertia", "origin", "rotation", "axis"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.shape == y.shape
        assert np.abs(x - y).max() <= 1e-15, field
    np.testing.assert_allclose(a.point("b1.p").local, b.point("b1.p").local, rtol=0, atol=1e-15)
    assert a.origin[0, 2] == pytest.approx(0.29, abs=1e-15)
    assert a.inertia[0][0, 0] == pytest.approx(0.021, abs=1e-15)
    assert a.inertia[1][0, 1] == pytest.approx(12.5e-6, abs=1e-18)


def test_solid_box_inertia(tmp_path):
    data = minimal()
    data["bodies"][2]["mass"] = 2.0
    data["bodies"][2]["inertia"] = {"solid_box": [0.3, 0.4, 0.5]}
    model = load_model(write(tmp_path, data))
    # m/12 (b^2 + c^2): 2/12 * (0.16 + 0.25), 2/12 * (0.09 + 0.25), 2/12 * (0.09 + 0.16)
    expected = np.diag([0.41 / 6, 0.34 / 6, 0.25 / 6])
    np.testing.assert_allclose(model.inertia[2], expected, rtol=0, atol=1e-15)
    assert model.inertia[2][0, 0] == pytest.approx(0.0683333333333, abs=1e-12)


def test_solid_box_inertia_in_mm(tmp_path):
    data = minimal()
    data["units"]["length"] = "mm"
    for b in data["bodies"]:
        b["origin"] = [v * 1000 for v in b["origin"]]
        b["com"] = [v * 1000 for v in b["com"]]
        for p in b.get("points", {}):
            b["points"][p] = [v * 1000 for v in b["points"][p]]
    data["bodies"][0]["inertia"] = [[20000, 0, 0], [0, 20000, 0], [0, 0, 10000]]
    data["bodies"][1]["inertia"] = {"ixx": 10000, "iyy": 10000, "izz": 5000}
    data["bodies"][1]["joint"]["limits"] = {"lower": 0, "upper": 100}
    data["springs"][0]["free_length"] = 200
    data["bodies"][2]["mass"] = 2.0
    data["bodies"][2]["inertia"] = {"solid_box": [300, 400, 500]}
    model = load_model(write(tmp_path, data))
    np.testing.assert_allclose(model.inertia[2], np.diag([0.41 / 6, 0.34 / 6, 0.25 / 6]),
                               rtol=0, atol=1e-15)


@pytest.mark.parametrize("axis,k", [("x", 0), ("y", 1), ("z", 2), (None, 2)])
def test_solid_cylinder_inertia(tmp_path, axis, k):
    data = minimal()
    data["bodies"][2]["mass"] = 3.0
    cyl = {"radius": 0.1, "length": 0.6}
    if axis is not None:
        cyl["axis"] = axis
    data["bodies"][2]["inertia"] = {"solid_cylinder": cyl}
    model = load_model(write(tmp_path, data))
    # axial m r^2 / 2 = 3 * 0.01 / 2 = 0.015; transverse m (3 r^2 + l^2) / 12 = 3 * 0.39 / 12
    diag = [0.0975, 0.0975, 0.0975]
    diag[k] = 0.015
    np.testing.assert_allclose(model.inertia[2], np.diag(diag), rtol=0, atol=1e-15)


def test_solid_cylinder_bad_axis(tmp_path):
    data = minimal()
    data["bodies"][2]["inertia"] = {"solid_cylinder": {"radius": 0.1, "length": 0.6, "axis": "w"}}
    expect_error(write(tmp_path, data), "bodies[2] (tool).inertia.solid_cylinder.axis", "'w'",
                 "expected x, y or z")


def test_body_order_parents_first(tmp_path):
    data = minimal()
    data["bodies"].reverse()                       # tool, link, base: children before parents
    model = load_model(write(tmp_path, data))
    assert model.body_names == ("base", "link", "tool")
    assert model.parent.tolist() == [-1, 0, 1]
    assert model.coordinate_names == ("q1", "d2")


def test_charmie_order_parents_first_when_shuffled(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)
    rng = np.random.default_rng(3)
    order = rng.permutation(len(data["bodies"]))
    data["bodies"] = [data["bodies"][i] for i in order]
    assert data["bodies"][0]["parent"] != "world"
    model = load_model(write(tmp_path, data))
    reference = load_model(CHARMIE)
    assert set(model.body_names) == set(reference.body_names)
    for i in range(model.n_bodies):
        assert model.parent[i] < i
        parent = model.bodies[i].parent
        assert parent == "world" or model.body_index(parent) == model.parent[i]
    # same physics whatever the order: per-body arrays match by name
    for i, name in enumerate(model.body_names):
        j = reference.body_index(name)
        assert model.mass[i] == reference.mass[j]
        assert np.array_equal(model.origin[i], reference.origin[j])
        assert np.array_equal(model.inertia[i], reference.inertia[j])


# ---------------------------------------------------------------- friction
def test_friction_negative_is_rejected(tmp_path):
    data = minimal()
    data["bodies"][0]["joint"]["friction"] = {"viscous": -0.1}
    expect_error(write(tmp_path, data), "bodies[0] (base).joint.friction.viscous", "got -0.1",
                 "expected a number >= 0")


def test_friction_of_a_prismatic_joint_in_mm_is_converted(tmp_path):
    data = minimal()
    data["bodies"][1]["joint"]["friction"] = {"viscous": 0.5, "coulomb": 3.0}
    metres = load_model(write(tmp_path, data, "m.yaml"))
    i = metres.body_index("link")
    assert metres.bodies[i].joint_type.name == "PRISMATIC"
    assert metres.bodies[i].friction.viscous == 0.5 and metres.bodies[i].friction.coulomb == 3.0
    data["units"] = {"length": "mm"}
    for body in data["bodies"]:
        for key in ("origin", "com"):
            if key in body:
                body[key] = [v * 1000 for v in body[key]]
    data["bodies"][1]["joint"]["friction"] = {"viscous": 0.0005, "coulomb": 3.0}   # N s/mm
    data.pop("springs", None)
    for body in data["bodies"]:
        body.pop("inertia", None)
        body["inertia"] = {"ixx": 1e6, "iyy": 1e6, "izz": 1e6}
        body.pop("points", None)
    mm = load_model(write(tmp_path, data, "mm.yaml"))
    assert mm.bodies[mm.body_index("link")].friction.viscous == pytest.approx(0.5, rel=1e-12)


def test_yaml_alias_expansion_in_an_error_stays_small(tmp_path):
    """A few lines of mutually referencing YAML aliases must not blow up the error message
    (it used to be written out whole: hundreds of MB for 8 lines)."""
    lines = ["- &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"]
    for k in range(1, 9):
        lines.append(f"- &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]")
    path = write(tmp_path, "\n".join(lines) + "\n")
    # refused at the parse now (10^9 entries through aliases: issue 34's S3)
    with pytest.raises(ModelError, match="not usable YAML: aliases repeat collections") as info:
        load_model(path)
    assert len(str(info.value)) < 2000          # bounded (was 580 MB for these 9 lines)


def test_balancer_spring_anchor_out_of_the_lever_plane(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)          # the fixture is shared by the module
    anchor = next(b for b in data["bodies"] if b["name"] == "body_3")["points"]
    anchor["S3L"] = [-220, 60, 330]
    expect_error(write(tmp_path, data), "balancers[0] (balancer_left).spring.anchor",
                 "expected the lever's plane")


# ---------------------------------------------------------------- hostile text and files (issue 10)
# The parser used to turn only yaml.YAMLError into a ModelError: PyYAML's ValueError (an
# impossible date, an integer over Python's 4300-digit limit) and RecursionError (deep
# nesting) escaped, and killed the dynamics node on its model topic and the loader on reload.

HOSTILE_TEXTS = {
    "impossible_date": ("name: 2001-02-30\n", "day is out of range"),
    "huge_integer": ("name: " + "1" * 5000 + "\n", "4300 digits"),
    "nested_1000": ("[" * 1000 + "]" * 1000 + "\n", "nested too deeply"),
    "nested_50000": ("[" * 50000 + "]" * 50000 + "\n", "nested too deeply"),
    "not_yaml": ("a: [\n", "not valid YAML"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TEXTS))
def test_hostile_text_is_a_model_error(case):
    """model_from_text, the dynamics node's path for a model on its topic."""
    text, reason = HOSTILE_TEXTS[case]
    with pytest.raises(ModelError, match=ordered("charmie/model: ", reason)) as info:
        model_from_text(text, "charmie/model")
    assert "\n" not in str(info.value) and len(str(info.value)) < 700


@pytest.mark.parametrize("case", sorted(HOSTILE_TEXTS))
def test_hostile_file_is_a_model_error(tmp_path, case):
    """read_model_file, the loader node's path on start-up and ~/reload."""
    text, reason = HOSTILE_TEXTS[case]
    path = write(tmp_path, text)
    with pytest.raises(ModelError, match=ordered(f"{path}: ", reason)):
        read_model_file(path)


def test_text_over_max_bytes_is_refused_before_parsing():
    text = yaml.safe_dump(minimal())
    assert model_from_text(text, "topic", max_bytes=len(text)).name == "mini"
    with pytest.raises(ModelError, match=ordered("topic: ", f"{len(text)} bytes of text",
                                                 f"expected at most {len(text) - 1} bytes")):
        model_from_text(text, "topic", max_bytes=len(text) - 1)
    # a broken document over the cap is refused for its size: it was never parsed
    with pytest.raises(ModelError, match="expected at most 100 bytes"):
        model_from_text("[" * 200, "topic", max_bytes=100)


def test_file_over_max_bytes_is_refused(tmp_path):
    path = write(tmp_path, minimal())
    with pytest.raises(ModelError, match=ordered(f"{path}: the model file is ", "expected at most 10 bytes")):
        read_model_file(path, max_bytes=10)
    model, text = read_model_file(path)
    assert model.name == "mini" and text == path.read_text(encoding="utf-8")


def test_model_file_not_utf8(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    expect_error(path, "not UTF-8 text", "expected a text file")


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_model_file_must_be_a_regular_file(tmp_path, kind):
    """A FIFO used to hang the reader (and ~/reload with it); a device was read to its end
    (/dev/null here: /dev/zero filled the memory, tested in a memory-capped CLI process)."""
    if kind == "fifo":
        path = tmp_path / "model.fifo"
        os.mkfifo(path)
    else:
        path = Path("/dev/null") if kind == "device" else tmp_path
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_error_of(read_model_file, path)),
                              daemon=True)           # a hung open() must not hang the session
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), f"read_model_file({path}) hangs"
    assert isinstance(outcome[0], ModelError), outcome
    assert str(outcome[0]) == (f"{path}: cannot read the model file: not a regular file (a "
                               "directory, FIFO, socket or device), expected a file")


def _error_of(function, *args):
    try:
        function(*args)
    except Exception as exc:            # noqa: BLE001 - the test inspects whatever it is
        return exc
    return None


def test_unknown_keys_of_mixed_types_are_listed(tmp_path):
    """Keys that are numbers and null used to make sorting the unknown keys a TypeError."""
    path = write(tmp_path, yaml.safe_dump(minimal()) + "1: a\nnull: b\nzz: c\n")
    expect_error(path, "top level", "unknown field(s) 1, None, zz")


# ---------------------------------------------------------------- plausibility bounds (issue 10)

def _set(data, where, value):
    """Set a field of minimal() named like 'bodies.1.mass' (list indices as numbers)."""
    *path, last = [int(k) if k.isdigit() else k for k in where.split(".")]
    target = data
    for key in path:
        target = target[key]
    target[last] = value


@pytest.mark.parametrize("where,value,field,expected", [
    ("bodies.1.mass", 1e300, "bodies[1] (link).mass", "expected |mass| <= 1e+06 kg"),
    ("bodies.1.mass", 1.0000001e6, "bodies[1] (link).mass", "expected |mass| <= 1e+06 kg"),
    ("bodies.1.inertia", {"ixx": 2e10, "iyy": 2e10, "izz": 2e10}, "bodies[1] (link).inertia",
     "expected |entry| <= 1e+10 kg m^2"),
    ("bodies.0.origin", [0, 0, 1e3], "bodies[0] (base).origin[2]", "expected |length| <= 100 m"),
    ("bodies.0.rotation", [0, 1e4, 0], "bodies[0] (base).rotation[1]", "expected |angle| <= 1000 rad"),
    ("bodies.0.joint.limits", {"lower": -1e4}, "bodies[0] (base).joint.limits.lower",
     "expected |position| <= 1000 rad"),
    ("bodies.0.joint.limits", {"velocity": 1e4}, "bodies[0] (base).joint.limits.velocity",
     "expected |velocity| <= 1000 rad/s"),
    ("bodies.0.joint.limits", {"effort": 1e8}, "bodies[0] (base).joint.limits.effort",
     "expected |effort| <= 1e+07 N m"),
    ("bodies.1.joint.limits", {"upper": 500.0}, "bodies[1] (link).joint.limits.upper",
     "expected |position| <= 100 m"),
    ("bodies.1.joint.limits", {"velocity": 1e3}, "bodies[1] (link).joint.limits.velocity",
     "expected |velocity| <= 100 m/s"),
    ("bodies.1.joint.limits", {"effort": 1e300}, "bodies[1] (link).joint.limits.effort",
     "expected |effort| <= 1e+07 N"),
    ("bodies.1.joint.friction", {"viscous": 1e8}, "bodies[1] (link).joint.friction.viscous",
     "expected |viscous| <= 1e+07 N s/m"),
    ("bodies.0.joint.friction", {"coulomb": 1e8}, "bodies[0] (base).joint.friction.coulomb",
     "expected |coulomb| <= 1e+07 N m"),
    ("bodies.0.joint.multiplier", 1e4, "bodies[0] (base).joint.multiplier",
     "expected 0.001 <= |multiplier| <= 1000"),
    ("bodies.0.joint.multiplier", -1e-300, "bodies[0] (base).joint.multiplier",
     "expected 0.001 <= |multiplier| <= 1000"),
    ("gravity", [0, 0, -1e3], "gravity[2]", "expected |gravity| <= 100 m/s^2"),
    ("springs.0.stiffness", 1e10, "springs[0] (spring_a).stiffness",
     "expected |stiffness| <= 1e+09 N/m"),
    ("springs.0.preload", -1e8, "springs[0] (spring_a).preload", "expected |preload| <= 1e+07 N"),
])
def test_implausible_magnitudes_are_refused(tmp_path, where, value, field, expected):
    data = minimal()
    _set(data, where, value)
    expect_error(write(tmp_path, data), field, "got ", expected)


def test_bounds_hold_after_unit_conversion(tmp_path):
    """A prismatic limit of 50,000 mm is 50 m (accepted); 200,000 mm is 200 m (refused)."""
    data = minimal()
    data["units"]["length"] = "mm"
    for b in data["bodies"]:
        b["origin"] = [v * 1000 for v in b["origin"]]
        b["com"] = [v * 1000 for v in b["com"]]
        b.pop("points", None)
        b["inertia"] = {"ixx": 1e4, "iyy": 1e4, "izz": 1e4}
    data.pop("springs")
    data["bodies"][1]["joint"]["limits"] = {"lower": 0, "upper": 50_000}
    assert load_model(write(tmp_path, data)).bodies[1].limits.upper == pytest.approx(50.0)
    data["bodies"][1]["joint"]["limits"] = {"lower": 0, "upper": 200_000}
    msg = expect_error(write(tmp_path, data), "bodies[1] (link).joint.limits.upper",
                       "got 200000 (200 m)", "expected |position| <= 100 m")
    assert "units.length" in msg


def test_named_points_repeated_by_aliases_are_capped(tmp_path):
    """YAML aliases repeat a mapping without repeating its text: 200 bodies sharing 1,000
    points are 200,000 points, refused before they are all read."""
    points = ", ".join(f"p{k}: [0, 0, 0]" for k in range(1000))
    lines = ["format: charmie_dynamics/model/1", "name: aliases", "bodies:"]
    lines.append(f"  - {{name: b0, parent: world, joint: {{type: F}}, virtual: true, "
                 f"points: &p {{{points}}}}}")
    for k in range(1, 200):
        lines.append(f"  - {{name: b{k}, parent: b{k - 1}, joint: {{type: F}}, virtual: true, "
                     "points: *p}")
    path = write(tmp_path, "\n".join(lines) + "\n")
    expect_error(path, "bodies[100] (b100).points", "named points exceed 100000",
                 "expected at most 100000 in all")


# ---------------------------------------------------------------- velocity limits (issue 10)

def test_actuator_velocity_limit_in_length_units_per_second(tmp_path, charmie_data):
    data = copy.deepcopy(charmie_data)          # units.length: mm
    data["actuators"][0]["velocity_limit"] = 25
    data["actuators"][1].pop("velocity_limit")
    model = load_model(write(tmp_path, data))
    assert model.actuators[0].velocity_limit == pytest.approx(0.025, abs=1e-15)
    assert model.actuators[1].velocity_limit is None


@pytest.mark.parametrize("value,expected", [(0, "expected a number > 0"),
                                            (-5, "expected a number > 0"),
                                            ("fast", "expected a number"),
                                            (200_000, "expected |velocity| <= 100 m/s")])
def test_actuator_velocity_limit_bad(tmp_path, charmie_data, value, expected):
    data = copy.deepcopy(charmie_data)
    data["actuators"][1]["velocity_limit"] = value
    expect_error(write(tmp_path, data), "actuators[1] (act5).velocity_limit", expected)


def test_charmie_limits_are_complete_and_consistent():
    """Every coordinate and actuator of CHARMIE has a velocity limit; each stroke maps into
    its joint's position limits; an actuator at its velocity limit moves its joint within
    the joint's velocity limit over the whole stroke (the file's comments state these)."""
    from charmie_dynamics.kinematics.indirect import joint_from_length
    from charmie_dynamics.model.actuator_geometry import indirect_joints

    model = load_model(CHARMIE)
    first = {}
    for b in model.bodies:
        first.setdefault(b.coordinate, b)
    assert all(first[c].limits.velocity is not None for c in model.coordinate_names)
    assert all(a.velocity_limit is not None and a.velocity_limit > 0 for a in model.actuators)
    text = CHARMIE.read_text(encoding="utf-8")
    assert "velocity_limit: 50              # mm/s, estimated" in text
    for actuator, joint in zip(model.actuators, indirect_joints(model)):
        body = model.bodies[actuator.drives]
        value, jacobian, _ = joint_from_length(joint, np.linspace(*actuator.stroke, 2001))
        assert body.limits.lower <= value.min() and value.max() <= body.limits.upper, body.name
        fastest = np.abs(jacobian).max() * actuator.velocity_limit
        assert fastest <= body.limits.velocity, (actuator.name, fastest)


def test_repeated_rotations_are_each_bodys_own_exact_matrix(tmp_path):
    """The loader computes a triple of ZXZ angles once per model: every body still gets its
    own array, bit for bit zxz_euler of its angles (-0.0 is not 0.0: its zeros keep their
    sign), and the arrays in millimetres and degrees are scaled first."""
    from charmie_dynamics.model.rotations import zxz_euler

    data = minimal()
    angles = [[0.5, -0.0, 0.0], [0.5, 0.0, 0.0], [0.5, -0.0, 0.0]]
    for b, a in zip(data["bodies"], angles):
        b["rotation"] = a
    model = load_model(write(tmp_path, data))
    for b, a in zip(model.bodies, angles):
        assert b.rotation.tobytes() == zxz_euler(*a).tobytes(), b.name
    assert model.bodies[0].rotation.tobytes() != model.bodies[1].rotation.tobytes()
    assert not np.shares_memory(model.bodies[0].rotation, model.bodies[2].rotation)
    data["units"]["angle"] = "deg"
    model = load_model(write(tmp_path, data))
    assert model.bodies[1].rotation.tobytes() == \
        zxz_euler(0.5 * (np.pi / 180.0), 0.0, 0.0).tobytes()


def test_a_model_of_bodies_only_is_built_once_and_alike(tmp_path):
    """Without actuators, springs, balancers or loops the tree is the model: the same
    parameters as a model that declares an (empty) section."""
    data = minimal()
    del data["springs"]
    plain = load_model(write(tmp_path, data))
    data["actuators"] = []
    declared = load_model(write(tmp_path, data))
    assert plain.actuators == plain.springs == plain.balancers == () and plain.loops is None
    for name in ("parent", "axis", "rotation", "origin", "mass", "com", "inertia",
                 "coordinate_index", "configuration_index"):
        assert getattr(plain, name).tobytes() == getattr(declared, name).tobytes(), name
