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

from charmie_dynamics.mechanisms.closed_chains import (ClosedChain, LoopAssemblyError,
                                                      LoopSingularityError, SolveReport,
                                                      evaluate)
from charmie_dynamics.mechanisms.closed_chains.constraints import ConstraintRows
from charmie_dynamics.model.loader import ModelError, model_from_dict

FIVE_BAR = Path(__file__).resolve().parent.parent / "config" / "examples" / "five_bar.yaml"


def five_bar_doc() -> dict:
    return yaml.safe_load(FIVE_BAR.read_text())


@pytest.fixture(scope="module")
def five_bar():
    return ClosedChain.build(model_from_dict(five_bar_doc(), str(FIVE_BAR)))


def sine_ramp(t: np.ndarray, start: float, end: float, T: float) -> tuple[np.ndarray, ...]:
    """Seed 002 eq. 22a and its derivatives."""
    w = 2 * math.pi / T
    k = (end - start) / T
    return (start + k * (t - np.sin(w * t) / w), k * (1 - np.cos(w * t)), k * w * np.sin(w * t))


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
