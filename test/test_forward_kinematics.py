"""Forward kinematics against independent implementations: Pinocchio (built from the model's
parameters) and a 4x4 homogeneous-transform chain written here from the raw YAML with
SciPy's Euler angles; plus invariants of the placements."""
import numpy as np
import pinocchio as pin
import pytest
import yaml
from scipy.spatial.transform import Rotation

from charmie_dynamics import forward_kinematics, inputs_from_dict, point_positions, resolve_state
from conftest import CHARMIE
from pin_oracle import pin_joint_vector, pinocchio_model

N_RANDOM = 25


def random_q(model, rng):
    """Random coordinates; CHARMIE's driven ones through random actuator lengths."""
    x = rng.uniform(-np.pi, np.pi, len(model.input_names))
    for a in model.actuators:
        k = model.input_names.index(a.name)
        x[k] = rng.uniform(*a.stroke)
    return resolve_state(model, x, 0 * x, 0 * x).q


def test_against_pinocchio(any_model):
    pm = pinocchio_model(any_model)
    pd = pm.createData()
    rng = np.random.default_rng(1)
    worst = 0.0
    for _ in range(N_RANDOM):
        q = random_q(any_model, rng)
        pin.forwardKinematics(pm, pd, pin_joint_vector(any_model, q))
        fk = forward_kinematics(any_model, q)
        for i in range(any_model.n_bodies):
            M = pd.oMi[i + 1]
            worst = max(worst, np.abs(fk.rotation_world[i] - M.rotation).max(),
                        np.abs(fk.origin_world[i] - M.translation).max())
    assert worst < 1e-12, worst


def homogeneous_chain(path, q_by_name):
    """World transform of every body from the raw YAML: T = T_parent Tr(B) R_c J(q)."""
    doc = yaml.safe_load(open(path))
    scale = {"m": 1.0, "mm": 1e-3}[doc.get("units", {}).get("length", "m")]
    bodies = {b["name"]: b for b in doc["bodies"]}
    out = {}

    def world(name):
        if name == "world":
            return np.eye(4)
        if name in out:
            return out[name]
        b = bodies[name]
        T = np.eye(4)
        T[:3, 3] = np.array(b.get("origin", [0, 0, 0])) * scale
        C = np.eye(4)
        C[:3, :3] = Rotation.from_euler("ZXZ", b.get("rotation", [0, 0, 0])).as_matrix()
        J = np.eye(4)
        joint = b["joint"]
        if joint["type"] != "F":
            axis = np.zeros(3)
            axis["xyz".index(joint["axis"][-1])] = -1.0 if joint["axis"].startswith("-") else 1.0
            value = joint.get("multiplier", 1.0) * q_by_name[joint["coordinate"]]
            if joint["type"] == "R":
                J[:3, :3] = Rotation.from_rotvec(axis * value).as_matrix()
            else:
                J[:3, 3] = axis * value
        out[name] = world(b["parent"]) @ T @ C @ J
        return out[name]

    for name in bodies:
        world(name)
    return out, bodies, scale


def test_against_homogeneous_chain(any_model):
    rng = np.random.default_rng(2)
    for _ in range(10):
        q = random_q(any_model, rng)
        ref, bodies, scale = homogeneous_chain(any_model.source, dict(zip(any_model.coordinate_names, q)))
        fk = forward_kinematics(any_model, q)
        points = point_positions(any_model, fk)
        for i, name in enumerate(any_model.body_names):
            np.testing.assert_allclose(fk.rotation_world[i], ref[name][:3, :3], atol=1e-12)
            np.testing.assert_allclose(fk.origin_world[i], ref[name][:3, 3], atol=1e-12)
            for pname, local in (bodies[name].get("points") or {}).items():
                expected = ref[name] @ np.r_[np.array(local) * scale, 1.0]
                np.testing.assert_allclose(points[f"{name}.{pname}"], expected[:3], atol=1e-12)


def test_rotations_orthonormal_and_relative_transforms_consistent(any_model):
    rng = np.random.default_rng(3)
    q = np.array([random_q(any_model, rng) for _ in range(50)])
    fk = forward_kinematics(any_model, q)
    R = fk.rotation_world
    np.testing.assert_allclose(R @ np.swapaxes(R, -1, -2), np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
    np.testing.assert_allclose(np.linalg.det(R), 1.0, atol=1e-12)
    for i in range(any_model.n_bodies):
        p = any_model.parent[i]
        if p < 0:
            continue
        np.testing.assert_allclose(fk.rotation_world[:, p] @ fk.rotation_parent[:, i],
                                   fk.rotation_world[:, i], atol=1e-12)
        rel = np.einsum("nji,nj->ni", fk.rotation_world[:, p], fk.origin_world[:, i] - fk.origin_world[:, p])
        np.testing.assert_allclose(rel, fk.origin_parent[:, i], atol=1e-12)


def test_batch_equals_single(charmie):
    rng = np.random.default_rng(4)
    q = np.array([random_q(charmie, rng) for _ in range(20)])
    batch = forward_kinematics(charmie, q)
    for n in range(len(q)):
        single = forward_kinematics(charmie, q[n])
        np.testing.assert_array_equal(batch.rotation_world[n], single.rotation_world)
        np.testing.assert_array_equal(batch.origin_world[n], single.origin_world)


def test_reused_data_equals_fresh_buffers(any_model):
    """forward_kinematics with ``data=`` (its entry point taken at the first call that
    needs no conversion, then called directly) gives each sample's placements as a call
    with buffers of its own, for inputs it takes as they are and ones it converts."""
    from charmie_dynamics.kinematics.forward import ForwardKinematicsData
    rng = np.random.default_rng(5)
    data = ForwardKinematicsData(any_model)
    for n in range(8):
        q = random_q(any_model, rng)
        if n == 5:
            q = np.asfortranarray(q[None])[0].astype(np.float32)     # converted
        if n == 6:
            q.flags.writeable = False
        if n == 7:                                   # unaligned: converted
            q = np.frombuffer(b"\0" + q.tobytes(), dtype=float, offset=1)
            assert not q.flags.aligned
        reused, fresh = forward_kinematics(any_model, q, data=data), \
            forward_kinematics(any_model, q)
        np.testing.assert_array_equal(reused.rotation_world, fresh.rotation_world)
        np.testing.assert_array_equal(reused.origin_world, fresh.origin_world)
        np.testing.assert_array_equal(reused.rotation_parent, fresh.rotation_parent)
    # the entry point was taken (a model without a free-flyer: with one, the general path)
    assert (data.entry is not None) == (not any_model.free_flyers)


def test_coupled_claw_halves_mirror(charmie):
    x, xd, xdd = inputs_from_dict(charmie, {"theta13a": 0.3})
    fk = forward_kinematics(charmie, resolve_state(charmie, x, xd, xdd).q)
    values = fk.joint_values
    assert values[charmie.body_index("body_13a1")] == pytest.approx(0.3)
    assert values[charmie.body_index("body_13a2")] == pytest.approx(-0.3)
    i, j = charmie.body_index("body_13a1"), charmie.body_index("body_13a2")
    # the two halves open symmetrically in the wrist's xz-plane
    rel_i = fk.rotation_parent[i] @ np.array([0, 0, 1.0])
    rel_j = fk.rotation_parent[j] @ np.array([0, 0, 1.0])
    np.testing.assert_allclose(rel_i * [-1, 1, 1], rel_j, atol=1e-15)


def test_charmie_zero_pose_matches_table2_by_hand(charmie):
    """At every coordinate 0 (and d4 = 0, theta5 = 0 through the joint API) the left claw
    centre is the sum of Table 2's offsets along the left arm (which points to -x)."""
    q = np.zeros(charmie.n_coordinates)
    fk = forward_kinematics(charmie, q)
    d12a = point_positions(charmie, fk, ["body_12a.D12a"])["body_12a.D12a"]
    arm = 30 + 61.5 + 145 + 145 + 140 + 140 + 102.3
    expected = np.array([-200 - arm, 3, 36.8 + 290 + 434 + 460]) * 1e-3
    np.testing.assert_allclose(d12a, expected, atol=1e-12)
    head = fk.origin_world[charmie.body_index("body_9c")]
    np.testing.assert_allclose(head, np.array([0 + 14.8 - 14.8, -5.3 + 20,
                                               36.8 + 290 + 434 + 495 + 46.3 + 18.3 + 201]) * 1e-3,
                               atol=1e-12)


def test_bundled_model_path_is_charmie():
    from charmie_dynamics import bundled_model
    assert bundled_model().resolve() == CHARMIE.resolve()
