"""Closed loops by constraint embedding (issue 13): the loops section of the model format,
the cut joints' constraints against finite differences, and Newton-Raphson's solution
checked by its residual and by finite differences of the velocity and acceleration maps."""
from __future__ import annotations

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from charmie_dynamics.cli.loop_analysis import sine_ramp
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.kinematics.forward import forward_kinematics
from charmie_dynamics.mechanisms.closed_chains import (ClosedChain, LoopAssemblyError,
                                                       LoopSingularityError, SolveReport, evaluate)
from charmie_dynamics.mechanisms.closed_chains.constraints import ConstraintRows
from charmie_dynamics.model import ModelError, model_from_dict

FIVE_BAR = Path(__file__).resolve().parent.parent / "config" / "examples" / "five_bar.yaml"


def five_bar_doc() -> dict:
    return yaml.safe_load(FIVE_BAR.read_text())


@pytest.fixture(scope="module")
def five_bar():
    return ClosedChain.build(model_from_dict(five_bar_doc(), str(FIVE_BAR)))


# -- the model format --------------------------------------------------------------------

def test_five_bar_loops_mobility_and_redundant_rows(five_bar):
    model = five_bar.model
    (group,) = model.loops.groups
    assert group.gruebler == 4 - 5 == -1                 # spatial count of a planar loop
    (info,) = five_bar.groups
    assert (info.rank, info.mobility) == (2, 2)
    assert set(info.redundant) == {"end_effector.position.z",
                                   "end_effector.orientation.axis.perp1",
                                   "end_effector.orientation.axis.perp2"}
    assert five_bar.independent_names == ("theta1_1", "theta1_2")
    assert five_bar.dependent_names == ("theta2_1", "theta2_2")
    assert np.abs(evaluate(model, five_bar.rows, five_bar.assembled).residual).max() < 1e-12


def _bad(doc: dict, match: str, error=ModelError) -> None:
    with pytest.raises(error, match=match):
        ClosedChain.build(model_from_dict(doc, "five_bar.yaml"))


def test_loops_refused_with_clear_errors():
    doc = five_bar_doc()
    d = copy.deepcopy(doc)
    d["loops"]["independent"] = ["theta1_1"]
    _bad(d, r"five_bar.yaml: loops.independent: loop end_effector has mobility 2 .*rank 2.*"
            r"Gruebler count -1.*1 coordinates declared independent, expected 2",
         LoopAssemblyError)
    d = copy.deepcopy(doc)
    d["bodies"][2]["origin"] = [5.0, 0, 0]                   # the legs cannot meet
    _bad(d, r"loop end_effector cannot be assembled from the guess", LoopAssemblyError)
    d = copy.deepcopy(doc)
    d["loops"]["independent"] = ["theta1_1", "nope"]
    _bad(d, r"loops.independent\[1\]: got 'nope', expected a coordinate of the model")
    d = copy.deepcopy(doc)
    d["loops"]["cuts"][0]["successor"] = "link2_1.origin"
    _bad(d, r"loops.cuts\[0\] \(end_effector\).successor: a point of link2_1, the "
            "predecessor's body")
    d = copy.deepcopy(doc)
    d["loops"]["cuts"][0].update(type="U", axis_b=[1, 1, 1])
    _bad(d, r"axis_b: not perpendicular to axis")
    d = copy.deepcopy(doc)
    d["loops"]["cuts"][0]["type"] = "S"
    _bad(d, r"loops.cuts\[0\] \(end_effector\).axis: given for a S cut joint")
    d = copy.deepcopy(doc)
    d["loops"]["independent"] = ["theta1_1", "theta2_1", "theta1_2", "theta2_2"]
    _bad(d, r"every coordinate declared independent")
    d = copy.deepcopy(doc)
    d["loops"]["independent"] = ["theta1_1", "theta1_1"]     # was "1 coordinates declared"
    _bad(d, r"loops.independent\[1\]: theta1_1 listed twice, expected each independent "
            "coordinate once")
    d = copy.deepcopy(doc)
    d["bodies"].insert(0, {"name": "platform", "parent": "world", "mass": 5.0, "com": [0, 0, 0],
                           "joint": {"type": "floating", "coordinate": "root"},
                           "inertia": {"ixx": 0.1, "iyy": 0.1, "izz": 0.1}})
    for body in d["bodies"][1:]:
        body["parent"] = "platform" if body["parent"] == "world" else body["parent"]
    d["loops"]["guess"]["root.vx"] = 1.0                     # was a StopIteration traceback
    _bad(d, r"loops.guess.root.vx: a free-flyer's velocity, expected a coordinate of a loop's")
    d = copy.deepcopy(doc)
    d["bodies"][3]["joint"]["coordinate"] = "theta2_1"        # one coordinate, two joints
    _bad(d, r"loops.guess.theta2_2: expected a coordinate of the model: theta1_1, theta2_1, "
            r"theta1_2$")                                    # was "got 4 entries, at most 3"
    d = copy.deepcopy(doc)
    d["loops"]["independent"] = ["theta1_1", "theta2_1", "theta1_2"]   # one dependent left
    _bad(d, r"loop end_effector cannot be assembled from the guess .*; loops.independent: 3 "
            r"coordinates declared independent, but the constraint Jacobian at the guess has "
            r"rank 2 of 4 coordinates: mobility 2, expected 2 independent coordinates",
         LoopAssemblyError)
    d = copy.deepcopy(doc)
    d["bodies"][2]["origin"] = [5.0, 0, 0]                   # the count is right: no hint
    with pytest.raises(LoopAssemblyError) as error:
        ClosedChain.build(model_from_dict(d, "five_bar.yaml"))
    assert "declared independent" not in str(error.value)
    d = copy.deepcopy(doc)
    d["loops"]["independent"] = ["theta1_1", "theta2_1"]     # leg 2 is then a dyad: fine
    assert ClosedChain.build(model_from_dict(d, "x")).dependent_names == ("theta1_2", "theta2_2")


# -- the constraints against finite differences, every cut type -----------------------------

def spatial_tree_with_cuts() -> dict:
    """Two branches of mixed joints (any axes) and one cut of every type between them; not
    assembled (the constraint functions are defined everywhere)."""
    def body(name, parent, axis, jtype="R", origin=(0.1, 0.2, 0.3), rot=(0.3, -0.4, 0.5)):
        return {"name": name, "parent": parent, "origin": list(origin), "rotation": list(rot),
                "joint": {"type": jtype, "axis": axis, "coordinate": f"q_{name}"},
                "mass": 1.0, "com": [0.1, 0, 0], "inertia": {"solid_box": [0.1, 0.2, 0.3]},
                "points": {"p": [0.2, -0.1, 0.3]}}
    bodies = [body("a1", "world", "z"), body("a2", "a1", [1, 2, 3]),
              body("a3", "a2", "x", "P"), body("b1", "world", "-y", origin=(0.5, 0, 0)),
              body("b2", "b1", [0, 1, 1], "P"), body("b3", "b2", "x")]
    cuts = [{"name": f"cut_{t}", "type": t, "predecessor": "a3.p", "successor": "b3.p",
             "rotation": [0.2, 0.1, -0.3], "successor_rotation": [-0.1, 0.4, 0.2],
             **({"axis": [1, -2, 0.5]} if t in ("R", "P", "planar") else {}),
             **({"axis": "z", "axis_b": "x"} if t == "U" else {})}
            for t in ("R", "P", "S", "U", "F", "planar")]
    return {"format": "charmie_dynamics/model/1", "name": "cuts", "bodies": bodies,
            "loops": {"independent": ["q_a1"], "cuts": cuts}}


def test_constraint_jacobian_and_gamma_match_finite_differences():
    model = model_from_dict(spatial_tree_with_cuts(), "cuts")
    rows = ConstraintRows.of(model)
    assert len(rows.names) == 5 + 5 + 3 + 4 + 6 + 3
    rng = np.random.default_rng(3)
    h = 1e-6
    for _ in range(3):
        q, qd = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
        v = evaluate(model, rows, q, qd)
        J_fd = np.array([(evaluate(model, rows, q + h * e).residual
                          - evaluate(model, rows, q - h * e).residual) / (2 * h)
                         for e in np.eye(6)]).T
        np.testing.assert_allclose(v.jacobian, J_fd, atol=1e-8)
        # gamma = d/dt (Phi_q) qd along q(t) = q + t qd: the second derivative of Phi
        dJ = (evaluate(model, rows, q + h * qd).jacobian
              - evaluate(model, rows, q - h * qd).jacobian) / (2 * h)
        np.testing.assert_allclose(v.gamma, dJ @ qd, atol=1e-7)
        phi2 = (evaluate(model, rows, q + 1e-4 * qd).residual - 2 * v.residual
                + evaluate(model, rows, q - 1e-4 * qd).residual) / 1e-8
        np.testing.assert_allclose(v.gamma, phi2, atol=1e-5)


# -- Newton-Raphson and the embedding -----------------------------------------------------

def test_embedding_matches_finite_differences(five_bar):
    x, v, a = np.radians([80, 70]), np.array([0.3, -0.2]), np.array([0.1, 0.4])
    q, qd, qdd, G, values = five_bar.state(x, v, a)
    assert np.abs(values.residual).max() < 1e-12
    assert np.abs(values.jacobian @ qd).max() < 1e-12
    h = 1e-5
    qp = five_bar.positions(x + h * v + h * h / 2 * a, q)
    qm = five_bar.positions(x - h * v + h * h / 2 * a, q)
    np.testing.assert_allclose((qp - qm) / (2 * h), qd, atol=1e-9)
    np.testing.assert_allclose((qp - 2 * q + qm) / h ** 2, qdd, atol=1e-4)


def test_newton_iterations_along_eq_35(five_bar):
    """Warm-started from the last sample, 10 ms apart: 1 to 3 iterations (seed 003 reports
    1-3 at its sampling), residual at the tolerance."""
    t = np.arange(0.0, 20.0 + 1e-9, 0.01)
    x1 = sine_ramp(t, math.radians(30), math.radians(90), 20.0)[0]
    x2 = sine_ramp(t, math.radians(30), math.radians(70.3), 20.0)[0]
    q = None
    iterations = []
    for k in range(len(t)):
        report = SolveReport()
        q = five_bar.positions(np.array([x1[k], x2[k]]), q, report)
        iterations += report.iterations
        assert report.residual[0] <= five_bar.tolerance
    assert 1 <= min(iterations[1:]) and max(iterations) <= 3


def test_singular_configuration_names_the_loop(five_bar):
    # both legs turned together towards 180 deg: the elbows 0.1 m apart = a_2^2 - a_2^1, the
    # distal links fold onto each other (singular at 180 deg)
    chain = ClosedChain.build(five_bar.model, condition_limit=1e3)
    angles = np.linspace(30, 180, 400)
    q = chain.assembled
    with pytest.raises(LoopSingularityError, match="loop end_effector: .*condition number") as e:
        for k, th in enumerate(angles):
            q = chain.positions(np.radians([th, th]), q)
    assert e.value.loop == "loop end_effector" and e.value.condition > 1e3
    assert angles[k] > 170


# -- dynamics ---------------------------------------------------------------------------

def spatial_loop(cut_type: str, n_joints: int, seed: int, **cut_fields) -> tuple[ClosedChain, dict]:
    """A serial chain of ``n_joints`` revolute joints (random axes, placements, inertias)
    closed onto a fixed body ``ground`` by a cut of ``cut_type`` (with ``cut_fields``: its
    axes), assembled by construction at a random configuration (the two cut frames
    coincide); its first coordinate independent. Also the document of the open chain alone
    and the ground frame's world placement (for Pinocchio)."""
    rng = np.random.default_rng(seed)
    bodies = []
    for k in range(n_joints):
        bodies.append({"name": f"j{k}", "parent": "world" if k == 0 else f"j{k - 1}",
                       "origin": (0.3 * rng.uniform(-1, 1, 3)).tolist(),
                       "rotation": rng.uniform(-1, 1, 3).tolist(),
                       "joint": {"type": "R", "axis": rng.uniform(-1, 1, 3).tolist(),
                                 "coordinate": f"q{k}"},
                       "mass": float(rng.uniform(0.5, 2)),
                       "com": (0.1 * rng.uniform(-1, 1, 3)).tolist(),
                       "inertia": {"solid_box": rng.uniform(0.05, 0.3, 3).tolist()},
                       "points": {"tip": (0.3 * rng.uniform(-1, 1, 3)).tolist()}})
    doc = {"format": "charmie_dynamics/model/1", "name": f"loop_{cut_type}",
           "bodies": list(bodies)}
    open_chain = model_from_dict(copy.deepcopy(doc), "open chain")
    guess = rng.uniform(-1, 1, n_joints)
    fk = forward_kinematics(open_chain, guess)
    tip = fk.to_world(n_joints - 1, np.asarray(bodies[-1]["points"]["tip"]))
    R = fk.rotation_world[n_joints - 1]
    doc["bodies"].append({"name": "ground", "parent": "world", "origin": tip.tolist(),
                          "rotation": {"matrix": R.tolist()}, "joint": {"type": "F"},
                          "virtual": True})
    doc["loops"] = {"independent": ["q0"],
                    "guess": {f"q{k}": float(g) for k, g in enumerate(guess)},
                    "cuts": [{"name": "cut", "type": cut_type,
                              "predecessor": f"j{n_joints - 1}.tip",
                              "successor": "ground.origin", **cut_fields}]}
    return ClosedChain.build(model_from_dict(doc, f"loop_{cut_type}")), \
        {"open_chain": open_chain, "ground": (R, tip)}


def pinocchio_constrained_acceleration(chain: ClosedChain, q, qd, tau_independent, contact,
                                       open_chain=None, ground=None):
    """Pinocchio's constraintDynamics with one bilateral constraint (CONTACT_3D: the cut's
    points coincide, CONTACT_6D: its frames) at the cut joint, the tree from pin_oracle;
    for a loop closed on a fixed body, Pinocchio gets the ``open_chain`` and the cut's
    successor frame ``ground`` (rotation, origin) on its universe."""
    pin = pytest.importorskip("pinocchio")
    from pin_oracle import pinocchio_model
    model = chain.model
    pm = pinocchio_model(model if open_chain is None else open_chain)
    pd = pm.createData()
    cut = model.loops.cuts[0]
    if ground is None:
        joint_b, frame_b = cut.body_b + 1, pin.SE3(cut.rotation_b, cut.origin_b)
    else:
        R, p = ground
        joint_b, frame_b = 0, pin.SE3(R @ cut.rotation_b, p + R @ cut.origin_b)
    cm = pin.RigidConstraintModel(contact, pm, cut.body_a + 1,
                                  pin.SE3(cut.rotation_a, cut.origin_a), joint_b, frame_b,
                                  pin.ReferenceFrame.LOCAL)
    models = pin.StdVec_RigidConstraintModel([cm])
    datas = pin.StdVec_RigidConstraintData([cm.createData()])
    pin.initConstraintDynamics(pm, pd, models, datas)
    tau = np.zeros(model.n_coordinates)
    tau[chain.independent] = tau_independent
    return pin.constraintDynamics(pm, pd, q, qd, tau, models, datas,
                                  pin.ProximalSettings(1e-14, 1e-12, 100))


def full_acceleration(chain, x, v, tau):
    qdd_i, q, qd = cc.forward_dynamics(chain, x, v, tau)
    G, values = chain.velocity_map(q, qd)
    return q, qd, G @ qdd_i + chain.acceleration_bias(values)


@pytest.mark.parametrize("cut_type, n_joints, contact", [("S", 4, "CONTACT_3D"),
                                                         ("F", 7, "CONTACT_6D")])
def test_forward_dynamics_matches_pinocchio_spatial(cut_type, n_joints, contact):
    pin = pytest.importorskip("pinocchio")
    chain, extra = spatial_loop(cut_type, n_joints, seed=7)
    assert chain.groups[0].mobility == 1 and not chain.groups[0].redundant
    rng = np.random.default_rng(1)
    x0 = chain.assembled[chain.independent]
    for dx in (0.0, 0.05, -0.05):
        v, tau = rng.uniform(-1, 1, 1), rng.uniform(-2, 2, 1)
        q, qd, qdd = full_acceleration(chain, x0 + dx, v, tau)
        expected = pinocchio_constrained_acceleration(chain, q, qd, tau,
                                                      getattr(pin.ContactType, contact), **extra)
        np.testing.assert_allclose(qdd, expected, atol=1e-8)


def test_five_bar_forward_dynamics_matches_pinocchio(five_bar):
    pin = pytest.importorskip("pinocchio")
    rng = np.random.default_rng(2)
    for x in (np.radians([80, 70]), np.radians([30, 30]), np.radians([90, 70.3])):
        v, tau = rng.uniform(-1, 1, 2), rng.uniform(-20, 20, 2)
        q, qd, qdd = full_acceleration(five_bar, x, v, tau)
        expected = pinocchio_constrained_acceleration(five_bar, q, qd, tau,
                                                      pin.ContactType.CONTACT_3D)
        np.testing.assert_allclose(qdd, expected, atol=1e-8)


@pytest.mark.parametrize("which", ["five_bar", "S", "F"])
def test_inverse_dynamics_power_balance_round_trip_and_multipliers(which, five_bar):
    chain = five_bar if which == "five_bar" else \
        spatial_loop(which, 4 if which == "S" else 7, 7)[0]
    ni = len(chain.independent)
    rng = np.random.default_rng(4)
    x = chain.assembled[chain.independent] + 0.05
    v, a = rng.uniform(-1, 1, ni), rng.uniform(-1, 1, ni)
    loads = cc.inverse_dynamics(chain, x, v, a)
    # the tree's equations with the multipliers: H qdd + b = S^T tau + Phi_q^T lambda
    _, values = chain.velocity_map(loads.q)
    rhs = values.jacobian.T @ loads.multipliers
    rhs[chain.independent] += loads.effort
    np.testing.assert_allclose(loads.tree_effort, rhs, atol=1e-9)
    # minimum norm: no component in the indeterminate (redundant rows') directions
    assert loads.indeterminate.shape[1] == len(chain.groups[0].redundant)
    assert np.all(np.abs(loads.indeterminate.T @ loads.multipliers) < 1e-9)
    # power balance: effort . qd_i = dE/dt along q_i(t) = x + v t + a t^2 / 2, by central
    # differences of the energy with one Richardson step (h = 1e-3 s: truncation O(h^4),
    # measured 2e-10 W on the five-bar)
    def E(t):
        q, qd, *_ = chain.state(x + v * t + a * t * t / 2, v + a * t, a, loads.q)
        return cc.energy(chain, q, qd)

    def dE(h):
        return (E(h) - E(-h)) / (2 * h)
    power = loads.effort @ v
    assert abs((4 * dE(5e-4) - dE(1e-3)) / 3 - power) <= 1e-9 * max(1.0, abs(power))
    # FD(ID(q, qd, qdd)) = qdd
    qdd_i, _, _ = cc.forward_dynamics(chain, x, v, loads.effort, loads.q)
    np.testing.assert_allclose(qdd_i, a, atol=1e-9)


@pytest.mark.slow
def test_five_bar_free_fall_conserves_energy_and_stops_at_the_singularity(five_bar):
    """Seed 002 eq. 36: from rest at (80, 70) deg, unactuated. RK4 with the dependent
    coordinates solved at every stage: energy constant to the integrator's error until the
    singular configuration stops the simulation."""
    chain = ClosedChain.build(five_bar.model, condition_limit=1e2)
    sim = cc.simulate(chain, np.radians([80, 70]), np.zeros(2), 3.0, 2e-3)
    assert isinstance(sim.stopped, LoopSingularityError)
    assert sim.stopped.loop == "loop end_effector"
    assert 1.0 < sim.t[-1] < 1.5                       # measured 1.22 s (the paper: ~1.4 s)
    assert np.ptp(sim.energy) < 1e-5 * abs(sim.energy[0])
    assert sim.iterations.max() <= 3


def test_statics_by_virtual_work(five_bar):
    """At rest the actuated torques hold gravity: tau_k = dV/dx_k along the constraint
    manifold (potential energy of the assembled configurations, central differences)."""
    x = np.radians([45.0, 50.0])
    loads = cc.inverse_dynamics(five_bar, x, np.zeros(2), np.zeros(2))
    h = 1e-6

    def V(xs):
        return cc.energy(five_bar, five_bar.positions(xs, loads.q), np.zeros(4))
    dV = [(V(x + h * e) - V(x - h * e)) / (2 * h) for e in np.eye(2)]
    np.testing.assert_allclose(loads.effort, dV, rtol=1e-8, atol=1e-8)


def test_the_nodes_take_a_model_with_loops(five_bar):
    """The dynamics node solves the loops (its inputs: the independent coordinates; a
    feedforward joint must be one of them); the simulator and the trajectory player take
    them too (test_loop_simulation), so the nodes' model check passes them."""
    from charmie_dynamics.evaluators.loop_evaluator import LoopEvaluator
    from charmie_dynamics.ros.common.model_updates import check_node_model, prepare_model
    prepared = prepare_model(five_bar.model, "", "five_bar.yaml", [], [])
    assert type(prepared.evaluator) is LoopEvaluator
    assert prepared.joints == ["theta1_1", "theta1_2"]
    with pytest.raises(ModelError, match=r"theta2_1 not in the model's inputs \(theta1_1, "
                                         r"theta1_2\)"):
        prepare_model(five_bar.model, "", "five_bar.yaml", ["theta2_1"], [])
    check_node_model(five_bar.model, "five_bar.yaml", "the simulator publishes")


def test_platform_motion_as_input(five_bar):
    """The end point as input (seed 003 algorithm 3): the loop and task rows solved together
    recover the coordinates that placed it; along a straight 0.2 m path sampled every 10 ms
    (0.2 m/s), warm-started, 1 to 3 iterations per sample."""
    q0 = five_bar.positions(np.radians([60, 50]))
    tip = forward_kinematics(five_bar.model, q0).to_world(1, np.array([1.1, 0, 0]))
    report = SolveReport()
    q = five_bar.inverse_kinematics("link2_1.tip", tip, None, report)
    np.testing.assert_allclose(q, q0, atol=1e-10)
    assert report.residual[0] <= 1e-12
    iterations = []
    for s in np.linspace(0.0, 0.2, 101)[1:]:
        report = SolveReport()
        q = five_bar.inverse_kinematics("link2_1.tip", tip + [s, 0.0, 0.0], q, report)
        iterations += report.iterations
        placed = forward_kinematics(five_bar.model, q).to_world(1, np.array([1.1, 0, 0]))
        np.testing.assert_allclose(placed, tip + [s, 0.0, 0.0], atol=1e-12)
    assert 1 <= min(iterations) and max(iterations) <= 3


def test_cuts_sharing_coordinates_form_one_group():
    """A second cut whose loop shares theta2_1 with the first joins its group; its rows add
    nothing to the rank (the elbow point is already joined by the tree) and are named
    redundant."""
    doc = five_bar_doc()
    doc["loops"]["cuts"].append({"name": "elbow", "type": "S", "predecessor": "link1_1.tip",
                                 "successor": "link2_1.origin"})
    chain = ClosedChain.build(model_from_dict(doc, "five_bar.yaml"))
    (info,) = chain.groups
    assert info.group.cuts == (0, 1) and info.group.gruebler == 4 - 8
    assert (info.rank, info.mobility) == (2, 2)
    assert {n for n in info.redundant if n.startswith("elbow.")} == {
        "elbow.position.x", "elbow.position.y", "elbow.position.z"}
    assert len(info.redundant) == 6


def test_actuators_and_loops_in_one_model_are_refused():
    doc = yaml.safe_load((FIVE_BAR.parent.parent / "charmie.yaml").read_text())
    doc["loops"] = five_bar_doc()["loops"]
    with pytest.raises(ModelError, match=r"charmie.yaml: loops: a model with actuators \(their "
                                         r"closed forms\) and loops, expected one or the other"):
        model_from_dict(doc, "charmie.yaml")
