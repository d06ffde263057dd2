"""The identification regressor and the base parameters: Y pi_model against the inverse
dynamics (CHARMIE with its loops, springs and balancer; PUMA), the tree part against
Pinocchio's joint torque regressor, and the base parameters' defining identity."""
import numpy as np
import pinocchio as pin
import pytest

from charmie_dynamics import load_model
from charmie_dynamics.identification.base import base_parameters, random_states
from charmie_dynamics.identification.regressor import (input_efforts, model_parameters,
                                                       parameter_layout, regressor)
from conftest import CHARMIE, EXAMPLES
from pin_oracle import pin_joint_vector, pinocchio_model


def relative_error(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


@pytest.mark.parametrize("path", [CHARMIE, EXAMPLES["puma"]], ids=["charmie", "puma"])
def test_regressor_times_model_parameters_is_the_inverse_dynamics(path):
    model = load_model(path)
    state = random_states(model, 200, seed=3)
    Y = regressor(model, state)
    pi = model_parameters(model)
    assert Y.shape == (200, model.n_coordinates, len(parameter_layout(model)))
    error = relative_error(Y @ pi, input_efforts(model, state))
    assert error < 1e-10, error


def test_regressor_batch_equals_single_samples(charmie):
    state = random_states(charmie, 3, seed=4)
    Y = regressor(charmie, state)
    for s in range(3):
        one = type(state)(*(a[s] for a in vars(state).values() if isinstance(a, np.ndarray)))
        assert np.array_equal(regressor(charmie, one), Y[s])


def test_tree_part_equals_pinocchio_joint_torque_regressor():
    """Pinocchio's parameters per joint: m, m c, I about the joint frame (xx, xy, yy, xz, yz,
    zz); the oracle's joint frame i+1 is our body frame i, so the columns compare directly."""
    model = load_model(EXAMPLES["puma"])
    pm, pd = pinocchio_model(model), None
    pd = pm.createData()
    layout = parameter_layout(model)
    state = random_states(model, 20, seed=5)
    Y = regressor(model, state)
    for s in range(20):
        ref = pin.computeJointTorqueRegressor(
            pm, pd, *(pin_joint_vector(model, v[s]) for v in (state.q, state.qd, state.qdd)))
        # PUMA: one body per coordinate, multiplier 1, every body massive
        assert layout.bodies == tuple(range(model.n_bodies))
        error = relative_error(Y[s, :, :layout.n_inertial], ref)
        assert error < 1e-10, (s, error)


@pytest.mark.parametrize("path", [pytest.param(CHARMIE, id="charmie", marks=pytest.mark.slow),
                                  pytest.param(EXAMPLES["puma"], id="puma")])
def test_base_parameters_reproduce_every_regressor(path):
    model = load_model(path)
    layout = parameter_layout(model)
    base = base_parameters(model, layout.names, samples=300)
    # the gap at the rank: the tolerance separates the two groups by orders of magnitude
    d = base.diagonal
    assert d[base.rank - 1] > 1e3 * base.tolerance, d[base.rank - 1]
    assert d[base.rank:].max(initial=0.0) < 1e-3 * base.tolerance
    # on states the split never saw: Y pi = Y_b beta for the model's and a random pi
    state = random_states(model, 50, seed=11)
    Y = regressor(model, state)
    rng = np.random.default_rng(0)
    for pi in (model_parameters(model), rng.normal(size=len(layout))):
        error = relative_error(base.columns(Y) @ base.of(pi), Y @ pi)
        assert error < 1e-8, error
    assert len(base.expressions()) == base.rank
