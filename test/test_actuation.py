"""Actuator space and achievable accelerations under saturation (seed 004 sections II, V)."""
import numpy as np
import pytest

from charmie_dynamics import resolve_state
from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.dynamics.actuation import (achievable_accelerations, actuator_space, friction,
                                                 input_jacobians, input_space_dynamics,
                                                 joint_efforts_from_inputs)
from charmie_dynamics.dynamics.mass_matrix import bias_forces, mass_matrix


def a_state(charmie, seed, speed=0.3):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, len(charmie.input_names))
    xd = rng.normal(size=x.shape) * speed
    for a in charmie.actuators:
        k = charmie.input_names.index(a.name)
        x[k] = rng.uniform(a.stroke[0] + 0.02, a.stroke[1] - 0.02)
        xd[k] *= 0.05
    return x, xd, rng


def test_jacobians_are_those_of_the_state(charmie):
    x, xd, rng = a_state(charmie, 1)
    s = resolve_state(charmie, x, xd, np.zeros_like(x))
    xx, J, Jp = input_jacobians(charmie, s.q)
    np.testing.assert_allclose(xx, x, atol=1e-14)
    np.testing.assert_allclose(J * xd, s.qd, atol=1e-14)
    xdd = rng.normal(size=x.shape)
    s2 = resolve_state(charmie, x, xd, xdd)
    np.testing.assert_allclose(J * xdd + Jp * xd * xd, s2.qdd, atol=1e-12)


def test_input_space_equations_reproduce_inverse_dynamics(charmie):
    """H_x x'' + b_x = the efforts of inverse dynamics with the actuators' axial forces."""
    x, xd, rng = a_state(charmie, 2)
    xdd = rng.normal(size=x.shape)
    s = resolve_state(charmie, x, xd, xdd)
    loads = inverse_dynamics(charmie, s)
    expected = loads.coordinate_effort.copy()
    for k, name in enumerate(charmie.actuator_names):
        expected[charmie.input_names.index(name)] = loads.actuator_force[k]
    Hx, b, _ = input_space_dynamics(charmie, s.q, s.qd)
    np.testing.assert_allclose(Hx @ xdd + b, expected, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(Hx, Hx.T, atol=1e-12)
    assert np.linalg.eigvalsh(Hx).min() > 0


def test_feasible_motion_is_unchanged(charmie):
    x, xd, rng = a_state(charmie, 3)
    s = resolve_state(charmie, x, xd, np.zeros_like(x))
    result = achievable_accelerations(charmie, s.q, s.qd, 0.01 * rng.normal(size=x.shape))
    assert not result.saturated.any()
    np.testing.assert_array_equal(result.effort, result.required)
    desired = 0.01 * np.random.default_rng(30).normal(size=x.shape)
    again = achievable_accelerations(charmie, s.q, s.qd, desired)
    np.testing.assert_array_equal(again.xdd, desired)
    np.testing.assert_array_equal(again.excess, 0.0)


def test_friction_is_viscous_plus_coulomb(charmie):
    x, xd, rng = a_state(charmie, 4)
    s = resolve_state(charmie, x, xd, np.zeros_like(x))
    desired = 0.01 * rng.normal(size=x.shape)
    result = achievable_accelerations(charmie, s.q, s.qd, desired)
    Hx, b, xdv = input_space_dynamics(charmie, s.q, s.qd)
    space = actuator_space(charmie)
    assert space.viscous[charmie.input_names.index("act4")] == pytest.approx(500.0)  # 0.5 N s/mm
    np.testing.assert_allclose(result.required - (Hx @ desired + b),
                               space.viscous * xdv + space.coulomb * np.sign(xdv), atol=1e-9)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_saturation_mixed_problem(charmie, seed):
    """A motion beyond the limits: clamped efforts and achievable accelerations satisfy the
    equations of motion exactly, unsaturated inputs keep their commanded acceleration, and the
    saturated ones move slower than commanded."""
    x, xd, rng = a_state(charmie, seed)
    s = resolve_state(charmie, x, xd, np.zeros_like(x))
    desired = 40.0 * rng.normal(size=x.shape)
    r = achievable_accelerations(charmie, s.q, s.qd, desired)
    space = actuator_space(charmie)
    assert r.saturated.any()
    Hx, b, xdv = input_space_dynamics(charmie, s.q, s.qd)
    np.testing.assert_allclose(Hx @ r.xdd + b + friction(space, xdv), r.effort, rtol=1e-10, atol=1e-8)
    S, K = r.saturated, ~r.saturated
    np.testing.assert_array_equal(r.xdd[K], desired[K])
    np.testing.assert_allclose(np.abs(r.effort[S]), space.effort_limit[S], rtol=1e-12)
    assert np.all(np.abs(r.effort[K]) <= space.effort_limit[K] * (1 + 1e-12))
    assert np.all(r.excess[S] > 0) and np.all(r.excess[K] == 0)
    # slower: the shortfall points the way the clamped effort could not push
    shortfall = desired[S] - r.xdd[S]
    assert shortfall @ (np.sign(r.effort[S]) * r.excess[S]) > 0
    # and the joint-space accelerations are those of the achievable input accelerations
    _, J, Jp = input_jacobians(charmie, s.q)
    np.testing.assert_allclose(r.qdd, J * r.xdd + Jp * xdv * xdv, atol=1e-12)


def test_the_over_demanded_actuator_is_slower(charmie):
    x, xd, _ = a_state(charmie, 8)
    s = resolve_state(charmie, x, xd, np.zeros_like(x))
    k = charmie.input_names.index("theta8a")
    Hx, b, _ = input_space_dynamics(charmie, s.q, s.qd)
    desired = np.zeros_like(x)
    # 1.5 times what the 30 N m shoulder motor can give (at 2 times, holding the elbow still
    # against it would saturate the 20 N m elbow too, through the coupling of H_x)
    desired[k] = 1.5 * (30.0 + abs(b[k])) / Hx[k, k]
    r = achievable_accelerations(charmie, s.q, s.qd, desired)
    assert r.saturated_names(charmie) == ["theta8a"]
    assert 0 < r.xdd[k] < desired[k]


def test_joint_efforts_from_inputs_round_trip(charmie):
    x, xd, rng = a_state(charmie, 9)
    s = resolve_state(charmie, x, xd, np.zeros_like(x))
    desired = rng.normal(size=x.shape)
    r = achievable_accelerations(charmie, s.q, s.qd, desired)
    tau = joint_efforts_from_inputs(charmie, s.q, s.qd, r.effort)
    H = mass_matrix(charmie, s.q)
    np.testing.assert_allclose(H @ r.qdd + bias_forces(charmie, s.q, s.qd), tau, rtol=1e-10, atol=1e-8)
