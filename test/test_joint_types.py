"""The joint types' registry (model/joint_types/): every kernel code has one type module, and
the loader, the URDF import and export and the closed chains take what a type says of itself,
so a wrong entry in a type module shows in what they do."""
from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from charmie_dynamics import forward_kinematics
from charmie_dynamics.export.urdf import overlay_from_model, urdf_from_model
from charmie_dynamics.kinematics import neutral_configuration
from charmie_dynamics.mechanisms.closed_chains import constraints
from charmie_dynamics.model import JointType, ModelError, model_from_dict
from charmie_dynamics.model.joint_types import JOINT_TYPES, LETTERS, by_letter, joint_type_spec
from charmie_dynamics.model.joint_types.revolute import RevoluteType
from charmie_dynamics.model.urdf import URDF_JOINT_TYPES, urdf_document

ONE_COORDINATE = {"axis": [0, 0.6, 0.8], "coordinate": "q",
                  "limits": {"lower": -1.0, "upper": 1.0}}
FIELDS = {"R": ONE_COORDINATE, "P": ONE_COORDINATE, "H": {**ONE_COORDINATE, "pitch": 0.02},
          "F": {}, "floating": {"coordinate": "q"}}


def document(letter: str) -> dict:
    """A body on the world with a joint of type ``letter``, and a child on it (revolute)."""
    return {"format": "charmie_dynamics/model/1", "name": "one", "units": {"length": "m"},
            "bodies": [
                {"name": "a", "parent": "world", "origin": [0.1, 0, 0.2],
                 "joint": {"type": letter, **copy.deepcopy(FIELDS[letter])}, "mass": 2.0,
                 "com": [0.05, 0.01, 0], "inertia": {"solid_box": [0.1, 0.2, 0.3]}},
                {"name": "b", "parent": "a", "origin": [0, 0, 0.3],
                 "joint": {"type": "R", "axis": "x", "coordinate": "r"}, "mass": 1.0,
                 "com": [0, 0, 0.1], "inertia": {"solid_box": [0.1, 0.1, 0.2]}}]}


def test_every_kernel_code_has_one_type_and_every_name_one_meaning():
    assert sorted(int(spec.code) for spec in JOINT_TYPES) == sorted(int(t) for t in JointType)
    assert len(set(LETTERS)) == len(LETTERS)
    urdf = [name for spec in JOINT_TYPES for name in spec.urdf_types]
    assert len(set(urdf)) == len(urdf) and set(URDF_JOINT_TYPES) == set(urdf)
    for spec in JOINT_TYPES:
        assert joint_type_spec(spec.code) is spec and by_letter(spec.letter) is spec
    # the model file's letters and URDF's names, as docs/model_format.md and urdfdom give them
    assert LETTERS == ("R", "P", "H", "F", "floating", "C")
    assert URDF_JOINT_TYPES == {"revolute": "R", "continuous": "R", "prismatic": "P",
                                "fixed": "F", "floating": "floating"}


#: whether a joint of the type turns and slides its body (a type without its kernel branch
#: would fall through to the fixed joint's and do neither); the fixed joint's body is checked
#: while its child's joint moves
MOVES = {"R": (True, False), "P": (False, True), "H": (True, True), "F": (False, False),
         "floating": (True, True)}


@pytest.mark.parametrize("spec", JOINT_TYPES, ids=lambda s: s.letter)
def test_the_loader_builds_each_type_and_the_kernels_move_it(spec):
    model = model_from_dict(document(spec.letter), "one.yaml")
    assert model.bodies[0].joint_type is spec.code
    rest = neutral_configuration(model)
    moved = rest.copy()
    if spec.code is JointType.FLOATING:
        moved[:7] = [0.1, -0.2, 0.3, 0.2, 0.1, 0.0, np.sqrt(0.95)]
    else:                  # the joint's coordinate, or (fixed) the child's, the only one
        moved[0] = 0.5
    at_rest, at_moved = forward_kinematics(model, rest), forward_kinematics(model, moved)
    turned = not np.allclose(at_rest.rotations[0], at_moved.rotations[0], atol=1e-9)
    slid = not np.allclose(at_rest.origins[0], at_moved.origins[0], atol=1e-9)
    assert (turned, slid) == MOVES[spec.letter]
    if spec.code is JointType.FIXED:       # its child did turn
        assert not np.allclose(at_rest.rotations[1], at_moved.rotations[1], atol=1e-9)


@pytest.mark.parametrize("spec", JOINT_TYPES, ids=lambda s: s.letter)
def test_a_field_a_type_does_not_take_or_a_bad_one_is_refused_by_its_path(spec):
    field, value, path = {"R": ("pitch", 0.1, ".pitch: got 0.1 on a 'R' joint"),
                          "P": ("pitch", 0.1, ".pitch: got 0.1 on a 'P' joint"),
                          "H": ("friction", {"coulomb": -1}, ".friction.coulomb: got -1"),
                          "F": ("axis", "x", ": got axis for a fixed joint (type F)"),
                          "floating": ("limits", {"lower": 0},
                                       ": got limits for a floating joint (free-flyer)")
                          }[spec.letter]
    data = document(spec.letter)
    data["bodies"][0]["joint"][field] = value
    with pytest.raises(ModelError, match=re.escape(f"one.yaml: bodies[0] (a).joint{path}")):
        model_from_dict(data, "one.yaml")


def test_urdf_import_and_export_take_each_types_urdf_names():
    for spec in JOINT_TYPES:
        for name in spec.urdf_types:
            assert URDF_JOINT_TYPES[name] == spec.letter
    # the export writes what each type says it is written as, and the import reads it back
    for letter, limited, urdf in (("R", True, "revolute"), ("R", False, "continuous"),
                                  ("P", True, "prismatic"), ("F", False, "fixed")):
        data = document(letter)
        if not limited:
            data["bodies"][0]["joint"].pop("limits", None)
        model = model_from_dict(data, "one.yaml")
        root = ET.fromstring(urdf_from_model(model))
        written = root.find("joint[@type]").get("type")
        assert written == urdf == by_letter(letter).urdf_type(limited)
        back = urdf_document(ET.tostring(root, encoding="unicode"), "one.urdf")
        assert back["bodies"][0]["joint"]["type"] == letter
    # the URDF and its overlay refuse a model they cannot write, naming the cause
    for letter, cause in (("H", "has a helical joint .type H., expected none: URDF has no such "
                                "joint"),
                          ("floating", "has a floating joint .free-flyer., expected a model "
                                       "without one")):
        model = model_from_dict(document(letter), "one.yaml")
        for export in (urdf_from_model, overlay_from_model):
            with pytest.raises(ModelError, match=f"one.yaml: URDF export of 'one': body 'a' "
                                                 f"{cause}"):
                export(model)


def test_the_closed_chains_take_the_types_that_say_so(monkeypatch):
    assert constraints.IN_LOOPS == "revolute (R), prismatic (P) or fixed (F)"
    model = model_from_dict(document("R"), "one.yaml")
    constraints.check_joint_types(model)
    # a type module that says it is not built for loops is refused by its own words
    monkeypatch.setattr(RevoluteType, "in_loops", False)
    with pytest.raises(ValueError, match=r"body a: joint.type: a revolute joint \(type R\) in a "
                                         "model with loops"):
        constraints.check_joint_types(model)
