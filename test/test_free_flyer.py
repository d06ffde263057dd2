"""The free-flyer joint (issue 12 item 2) beyond the comparisons with Pinocchio of
test_urdf_import.py (example-robot-data with a free-flyer root, random trees with a floating
root): the configuration space (q (+) v against Pinocchio's ``integrate``, unit quaternions
required), the conservation of spatial momentum and energy by a free-floating robot without
gravity under the package's integrator, the held coordinates of the ABA's 6 x 6 root solve,
and the format's rules (root only, names, refusals)."""
from __future__ import annotations

import logging

import numpy as np
import pinocchio as pin
import pytest
import yaml

from charmie_dynamics import JointSpaceState, StateError, forward_kinematics, load_model
from charmie_dynamics.dynamics import (MassMatrixError, forward_dynamics, inverse_dynamics,
                                       mass_matrix, mass_matrix_from_inverse_dynamics)
from charmie_dynamics.dynamics.forward import ForwardDynamicsData
from charmie_dynamics.kinematics import body_motion, integrate_configuration, neutral_configuration
from charmie_dynamics.model import ModelError, model_from_dict
from charmie_dynamics.model.urdf import urdf_document
from charmie_dynamics.simulation import coordinate_limits, mechanical_energy, simulate
from test_urdf_import import random_states, random_urdf


def floating_model(seed: int, gravity=(0.0, 0.0, -9.81), coupled: bool = True):
    """A random tree whose first joint is a URDF floating joint (test_urdf_import), its
    massless links given a mass (a massless leaf leaves H singular); ``coupled=False``:
    each mimic joint given a coordinate of its own, so that the ABA runs (coupled joints
    with different parents make it fall back to Cholesky)."""
    doc = urdf_document(random_urdf(np.random.default_rng(seed), floating=True), "random.urdf")
    doc["gravity"] = list(gravity)
    for body in doc["bodies"]:
        if body.pop("virtual", False):
            body.update(mass=0.3, com=[0.05, 0.0, 0.0], inertia=np.diag([1, 2, 2.5]).tolist())
        joint = body["joint"]
        if not coupled and joint["type"] in ("R", "P"):
            joint["coordinate"] = f"{body['name']}.q"
            joint.pop("multiplier", None)
            joint.pop("offset", None)
    logger = logging.getLogger("charmie_dynamics")
    level, logger.level = logger.level, logging.ERROR
    try:
        return model_from_dict(doc, "random.urdf")
    finally:
        logger.setLevel(level)


def state(model, q, qd, qdd):
    none = np.zeros(np.shape(qd)[:-1] + (len(model.actuators),))
    return JointSpaceState(q, qd, qdd, none, none, none, none)


def test_names_and_sizes():
    model = floating_model(0)
    root = "joint.0-j"
    assert (model.nq, model.nv) == (model.n_coordinates + 1, model.n_coordinates)
    assert model.coordinate_names[:6] == tuple(f"{root}.{p}" for p in
                                               ("vx", "vy", "vz", "wx", "wy", "wz"))
    assert model.configuration_names[:7] == tuple(f"{root}.{p}" for p in
                                                  ("x", "y", "z", "qx", "qy", "qz", "qw"))
    assert model.configuration_names[7:] == model.coordinate_names[6:]
    assert model.free_flyers == (0,)
    assert np.array_equal(model.coordinate_configuration[:6], np.arange(6))
    assert np.array_equal(neutral_configuration(model)[:7], [0, 0, 0, 0, 0, 0, 1])


def test_integrate_configuration_against_pinocchio():
    """q (+) v dt is Pinocchio's integrate (SE(3) exponential), small and large turns."""
    model = floating_model(1)
    rng = np.random.default_rng(3)
    q, v, _ = random_states(model, rng)
    for scale in (1e-7, 1e-3, 1.0, 3.0):         # the series branch and the closed form
        ours = integrate_configuration(model, q, v * scale)
        for k in range(len(q)):
            M = pin.XYZQUATToSE3(q[k, :7]) * pin.exp6(pin.Motion(v[k, :6] * scale))
            ref = pin.SE3ToXYZQUAT(M)
            if np.dot(ref[3:], ours[k, 3:7]) < 0:     # q and -q are the same rotation
                ref[3:] *= -1
            np.testing.assert_allclose(ours[k, :7], ref, rtol=0, atol=1e-14 * max(1, scale))
            np.testing.assert_allclose(ours[k, 7:], q[k, 7:] + scale * v[k, 6:], rtol=0,
                                       atol=1e-15 * max(1, scale) * 10)
        assert np.all(np.abs(np.linalg.norm(ours[:, 3:7], axis=1) - 1) < 4e-16)


@pytest.mark.parametrize("call", ["fk", "id", "fd", "fd_data", "crba"])
def test_non_unit_quaternion_is_refused(call):
    """``fd_data``: the ABA itself (no coupled joints on different parents) with reused
    data and arrays as its kernel takes them, the route without conversions."""
    model = floating_model(2, coupled=call != "fd_data")
    q = neutral_configuration(model)
    q[3:7] = [0.0, 0.0, 0.1, 1.0]                 # norm 1.005
    v = np.zeros(model.nv)
    data = ForwardDynamicsData(model)
    run = {"fk": lambda: forward_kinematics(model, q),
           "id": lambda: inverse_dynamics(model, state(model, q, v, v)),
           "fd": lambda: forward_dynamics(model, q, v, v, method="aba"),
           "fd_data": lambda: forward_dynamics(model, q, v, v, method="aba", data=data),
           "crba": lambda: mass_matrix(model, q)}[call]
    with pytest.raises(StateError, match=r"q\[3:7\] \(joint\.0-j\.qx \.\. joint\.0-j\.qw\): a "
                                         r"quaternion of norm 1 \+- 0\.00499.*expected a unit "
                                         r"quaternion \(\|norm - 1\| <= 1e-09\)"):
        run()
    q[3:7] /= np.linalg.norm(q[3:7])
    run()


def spatial_momentum(model, q, qd) -> np.ndarray:
    """Linear momentum and angular momentum about the world origin, world frame, (..., 6)."""
    fk = forward_kinematics(model, q)
    motion = body_motion(model, fk, qd, np.zeros_like(qd))
    R = fk.rotation_world
    v = np.einsum("...bij,...bj->...bi", R, motion.com_velocity)
    w = np.einsum("...bij,...bj->...bi", R, motion.angular_velocity)
    c = fk.origin_world + np.einsum("...bij,bj->...bi", R, model.com)
    Iw = np.einsum("...bij,bjk,...blk,...bl->...bi", R, model.inertia, R, w)
    linear = np.einsum("b,...bi->...i", model.mass, v)
    angular = np.sum(Iw + model.mass[:, None] * np.cross(c, v), axis=-2)
    return np.concatenate([linear, angular], axis=-1)


@pytest.mark.parametrize("seed,coupled", [(0, True), (1, True), (2, True), (0, False),
                                         (3, False)])
def test_free_floating_robot_conserves_momentum_and_energy(seed, coupled):
    """Zero gravity, no effort, no stops: the spatial momentum and the kinetic energy are
    invariants of the motion. The package's RK4 (Runge-Kutta-Munthe-Kaas on the free-flyer,
    integrate.py) is fourth order, so their drift over a fixed time shrinks as dt^4:
    halving dt must divide it by at least 8 (16 in the limit), and the drift at the larger
    step is the tolerance, measured, not assumed. A plain RK4 on the quaternion's tangent
    (no dexp^-1) would be second order here and divide it by about 4."""
    model = floating_model(seed, gravity=(0.0, 0.0, 0.0), coupled=coupled)
    assert (model.compiled.aba_coupling is None) != coupled      # coupled: by Cholesky
    rng = np.random.default_rng(seed + 10)
    q0, qd0, _ = (a[0] for a in random_states(model, rng))
    qd0 = qd0 * 2.0
    drifts = []
    for dt in (8e-3, 4e-3):
        sim = simulate(model, q0, qd0, None, 0.4, dt, "rk4", dynamics="aba", limits=False)
        h = spatial_momentum(model, sim.q, sim.qd)
        energy = mechanical_energy(model, sim.q, sim.qd).kinetic
        assert np.all(np.abs(np.linalg.norm(sim.q[:, 3:7], axis=1) - 1) < 1e-15)
        drifts.append((np.abs(h - h[0]).max() / np.abs(h[0]).max(),
                       np.abs(energy - energy[0]).max() / energy[0]))
    (h_coarse, e_coarse), (h_fine, e_fine) = drifts
    print(f"seed {seed} coupled {coupled}: momentum drift {h_coarse:.2e} -> {h_fine:.2e}, "
          f"energy drift {e_coarse:.2e} -> {e_fine:.2e}")
    assert 1e-13 < h_coarse < 1e-3 and 1e-13 < e_coarse < 1e-3      # above rounding
    assert h_fine <= h_coarse / 8 and e_fine <= e_coarse / 8


def test_limits_keep_momentum_and_lose_energy():
    """With the joint stops on (integrate.py: impacts and contacts at the joints' limits,
    read at each coordinate's configuration entry past the free-flyer's 7), zero gravity:
    some coordinate reaches a stop, the kinetic energy never grows (plastic impacts lose
    it) and the spatial momentum stays that of the start up to the stops' repositioning: an
    impact's impulse and a contact act between a body and its parent (no change of the
    momentum), but putting a coordinate that overshot back on its bound moves the bodies
    at unchanged rates, which changes the momentum by about the overshoot (O(dt) of the
    joint's speed): measured 2e-4 relative here, bounded at 1e-3, against 8e-10 without
    stops at this step."""
    model = floating_model(3, gravity=(0.0, 0.0, 0.0), coupled=False)
    rng = np.random.default_rng(13)
    q0, qd0, _ = (a[0] for a in random_states(model, rng))
    at = model.coordinate_configuration
    lower, upper = coordinate_limits(model)
    assert np.all(np.isinf(lower[:6])) and np.isfinite(lower[6:]).any()
    q0[at[6:]] = 0.0                                  # inside every range (-1, 1.5)
    sim = simulate(model, q0, 3.0 * qd0, None, 0.4, 4e-3, "rk4", dynamics="aba", limits=True)
    h = spatial_momentum(model, sim.q, sim.qd)
    energy = mechanical_energy(model, sim.q, sim.qd).kinetic
    position = sim.q[:, at]
    on_stop = np.any((position == lower) | (position == upper))
    print(f"momentum drift {np.abs(h - h[0]).max() / np.abs(h[0]).max():.2e}, energy "
          f"{energy[0]:.4g} -> {energy[-1]:.4g} J")
    assert on_stop
    assert np.abs(h - h[0]).max() <= 1e-3 * np.abs(h[0]).max()
    assert np.all(np.diff(energy) <= 1e-7 * energy[0])
    assert energy[-1] < 0.99 * energy[0]


def test_mass_matrix_equals_the_columns_of_inverse_dynamics():
    """CRBA's free-flyer block and rows against H e_k = ID(q, 0, e_k) - ID(q, 0, 0), an
    oracle within the package (mass_matrix.py)."""
    model = floating_model(5)
    q = random_states(model, np.random.default_rng(8))[0][:4]
    H, columns = mass_matrix(model, q), mass_matrix_from_inverse_dynamics(model, q)
    np.testing.assert_allclose(H, columns, rtol=0, atol=1e-12 * np.abs(columns).max())


def test_held_coordinates_in_the_root_solve():
    """forward_dynamics(held=...) holding free-flyer coordinates: the ABA's 6 x 6 root solve
    (identity rows for held ones) against Cholesky's held_solve, and qdd = 0 where held."""
    model = floating_model(4, coupled=False)
    assert model.compiled.aba_coupling is None
    rng = np.random.default_rng(5)
    q, qd, tau = random_states(model, rng)
    held = np.zeros(qd.shape, dtype=bool)
    held[:, [1, 4]] = True                       # vy and wx of the free-flyer
    held[::2, 7] = True                          # and a joint coordinate in half the states
    aba = forward_dynamics(model, q, qd, tau, method="aba", held=held)
    cholesky = forward_dynamics(model, q, qd, tau, method="cholesky", held=held)
    assert np.all(aba[held] == 0.0)
    np.testing.assert_allclose(aba, cholesky, rtol=0, atol=1e-10 * np.abs(cholesky).max())


def test_massless_free_flyer_is_refused_by_the_aba():
    doc = {"format": "charmie_dynamics/model/1", "name": "ghost", "gravity": [0, 0, 0],
           "bodies": [{"name": "base", "parent": "world", "virtual": True,
                       "joint": {"type": "floating", "coordinate": "root"}}]}
    model = model_from_dict(doc)
    q, v = neutral_configuration(model), np.zeros(6)
    with pytest.raises(MassMatrixError, match="coordinate 'root.vx' moves no mass"):
        forward_dynamics(model, q, v, v, method="aba")


YAML_FLYER = {"format": "charmie_dynamics/model/1", "name": "flyer",
              "bodies": [{"name": "base", "parent": "world", "origin": [0.1, 0, 0.2],
                          "rotation": {"rpy": [0.1, 0.2, 0.3]},
                          "joint": {"type": "floating", "coordinate": "root"}, "mass": 2.0,
                          "com": [0.01, 0.0, 0.0],
                          "inertia": [[0.1, 0, 0], [0, 0.2, 0], [0, 0, 0.3]]},
                         {"name": "arm", "parent": "base", "origin": [0, 0, 0.3],
                          "joint": {"type": "R", "axis": "y", "coordinate": "shoulder"},
                          "mass": 1.0, "com": [0.2, 0, 0],
                          "inertia": [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.02]]}]}


def test_yaml_floating_joint_against_pinocchio():
    """The YAML's ``type: floating`` (with a placement) against a Pinocchio model built with
    its own API: FreeFlyer with that placement, then the revolute joint."""
    model = model_from_dict(YAML_FLYER)
    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(model.gravity), np.zeros(3))
    parent = 0
    for i, body in enumerate(model.bodies):
        joint = pin.JointModelFreeFlyer() if i == 0 else pin.JointModelRY()
        parent = pm.addJoint(parent, joint, pin.SE3(model.rotation[i], model.origin[i]),
                             body.name)
        pm.appendBodyToJoint(parent, pin.Inertia(body.mass, body.com, body.inertia),
                             pin.SE3.Identity())
    data = pm.createData()
    rng = np.random.default_rng(7)
    q, qd, qdd = random_states(model, rng)
    tau = inverse_dynamics(model, state(model, q, qd, qdd)).coordinate_effort
    H = mass_matrix(model, q)
    fk = forward_kinematics(model, q)
    for k in range(len(q)):
        pin.forwardKinematics(pm, data, q[k])
        for i in range(model.n_bodies):
            np.testing.assert_allclose(fk.rotation_world[k, i], data.oMi[i + 1].rotation,
                                       rtol=0, atol=1e-14)
            np.testing.assert_allclose(fk.origin_world[k, i], data.oMi[i + 1].translation,
                                       rtol=0, atol=1e-14)
        ref = pin.rnea(pm, data, q[k], qd[k], qdd[k])
        np.testing.assert_allclose(tau[k], ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        M = pin.crba(pm, data, q[k])
        M = np.triu(M) + np.triu(M, 1).T
        np.testing.assert_allclose(H[k], M, rtol=0, atol=1e-13 * np.abs(M).max())


@pytest.mark.parametrize("change,fragment", [
    (lambda d: d["bodies"][1]["joint"].update(type="floating", axis=None) or
     d["bodies"][1]["joint"].pop("axis"),
     "bodies[1] (arm).joint.type: a floating joint (free-flyer) on a body whose parent is "
     "'base', expected it only on a body whose parent is world (the root joint)"),
    (lambda d: d["bodies"][0]["joint"].update(axis="x"),
     "bodies[0] (base).joint: got axis for a floating joint (free-flyer), expected only type "
     "and coordinate"),
    (lambda d: d["bodies"][1]["joint"].update(coordinate="root"),
     "bodies (base).joint.coordinate: 'root' of a floating joint is shared with another joint"),
    (lambda d: d["bodies"][1]["joint"].update(coordinate="root.qw"),
     "its entries root.qw name other coordinates, expected a coordinate of its own"),
    (lambda d: d.update(actuators=[{"name": "a", "drives": "base", "base": "base.origin",
                                     "end": "base.origin", "branch": 1, "stroke": [1, 2],
                                     "default_length": 1.5}]),
     "actuators[0] (a).drives: base has a floating joint, expected R or P"),
])
def test_format_refusals(change, fragment):
    doc = yaml.safe_load(yaml.safe_dump(YAML_FLYER))
    change(doc)
    with pytest.raises(ModelError) as info:
        model_from_dict(doc, "flyer.yaml")
    assert fragment in str(info.value), str(info.value)


def test_floating_base_option_refusals(tmp_path):
    (tmp_path / "flyer.yaml").write_text(yaml.safe_dump(YAML_FLYER))
    with pytest.raises(ModelError, match="floating_base was given for a YAML model"):
        load_model(tmp_path / "flyer.yaml", floating_base=True)
    (tmp_path / "world.urdf").write_text(
        '<robot name="r"><link name="world"/><link name="a"/><joint name="j" type="fixed">'
        '<parent link="world"/><child link="a"/></joint></robot>')
    with pytest.raises(ModelError, match="world.urdf: <robot>: floating_base: the root link "
                                         "is 'world', the ground"):
        load_model(tmp_path / "world.urdf", floating_base=True)


def test_dynamics_node_refuses_a_free_flyer_model():
    """The dynamics node's model check (rclpy-free) names the floating joint's body."""
    from charmie_dynamics.ros.common.model_updates import prepare_model
    with pytest.raises(ModelError, match="flyer.yaml: body 'base' has a floating joint "
                                         r"\(free-flyer\): the dynamics node reads joint_states"):
        prepare_model(model_from_dict(YAML_FLYER), "", "flyer.yaml", [], [])


def test_urdf_export_refuses_a_free_flyer_model():
    from charmie_dynamics.export.urdf import urdf_from_model
    with pytest.raises(ModelError, match="flyer.yaml: URDF export of 'flyer': body 'base' has "
                                         r"a floating joint \(free-flyer\)"):
        urdf_from_model(model_from_dict(YAML_FLYER, "flyer.yaml"))


@pytest.mark.parametrize("command", ["fk", "id"])
def test_cli_state_commands_refuse_a_free_flyer_model(tmp_path, command):
    """fk and id read no free-flyer pose from a state file: one line naming the body (was
    'inputs of shape (7,), expected (..., 8)' without a state, and the velocity names
    offered for positions with one)."""
    from test_cli import assert_one_error_line, run_cli
    (tmp_path / "flyer.yaml").write_text(yaml.safe_dump(YAML_FLYER))
    proc = run_cli(command, "--model", tmp_path / "flyer.yaml")
    assert_one_error_line(proc, "flyer.yaml: body 'base' has a floating joint (free-flyer): a "
                                "state file gives no free-flyer pose")
