"""The velocity and acceleration pass (seed 000 eqs. 28-32) against Pinocchio and against
finite differences of forward kinematics along a smooth motion."""
import numpy as np
import pinocchio as pin

from charmie_dynamics import body_motion, forward_kinematics
from pin_oracle import pin_joint_vector, pinocchio_model
from test_forward_kinematics import random_q


def test_against_pinocchio(any_model):
    pm = pinocchio_model(any_model)
    pd = pm.createData()
    rng = np.random.default_rng(11)
    n = any_model.n_coordinates
    for _ in range(20):
        q = random_q(any_model, rng)
        qd, qdd = rng.normal(size=n), rng.normal(size=n)
        pin.forwardKinematics(pm, pd, *(pin_joint_vector(any_model, v) for v in (q, qd, qdd)))
        m = body_motion(any_model, forward_kinematics(any_model, q), qd, qdd)
        for i in range(any_model.n_bodies):
            v, a = pd.v[i + 1], pd.a[i + 1]
            classical = a.linear + np.cross(v.angular, v.linear)
            np.testing.assert_allclose(m.angular_velocity[i], v.angular, atol=1e-11)
            np.testing.assert_allclose(m.linear_velocity[i], v.linear, atol=1e-11)
            np.testing.assert_allclose(m.angular_acceleration[i], a.angular, atol=1e-11)
            np.testing.assert_allclose(m.linear_acceleration[i], classical, atol=1e-10)


def _skew_part(M):
    return 0.5 * np.stack([M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0],
                           M[..., 1, 0] - M[..., 0, 1]], axis=-1)


def test_against_finite_differences(any_model):
    """omega from R^T dR/dt, v and a from differences of the origin and com positions."""
    rng = np.random.default_rng(12)
    q0 = random_q(any_model, rng)
    v0 = rng.normal(size=q0.shape)
    w = rng.uniform(0.5, 2.0, size=q0.shape)
    moving_actuator = {any_model.coordinate(c) for c in any_model.driven_coordinates}
    v0[list(moving_actuator)] *= 0.01        # stay inside the mechanisms' ranges
    h = 1e-4
    t = np.array([-2 * h, -h, 0.0, h, 2 * h]) + 0.3
    q = q0 + 0.3 * v0 * np.sin(w * t[:, None])
    qd = 0.3 * v0 * w * np.cos(w * t[:, None])
    qdd = -0.3 * v0 * w ** 2 * np.sin(w * t[:, None])
    fk = forward_kinematics(any_model, q)
    m = body_motion(any_model, forward_kinematics(any_model, q[2]), qd[2], qdd[2])
    R = fk.rotation_world
    Rdot = (R[3] - R[1]) / (2 * h)
    omega_body = _skew_part(np.swapaxes(R[2], -1, -2) @ Rdot)
    np.testing.assert_allclose(m.angular_velocity, omega_body, rtol=1e-6, atol=1e-7)
    # angular acceleration: derivative of the world-frame omega, back in the body frame
    omega_world = np.einsum("tbij,tbj->tbi", R[1:4], np.stack([
        _skew_part(np.swapaxes(R[k], -1, -2) @ ((R[k + 1] - R[k - 1]) / (2 * h))) for k in (1, 2, 3)]))
    domega = np.einsum("bji,bj->bi", R[2], (omega_world[2] - omega_world[0]) / (2 * h))
    np.testing.assert_allclose(m.angular_acceleration, domega, rtol=1e-4, atol=1e-5)
    com_world = fk.origin_world + np.einsum("tbij,bj->tbi", R, any_model.com)
    for pos, vel, acc in ((fk.origin_world, m.linear_velocity, m.linear_acceleration),
                          (com_world, m.com_velocity, m.com_acceleration)):
        v_fd = np.einsum("bji,bj->bi", R[2], (pos[3] - pos[1]) / (2 * h))
        a_fd = np.einsum("bji,bj->bi", R[2], (pos[3] - 2 * pos[2] + pos[1]) / h ** 2)
        np.testing.assert_allclose(vel, v_fd, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(acc, a_fd, rtol=1e-4, atol=2e-4)


def test_base_acceleration_adds_uniformly(charmie):
    """Folding -g into the base (as the RNEA does) shifts every origin's acceleration by
    R^0_i^T (-g) and leaves angular quantities unchanged."""
    rng = np.random.default_rng(13)
    q = random_q(charmie, rng)
    qd, qdd = rng.normal(size=q.shape), rng.normal(size=q.shape)
    fk = forward_kinematics(charmie, q)
    plain = body_motion(charmie, fk, qd, qdd)
    shifted = body_motion(charmie, fk, qd, qdd, base_acceleration=-charmie.gravity)
    expected = plain.linear_acceleration + np.einsum("bji,j->bi", fk.rotation_world, -charmie.gravity)
    np.testing.assert_allclose(shifted.linear_acceleration, expected, atol=1e-12)
    np.testing.assert_array_equal(shifted.angular_acceleration, plain.angular_acceleration)
    np.testing.assert_allclose(shifted.com_acceleration - plain.com_acceleration,
                               expected - plain.linear_acceleration, atol=1e-12)
