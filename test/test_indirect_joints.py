"""CHARMIE's indirectly actuated joints d4(act4) and theta5(act5): against the papers'
relations written out here from Tables 3-4, loop closure in the assembled model, exact
derivatives against finite differences, and range errors."""
import numpy as np
import pytest

from charmie_dynamics import (ActuatorRangeError, forward_kinematics, indirect_joints,
                              inputs_from_dict, point_positions, resolve_state)
from charmie_dynamics.kinematics.indirect import joint_from_length, length_from_joint

# Seed 001 Tables 3-4 in metres (seed 001 point names)
D3, E3, F4 = np.array([0, 0, 0.290]), np.array([0, 0.2575, 0.0995]), np.array([0, 0.1625, 0.383])
B4, G4, E5 = np.array([0, 0, 0.434]), np.array([0, 0.0875, 0.383]), np.array([0, 0.1225, 0.380])


def d4_seed001_eq14(c3):
    """Seed 001 eq. 14 (F3'y = F4'y; A4'z = 0)."""
    return F4[2] - E3[2] - c3 * np.sin(np.arccos((F4[1] - E3[1]) / c3)) + D3[2]


def theta5_circle_intersection(c4):
    """Seed 001 eqs. 15-23 with a perpendicular offset in eqs. 22-23, the upper intersection,
    and atan2 in eqs. 16-17."""
    a5 = np.hypot(E5[1], E5[2])                                   # eq. 18 (A5 = 0)
    e4 = np.hypot(B4[1] - G4[1], B4[2] - G4[2])                   # eq. 19
    l4 = (c4 ** 2 - a5 ** 2 + e4 ** 2) / (2 * e4)                 # eq. 20
    h4 = np.sqrt(c4 ** 2 - l4 ** 2)                               # eq. 21
    u = np.array([B4[1] - G4[1], B4[2] - G4[2]]) / e4
    perp = np.array([-u[1], u[0]])
    candidates = [G4[1:] + l4 * u + s * h4 * perp for s in (1, -1)]
    H = max(candidates, key=lambda h: h[1])                       # E5 is above the joint
    alpha4 = np.arctan2(H[1] - B4[2], H[0] - B4[1])               # eq. 16
    beta5 = np.arctan2(E5[1], E5[2])                              # eq. 17
    return alpha4 + beta5 - np.pi / 2                             # eq. 15


def joint(charmie, name):
    return next(j for j in indirect_joints(charmie) if j.actuator == name)


def test_d4_matches_seed001_eq14(charmie):
    L = np.linspace(*charmie.actuators[0].stroke, 101)
    value, _, _ = joint_from_length(joint(charmie, "act4"), L)
    np.testing.assert_allclose(value, d4_seed001_eq14(L), atol=1e-14)


def test_theta5_matches_circle_intersection(charmie):
    for L in np.linspace(*charmie.actuators[1].stroke, 41):
        value, _, _ = joint_from_length(joint(charmie, "act5"), L)
        assert value == pytest.approx(theta5_circle_intersection(L), abs=1e-13)


def test_act5_assembly_range_is_the_two_circle_condition(charmie):
    a5 = np.hypot(E5[1], E5[2])
    e4 = np.hypot(B4[1] - G4[1], B4[2] - G4[2])
    lo, hi = joint(charmie, "act5").geometric_range
    assert lo == pytest.approx(abs(a5 - e4), abs=1e-12)
    assert hi == pytest.approx(a5 + e4, abs=1e-12)
    assert joint(charmie, "act4").geometric_range[0] == pytest.approx(abs(F4[1] - E3[1]), abs=1e-15)


@pytest.mark.parametrize("name", ["act4", "act5"])
def test_loop_closes_in_the_assembled_model(charmie, name):
    """The distance between the actuator's anchors after forward kinematics is its length."""
    rng = np.random.default_rng(5)
    a = next(a for a in charmie.actuators if a.name == name)
    for L in rng.uniform(*a.stroke, 20):
        x, xd, xdd = inputs_from_dict(charmie, {name: float(L), "theta3": float(rng.uniform(-3, 3)),
                                                "act4" if name == "act5" else "act5": 0.41})
        fk = forward_kinematics(charmie, resolve_state(charmie, x, xd, xdd).q)
        pts = point_positions(charmie, fk, [a.base.name, a.end.name])
        assert np.linalg.norm(pts[a.end.name] - pts[a.base.name]) == pytest.approx(L, abs=1e-13)


@pytest.mark.parametrize("name", ["act4", "act5"])
def test_inverse_relation_round_trip(charmie, name):
    j = joint(charmie, name)
    L = np.linspace(*j.stroke, 57)
    value, _, _ = joint_from_length(j, L)
    np.testing.assert_allclose(length_from_joint(j, value), L, atol=1e-13)


@pytest.mark.parametrize("name", ["act4", "act5"])
def test_derivatives_against_finite_differences(charmie, name):
    j = joint(charmie, name)
    lo, hi = j.stroke
    L = np.linspace(lo + 1e-3, hi - 1e-3, 31)
    value, d1, d2 = joint_from_length(j, L)

    def central(f, h):
        return (f(L + h) - f(L - h)) / (2 * h)

    def richardson(f, h=1e-4):   # O(h^4): the FD error stays far below the tolerance
        return (4 * central(f, h / 2) - central(f, h)) / 3

    np.testing.assert_allclose(d1, richardson(lambda x: joint_from_length(j, x)[0]), rtol=1e-9)
    np.testing.assert_allclose(d2, richardson(lambda x: joint_from_length(j, x)[1]), rtol=1e-8)


def test_joint_rates_from_actuator_rates(charmie):
    """qd and qdd of the driven joints along a smooth actuator motion equal the finite
    differences of q(t)."""
    t = np.linspace(0.0, 1.0, 2001)
    dt = t[1] - t[0]
    act4 = 0.40 + 0.05 * np.sin(2.0 * t)
    act5 = 0.38 + 0.04 * np.sin(3.0 * t + 0.5)
    names = charmie.input_names
    x = np.zeros((len(t), len(names)))
    xd, xdd = np.zeros_like(x), np.zeros_like(x)
    for k, (L, Ld, Ldd) in {names.index("act4"): (act4, 0.1 * np.cos(2 * t), -0.2 * np.sin(2 * t)),
                            names.index("act5"): (act5, 0.12 * np.cos(3 * t + 0.5),
                                                  -0.36 * np.sin(3 * t + 0.5))}.items():
        x[:, k], xd[:, k], xdd[:, k] = L, Ld, Ldd
    s = resolve_state(charmie, x, xd, xdd)
    for c in (charmie.coordinate("d4"), charmie.coordinate("theta5")):
        fd_v = (s.q[2:, c] - s.q[:-2, c]) / (2 * dt)
        fd_a = (s.q[2:, c] - 2 * s.q[1:-1, c] + s.q[:-2, c]) / dt ** 2
        # second-order differences at dt = 0.5 ms: truncation error below 1e-6 relative
        np.testing.assert_allclose(s.qd[1:-1, c], fd_v, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(s.qdd[1:-1, c], fd_a, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(s.actuator_jacobian[:, 0] * xd[:, names.index("act4")],
                               s.qd[:, charmie.coordinate("d4")], atol=1e-15)


@pytest.mark.parametrize("length", [0.2, 0.9, np.nan])
def test_out_of_range_names_actuator_value_and_range(charmie, length):
    x, xd, xdd = inputs_from_dict(charmie)
    x[charmie.input_names.index("act5")] = length
    with pytest.raises(ActuatorRangeError, match=r"act5: length .* outside the valid range \[0\.32, 0\.48\] m"):
        resolve_state(charmie, x, xd, xdd)
