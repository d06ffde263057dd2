"""The joint transform about any unit axis and the rotation forms of the model file, against
Pinocchio on random trees.

Each tree is drawn (seeded) as plain parameters: random axes written unnormalised (and
coordinate axes +-e_k, as words or vectors), revolute, prismatic and fixed joints (and
helical ones in the trees drawn with them), constant rotations as ZXZ angles, roll-pitch-yaw
near the singular pitch +-pi/2, quaternions written unnormalised and matrices, coupled
(mimic) joints with multipliers and offsets, siblings and on other branches. The same
parameters build our model (through the YAML loader) and a Pinocchio model made with its own
API (JointModelRevoluteUnaligned / PrismaticUnaligned / HelicalUnaligned, SE3 placements
from pin.rpy and
pin.Quaternion, Inertia), so the loader's conversions are checked too. Coupled coordinates
map to Pinocchio's joints by q_pin = S q + offset, v_pin = S qd (S: the multipliers), so
tau = S^T rnea_pin, H = S^T M_pin S and qdd solves S^T M_pin S qdd = tau - S^T nle_pin.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
import yaml

from charmie_dynamics import body_motion, forward_kinematics
from charmie_dynamics.dynamics import forward_dynamics, inverse_dynamics, mass_matrix
from charmie_dynamics.dynamics.aba import coordinate_groups
from charmie_dynamics.kinematics.limits import InputLimits
from charmie_dynamics.layout import KIND
from charmie_dynamics.model import ModelError, model_from_dict
from charmie_dynamics.model.joint import REVOLUTE_KIND, REVOLUTE_X_KIND
from charmie_dynamics.simulation import coordinate_limits
from test_forward_dynamics import joint_state, relative_error

TOLERANCE = 1e-10
ROTATION_FORMS = ("zxz", "rpy", "quaternion", "matrix")


def random_rotation(rng, form):
    """A constant rotation in the file's form, and its matrix by Pinocchio's own functions."""
    if form == "zxz":
        a = rng.uniform(-np.pi, np.pi, 3)
        value = a.tolist()
        matrix = pin.utils.rotate("z", a[0]) @ pin.utils.rotate("x", a[1]) @ pin.utils.rotate("z", a[2])
    elif form == "rpy":                 # pitch at or within 1e-7 of the singular +-pi/2
        pitch = rng.choice([-1.0, 1.0]) * np.pi / 2 + rng.choice([0.0, 1e-7, -1e-9])
        r, y = rng.uniform(-np.pi, np.pi, 2)
        value, matrix = {"rpy": [float(r), float(pitch), float(y)]}, pin.rpy.rpyToMatrix(r, pitch, y)
    else:
        quaternion = rng.normal(size=4) * rng.uniform(0.1, 10.0)           # unnormalised
        matrix = pin.Quaternion(quaternion / np.linalg.norm(quaternion)).matrix()
        value = ({"quaternion": quaternion.tolist()} if form == "quaternion" else
                 {"matrix": matrix.tolist()})
    return value, np.array(matrix)


def random_inertia(rng):
    """A principal-axes inertia from three positive second moments (triangle inequality
    holds), turned by a random rotation."""
    m = rng.uniform(0.01, 0.2, 3)
    R = pin.Quaternion(rng.normal(size=4) / 2).normalized().matrix()
    return R @ np.diag([m[1] + m[2], m[0] + m[2], m[0] + m[1]]) @ R.T


def random_tree(seed, n_bodies=10, coupled=True, helical=False):
    """(document, parameters) of a random tree; parameters hold what Pinocchio needs.
    ``helical``: half the moving joints helical (type H, pitch up to 0.2 m/rad either way),
    the others revolute and prismatic; the same draws as before otherwise."""
    rng = np.random.default_rng(seed)
    bodies, params = [], []
    moving = ["R", "P", "H", "H"] if helical else ["R", "R", "P"]
    for i in range(n_bodies):
        parent = int(rng.integers(-1, i))
        jtype = "F" if i > 0 and rng.uniform() < 0.15 else rng.choice(moving)
        rotation, R = random_rotation(rng, ROTATION_FORMS[i % 4])
        origin = rng.uniform(-0.5, 0.5, 3)
        mass, com, inertia = rng.uniform(0.5, 3.0), rng.uniform(-0.2, 0.2, 3), random_inertia(rng)
        body = {"name": f"b{i}", "parent": "world" if parent < 0 else f"b{parent}",
                "origin": origin.tolist(), "rotation": rotation, "mass": float(mass),
                "com": com.tolist(), "inertia": inertia.tolist(), "joint": {"type": str(jtype)}}
        p = {"parent": parent, "type": str(jtype), "R": R, "origin": origin, "mass": mass,
             "com": com, "inertia": inertia, "coordinate": None}
        if jtype != "F":
            axis = rng.normal(size=3) * rng.uniform(0.2, 5.0)               # unnormalised
            written = axis.tolist()
            if rng.uniform() < 0.4:     # +-e_k, as "-y" or [0, -3, 0]: the kernels' own kind
                k, sign = int(rng.integers(3)), float(rng.choice([-1.0, 1.0]))
                axis = sign * np.eye(3)[k] * rng.uniform(0.5, 3.0)
                written = ("-" if sign < 0 else "") + "xyz"[k] if i % 2 else axis.tolist()
            leaders = [k for k, q in enumerate(params) if q["coordinate"] and q["leader"]]
            siblings = [k for k in leaders if params[k]["parent"] == parent]
            mimic = coupled and leaders and rng.uniform() < 0.4
            if mimic:                   # mostly a sibling: the ABA's own case
                lead = siblings[0] if siblings else int(rng.choice(leaders))
                if rng.uniform() < 0.7:
                    parent = p["parent"] = params[lead]["parent"]
                    body["parent"] = "world" if parent < 0 else f"b{parent}"
                coordinate = params[lead]["coordinate"]
                multiplier = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 2.0))
                offset = float(rng.uniform(-1.0, 1.0))
                body["joint"].update(multiplier=multiplier, offset=offset)
            else:
                coordinate, multiplier, offset = f"q{i}", 1.0, 0.0
            body["joint"].update(axis=written, coordinate=coordinate)
            p.update(axis=axis / np.linalg.norm(axis), coordinate=coordinate,
                     multiplier=multiplier, offset=offset, leader=not mimic)
            if jtype == "H":
                p["pitch"] = body["joint"]["pitch"] = float(rng.uniform(-0.2, 0.2))
        bodies.append(body)
        params.append(p)
    document = {"format": "charmie_dynamics/model/1", "name": f"random_{seed}",
                "gravity": [0.3, -0.2, -9.81], "bodies": bodies}
    return document, params


def pinocchio_model(params, gravity, coordinates):
    """Pinocchio's model of the parameters; each body's (joint id, placement in that joint's
    frame), S and the offsets: q_pin = S q + offset. Joints are added depth first, as
    Pinocchio's parsers do (its CRBA takes each subtree's velocities to be contiguous)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(gravity), np.zeros(3))
    frames, moving = {}, []
    order, stack = [], [i for i, p in enumerate(params) if p["parent"] < 0][::-1]
    while stack:
        order.append(stack.pop())
        stack.extend([i for i, p in enumerate(params) if p["parent"] == order[-1]][::-1])
    for i in order:
        p = params[i]
        jid, placement = (0, pin.SE3.Identity()) if p["parent"] < 0 else frames[p["parent"]]
        placement = placement * pin.SE3(p["R"], p["origin"])
        inertia = pin.Inertia(p["mass"], p["com"], p["inertia"])
        if p["type"] == "F":
            pm.appendBodyToJoint(jid, inertia, placement)
            frames[i] = jid, placement
            continue
        joint = {"R": lambda: pin.JointModelRevoluteUnaligned(p["axis"]),
                 "P": lambda: pin.JointModelPrismaticUnaligned(p["axis"]),
                 "H": lambda: pin.JointModelHelicalUnaligned(p["axis"], p["pitch"])}[p["type"]]()
        jid = pm.addJoint(jid, joint, placement, f"j{i}")
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        frames[i] = jid, pin.SE3.Identity()
        moving.append((jid, p))
    S, offset = np.zeros((pm.nv, len(coordinates))), np.zeros(pm.nv)
    for jid, p in moving:
        k = pm.joints[jid].idx_v
        S[k, coordinates.index(p["coordinate"])] = p["multiplier"]
        offset[k] = p["offset"]
    return pm, frames, S, offset


SEEDS = range(6)


def check_against_pinocchio(seed, helical=False):
    """FK, velocities and accelerations of every body, RNEA, CRBA and ABA (both methods) of
    ``random_tree(seed, helical=helical)`` at 5 random states; the largest differences
    (absolute for FK, relative_error for the others), by quantity."""
    document, params = random_tree(seed, helical=helical)
    model = model_from_dict(document, f"random_{seed}")
    pm, frames, S, offset = pinocchio_model(params, document["gravity"], model.coordinate_names)
    pd = pm.createData()
    rng = np.random.default_rng(100 + seed)
    n = model.n_coordinates
    q, qd, qdd, tau = (rng.uniform(-2.0, 2.0, (5, n)) for _ in range(4))
    fk = forward_kinematics(model, q)
    efforts = inverse_dynamics(model, joint_state(model, q, qd, qdd)).coordinate_effort
    H = mass_matrix(model, q)
    fd = {method: forward_dynamics(model, q, qd, tau, method) for method in ("aba", "cholesky")}
    worst = dict.fromkeys(("fk", "motion", "rnea", "crba", "aba", "cholesky"), 0.0)
    for s in range(len(q)):
        qp, vp, ap = S @ q[s] + offset, S @ qd[s], S @ qdd[s]
        pin.forwardKinematics(pm, pd, qp, vp, ap)
        motion = body_motion(model, forward_kinematics(model, q[s]), qd[s], qdd[s])
        for i, (jid, placement) in frames.items():
            oMi = pd.oMi[jid] * placement
            k = model.body_index(f"b{i}")           # the loader orders bodies depth first
            v, a = placement.actInv(pd.v[jid]), placement.actInv(pd.a[jid])
            for ours, theirs, key in (
                    (fk.rotation_world[s, k], oMi.rotation, "fk"),
                    (fk.origin_world[s, k], oMi.translation, "fk"),
                    (motion.angular_velocity[k], v.angular, "motion"),
                    (motion.linear_velocity[k], v.linear, "motion"),
                    (motion.angular_acceleration[k], a.angular, "motion"),
                    (motion.linear_acceleration[k], a.linear + np.cross(v.angular, v.linear),
                     "motion")):
                error = (np.max(np.abs(ours - theirs)) if key == "fk" else
                         relative_error(ours, theirs))
                worst[key] = max(worst[key], float(error))
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        nle = pin.rnea(pm, pd, qp, vp, np.zeros(pm.nv))
        reference = np.linalg.solve(S.T @ M @ S, tau[s] - S.T @ nle)
        for key, ours, theirs in (("rnea", efforts[s], S.T @ pin.rnea(pm, pd, qp, vp, ap)),
                                  ("crba", H[s], S.T @ M @ S),
                                  *((method, qdd_ours[s], reference)
                                    for method, qdd_ours in fd.items())):
            worst[key] = max(worst[key], relative_error(ours, theirs))
    return worst


@pytest.mark.parametrize("helical", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_random_trees_against_pinocchio(seed, helical):
    worst = check_against_pinocchio(seed, helical)
    assert max(worst.values()) < TOLERANCE, worst


def aba_paths(models):
    """(reduced, across): how many of the models have coupled joints that are siblings (the
    ABA reduces them), how many coupled across parents (Cholesky instead)."""
    reduced = across = 0
    for model in models:
        try:
            groups = coordinate_groups(model)
        except ValueError:
            across += 1
            continue
        reduced += any(len(g) > 1 for g in groups)
    return reduced, across


def test_random_trees_cover_both_aba_paths():
    """Among SEEDS, trees of both ABA paths (aba_paths), each with axes +-e_k and general
    ones."""
    models = [model_from_dict(random_tree(seed)[0]) for seed in SEEDS]
    for seed, model in zip(SEEDS, models):
        kinds = model.compiled.packed.body_int[:, KIND]
        assert REVOLUTE_KIND in kinds and np.any(kinds >= REVOLUTE_X_KIND), seed
    reduced, across = aba_paths(models)
    assert reduced >= 2 and across >= 2, (reduced, across)


@pytest.mark.parametrize("helical", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_uncoupled_trees_against_pinocchio_aba(seed, helical):
    """Without coupling, S is a permutation: Pinocchio's own ABA is the reference."""
    document, params = random_tree(50 + seed, coupled=False, helical=helical)
    model = model_from_dict(document)
    pm, _, S, _ = pinocchio_model(params, document["gravity"], model.coordinate_names)
    pd = pm.createData()
    rng = np.random.default_rng(200 + seed)
    q, qd, tau = (rng.uniform(-2.0, 2.0, (4, model.n_coordinates)) for _ in range(3))
    qdd = forward_dynamics(model, q, qd, tau, "aba")
    for s in range(len(q)):
        reference = S.T @ pin.aba(pm, pd, S @ q[s], S @ qd[s], S @ tau[s])
        assert relative_error(qdd[s], reference) < TOLERANCE


def test_coupling_across_branches_falls_back_and_siblings_use_the_aba(caplog):
    """A mimic joint on another branch makes method="aba" solve by Cholesky with one log
    line; a mimic sibling keeps the ABA (no log). Both agree with Pinocchio above."""
    sibling = {"format": "charmie_dynamics/model/1", "name": "sibling", "bodies": [
        {"name": "base", "parent": "world", "joint": {"type": "F"}, "mass": 1.0,
         "com": [0, 0, 0], "inertia": {"solid_box": [0.1, 0.1, 0.1]}},
        *({"name": f"finger{k}", "parent": "base", "origin": [0, 0.05 * k, 0],
           "joint": {"type": "P", "axis": [0, 1, 1], "coordinate": "grip",
                     "multiplier": [1.0, -1.0][k], "offset": [0.0, 0.01][k]},
           "mass": 0.1, "com": [0, 0, 0.02], "inertia": {"solid_box": [0.01, 0.01, 0.04]}}
          for k in (0, 1))]}
    across = yaml.safe_load(yaml.safe_dump(sibling))
    across["name"] = "across"
    across["bodies"][2]["parent"] = "finger0"
    with caplog.at_level("WARNING", logger="charmie_dynamics.dynamics.forward"):
        for doc in (sibling, across):
            model = model_from_dict(doc)
            for _ in range(2):
                qdd = forward_dynamics(model, [0.01], [0.2], [1.0], "aba")
                np.testing.assert_allclose(
                    qdd, forward_dynamics(model, [0.01], [0.2], [1.0], "cholesky"), rtol=1e-12)
    said = [r.getMessage() for r in caplog.records if "solves by Cholesky" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("across:") and "'grip'" in said[0]


PLAIN_PYTHON = """
import json, sys
import numpy as np
from charmie_dynamics import JointSpaceState, forward_kinematics, jit
from charmie_dynamics.dynamics import forward_dynamics, inverse_dynamics, mass_matrix
from charmie_dynamics.simulation import coordinate_limits
from charmie_dynamics.model import model_from_dict
document, q, qd, qdd = json.loads(sys.stdin.read())
model = model_from_dict(document)
q, qd, qdd = np.array(q), np.array(qd), np.array(qdd)
none = np.zeros((len(q), 0))
state = JointSpaceState(q, qd, qdd, none, none, none, none)
print(json.dumps({"jit": jit.ENABLED,
                  "origins": forward_kinematics(model, q).origin_world.tolist(),
                  "rotations": forward_kinematics(model, q).rotation_world.tolist(),
                  "efforts": inverse_dynamics(model, state).coordinate_effort.tolist(),
                  "H": mass_matrix(model, q).tolist(),
                  "aba": forward_dynamics(model, q, qd, qdd, "aba").tolist()}))
"""


@pytest.mark.parametrize("helical", [False, True])
def test_plain_python_equals_compiled_on_a_random_tree(helical):
    document, _ = random_tree(3, helical=helical)
    model = model_from_dict(document)
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (3, model.n_coordinates)) for _ in range(3))
    proc = subprocess.run(
        [sys.executable, "-c", PLAIN_PYTHON], capture_output=True, text=True, timeout=300,
        input=json.dumps([document, q.tolist(), qd.tolist(), qdd.tolist()]), check=True,
        env=dict(os.environ, CHARMIE_DYNAMICS_JIT="0"))
    plain = json.loads(proc.stdout)
    assert plain["jit"] is False
    fk = forward_kinematics(model, q)
    ours = {"origins": fk.origin_world, "rotations": fk.rotation_world,
            "efforts": inverse_dynamics(model, joint_state(model, q, qd, qdd)).coordinate_effort,
            "H": mass_matrix(model, q), "aba": forward_dynamics(model, q, qd, qdd, "aba")}
    for key, value in ours.items():
        np.testing.assert_allclose(value, plain[key], rtol=1e-12, atol=1e-12, err_msg=key)


def test_units_apply_to_offsets():
    """An offset is in the file's angle or length unit, like the joint's limits."""
    def tree(units, angle, length):
        return {"format": "charmie_dynamics/model/1", "name": "units", "units": units,
                "bodies": [
                    {"name": "a", "parent": "world", "joint": {"type": "R", "axis": "z",
                                                               "coordinate": "q"},
                     "mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]}},
                    {"name": "b", "parent": "world", "joint": {
                        "type": "R", "axis": [1, 1, 0], "coordinate": "q", "offset": angle},
                     "mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]}},
                    {"name": "c", "parent": "b", "origin": [0, 0, length], "joint": {
                        "type": "P", "axis": "x", "coordinate": "q", "multiplier": 2.0,
                        "offset": length},
                     "mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]}}]}
    si = model_from_dict(tree({}, np.pi / 2, 0.25))
    other = model_from_dict(tree({"length": "mm", "angle": "deg"}, 90.0, 250.0))
    q = np.array([[0.3], [-1.2]])
    a, b = forward_kinematics(si, q), forward_kinematics(other, q)
    np.testing.assert_allclose(a.origin_world, b.origin_world, rtol=0, atol=1e-15)
    np.testing.assert_allclose(a.joint_values[:, 1:], q * [1.0, 2.0] + [np.pi / 2, 0.25],
                               rtol=1e-15)


def test_coordinate_limits_take_offsets():
    """Joint limits are of the joint value multiplier * q + offset: the mimic joint's
    [-1.5, 0.5] with multiplier -2 and offset 0.5 holds q in [0, 1]; the leader's [-1, 2]."""
    doc = minimal()
    doc["bodies"][0]["joint"]["limits"] = {"lower": -1.0, "upper": 2.0}
    doc["bodies"].append({"name": "m", "parent": "a", "joint": {
        "type": "R", "axis": [0, 1, 1], "coordinate": "q", "multiplier": -2.0, "offset": 0.5,
        "limits": {"lower": -1.5, "upper": 0.5}},
        "mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]}})
    model = model_from_dict(doc)
    lower, upper = coordinate_limits(model)
    assert (lower[0], upper[0]) == pytest.approx((0.0, 1.0), abs=1e-15)
    limits = InputLimits.of(model)
    assert (limits.lower["q"], limits.upper["q"]) == pytest.approx((0.0, 1.0), abs=1e-15)


# ------------------------------------------------------------------ loader errors

def minimal():
    return {"format": "charmie_dynamics/model/1", "name": "bad", "bodies": [
        {"name": "a", "parent": "world", "joint": {"type": "R", "axis": "z", "coordinate": "q"},
         "mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]}}]}


REFLECTION = [[1, 0, 0], [0, 1, 0], [0, 0, -1]]
SHEARED = [[1, 1e-5, 0], [0, 1, 0], [0, 0, 1]]


@pytest.mark.parametrize("field, value, where, expected", [
    ("joint.axis", [0, 0, 0], "joint.axis", "expected a nonzero vector"),
    ("joint.axis", [1e-12, 0, 0], "joint.axis", "expected a nonzero vector"),
    ("joint.axis", [1, 0], "joint.axis", "expected a list of 3 numbers"),
    ("joint.axis", {"x": 1}, "joint.axis", "or a list of 3 numbers"),
    ("joint.axis", [1, "y", 0], "joint.axis[1]", "expected a number"),
    ("rotation", {"rpy": [0, 1]}, "rotation.rpy", "expected a list of 3 numbers"),
    ("rotation", {"rpy": [0, 2e3, 0]}, "rotation.rpy[1]", "expected |angle| <= 1000 rad"),
    ("rotation", {"quaternion": [0, 0, 0, 0]}, "rotation.quaternion",
     "expected a nonzero vector"),
    ("rotation", {"quaternion": [0, 0, 1]}, "rotation.quaternion", "expected a list of 4"),
    ("rotation", {"matrix": REFLECTION}, "rotation.matrix", "det -1), expected a rotation"),
    ("rotation", {"matrix": SHEARED}, "rotation.matrix", "expected a rotation: orthonormal"),
    ("rotation", {"matrix": [[1, 0, 0], [0, 1, 0]]}, "rotation.matrix", "3 rows of 3"),
    ("rotation", {"euler": [0, 0, 0]}, "rotation", "expected a list of 3 ZXZ Euler angles"),
    ("rotation", {"rpy": [0, 0, 0], "quaternion": [0, 0, 0, 1]}, "rotation",
     "or one of {rpy"),
    ("joint.offset", "half", "joint.offset", "expected a number"),
    ("joint.offset", 1e4, "joint.offset", "expected |angle| <= 1000 rad"),
])
def test_bad_axis_rotation_and_offset(field, value, where, expected):
    data = minimal()
    target = data["bodies"][0]
    if field.startswith("joint."):
        target = target["joint"]
    target[field.split(".")[-1]] = value
    with pytest.raises(ModelError, match=re.escape(f"bad.yaml: bodies[0] (a).{where}: ")
                       + ".*" + re.escape(expected)):
        model_from_dict(data, "bad.yaml")


def test_offset_on_a_fixed_or_an_actuated_joint_is_refused():
    data = minimal()
    data["bodies"].append({"name": "f", "parent": "a", "joint": {"type": "F", "offset": 0.1},
                           "mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]}})
    with pytest.raises(ModelError, match=r"bodies\[1\] \(f\)\.joint: got offset for a fixed"):
        model_from_dict(data, "bad.yaml")
    data = minimal()
    data["bodies"][0]["joint"] = {"type": "P", "axis": "x", "coordinate": "d", "offset": 0.1}
    data["bodies"][0]["points"] = {"E": [0, 0, 0.2]}
    data["bodies"].insert(0, {"name": "base", "parent": "world", "joint": {"type": "F"},
                              "mass": 1.0, "com": [0, 0, 0], "inertia": {"solid_box": [1, 1, 1]},
                              "points": {"B": [0, 0.1, 0]}})
    data["bodies"][1]["parent"] = "base"
    data["actuators"] = [{"name": "act", "drives": "a", "base": "base.B", "end": "a.E",
                          "branch": 1, "stroke": [0.3, 0.5], "default_length": 0.4}]
    with pytest.raises(ModelError, match=r"actuators \(act\)\.drives: the joint of a has an "
                                         "offset, expected none"):
        model_from_dict(data, "bad.yaml")
