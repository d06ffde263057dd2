"""The papers' validation motions: seed 001 section 4.4 (20 s, kinematic) and seed 000
section 6 (5 s, bang-bang accelerations)."""
import numpy as np
import pytest

from charmie_dynamics import auxiliary_segments, forward_kinematics, point_positions, resolve_state
from charmie_dynamics.trajectories import input_kinds, kinematic_validation, validation


def test_seed001_motion_stays_valid_and_claw_path_is_continuous(charmie):
    traj = kinematic_validation(charmie, dt=0.01)
    names = charmie.input_names
    assert traj.t[-1] == pytest.approx(20.0)
    state = resolve_state(charmie, traj.x, traj.xd, traj.xdd)    # raises if out of range
    act4 = traj.x[:, names.index("act4")]
    act5 = traj.x[:, names.index("act5")]
    assert act4[0] == pytest.approx(0.400) and act4[-1] == pytest.approx(0.500)
    assert act5[0] == pytest.approx(0.350) and act5[-1] == pytest.approx(0.400)
    assert traj.x[-1, names.index("theta8a")] == pytest.approx(20 * np.pi / 36)
    assert traj.x[-1, names.index("theta7c")] == pytest.approx(20 * np.pi / 72)
    assert traj.x[-1, names.index("d1")] == pytest.approx(0.1)
    fk = forward_kinematics(charmie, state.q)
    segments = {s.name: s for s in auxiliary_segments(charmie, fk)}    # balancer reaches
    np.testing.assert_allclose(segments["act4"].length, act4, atol=1e-13)
    np.testing.assert_allclose(segments["act5"].length, act5, atol=1e-13)
    claw = point_positions(charmie, fk, ["body_12a.D12a"])["body_12a.D12a"]
    step = np.linalg.norm(np.diff(claw, axis=0), axis=1)
    assert step.max() < 0.01 * 0.5          # below 0.5 m/s everywhere
    jerk = np.linalg.norm(np.diff(claw, 2, axis=0), axis=1)
    assert jerk.max() < 1e-4                # no jump: the path is smooth at this sampling


def test_seed000_motion_profile(charmie):
    traj = validation(charmie, dt=0.001)
    kinds = np.array(input_kinds(charmie))
    accel = np.where(kinds == "angular", np.pi / 9, np.where(kinds == "linear", 0.03, 0.003))
    x0 = np.where(kinds == "actuator", 0.4, 0.0)
    np.testing.assert_allclose(traj.xdd[1:-1][traj.t[1:-1] < 2.5], np.broadcast_to(
        -accel, traj.xdd[1:-1][traj.t[1:-1] < 2.5].shape))
    np.testing.assert_allclose(traj.xdd[(traj.t > 2.5) & (traj.t < 5.0)][0], accel)
    np.testing.assert_allclose(traj.xd[-1], 0.0, atol=1e-12)                 # stopped at 5 s
    np.testing.assert_allclose(traj.x[-1], x0 - accel * 2.5 ** 2, atol=1e-12)
    np.testing.assert_allclose(traj.xd, traj.xd[::-1], atol=1e-12)           # symmetric about 2.5 s
    assert sorted(set(kinds)) == ["actuator", "angular", "linear"]
    assert list(kinds[[charmie.input_names.index(n) for n in ("d1", "d2", "theta3", "act4", "act5")]]) \
        == ["linear", "linear", "angular", "actuator", "actuator"]
    resolve_state(charmie, traj.x, traj.xd, traj.xdd)
