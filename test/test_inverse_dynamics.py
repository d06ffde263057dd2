"""Inverse dynamics: the open tree against Pinocchio, the published arms along their
trajectories, statics, virtual work at the driven joints, power balance along the validation
motion, batch = single, and payloads."""
import numpy as np
import pinocchio as pin
import pytest

import dh_reference as dh
from charmie_dynamics import (body_motion, forward_kinematics, inputs_from_dict, load_model,
                              resolve_state)
from charmie_dynamics.dynamics import (ExternalWrench, Payload, inverse_dynamics, joint_efforts,
                                       tree_backward_pass)
from charmie_dynamics.mechanisms.forces import spring_energy
from charmie_dynamics.model import model_from_dict
from charmie_dynamics.trajectories import validation
from conftest import CHARMIE, EXAMPLES
from pin_oracle import pin_joint_vector, pinocchio_model
from test_forward_kinematics import random_q


def coordinate_efforts_from_pin(model, tau_pin):
    out = np.zeros(model.n_coordinates)
    for i in range(model.n_bodies):
        if model.coordinate_index[i] >= 0:
            out[model.coordinate_index[i]] += model.multiplier[i] * tau_pin[i]
    return out


def open_tree_efforts(model, q, qd, qdd):
    fk = forward_kinematics(model, q)
    motion = body_motion(model, fk, qd, qdd, base_acceleration=-model.gravity)
    return joint_efforts(model, tree_backward_pass(model, fk, motion))


def test_open_tree_against_pinocchio_rnea(any_model):
    """CHARMIE with its loops replaced by their joints (no actuators, springs or balancers)."""
    pm = pinocchio_model(any_model)
    pd = pm.createData()
    rng = np.random.default_rng(21)
    worst = 0.0
    for _ in range(25):
        q = random_q(any_model, rng)
        qd, qdd = rng.normal(size=q.shape), rng.normal(size=q.shape)
        ours = open_tree_efforts(any_model, q, qd, qdd)
        tau = pin.rnea(pm, pd, *(pin_joint_vector(any_model, v) for v in (q, qd, qdd)))
        ref = coordinate_efforts_from_pin(any_model, tau)
        worst = max(worst, np.max(np.abs(ours - ref)) / max(1.0, np.max(np.abs(ref))))
    assert worst < 1e-9, worst


def test_wrench_buffers_are_torque_first_spatial_forces(any_model):
    """One spatial-vector convention (charmie_dynamics.layout): every wrench buffer is [n; f].
    The tree pass's buffer, read as one 6-vector per body, is Pinocchio's data.f (the joint's
    spatial force on the body, joint frame) as [angular; linear]; it composes with
    dynamics/spatial.py's A_i (CRBA's and ABA's transform) as a spatial force:
    w_i - sum_c A_c^T w_c = M_i a_i + v_i x* M_i v_i with twist [omega; v]; and
    Loads.joint_wrenches holds the same [n; f], child frame then world frame. A buffer or
    reader left force-first fails all three."""
    from charmie_dynamics.dynamics.spatial import add_force_to_parent, parent_transform_into
    model = any_model
    pm = pinocchio_model(model)
    pd = pm.createData()
    rng = np.random.default_rng(31)
    nb, parent = model.n_bodies, model.parent
    M = model.compiled.spatial_inertias
    A = np.empty((nb, 6, 6))
    for _ in range(5):
        q = random_q(model, rng)
        qd, qdd = rng.normal(size=q.shape), rng.normal(size=q.shape)
        fk = forward_kinematics(model, q)
        motion = body_motion(model, fk, qd, qdd, base_acceleration=-model.gravity)
        wrenches = tree_backward_pass(model, fk, motion).buffer.reshape(nb, 6)
        pin.rnea(pm, pd, *(pin_joint_vector(model, v) for v in (q, qd, qdd)))
        ref = np.array([np.concatenate([pd.f[i + 1].angular, pd.f[i + 1].linear])
                        for i in range(nb)])
        np.testing.assert_allclose(wrenches, ref, rtol=1e-9, atol=1e-9 * np.abs(ref).max())
        own = wrenches.copy()
        for i in range(nb):
            parent_transform_into(fk.rotations, fk.origins, i, A[i])
            if parent[i] >= 0:
                add_force_to_parent(A[i], -wrenches[i], own[parent[i]])
        w, v = motion.angular_velocity, motion.linear_velocity
        twist = np.concatenate([w, v], axis=1)
        acc = np.concatenate([motion.angular_acceleration,
                              motion.linear_acceleration - np.cross(w, v)], axis=1)
        momentum = np.einsum("bij,bj->bi", M, twist)
        expected = np.einsum("bij,bj->bi", M, acc) + np.concatenate(
            [np.cross(w, momentum[:, :3]) + np.cross(v, momentum[:, 3:]),
             np.cross(w, momentum[:, 3:])], axis=1)
        np.testing.assert_allclose(own, expected, rtol=1e-9,
                                   atol=1e-9 * np.abs(expected).max())
        if model.actuators or model.springs or model.balancers:
            continue     # their joint wrenches are the joints' own shares (loops)
        loads = inverse_dynamics(model, resolve_state(model, q, qd, qdd))
        joint = loads.joint_wrenches.reshape(nb, 2, 6)
        np.testing.assert_array_equal(joint[:, 0], wrenches)
        R = fk.rotation_world
        world = np.concatenate([np.einsum("bij,bj->bi", R, ref[:, :3]),
                                np.einsum("bij,bj->bi", R, ref[:, 3:])], axis=1)
        tol = 1e-9 * np.abs(ref).max()
        np.testing.assert_allclose(joint[:, 1], world, rtol=0, atol=tol)
        # the public readers keep their meaning: force is Pinocchio's linear part
        for name, value in (("joint_torque", ref[:, :3]), ("joint_force", ref[:, 3:]),
                            ("joint_torque_world", world[:, :3]),
                            ("joint_force_world", world[:, 3:])):
            np.testing.assert_allclose(getattr(loads, name), value, rtol=0, atol=tol,
                                       err_msg=name)


@pytest.mark.parametrize("arm", ["puma", "stanford_arm"])
def test_published_arms_along_seed002_trajectories(arm):
    """Torques of our YAML model equal those of a Pinocchio model built straight from the
    paper's DH table (test/dh_reference.py), along eqs. 22-23."""
    model = load_model(EXAMPLES[arm])
    ref_arm = {"puma": dh.PUMA, "stanford_arm": dh.STANFORD}[arm]
    pm = dh.arm_pinocchio_model(ref_arm)
    pd = pm.createData()
    t = np.linspace(0.0, dh.T_FINAL, 201)
    q, qd, qdd = dh.TRAJECTORIES[arm](t)
    ours = open_tree_efforts(model, q, qd, qdd)
    ref = np.array([pin.rnea(pm, pd, q[k], qd[k], qdd[k]) for k in range(len(t))])
    assert np.max(np.abs(ours - ref)) < 1e-9 * max(1.0, np.max(np.abs(ref)))


def charmie_state(charmie, rng, dynamic=True):
    x = rng.uniform(-np.pi, np.pi, len(charmie.input_names))
    for a in charmie.actuators:
        x[charmie.input_names.index(a.name)] = rng.uniform(a.stroke[0] + 0.01, a.stroke[1] - 0.01)
    xd = rng.normal(size=x.shape) * (0.5 if dynamic else 0.0)
    xdd = rng.normal(size=x.shape) * (0.5 if dynamic else 0.0)
    for a in charmie.actuators:
        k = charmie.input_names.index(a.name)
        xd[k] *= 0.1
        xdd[k] *= 0.1
    return resolve_state(charmie, x, xd, xdd)


def test_statics_base_reaction_is_the_weight(charmie):
    rng = np.random.default_rng(22)
    weight = charmie.total_mass * 9.81
    for _ in range(10):
        loads = inverse_dynamics(charmie, charmie_state(charmie, rng), gravity_only=True)
        np.testing.assert_allclose(loads.base_force_world, [0.0, 0.0, weight], atol=1e-9)
        # the floor's torque about the base joint point equals the weight's moment about it
        fk = loads.placements
        com = np.sum(charmie.mass[:, None] * (fk.origin_world + np.einsum(
            "bij,bj->bi", fk.rotation_world, charmie.com)), axis=0) / charmie.total_mass
        arm = com - fk.origin_world[loads.base_body]
        np.testing.assert_allclose(loads.base_torque_world, np.cross(arm, [0, 0, weight]), atol=1e-9)


def test_virtual_work_at_the_driven_joints(charmie):
    """F_act dL = tau_q dq, i.e. F_act = tau_q dq/dL: springs and balancers included."""
    rng = np.random.default_rng(23)
    for dynamic in (False, True):
        for _ in range(10):
            state = charmie_state(charmie, rng, dynamic)
            loads = inverse_dynamics(charmie, state)
            for k, act in enumerate(charmie.actuators):
                c = charmie.coordinate(charmie.bodies[act.drives].coordinate)
                dq_dL = state.actuator_jacobian[k]
                assert loads.actuator_force[k] == pytest.approx(
                    loads.coordinate_effort[c] * dq_dL, rel=1e-10, abs=1e-9)


def test_loop_distribution_follows_the_papers_assumptions(charmie):
    rng = np.random.default_rng(24)
    state = charmie_state(charmie, rng)
    loads = inverse_dynamics(charmie, state)
    tree, loops = loads.tree, loads.loops
    b4, b5 = charmie.body_index("body_4"), charmie.body_index("body_5")
    act4, act5 = 0, 1
    # body 5 (eqs. 36-38): force sums, half the x force each, pin carries no x torque
    np.testing.assert_allclose(loops.actuator_end_force[act5] + loops.joint_force[act5],
                               tree.force[b5], atol=1e-9)
    assert loops.actuator_end_force[act5][0] == pytest.approx(loops.joint_force[act5][0], abs=1e-9)
    assert loops.joint_torque[act5][0] == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(loops.actuator_couple[act5], loops.joint_torque[act5], atol=1e-12)
    fk = loads.placements
    for k, b in ((act4, b4), (act5, b5)):
        act = charmie.actuators[k]
        u = fk.to_world(act.end.body, act.end.local) - fk.to_world(act.base.body, act.base.local)
        u = fk.rotation_world[b].T @ u / np.linalg.norm(u)
        f_yz = loops.actuator_end_force[k][1:]
        assert f_yz[0] * u[2] - f_yz[1] * u[1] == pytest.approx(0.0, abs=1e-9)   # along the actuator
    # body 4 (eqs. 42-43): the prismatic joint carries no force and no torque along its axis
    axis = charmie.axis[b4]
    assert loads.joint_force[b4] @ axis == pytest.approx(0.0, abs=1e-9)
    assert loads.joint_torque[b4] @ axis == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(np.sum(loops.balancer_couple), tree.torque[b4] @ axis -
                               np.cross(charmie.actuators[act4].end.local,
                                        loops.actuator_end_force[act4]) @ axis, atol=1e-9)


def total_energy(model, loads_or_fk, motion):
    """Kinetic + gravitational + spring energy, computed from positions and velocities."""
    fk = loads_or_fk
    m = model.mass
    vc = motion.com_velocity
    w = motion.angular_velocity
    kinetic = 0.5 * np.sum(m * np.sum(vc * vc, axis=-1), axis=-1) + 0.5 * np.sum(
        np.einsum("...bi,bij,...bj->...b", w, model.inertia, w), axis=-1)
    com = fk.origin_world + np.einsum("...bij,bj->...bi", fk.rotation_world, model.com)
    gravity = -np.sum(m * (com @ model.gravity), axis=-1)
    return kinetic, gravity


def test_power_balance_along_the_validation_motion(charmie):
    """sum(tau_q qd) = d/dt (kinetic + gravitational + spring energy), through the actuators'
    and springs' own lengths for the closed loops."""
    traj = validation(charmie, dt=1e-3)
    state = resolve_state(charmie, traj.x, traj.xd, traj.xdd)
    loads = inverse_dynamics(charmie, state)
    motion = body_motion(charmie, loads.placements, state.qd, np.zeros_like(state.qd))
    kinetic, grav = total_energy(charmie, loads.placements, motion)
    from charmie_dynamics import auxiliary_segments
    segments = {s.name: s for s in auxiliary_segments(charmie, loads.placements)}
    springs = sum(spring_energy(s.params, segments[s.name].length) for s in charmie.springs)
    springs = springs + sum(spring_energy(b.spring, segments[f"{b.name}_spring"].length)
                            for b in charmie.balancers)
    energy = kinetic + grav + springs
    direct = [charmie.coordinate(c) for c in charmie.coordinate_names if c not in charmie.driven_coordinates]
    power = (np.sum(loads.coordinate_effort[:, direct] * state.qd[:, direct], axis=1)
             + np.sum(loads.actuator_force * state.actuator_velocity, axis=1))
    dt = traj.t[1] - traj.t[0]
    de_dt = (energy[2:] - energy[:-2]) / (2 * dt)
    inner = slice(1, -1)
    smooth = np.abs(traj.t[inner] - 2.5) > 2 * dt        # the acceleration jumps at 2.5 s
    smooth &= traj.t[inner] < traj.t[-1] - 2 * dt
    err = np.abs(power[inner] - de_dt)[smooth]
    scale = np.max(np.abs(power))
    assert scale > 1.0
    assert err.max() < 1e-5 * scale, (err.max(), scale)


def test_batch_equals_single_state(charmie):
    rng = np.random.default_rng(25)
    states = [charmie_state(charmie, rng) for _ in range(8)]
    stack = {f: np.stack([getattr(s, f) for s in states]) for f in ("q", "qd", "qdd", "actuator_length",
             "actuator_velocity", "actuator_acceleration", "actuator_jacobian")}
    from charmie_dynamics import JointSpaceState
    batch = inverse_dynamics(charmie, JointSpaceState(**stack))
    for n, s in enumerate(states):
        single = inverse_dynamics(charmie, s)
        for name in ("coordinate_effort", "actuator_force", "spring_tension", "joint_force_world",
                     "joint_torque_world"):
            np.testing.assert_allclose(getattr(batch, name)[n], getattr(single, name),
                                       rtol=1e-12, atol=1e-12)


def test_payload_mass_equals_its_weight_at_rest(charmie):
    rng = np.random.default_rng(26)
    state = charmie_state(charmie, rng, dynamic=False)
    with_mass = inverse_dynamics(charmie, state, payloads=[Payload("body_12a.D12a", 1.5)])
    with_force = inverse_dynamics(charmie, state, external=[
        ExternalWrench("body_12a.D12a", 1.5 * charmie.gravity)])
    np.testing.assert_allclose(with_mass.coordinate_effort, with_force.coordinate_effort, atol=1e-10)
    np.testing.assert_allclose(with_mass.actuator_force, with_force.actuator_force, atol=1e-9)
    base = inverse_dynamics(charmie, state)
    assert with_mass.base_force_world[2] - base.base_force_world[2] == pytest.approx(1.5 * 9.81)


def test_payload_in_motion_equals_a_heavier_wrist(charmie):
    """A point mass at D12a is the same as adding it to body 12a's mass, com and inertia."""
    import yaml
    doc = yaml.safe_load(open(CHARMIE))
    body = next(b for b in doc["bodies"] if b["name"] == "body_12a")
    i = charmie.body_index("body_12a")
    m0, c0, I0 = charmie.mass[i], charmie.com[i], charmie.inertia[i]
    mp, p = 0.8, charmie.point("body_12a.D12a").local
    m = m0 + mp
    c = (m0 * c0 + mp * p) / m
    def shift(mass, r):
        return mass * (r @ r * np.eye(3) - np.outer(r, r))
    inertia = I0 + shift(m0, c0 - c) + shift(mp, p - c)
    body.update(mass=float(m), com=(c * 1e3).tolist(), inertia=(inertia * 1e6).tolist())
    heavier = model_from_dict(doc, "heavier wrist")
    rng = np.random.default_rng(27)
    for _ in range(5):
        state = charmie_state(charmie, rng)
        a = inverse_dynamics(charmie, state, payloads=[Payload("body_12a.D12a", mp)])
        b = inverse_dynamics(heavier, state)
        np.testing.assert_allclose(a.coordinate_effort, b.coordinate_effort, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(a.base_force_world, b.base_force_world, rtol=1e-10, atol=1e-10)


def test_gravity_only_ignores_rates(charmie):
    rng = np.random.default_rng(28)
    state = charmie_state(charmie, rng)
    still = resolve_state(charmie, *inputs_from_dict(charmie))
    a = inverse_dynamics(charmie, state, gravity_only=True)
    from dataclasses import replace
    b = inverse_dynamics(charmie, replace(state, qd=0 * state.qd, qdd=0 * state.qdd))
    np.testing.assert_array_equal(a.coordinate_effort, b.coordinate_effort)
    assert still.q.shape == state.q.shape
