"""The frame Jacobian of a body's point and its time derivative (kinematics/jacobian.py, issue
39 item 2) against Pinocchio's frame Jacobian and its time variation (LOCAL_WORLD_ALIGNED, one
Pinocchio joint per body: pin_oracle) and against finite differences of the forward
kinematics, on CHARMIE (coupled coordinates), PUMA, the Stanford arm, a chain of helical,
prismatic and revolute joints, and a random tree on a free-flyer (finite differences only:
the oracle has no free-flyer)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from charmie_dynamics import forward_kinematics, load_model
from charmie_dynamics.kinematics import body_motion, integrate_configuration
from charmie_dynamics.kinematics.jacobian import frame_jacobian, frame_jacobian_derivative
from charmie_dynamics.model import model_from_dict
from conftest import CHARMIE, EXAMPLES
from pin_oracle import pin_joint_vector, pinocchio_model
from test_free_flyer import floating_model
from test_helical_joint import chain
from test_urdf_import import random_states

TREES = {"charmie": lambda: load_model(CHARMIE),
         "puma": lambda: load_model(EXAMPLES["puma"]),
         "stanford_arm": lambda: load_model(EXAMPLES["stanford_arm"]),
         "helical_chain": lambda: model_from_dict(chain(), "helical_chain.yaml")}


def case(model, rng: np.random.Generator, q: np.ndarray | None = None):
    """A random configuration, rates, body and point (world) fixed on it."""
    if q is None:
        q = rng.uniform(-np.pi, np.pi, model.nq)
    qd = rng.normal(size=model.n_coordinates)
    body = int(rng.integers(model.n_bodies))
    local = rng.normal(scale=0.3, size=3)
    return q, qd, body, local


def point_and_rotation(model, q, body, local):
    fk = forward_kinematics(model, q)
    return fk.to_world(body, local), fk.rotation_world[body]


def moved(model, q, qd, h):
    return integrate_configuration(model, q, h * qd)


def finite_differences(model, q, qd, body, local, h=1e-6):
    """The point's velocity, the body's angular velocity and dJ/dt along qd, by central
    differences of the forward kinematics and of the Jacobian."""
    (p1, R1), (p0, R0) = (point_and_rotation(model, moved(model, q, qd, s * h), body, local)
                          for s in (1.0, -1.0))
    R = point_and_rotation(model, q, body, local)[1]
    spin = (R1 - R0) / (2 * h) @ R.T                  # skew(omega)
    omega = np.array([spin[2, 1], spin[0, 2], spin[1, 0]])
    jacobians = []
    for s in (1.0, -1.0):
        qs = moved(model, q, qd, s * h)
        fk = forward_kinematics(model, qs)
        jacobians.append(np.vstack(frame_jacobian(model, fk, body, fk.to_world(body, local))))
    return (p1 - p0) / (2 * h), omega, (jacobians[0] - jacobians[1]) / (2 * h)


def analytic(model, q, qd, body, local):
    fk = forward_kinematics(model, q)
    p = fk.to_world(body, local)
    jw, jv = frame_jacobian(model, fk, body, p)
    motion = body_motion(model, fk, qd, np.zeros_like(qd))
    djw, djv = frame_jacobian_derivative(model, fk, motion, body, p)
    return jw, jv, np.vstack([djw, djv])


@pytest.mark.parametrize("name", TREES)
def test_against_pinocchio(name):
    model = TREES[name]()
    pm = pinocchio_model(model)
    # coordinate rates -> Pinocchio's joint rates (a coupled coordinate moves several)
    E = np.zeros((model.n_bodies, model.n_coordinates))
    moving = np.flatnonzero(model.coordinate_index >= 0)
    E[moving, model.coordinate_index[moving]] = model.multiplier[moving]
    rng = np.random.default_rng(39)
    for _ in range(5):
        q, qd, body, local = case(model, rng)
        frame = pm.addFrame(pin.Frame(f"point{_}", body + 1, 0, pin.SE3(np.eye(3), local),
                                      pin.FrameType.OP_FRAME))
        data = pm.createData()
        q_pin, v_pin = pin_joint_vector(model, q), E @ qd
        pin.computeJointJacobians(pm, data, q_pin)
        pin.updateFramePlacements(pm, data)
        J = pin.getFrameJacobian(pm, data, frame, pin.LOCAL_WORLD_ALIGNED) @ E
        pin.computeJointJacobiansTimeVariation(pm, data, q_pin, v_pin)
        dJ = pin.getFrameJacobianTimeVariation(pm, data, frame, pin.LOCAL_WORLD_ALIGNED) @ E
        jw, jv, dj = analytic(model, q, qd, body, local)
        scale = max(1.0, np.max(np.abs(J)))
        np.testing.assert_allclose(jw, J[3:], atol=1e-12 * scale)
        np.testing.assert_allclose(jv, J[:3], atol=1e-12 * scale)
        np.testing.assert_allclose(dj, np.vstack([dJ[3:], dJ[:3]]),
                                   atol=1e-11 * max(1.0, np.max(np.abs(dJ))))


@pytest.mark.parametrize("name", [*TREES, "free_flyer"])
def test_against_finite_differences(name):
    model = floating_model(4) if name == "free_flyer" else TREES[name]()
    rng = np.random.default_rng(7)
    configurations = random_states(model, rng)[0] if name == "free_flyer" else [None] * 4
    for q0 in configurations[:4]:
        q, qd, body, local = case(model, rng, q0)
        jw, jv, dj = analytic(model, q, qd, body, local)
        velocity, omega, dj_fd = finite_differences(model, q, qd, body, local)
        np.testing.assert_allclose(jv @ qd, velocity, atol=1e-7 * max(1.0, np.abs(velocity).max()))
        np.testing.assert_allclose(jw @ qd, omega, atol=1e-7 * max(1.0, np.abs(omega).max()))
        np.testing.assert_allclose(dj, dj_fd, atol=1e-6 * max(1.0, np.abs(dj).max()))


def test_a_body_on_the_root_path_only_fills_its_own_columns():
    """A point on the first body moves with the first joint alone."""
    model = TREES["puma"]()
    q = np.random.default_rng(3).uniform(-1, 1, model.nq)
    fk = forward_kinematics(model, q)
    jw, jv = frame_jacobian(model, fk, 0, fk.to_world(0, np.array([0.1, 0.2, 0.3])))
    first = model.coordinate_index[0]
    others = np.arange(model.n_coordinates) != first
    assert not jw[:, others].any() and not jv[:, others].any() and jw[:, first].any()
    with pytest.raises(ValueError, match=f"body: got {model.n_bodies}, expected 0 to "):
        frame_jacobian(model, fk, model.n_bodies, np.zeros(3))
    with pytest.raises(ValueError, match="body: got -1"):
        frame_jacobian(model, fk, -1, np.zeros(3))
    with pytest.raises(ValueError, match="placements of 2 samples, expected one"):
        frame_jacobian(model, forward_kinematics(model, np.stack([q, q])), 0, np.zeros(3))
