"""Models at the edges (issue 10, item 9): a model without joint coordinates, a model of
massless bodies only, a chain of 10,000 bodies. Every algorithm either works (arrays of
length 0 are results) or raises the package's own error; the numbers that exist are checked
against closed forms."""
import numpy as np
import pytest

from charmie_dynamics import forward_kinematics, inputs_from_dict, point_positions, resolve_state
from charmie_dynamics.dynamics import (MassMatrixError, Payload, bias_forces, forward_dynamics,
                                       inverse_dynamics, mass_matrix)
from charmie_dynamics.mechanisms.auxiliary import auxiliary_segments
from charmie_dynamics.model import ModelError, model_from_dict
from charmie_dynamics.model.validation import MAX_BODIES
from charmie_dynamics.simulation import simulate

G = 9.81
INERTIA = {"ixx": 0.01, "iyy": 0.01, "izz": 0.01}


def body(name, parent, origin=(0, 0, 0.1), joint=None, virtual=False, mass=1.0, points=None):
    b = {"name": name, "parent": parent, "origin": list(origin), "joint": joint or {"type": "F"}}
    if virtual:
        b["virtual"] = True
    else:
        b.update(mass=mass, com=[0, 0, 0.05], inertia=dict(INERTIA))
    if points:
        b["points"] = points
    return b


def document(*bodies, name="edge"):
    return {"format": "charmie_dynamics/model/1", "name": name, "bodies": list(bodies)}


def build(*bodies, name="edge"):
    return model_from_dict(document(*bodies, name=name))


# The two edge models as documents (test_cli.py runs the command line on them too).
FIXED = document(body("a", "world", points={"tip": [0.2, 0, 0]}), body("b", "a"), name="fixed")
MASSLESS = document(
    body("a", "world", (0, 0, 0), {"type": "R", "axis": "x", "coordinate": "q1"}, virtual=True,
         points={"arm": [0, 0.5, 0]}),
    body("b", "a", (0, 0, 0.2), {"type": "P", "axis": "z", "coordinate": "d2"}, virtual=True,
         points={"tip": [0, 0, 0]}),
    name="massless")


@pytest.fixture(scope="module")
def fixed():
    """Two 1 kg bodies on fixed joints: no coordinates."""
    return model_from_dict(FIXED)


@pytest.fixture(scope="module")
def massless():
    """A revolute joint about x, then a prismatic one along z: two massless bodies."""
    return model_from_dict(MASSLESS)


def states(model, lead):
    x, xd, xdd = (np.broadcast_to(v, lead + v.shape) for v in inputs_from_dict(model))
    return resolve_state(model, x, xd, xdd)


# ---------------------------------------------------------------- no coordinates

@pytest.mark.parametrize("lead", [(), (3,)])
def test_no_coordinates_kinematics(fixed, lead):
    assert fixed.n_coordinates == 0 and fixed.input_names == ()
    state = states(fixed, lead)
    assert state.q.shape == lead + (0,)
    fk = forward_kinematics(fixed, state.q)
    assert fk.origin_world.shape == lead + (2, 3)
    np.testing.assert_allclose(fk.origin_world[..., 1, :], np.broadcast_to([0, 0, 0.2], lead + (3,)))
    tip = point_positions(fixed, fk, ["a.tip"])["a.tip"]
    np.testing.assert_allclose(tip, np.broadcast_to([0.2, 0, 0.1], lead + (3,)))
    assert auxiliary_segments(fixed, fk) == []


@pytest.mark.parametrize("lead", [(), (3,)])
def test_no_coordinates_dynamics(fixed, lead):
    state = states(fixed, lead)
    loads = inverse_dynamics(fixed, state)
    assert loads.coordinate_effort.shape == lead + (0,)
    # the floor carries both bodies' weight
    np.testing.assert_allclose(loads.base_force_world, np.broadcast_to([0, 0, 2 * G], lead + (3,)))
    assert mass_matrix(fixed, state.q).shape == lead + (0, 0)
    assert bias_forces(fixed, state.q, state.qd).shape == lead + (0,)
    for method in ("aba", "cholesky"):
        qdd = forward_dynamics(fixed, state.q, state.qd, state.q, method=method)
        assert qdd.shape == lead + (0,)


def test_no_coordinates_simulation(fixed):
    sim = simulate(fixed, np.zeros(0), np.zeros(0), None, duration=0.005)
    assert sim.q.shape == (6, 0) and sim.t[-1] == pytest.approx(0.005)


# ---------------------------------------------------------------- massless bodies only

@pytest.mark.parametrize("lead", [(), (2,)])
def test_massless_kinematics_and_inverse_dynamics(massless, lead):
    x, xd, xdd = (np.broadcast_to(v, lead + (2,)) for v in ([0.0, 0.3], [0.0, 0.0], [0.0, 0.0]))
    state = resolve_state(massless, x, xd, xdd)
    fk = forward_kinematics(massless, state.q)
    np.testing.assert_allclose(fk.origin_world[..., 1, :], np.broadcast_to([0, 0, 0.5], lead + (3,)))
    loads = inverse_dynamics(massless, state)
    assert loads.base_body == 0                       # no massive body: the root's joint
    np.testing.assert_array_equal(loads.coordinate_effort, np.zeros(lead + (2,)))
    # 2 kg at 0.5 m from the x axis: the joint holds m g r about +x, the floor m g upwards
    loads = inverse_dynamics(massless, state, payloads=[Payload("a.arm", 2.0)])
    np.testing.assert_allclose(loads.coordinate_effort,
                               np.broadcast_to([2.0 * G * 0.5, 0.0], lead + (2,)), atol=1e-12)
    np.testing.assert_allclose(loads.base_force_world, np.broadcast_to([0, 0, 2.0 * G], lead + (3,)),
                               atol=1e-12)


def test_massless_mass_matrix_is_zero(massless):
    np.testing.assert_array_equal(mass_matrix(massless, np.zeros(2)), np.zeros((2, 2)))


@pytest.mark.parametrize("method", ["aba", "cholesky"])
def test_massless_forward_dynamics_raises_the_package_error(massless, method):
    with pytest.raises(MassMatrixError, match=r"coordinate '(q1|d2)' moves no mass"):
        forward_dynamics(massless, np.zeros(2), np.zeros(2), np.zeros(2), method=method)
    assert issubclass(MassMatrixError, np.linalg.LinAlgError)   # callers catching it still do


def test_massless_simulation_raises_the_package_error(massless):
    with pytest.raises(MassMatrixError, match="moves no mass"):
        simulate(massless, np.zeros(2), np.zeros(2), None, duration=0.002)


# ---------------------------------------------------------------- a chain of 10,000 bodies

def test_chain_of_ten_thousand_bodies():
    """The loader's ordering was recursive (RecursionError at 1,000 bodies) and scanned every
    body per child. A revolute joint on every 10th body (1,000 coordinates: H is 8 MB)."""
    n = MAX_BODIES
    bodies = [body(f"b{k}", "world" if k == 0 else f"b{k - 1}", (0, 0, 0.01),
                   {"type": "R", "axis": "xy"[k // 10 % 2], "coordinate": f"q{k}"}
                   if k % 10 == 0 else None, mass=0.1) for k in range(n)]
    model = build(*bodies[::-1], name="chain")          # children first in the file
    assert model.n_bodies == n and model.n_coordinates == n // 10
    assert model.body_names[0] == "b0" and model.body_names[-1] == f"b{n - 1}"
    assert np.all(model.parent[1:] == np.arange(n - 1))
    q = np.zeros(model.n_coordinates)
    fk = forward_kinematics(model, q)
    np.testing.assert_allclose(fk.origin_world[-1], [0, 0, 0.01 * n], rtol=1e-12)
    loads = inverse_dynamics(model, resolve_state(model, q, q, q))
    np.testing.assert_allclose(loads.base_force_world, [0, 0, 0.1 * n * G], rtol=1e-9)
    q = np.full(model.n_coordinates, 1e-3)
    H = mass_matrix(model, q)
    assert H.shape == (n // 10, n // 10) and np.all(np.isfinite(H))
    np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-9 * np.abs(H).max())
    aba = forward_dynamics(model, q, np.zeros_like(q), np.zeros_like(q), method="aba")
    chol = forward_dynamics(model, q, np.zeros_like(q), np.zeros_like(q), method="cholesky")
    assert np.all(np.isfinite(aba)) and np.abs(aba).max() > 0
    np.testing.assert_allclose(aba, chol, rtol=0, atol=1e-4 * np.abs(chol).max())


def test_more_bodies_than_the_limit_are_refused_before_reading_them():
    one = body("b", "world")
    with pytest.raises(ModelError, match=f"bodies: got {MAX_BODIES + 1} entries, expected at "
                                         f"most {MAX_BODIES}"):
        model_from_dict({"format": "charmie_dynamics/model/1", "name": "big",
                         "bodies": [one] * (MAX_BODIES + 1)})
