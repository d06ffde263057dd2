"""Mass matrix, bias forces, forward dynamics and simulation in joint coordinates: the
composite-rigid-body algorithm against the columns of the inverse dynamics, FD(ID(qdd)) = qdd
for both methods, both methods against Pinocchio's ABA, free fall against Pinocchio
(seed 002 Figs. 7 and 9 set-up), energy conservation, joint limits and the integrators."""
import numpy as np
import pinocchio as pin
import pytest
import yaml
from scipy.integrate import solve_ivp

import dh_reference as dh
from charmie_dynamics import JointSpaceState, forward_kinematics, load_model
from charmie_dynamics.dynamics import (bias_forces, forward_dynamics, inverse_dynamics, mass_matrix,
                                       mass_matrix_from_inverse_dynamics)
from charmie_dynamics.dynamics.aba import articulated_body_solve
from charmie_dynamics.dynamics.forward import CACHED_SAMPLES, ForwardDynamicsData, cholesky_solve
from charmie_dynamics.dynamics.mass_matrix import MassMatrixError
from charmie_dynamics.mechanisms.forces import passive_forces
from charmie_dynamics.model import JointType, model_from_dict
from charmie_dynamics.simulation import (coordinate_limits, mechanical_energy, simulate,
                                         stop_at_limits)
from charmie_dynamics.simulation.integrate import step as integrate_step
from conftest import CHARMIE, EXAMPLES
from test_forward_kinematics import random_q

METHODS = ("cholesky", "aba")


def joint_state(model, q, qd, qdd):
    """A JointSpaceState in joint coordinates (inverse_dynamics reads only q, qd, qdd)."""
    none = np.zeros(np.shape(q)[:-1] + (len(model.actuators),))
    return JointSpaceState(q, qd, qdd, none, none, none, none)


def random_states(model, rng, count):
    q = np.stack([random_q(model, rng) for _ in range(count)])
    return q, rng.normal(size=q.shape), rng.normal(size=q.shape)


def relative_error(a, b):
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


def charmie_document(springs=True, coupled=True):
    doc = yaml.safe_load(open(CHARMIE))
    if not springs:
        del doc["springs"], doc["balancers"]
    if not coupled:             # the second claw halves get coordinates of their own
        for body in doc["bodies"]:
            if body["name"] in ("body_13a2", "body_13b2"):
                body["joint"]["coordinate"] += "_2"
    return doc


def test_mass_matrix_is_symmetric_positive_definite(any_model):
    q = np.stack([random_q(any_model, np.random.default_rng(40 + k)) for k in range(10)])
    H = mass_matrix(any_model, q)
    assert H.shape == (10, any_model.n_coordinates, any_model.n_coordinates)
    np.testing.assert_array_equal(H, np.swapaxes(H, -1, -2))
    assert np.all(np.linalg.eigvalsh(H) > 0.0)


def test_composite_rigid_body_equals_inverse_dynamics_columns(any_model):
    q, _, _ = random_states(any_model, np.random.default_rng(41), 10)
    H = mass_matrix(any_model, q)
    columns = mass_matrix_from_inverse_dynamics(any_model, q)
    for k in range(any_model.n_coordinates):
        assert relative_error(H[..., k], columns[..., k]) < 1e-10, any_model.coordinate_names[k]


def test_mass_matrix_and_bias_give_the_inverse_dynamics(any_model):
    """tau = H qdd + u' is inverse_dynamics' coordinate_effort, CHARMIE's springs and
    balancers included."""
    q, qd, qdd = random_states(any_model, np.random.default_rng(42), 10)
    tau = inverse_dynamics(any_model, joint_state(any_model, q, qd, qdd)).coordinate_effort
    H = mass_matrix(any_model, q)
    ours = np.einsum("...ij,...j->...i", H, qdd) + bias_forces(any_model, q, qd)
    assert relative_error(ours, tau) < 1e-10
    still = joint_state(any_model, q, 0 * qd, 0 * qdd)
    gravity = inverse_dynamics(any_model, still).coordinate_effort
    assert relative_error(bias_forces(any_model, q, 0 * qd), gravity) < 1e-12


@pytest.mark.parametrize("method", METHODS)
def test_forward_dynamics_inverts_inverse_dynamics(any_model, method):
    q, qd, qdd = random_states(any_model, np.random.default_rng(43), 20)
    tau = inverse_dynamics(any_model, joint_state(any_model, q, qd, qdd)).coordinate_effort
    assert relative_error(forward_dynamics(any_model, q, qd, tau, method=method), qdd) < 1e-9


def test_the_two_methods_agree_and_batch_equals_single(any_model):
    rng = np.random.default_rng(44)
    q, qd, _ = random_states(any_model, rng, 8)
    tau = 10.0 * rng.normal(size=q.shape)
    chol = forward_dynamics(any_model, q, qd, tau, method="cholesky")
    aba = forward_dynamics(any_model, q, qd, tau, method="aba")
    assert relative_error(aba, chol) < 1e-9
    for k in range(len(q)):
        for method, batch in (("cholesky", chol), ("aba", aba)):
            np.testing.assert_allclose(forward_dynamics(any_model, q[k], qd[k], tau[k], method),
                                       batch[k], rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ Pinocchio as the oracle

def pinocchio_tree(model):
    """Pinocchio model with one joint per moving body; the body of a fixed joint is appended
    to its parent's joint. Returns the model, each body's (joint id, placement in that joint's
    frame) and S (nv x n): joint velocities = S @ coordinate rates (the multipliers)."""
    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(model.gravity), np.zeros(3))
    frames = []
    for i, body in enumerate(model.bodies):
        parent = model.parent[i]
        jid, placement = (0, pin.SE3.Identity()) if parent < 0 else frames[parent]
        placement = placement * pin.SE3(np.asarray(model.rotation[i]), np.asarray(model.origin[i]))
        inertia = pin.Inertia(float(body.mass), np.asarray(body.com), np.asarray(body.inertia))
        if body.joint_type == JointType.FIXED:
            pm.appendBodyToJoint(jid, inertia, placement)
            frames.append((jid, placement))
            continue
        axis = np.asarray(model.axis[i])
        joint = (pin.JointModelPrismaticUnaligned(axis) if body.joint_type == JointType.PRISMATIC
                 else pin.JointModelRevoluteUnaligned(axis))
        jid = pm.addJoint(jid, joint, placement, body.name)
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        frames.append((jid, pin.SE3.Identity()))
    S = np.zeros((pm.nv, model.n_coordinates))
    for i, (jid, _) in enumerate(frames):
        if model.coordinate_index[i] >= 0:
            S[pm.joints[jid].idx_v, model.coordinate_index[i]] = model.multiplier[i]
    return pm, frames, S


def pinocchio_external_forces(model, pm, frames, q):
    """The springs' and balancers' wrenches on the bodies, as Pinocchio joint forces."""
    passive = passive_forces(model, forward_kinematics(model, q))
    fext = [pin.Force.Zero() for _ in range(pm.njoints)]
    for i, (jid, placement) in enumerate(frames):
        wrench = pin.Force(passive.external_force[i], passive.external_torque[i])
        fext[jid] += placement.act(wrench)
    return fext


@pytest.mark.parametrize("name", ["puma", "stanford_arm", "charmie_uncoupled"])
def test_both_methods_against_pinocchio_aba(name):
    """On trees without coupled coordinates Pinocchio's ABA applies as is: PUMA, Stanford and
    CHARMIE with each claw half on a coordinate of its own (springs and balancers included as
    external forces, fixed joints merged, virtual bodies d1, d2)."""
    model = (model_from_dict(charmie_document(coupled=False), "charmie_uncoupled")
             if name == "charmie_uncoupled" else load_model(EXAMPLES[name]))
    pm, frames, S = pinocchio_tree(model)
    assert S.shape[0] == S.shape[1]
    pd = pm.createData()
    rng = np.random.default_rng(45)
    q, qd, _ = random_states(model, rng, 10)
    tau = 10.0 * rng.normal(size=q.shape)
    worst = 0.0
    for k in range(len(q)):
        fext = pinocchio_external_forces(model, pm, frames, q[k])
        a = pin.aba(pm, pd, S @ q[k], S @ qd[k], np.linalg.solve(S.T, tau[k]), fext)
        ref = np.linalg.solve(S, a)
        for method in METHODS:
            ours = forward_dynamics(model, q[k], qd[k], tau[k], method)
            worst = max(worst, relative_error(ours, ref))
    assert worst < 1e-9, worst


def test_coupled_claws_against_pinocchio(charmie):
    """With the claw halves coupled, Pinocchio's joint-space model projected on the
    coordinates: S^T M S qdd = tau - S^T rnea(q, qd, 0, f_ext)."""
    pm, frames, S = pinocchio_tree(charmie)
    assert S.shape[0] == charmie.n_coordinates + 2
    pd = pm.createData()
    rng = np.random.default_rng(46)
    q, qd, _ = random_states(charmie, rng, 10)
    tau = 10.0 * rng.normal(size=q.shape)
    worst = 0.0
    for k in range(len(q)):
        qp, vp = S @ q[k], S @ qd[k]
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
        fext = pinocchio_external_forces(charmie, pm, frames, q[k])
        nle = pin.rnea(pm, pd, qp, vp, np.zeros(pm.nv), fext)
        ref = np.linalg.solve(S.T @ M @ S, tau[k] - S.T @ nle)
        np.testing.assert_allclose(mass_matrix(charmie, q[k]), S.T @ M @ S, rtol=1e-10, atol=1e-12)
        for method in METHODS:
            ours = forward_dynamics(charmie, q[k], qd[k], tau[k], method)
            worst = max(worst, relative_error(ours, ref))
    assert worst < 1e-9, worst


# ------------------------------------------------------------------ coupling and singularity

COUPLED_CHAIN = {
    "format": "charmie_dynamics/model/1", "name": "coupled_chain",
    "bodies": [
        {"name": "a", "parent": "world", "joint": {"type": "R", "axis": "z", "coordinate": "q1"},
         "mass": 1.0, "com": [0.2, 0, 0], "inertia": {"solid_box": [0.4, 0.05, 0.05]}},
        {"name": "b", "parent": "a", "origin": [0.4, 0, 0],
         "joint": {"type": "R", "axis": "y", "coordinate": "q2"},
         "mass": 1.0, "com": [0.2, 0, 0], "inertia": {"solid_box": [0.4, 0.05, 0.05]}},
        {"name": "c", "parent": "b", "origin": [0.4, 0, 0],
         "joint": {"type": "R", "axis": "y", "coordinate": "q2", "multiplier": 0.5},
         "mass": 0.5, "com": [0.1, 0, 0], "inertia": {"solid_box": [0.2, 0.04, 0.04]}},
    ],
}


def test_coupling_along_a_chain_falls_back_to_cholesky(caplog):
    """q2 moves b and its child c: the CRBA adds the cross terms, the Cholesky method inverts
    the inverse dynamics; method="aba" solves by Cholesky, saying why once per model, and the
    ABA itself refuses the model with a clear message."""
    model = model_from_dict(COUPLED_CHAIN)
    rng = np.random.default_rng(47)
    q, qd, qdd = (rng.normal(size=(5, 2)) for _ in range(3))
    H = mass_matrix(model, q)
    assert relative_error(H, mass_matrix_from_inverse_dynamics(model, q)) < 1e-12
    tau = inverse_dynamics(model, joint_state(model, q, qd, qdd)).coordinate_effort
    assert relative_error(forward_dynamics(model, q, qd, tau, "cholesky"), qdd) < 1e-10
    with caplog.at_level("WARNING", logger="charmie_dynamics.dynamics.forward"):
        for _ in range(2):
            assert relative_error(forward_dynamics(model, q, qd, tau, "aba"), qdd) < 1e-10
    said = [r.getMessage() for r in caplog.records if "solves by Cholesky" in r.getMessage()]
    assert len(said) == 1 and "'q2' moves the joints of b, c, which have different" in said[0]
    with pytest.raises(ValueError, match="'q2' moves the joints of b, c, which have different"):
        articulated_body_solve(model, forward_kinematics(model, q), tau)


def test_a_coordinate_without_mass_is_singular():
    doc = {"format": "charmie_dynamics/model/1", "name": "massless_leaf", "bodies": [
        {"name": "a", "parent": "world", "joint": {"type": "R", "axis": "z", "coordinate": "q1"},
         "mass": 1.0, "com": [0.2, 0, 0], "inertia": {"solid_box": [0.4, 0.05, 0.05]}},
        {"name": "v", "parent": "a", "joint": {"type": "P", "axis": "x", "coordinate": "d"},
         "virtual": True}]}
    model = model_from_dict(doc)
    with pytest.raises(np.linalg.LinAlgError):
        forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2), "cholesky")
    with pytest.raises(np.linalg.LinAlgError, match="'d' moves no mass"):
        forward_dynamics(model, np.zeros(2), np.zeros(2), np.zeros(2), "aba")


def test_a_nan_configuration_is_named_as_such():
    """A NaN in q is named as such by both methods, not as a coordinate without mass or (on
    CHARMIE) a balancer lever that cannot reach; the path with reused data, which does not
    check q first, names it where its kernel's checks fail on it."""
    message = r"^q: NaN or infinite configuration of {}, expected finite"
    for model, k in ((load_model(EXAMPLES["puma"]), 2), (load_model(CHARMIE), 0)):
        zeros = np.zeros(model.n_coordinates)
        for bad in (np.nan, np.inf):
            q = np.zeros(model.nq)
            q[k] = bad
            for method in ("aba", "cholesky"):
                with pytest.raises(MassMatrixError, match=message.format(model.name)):
                    forward_dynamics(model, q, zeros, zeros, method)
            for method in ("aba", "cholesky"):
                with pytest.raises(MassMatrixError, match=message.format(model.name)):
                    forward_dynamics(model, q, zeros, zeros, method,
                                     data=ForwardDynamicsData(model))


def test_bad_arguments():
    model = load_model(EXAMPLES["puma"])
    with pytest.raises(ValueError, match="method: got 'lu'"):
        forward_dynamics(model, np.zeros(6), np.zeros(6), np.zeros(6), "lu")
    with pytest.raises(ValueError, match=r"expected \(6,\) coordinates of puma"):
        forward_dynamics(model, np.zeros(5), np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError, match="method: got 'midpoint'"):
        simulate(model, np.zeros(6), np.zeros(6), None, 0.01, method="midpoint")
    with pytest.raises(ValueError, match="duration: got 0.0105"):
        simulate(model, np.zeros(6), np.zeros(6), None, 0.0105)


# ------------------------------------------------------------------ energy

def test_energy_terms(charmie):
    """Kinetic energy = qd^T H qd / 2; the gradient of the gravitational and spring energy is
    the bias at rest, u'(q, 0) (central differences)."""
    rng = np.random.default_rng(48)
    q, qd, _ = random_states(charmie, rng, 5)
    energy = mechanical_energy(charmie, q, qd)
    H = mass_matrix(charmie, q)
    np.testing.assert_allclose(energy.kinetic, 0.5 * np.einsum("ni,nij,nj->n", qd, H, qd),
                               rtol=1e-12)
    assert np.all(energy.spring > 0.0)
    h = 1e-6
    steps = h * np.eye(charmie.n_coordinates)
    for k in range(len(q)):
        potential = [mechanical_energy(charmie, q[k] + s * steps, 0 * steps) for s in (1, -1)]
        grad = ((potential[0].gravitational + potential[0].spring)
                - (potential[1].gravitational + potential[1].spring)) / (2 * h)
        np.testing.assert_allclose(grad, bias_forces(charmie, q[k], 0 * q[k]), rtol=0, atol=1e-6)


# Energy drift of free falls with RK4 at 1 ms: max |E(t) - E(0)| over the run divided by the
# run's energy scale (largest kinetic energy + range of the gravitational energy). Measured
# over 5 s (four runs per model, as below): PUMA 7.7e-12, Stanford 4.0e-11, CHARMIE 2.3e-11;
# the tests run 1 s (arms) and 0.3 s (CHARMIE) to stay fast, under the same bound.
FREE_FALL_DRIFT = 1e-9


def energy_drift(model, sim):
    energy = mechanical_energy(model, sim.q, sim.qd)
    scale = np.max(energy.kinetic, axis=0) + np.ptp(energy.gravitational, axis=0)
    return np.max(np.abs(energy.total - energy.total[0]), axis=0) / scale


ARM_FREE_FALL_S = 1.0


def pinocchio_rk4(pm, q, v, duration, dt):
    """Free motion by Pinocchio's ABA and the classical RK4 step; (steps + 1, 2 nv)."""
    pd = pm.createData()
    zero = np.zeros(pm.nv)
    out = [np.concatenate([q, v])]
    for _ in range(int(round(duration / dt))):
        a1 = pin.aba(pm, pd, q, v, zero)
        v2 = v + 0.5 * dt * a1
        a2 = pin.aba(pm, pd, q + 0.5 * dt * v, v2, zero)
        v3 = v + 0.5 * dt * a2
        a3 = pin.aba(pm, pd, q + 0.5 * dt * v2, v3, zero)
        v4 = v + dt * a3
        a4 = pin.aba(pm, pd, q + dt * v3, v4, zero)
        q, v = (q + dt / 6 * (v + 2 * v2 + 2 * v3 + v4),
                v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4))
        out.append(np.concatenate([q, v]))
    return np.array(out)


@pytest.mark.parametrize("arm, method", [("puma", "aba"), ("stanford_arm", "cholesky")])
def test_published_arms_free_fall_against_pinocchio(arm, method):
    """Seed 002 Figs. 7 and 9: the arm falls at rest, with no joint effort, from its Table
    3(a)/4(a) configuration (every joint variable 0; from there the Stanford arm's only motion
    is b3 sliding down), plus the Stanford trajectory's start (theta2 = pi/2, eq. 23) and two
    random states in the same batch. Ours: the YAML model, RK4 at 1 ms, one method per arm
    (the two agree to 1e-9 state by state above).
    References, on the Pinocchio model built from the DH table (test/dh_reference.py):
    Pinocchio's ABA with the same RK4 steps (isolates the dynamics: 1e-10), and SciPy's DOP853
    at 1e-12 (adds RK4's own error at 1 ms, measured up to 1.0e-7 rad over 1 s)."""
    model = load_model(EXAMPLES[arm])
    pm = dh.arm_pinocchio_model(dh.ARMS[arm])
    pd = pm.createData()
    n = model.n_coordinates
    rng = np.random.default_rng(49)
    q0 = np.stack([np.zeros(n), dh.STANFORD_Q0] + [random_q(model, rng) for _ in range(2)])
    qd0 = np.concatenate([np.zeros((2, n)), rng.normal(size=(2, n))])

    def rhs(t, x):
        return np.concatenate([x[n:], pin.aba(pm, pd, x[:n], x[n:], np.zeros(n))])

    same_steps = np.stack([pinocchio_rk4(pm, q, v, ARM_FREE_FALL_S, 1e-3)
                           for q, v in zip(q0, qd0)], axis=1)        # (steps + 1, runs, 2n)
    exact = np.stack([solve_ivp(rhs, (0.0, ARM_FREE_FALL_S), x[0], method="DOP853", rtol=1e-12,
                                atol=1e-12, t_eval=[ARM_FREE_FALL_S]).y[:, 0]
                      for x in np.swapaxes(same_steps, 0, 1)])         # (runs, 2n)
    assert np.all(np.max(np.ptp(same_steps[..., :n], axis=0), axis=-1) > 0.5)   # they move
    sim = simulate(model, q0, qd0, None, ARM_FREE_FALL_S, dynamics=method, limits=False)
    ours = np.concatenate([sim.q, sim.qd], axis=-1)
    assert np.max(np.abs(ours - same_steps)) < 1e-10, np.max(np.abs(ours - same_steps))
    assert np.max(np.abs(sim.q[-1] - exact[:, :n])) < 1e-6
    assert np.max(np.abs(sim.qd[-1] - exact[:, n:])) < 1e-5
    assert np.all(energy_drift(model, sim) < FREE_FALL_DRIFT), energy_drift(model, sim)


CHARMIE_FREE_FALL_S = 0.3


def test_charmie_free_fall_conserves_energy():
    """CHARMIE without springs and balancers, no joint efforts, no limits: the virtual base
    coordinates d1, d2 are free too (horizontal: no work by gravity)."""
    model = model_from_dict(charmie_document(springs=False), "charmie_free")
    rng = np.random.default_rng(50)
    q0, qd0, _ = random_states(model, rng, 4)
    sim = simulate(model, q0, 0.5 * qd0, None, CHARMIE_FREE_FALL_S, limits=False)
    energy = mechanical_energy(model, sim.q, sim.qd)
    assert np.all(np.ptp(energy.gravitational, axis=0) > 1.0)
    assert np.all(energy_drift(model, sim) < FREE_FALL_DRIFT), energy_drift(model, sim)


@pytest.mark.parametrize("name", ["puma", "stanford_arm", "charmie"])
def test_free_fall_energy_drift_over_5_s(name):
    """The issue's check as stated: free falls over 5 s with RK4 at 1 ms (two per model, one
    from rest), energy drift below FREE_FALL_DRIFT (CHARMIE without springs and balancers)."""
    model = load_model(EXAMPLES[name]) if name != "charmie" else \
        model_from_dict(charmie_document(springs=False), "charmie_free")
    rng = np.random.default_rng(51)
    q0, qd0, _ = random_states(model, rng, 2)
    qd0[0] = 0.0
    sim = simulate(model, q0, 0.5 * qd0, None, 5.0, limits=False, dynamics="aba")
    assert np.all(np.ptp(mechanical_energy(model, sim.q, sim.qd).gravitational, axis=0) > 0.1)
    assert np.all(energy_drift(model, sim) < FREE_FALL_DRIFT), energy_drift(model, sim)


# ------------------------------------------------------------------ limits and integrators

def test_coordinate_limits(charmie):
    lower, upper = coordinate_limits(charmie)
    c = charmie.coordinate
    assert (lower[c("d4")], upper[c("d4")]) == pytest.approx((0.05, 0.29))
    assert (lower[c("theta5")], upper[c("theta5")]) == (-1.25, 0.7)
    # body_13b1 moves -theta13b with joint limits [-0.8, 0.2]: theta13b in [-0.2, 0.8]
    assert (lower[c("theta13b")], upper[c("theta13b")]) == pytest.approx((-0.2, 0.8))
    assert (lower[c("theta13a")], upper[c("theta13a")]) == pytest.approx((-0.2, 0.8))
    assert lower[c("theta3")] == -np.inf and upper[c("d1")] == np.inf


def test_charmie_rests_on_its_stops():
    """Without springs, the lower body slides down to d4's end stop (axis -z); resting there,
    it passes the weight on, so the torso then tips over onto its theta5 stop and rests."""
    model = model_from_dict(charmie_document(springs=False), "charmie_free")
    lower, upper = coordinate_limits(model)
    c = model.coordinate
    q0 = np.zeros(model.n_coordinates)
    q0[c("d4")], q0[c("theta5")] = 0.2, 0.3
    sim = simulate(model, q0, np.zeros_like(q0), None, 0.6, method="euler")
    assert np.all(sim.q >= lower) and np.all(sim.q <= upper)
    for name in ("d4", "theta5"):
        k = c(name)
        first = int(np.argmax(sim.q[:, k] == upper[k]))
        assert 0 < first < 450, name                                  # reached its stop
        rest = slice(first, first + 100)                              # and rests on it
        assert np.all(sim.q[rest, k] == upper[k]) and np.all(sim.qd[rest, k] == 0.0), name
    with pytest.raises(ValueError, match="'d4' is outside its limits"):
        simulate(model, np.zeros(model.n_coordinates), np.zeros(model.n_coordinates), None, 0.01)


def test_impact_at_a_stop(charmie):
    """d4 past its end stop moving outward: put back on it, stopped by an impulse that leaves
    the momentum of the other coordinates unchanged and takes kinetic energy away."""
    rng = np.random.default_rng(52)
    lower, upper = coordinate_limits(charmie)
    k = charmie.coordinate("d4")
    q, qd, _ = random_states(charmie, rng, 3)
    q = np.clip(q, lower + 0.01, upper - 0.01)                      # every other one inside
    q[:, k], qd[:, k] = upper[k] + 0.001, [0.5, 0.2, -0.1]          # the last moves inward
    after_q, after_qd = stop_at_limits(charmie, q, qd)
    np.testing.assert_array_equal(after_q[:, k], upper[k])
    np.testing.assert_array_equal(after_qd[:2, k], 0.0)
    np.testing.assert_array_equal(after_qd[2], qd[2])               # no impulse
    H = mass_matrix(charmie, after_q)
    momentum = np.einsum("nij,nj->ni", H, after_qd - qd)
    others = np.arange(charmie.n_coordinates) != k
    assert np.max(np.abs(momentum[:, others])) < 1e-12 * np.max(np.abs(momentum))
    kinetic = [np.einsum("ni,nij,nj->n", v, H, v) for v in (qd, after_qd)]
    assert np.all(kinetic[1][:2] < kinetic[0][:2])
    inside = q.copy()
    inside[:, k] = 0.2
    same_q, same_qd = stop_at_limits(charmie, inside, qd)
    np.testing.assert_array_equal(same_q, inside)
    np.testing.assert_array_equal(same_qd, qd)


@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_a_batch_with_some_robots_at_their_stops_steps_each_as_alone(charmie, method):
    """Only the robots at a stop get the stops' mass matrices and held solves: each robot's
    step equals its own, unbatched, to the last bit (d4 pushed onto its end stop in some
    rows, left free in the others)."""
    rng = np.random.default_rng(7)
    lower, upper = coordinate_limits(charmie)
    k = charmie.coordinate("d4")
    q, qd, _ = random_states(charmie, rng, 6)
    q = np.clip(q, lower + 0.01, upper - 0.01)
    q[::2, k], qd[::2, k] = upper[k], 0.3                    # rows 0, 2, 4 on the stop, outward
    tau = rng.normal(0.0, 5.0, q.shape)
    tau[::2, k] = 400.0                                      # pushing into it
    batch_q, batch_qd = q.copy(), qd.copy()
    alone = [(q[r].copy(), qd[r].copy()) for r in range(len(q))]
    for _ in range(5):
        batch_q, batch_qd = (a.copy() for a in integrate_step(
            charmie, 0.0, batch_q, batch_qd, lambda t, q_, qd_: tau, 1e-3, method))
        alone = [tuple(a.copy() for a in integrate_step(
            charmie, 0.0, sq, sqd, lambda t, q_, qd_, r=r: tau[r], 1e-3, method))
            for r, (sq, sqd) in enumerate(alone)]
    np.testing.assert_array_equal(batch_q[::2, k], upper[k])
    for r, (sq, sqd) in enumerate(alone):
        np.testing.assert_array_equal(batch_q[r], sq)
        np.testing.assert_array_equal(batch_qd[r], sqd)


def double_pendulum(first_joint, rotation=(0.0, 0.0, 0.0)):
    """Two links along x under gravity -z, both turning about y (down for q > 0)."""
    return model_from_dict({
        "format": "charmie_dynamics/model/1", "name": "double_pendulum", "bodies": [
            {"name": "a", "parent": "world", "joint": first_joint, "rotation": list(rotation),
             "mass": 5.0, "com": [0.25, 0, 0], "inertia": {"solid_box": [0.5, 0.05, 0.05]}},
            {"name": "b", "parent": "a", "origin": [0.5, 0, 0],
             "joint": {"type": "R", "axis": "y", "coordinate": "q2"},
             "mass": 0.2, "com": [0.2, 0, 0], "inertia": {"solid_box": [0.4, 0.02, 0.02]}}]})


@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_a_joint_resting_on_its_stop_is_a_fixed_joint(method):
    """Link a falls onto its stop at q1 = 0.5 and stays; from then on link b swings exactly as
    on a model whose first joint is fixed at 0.5 rad (same integrator and step)."""
    model = double_pendulum({"type": "R", "axis": "y", "coordinate": "q1",
                             "limits": {"upper": 0.5}})
    fixed = double_pendulum({"type": "F"}, (np.pi / 2, 0.5, -np.pi / 2))    # Ry(0.5)
    sim = simulate(model, [0.0, 0.3], [0.0, 0.0], None, 0.6, method=method)
    k = int(np.flatnonzero(sim.q[:, 0] == 0.5)[0])
    assert 100 < k < 500 and np.all(sim.q[k:, 0] == 0.5) and np.all(sim.qd[k:, 0] == 0.0)
    rest = simulate(fixed, sim.q[k, 1:], sim.qd[k, 1:], None, sim.t[-1] - sim.t[k], method=method)
    np.testing.assert_allclose(sim.q[k:, 1], rest.q[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.qd[k:, 1], rest.qd[:, 0], rtol=0, atol=1e-12)


def test_effort_function_gets_time_and_state():
    """tau(t, q, qd) = u'(q, qd) + H(q) alpha(t) gives qdd = alpha(t), alpha linear in t:
    q(t) is a cubic, which RK4 integrates exactly and semi-implicit Euler to first order."""
    model = load_model(EXAMPLES["stanford_arm"])
    rng = np.random.default_rng(51)
    q0, qd0, alpha0 = random_q(model, rng), rng.normal(size=6), rng.normal(size=6)
    rate = rng.normal(size=6)

    def tau(t, q, qd):
        return bias_forces(model, q, qd) + mass_matrix(model, q) @ (alpha0 + rate * t)

    T = 0.1
    exact_q = q0 + qd0 * T + alpha0 * T ** 2 / 2 + rate * T ** 3 / 6
    exact_qd = qd0 + alpha0 * T + rate * T ** 2 / 2
    t, q, qd = simulate(model, q0, qd0, tau, T, method="rk4")
    assert t[-1] == pytest.approx(T) and q.shape == (101, 6)
    np.testing.assert_allclose(q[-1], exact_q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(qd[-1], exact_qd, rtol=0, atol=1e-10)
    errors = [np.max(np.abs(simulate(model, q0, qd0, tau, T, dt, "euler").q[-1] - exact_q))
              for dt in (2e-3, 1e-3)]
    assert 1.8 < errors[0] / errors[1] < 2.2, errors


def test_reused_aba_data_after_held_coordinates_holds_none(charmie):
    """ArticulatedBodyData keeps its free flags between calls (refilled only after a call
    with ``held``): a call without ``held`` after one with it holds nothing."""
    q, qd, tau = random_states(charmie, np.random.default_rng(21), 1)
    held = np.zeros(charmie.n_coordinates, dtype=bool)
    held[[0, 3]] = True
    data = ForwardDynamicsData(charmie)
    free = forward_dynamics(charmie, q[0], qd[0], tau[0], "aba").copy()
    with_held = forward_dynamics(charmie, q[0], qd[0], tau[0], "aba", held=held, data=data)
    assert np.all(with_held[held] == 0.0) and not np.array_equal(with_held, free)
    np.testing.assert_array_equal(
        forward_dynamics(charmie, q[0], qd[0], tau[0], "aba", data=data), free)


@pytest.mark.parametrize("method", ["aba", "cholesky"])
@pytest.mark.parametrize("lead", [(), (3,)])
def test_arrays_as_the_kernel_takes_them_give_the_checked_paths_numbers(charmie, lead, method):
    """forward_dynamics skips the conversions for C-contiguous float64 arrays of the
    data's own sample shape: the same numbers, bit for bit, as arrays that need them
    (lists, strided views, broadcast rates), with and without ``held``, fresh and reused
    data."""
    rng = np.random.default_rng(22)
    q, qd, tau = (a.reshape(lead + (-1,)) for a in random_states(charmie, rng, lead[0] if lead else 1))
    held = rng.uniform(size=qd.shape) < 0.3
    strided = np.repeat(tau, 2, axis=-1)[..., ::2]          # the same values, not contiguous
    assert not strided.flags.c_contiguous
    data = ForwardDynamicsData(charmie, lead)
    for h in (None, held, None):
        fresh = forward_dynamics(charmie, q, qd, tau, method, held=h).copy()
        np.testing.assert_array_equal(
            forward_dynamics(charmie, q, qd, tau, method, held=h, data=data), fresh)
        np.testing.assert_array_equal(
            forward_dynamics(charmie, q.tolist(), qd, strided, method, held=h, data=data), fresh)
    np.testing.assert_array_equal(
        forward_dynamics(charmie, q, qd[..., :1, :] if lead else qd, tau, method, data=data),
        forward_dynamics(charmie, q, np.broadcast_to(qd[..., :1, :] if lead else qd, qd.shape),
                         tau, method))


def test_aba_data_of_another_shape_or_model_is_refused(charmie):
    """The unchecked route is taken only for the data's own model and sample shape."""
    q, qd, tau = random_states(charmie, np.random.default_rng(23), 1)
    with pytest.raises(ValueError, match=r"sample shape \(2,\), got .* with \(\)"):
        forward_dynamics(charmie, q[0], qd[0], tau[0], "aba", data=ForwardDynamicsData(charmie, (2,)))
    for other in (load_model(EXAMPLES["puma"]), load_model(CHARMIE)):   # the second: same sizes
        with pytest.raises(ValueError, match=f"is for {other.name} with sample shape"):
            forward_dynamics(charmie, q[0], qd[0], tau[0], "aba", data=ForwardDynamicsData(other))
    with pytest.raises(TypeError, match="expected ForwardDynamicsData"):
        forward_dynamics(charmie, q[0], qd[0], tau[0], "aba", data=object())


@pytest.mark.parametrize("lead", [(), (3,)])
def test_a_balancer_out_of_range_is_the_same_error_by_both_methods(charmie, lead):
    """A configuration whose balancer lever cannot reach its hanger: the ABA's one kernel
    (bias pass and recursion) reports it as the Cholesky route's inverse dynamics does."""
    from charmie_dynamics.kinematics.indirect import MechanismRangeError
    rng = np.random.default_rng(24)
    n = charmie.n_coordinates
    q = np.zeros(lead + (n,))
    q[..., :] = rng.uniform(-0.5, 0.5, size=lead + (n,))
    messages = []
    for method in METHODS:
        with pytest.raises(MechanismRangeError, match="cannot reach the hanger") as error:
            forward_dynamics(charmie, q, np.zeros(q.shape), np.zeros(q.shape), method)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_cholesky_solve_against_numpy_solve():
    """The solve kernel (factor and both substitutions in one call) against LAPACK's
    general solve: batched, broadcast; not positive definite (or NaN) raises."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(5, 7, 7))
    H = A @ np.swapaxes(A, -1, -2) + 7 * np.eye(7)
    phi = rng.normal(size=(5, 7))
    np.testing.assert_allclose(cholesky_solve(H, phi), np.linalg.solve(H, phi[..., None])[..., 0],
                               rtol=1e-12, atol=1e-12)
    out = cholesky_solve(H, np.broadcast_to(phi, (4, 5, 7)))
    assert out.shape == (4, 5, 7)
    np.testing.assert_allclose(out[2], np.linalg.solve(H, phi[..., None])[..., 0], rtol=1e-12)
    np.testing.assert_allclose(cholesky_solve(H[0], phi), np.linalg.solve(H[0], phi.T).T,
                               rtol=1e-12, atol=1e-12)
    for bad in (H[0] - 20 * np.eye(7), np.full((7, 7), np.nan)):
        with pytest.raises(np.linalg.LinAlgError):
            cholesky_solve(bad, phi[0])


def test_calls_without_data_return_their_own_arrays(charmie):
    """A call without ``data=`` reuses its thread's buffers up to CACHED_SAMPLES samples, and
    returns a new array each time: an earlier result is not overwritten; threads do not share
    buffers; a larger batch equals its samples one by one."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(4)
    q = np.array([random_q(charmie, rng) for _ in range(CACHED_SAMPLES + 2)])
    qd, tau = rng.normal(size=(2, len(q), charmie.n_coordinates))
    for method in ("cholesky", "aba"):
        first = forward_dynamics(charmie, q[0], qd[0], tau[0], method)
        kept = first.copy()
        second = forward_dynamics(charmie, q[1], qd[1], tau[1], method)
        assert second is not first and np.array_equal(first, kept)
        with ThreadPoolExecutor(4) as pool:
            threaded = list(pool.map(lambda k: forward_dynamics(charmie, q[k], qd[k], tau[k],
                                                                method), range(len(q))))
        batch = forward_dynamics(charmie, q, qd, tau, method)      # beyond the cached size
        for k in range(len(q)):
            np.testing.assert_allclose(threaded[k], batch[k], rtol=1e-10, atol=1e-9)


def test_a_batch_names_the_same_failure_by_both_methods_in_any_order():
    """Two samples whose different balancers cannot reach (CHARMIE with its right balancer
    made longer): both methods name the last sample's, in either order, as the inverse
    dynamics reports a batch."""
    from charmie_dynamics.kinematics.indirect import MechanismRangeError
    doc = yaml.safe_load(open(CHARMIE))
    doc["balancers"][1]["lever_length"], doc["balancers"][1]["hanger_length"] = 200, 120
    model = model_from_dict(doc, "charmie_asymmetric")
    d4 = model.coordinate_names.index("d4")

    def failure(q: np.ndarray, method: str) -> str:
        zeros = np.zeros((len(q), model.n_coordinates))
        with pytest.raises(MechanismRangeError) as error:
            forward_dynamics(model, q, zeros, zeros, method)
        return str(error.value).split(":")[0]
    only = {}
    for value in np.linspace(-0.5, 0.5, 401):
        q = np.zeros((1, model.nq))
        q[0, d4] = value
        try:
            forward_dynamics(model, q, np.zeros(q.shape), np.zeros(q.shape))
        except MechanismRangeError as error:
            only.setdefault(str(error).split(":")[0], q[0])
    assert set(only) == {"balancer_left", "balancer_right"}, only
    batch = np.stack([only["balancer_left"], only["balancer_right"]])
    for order in (batch, batch[::-1].copy()):
        named = {failure(order, method) for method in ("cholesky", "aba")}
        assert named == {failure(order[-1:], "aba")}, named


def test_a_nan_quaternion_with_data_is_a_nan_configuration():
    """A free-flyer's NaN quaternion on the unchecked route (data=) is named as a NaN
    configuration, not as a quaternion's norm."""
    from test_free_flyer import floating_model
    for coupled in (False, True):
        model = floating_model(0, coupled=coupled)
        q, zeros = np.zeros(model.nq), np.zeros(model.n_coordinates)
        q[6], q[3] = 1.0, np.nan
        for method in ("cholesky", "aba"):
            with pytest.raises(MassMatrixError, match="NaN or infinite configuration"):
                forward_dynamics(model, q, zeros, zeros, method, data=ForwardDynamicsData(model))


def test_opposite_infinities_and_huge_values_raise_no_floating_point_error():
    """The finiteness check neither overflows nor warns (numpy's errors raised)."""
    model = load_model(EXAMPLES["puma"])
    zeros = np.zeros(model.n_coordinates)
    q = np.zeros(model.nq)
    q[0], q[1] = np.inf, -np.inf
    with np.errstate(all="raise"):
        with pytest.raises(MassMatrixError, match="NaN or infinite configuration"):
            forward_dynamics(model, q, zeros, zeros)
        assert np.isfinite(forward_dynamics(model, np.full(model.nq, 1e300), zeros, zeros)).all()


def test_cholesky_solve_refuses_malformed_arguments():
    H, phi = 4.0 * np.eye(2), np.ones(2)
    np.testing.assert_allclose(cholesky_solve(H.tolist(), phi.tolist()), [0.25, 0.25])
    for bad_H in (np.array([4.0, 5.0]), np.array([[4.0], [2.0]])):
        with pytest.raises(ValueError, match=r"expected \(..., n, n\)"):
            cholesky_solve(bad_H, phi)
