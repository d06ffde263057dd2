"""The cylindrical joint (type C, model/loader.py), issue 39's example of a multi-DoF joint
added as loader sugar over a virtual body (RBDL's AddBodyMultiDofJoint). The oracle is
Pinocchio built from the model document, not from the loaded model: one
JointModelComposite (a slide along the axis, then a turn about it) per body, so the two
bodies the loader makes are checked against one two-DoF joint."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from charmie_dynamics import forward_kinematics, resolve_state
from charmie_dynamics.dynamics import forward_dynamics, inverse_dynamics
from charmie_dynamics.model import ModelError, model_from_dict

INERTIA = {"ixx": 0.02, "iyy": 0.025, "izz": 0.015, "ixy": 0.001}
BODIES = [  # name, parent, origin, axis, mass, com
    ("a", "world", [0.0, 0.0, 0.1], [0.0, 0.0, 1.0], 2.0, [0.1, 0.02, 0.1]),
    ("b", "a", [0.3, 0.0, 0.2], [0.0, 0.6, 0.8], 1.0, [0.05, 0.1, 0.0]),
    ("c", "b", [0.0, 0.25, 0.0], [1.0, 0.0, 0.0], 0.5, [0.02, 0.0, 0.03]),
]


def document(**joint) -> dict:
    return {"format": "charmie_dynamics/model/1", "name": "cylinders", "bodies": [
        {"name": name, "parent": parent, "origin": origin, "mass": mass, "com": com,
         "inertia": INERTIA,
         "joint": {"type": "C", "axis": axis, "coordinate": f"{name}_joint"} | joint}
        for name, parent, origin, axis, mass, com in BODIES]}


def composite_model() -> pin.Model:
    """Pinocchio's model of :func:`document`: a composite joint per body."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array([0.0, 0.0, -9.81]), np.zeros(3))
    ids = {"world": 0}
    I = np.array([[0.02, 0.001, 0.0], [0.001, 0.025, 0.0], [0.0, 0.0, 0.015]])
    for name, parent, origin, axis, mass, com in BODIES:
        u = np.array(axis) / np.linalg.norm(axis)
        joint = pin.JointModelComposite(pin.JointModelPrismaticUnaligned(u))
        joint.addJoint(pin.JointModelRevoluteUnaligned(u))
        ids[name] = pm.addJoint(ids[parent], joint, pin.SE3(np.eye(3), np.array(origin)), name)
        pm.appendBodyToJoint(ids[name], pin.Inertia(mass, np.array(com), I), pin.SE3.Identity())
    return pm


@pytest.fixture(scope="module")
def model():
    return model_from_dict(document(), "cylinders.yaml")


RNG = np.random.default_rng(11)
Q, V, A = (RNG.uniform(-1.5, 1.5, (20, 6)) for _ in range(3))


def test_each_cylindrical_joint_is_a_slide_then_a_turn(model):
    assert model.body_names == ("a_slide", "a", "b_slide", "b", "c_slide", "c")
    assert model.coordinate_names == ("a_joint.slide", "a_joint.turn", "b_joint.slide",
                                      "b_joint.turn", "c_joint.slide", "c_joint.turn")
    assert model.mass.tolist() == [0.0, 2.0, 0.0, 1.0, 0.0, 0.5]


def test_inverse_dynamics_is_pinocchios_composite_joint(model):
    pm = composite_model()
    data = pm.createData()
    ours = inverse_dynamics(model, resolve_state(model, Q, V, A)).coordinate_effort
    for k in range(len(Q)):
        expected = pin.rnea(pm, data, Q[k], V[k], A[k])
        np.testing.assert_allclose(ours[k], expected, rtol=1e-12, atol=1e-11)


def test_forward_dynamics_and_placements_are_pinocchios(model):
    pm = composite_model()
    data = pm.createData()
    tau = RNG.uniform(-5.0, 5.0, Q.shape)
    for method in ("aba", "cholesky"):
        ours = forward_dynamics(model, Q, V, tau, method=method)
        for k in range(len(Q)):
            np.testing.assert_allclose(ours[k], pin.aba(pm, data, Q[k], V[k], tau[k]),
                                       rtol=1e-10, atol=1e-10, err_msg=method)
    fk = forward_kinematics(model, Q)
    for k in range(len(Q)):
        pin.forwardKinematics(pm, data, Q[k])
        for j, name in enumerate(("a", "b", "c")):
            i = model.body_index(name)
            np.testing.assert_allclose(fk.origin_world[k, i], data.oMi[j + 1].translation,
                                       atol=1e-12)
            np.testing.assert_allclose(fk.rotation_world[k, i], data.oMi[j + 1].rotation,
                                       atol=1e-12)


@pytest.mark.parametrize("joint,field", [
    ({"limits": {"lower": 0, "upper": 1}}, "bodies[0].joint: got limits"),
    ({"multiplier": 2.0}, "bodies[0].joint: got multiplier"),
    ({"axis": [0, 0, 0]}, "bodies[0] (a).joint.axis"),
])
def test_what_a_cylindrical_joint_does_not_take_is_refused_by_field(joint, field):
    with pytest.raises(ModelError, match=field.replace("[", r"\[").replace("]", r"\]")
                       .replace("(", r"\(").replace(")", r"\)")):
        model_from_dict(document(**joint), "bad.yaml")


def test_errors_after_a_cylindrical_joint_name_the_files_entry():
    """The attack: after a C body (two bodies at load) the parent and duplicate checks named
    the body after it bodies[k + 1], and a clash with NAME_slide did not say where that
    name came from."""
    doc = document()
    doc["bodies"][2]["parent"] = "nowhere"
    with pytest.raises(ModelError, match=r"bodies\[2\] \(c\)\.parent: unknown parent"):
        model_from_dict(doc, "bad.yaml")
    doc = document()
    doc["bodies"][1]["name"] = "a_slide"
    doc["bodies"][2]["parent"] = "a_slide"
    with pytest.raises(ModelError, match=r"bodies\[1\]\.name: duplicate body name 'a_slide' "
                                         r"\(also the virtual body of a cylindrical joint"):
        model_from_dict(doc, "bad.yaml")


@pytest.mark.parametrize("field", ["name", "coordinate"])
def test_the_names_the_loader_makes_keep_the_bound_on_names(field):
    """The attack: a 125-character body name gave a 131-character NAME_slide (names become
    topic names and frame ids: at most 128)."""
    doc = document()
    if field == "name":
        doc["bodies"][2]["name"] = "c" * 123
    else:
        doc["bodies"][2]["joint"]["coordinate"] = "q" * 123
    where = "name" if field == "name" else "joint.coordinate"
    with pytest.raises(ModelError, match=rf"bodies\[2\].*\.{where}: got a name of 123 "
                                         r"characters on a cylindrical joint, expected at most 122"):
        model_from_dict(doc, "bad.yaml")
    doc["bodies"][2]["name" if field == "name" else "joint"] = \
        "c" * 122 if field == "name" else doc["bodies"][2]["joint"] | {"coordinate": "q" * 122}
    model_from_dict(doc, "fine.yaml")


def test_the_bound_on_bodies_counts_the_virtual_ones(monkeypatch):
    from charmie_dynamics.model import loader
    monkeypatch.setattr(loader, "MAX_BODIES", 5)
    with pytest.raises(ModelError, match=r"bodies: 6 bodies once each cylindrical joint is two, "
                                         r"expected at most 5"):
        model_from_dict(document(), "big.yaml")
