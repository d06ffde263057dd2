"""The IRSBot-2 of seed 003 section 6 (issue 13): the limbs' inverse kinematics with the
platform position as input (algorithms 1, 2, 3), checked by an independent closed-form
solution of the example's geometry, by forward kinematics of the solution through the whole
closed chain, by finite differences of the rates, and the actuated torques along the
parabolic path by power balance and FD(ID) = identity."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from charmie_dynamics.cli.platform_analysis import parabola
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.mechanisms.closed_chains import ClosedChain, evaluate
from charmie_dynamics.mechanisms.closed_chains.limbs import (COMPOUND, NESTED,
                                                             NotAParallelMechanism,
                                                             ParallelMechanism)
from charmie_dynamics.model import load_model

EXAMPLES = Path(__file__).resolve().parent.parent / "config" / "examples"
IRSBOT2 = EXAMPLES / "irsbot2.yaml"
# the example's values (config/examples/irsbot2.yaml): base, arm, rods, elbow and platform
# offsets along x, m
B, L1, L2, E, P = 0.10, 0.28, 0.60, 0.03, 0.04


@pytest.fixture(scope="module")
def pkm() -> ParallelMechanism:
    return ParallelMechanism.build(ClosedChain.build(load_model(IRSBOT2)))


def closed_form(x: float, z: float) -> tuple[float, float]:
    """Limb 1's actuated angle q1 and rod angle theta (about y, from the zero configuration)
    for the platform centre at (x, 0, z), by plane geometry (independent of the solver): the
    elbow translates (parallelogram), U4's centre is R2 + e x (+ d h, cancelled by U6's
    offset), so |D - l1 (cos q1, -sin q1)| = l2 with D = (x + p - e - b, z) in the xz-plane,
    the branch of the zero configuration."""
    dx, dz = x + P - E - B, z
    k = (dx * dx + dz * dz + L1 * L1 - L2 * L2) / (2 * L1)
    rho, phi = math.hypot(dx, dz), math.atan2(dz, dx)
    q1 = -phi - math.acos(k / rho)
    rod = (dx - L1 * math.cos(q1), dz + L1 * math.sin(q1))
    z0 = -math.sqrt(L2 ** 2 - (B + L1 + E - P) ** 2)
    theta = math.atan2(rod[0], rod[1]) - math.atan2(P - B - L1 - E, z0)
    return q1, theta


def expected_coordinates(pkm: ParallelMechanism, x: float, z: float) -> np.ndarray:
    """Every coordinate by the closed form: limb 2 is limb 1's mirror image (x -> -x), the
    U joints' other angles (spin of the rods, turn of the platform about h) are zero."""
    names = pkm.chain.model.coordinate_names
    q = np.zeros(len(names))
    for limb, xs in ((1, x), (2, -x)):
        q1, theta = closed_form(xs, z)
        for name, value in (("q1", q1), ("q2", -q1), ("q3", q1), ("q4a", theta),
                            ("q5a", theta), ("q6a", -theta)):
            q[names.index(f"{name}_{limb}")] = value
    return q


def test_irsbot2_mobility_limbs_and_generalized_coordinates(pkm):
    chain = pkm.chain
    (group,) = chain.groups
    assert (len(group.group.coordinates), group.rank, group.mobility) == (18, 16, 2)
    assert len(group.redundant) == 8                  # 24 rows: over-constrained (sec. 4.3)
    names = chain.model.coordinate_names
    assert [[names[c] for c in lb.generalized] for lb in pkm.limbs] == \
        [["q1_1", "q6a_1", "q6b_1"], ["q1_2", "q6a_2", "q6b_2"]]
    for lb, n in zip(pkm.limbs, (1, 2)):              # proximal (R7) and distal (U8) loops
        assert [(g.label, g.rank, g.mobility) for g in lb.loops.groups] == \
            [(f"loop r7_{n}", 2, 1), (f"loop u8_{n}", 4, 2)]


@pytest.mark.parametrize("algorithm", [NESTED, COMPOUND])
def test_platform_inverse_kinematics_matches_the_closed_form_and_forward_kinematics(
        pkm, algorithm):
    chain = pkm.chain
    home, q = pkm.platform_position(chain.assembled), None
    # a sequence of targets, each solved from the last solution (Newton-Raphson is local:
    # seed 003 sec. 4.1.2), 5 to 10 cm apart
    for dx, dz in ((0.0, 0.0), (0.06, -0.03), (0.12, -0.05), (0.05, 0.04), (-0.05, 0.0),
                   (-0.15, -0.08)):
        target = home + [dx, 0.0, dz]
        sol = pkm.solve(target, np.zeros(3), np.zeros(3), q, algorithm)
        q = sol.q
        np.testing.assert_allclose(sol.q, expected_coordinates(pkm, *target[[0, 2]]),
                                   atol=1e-10)
        for report in sol.limbs:
            assert report.task_error[-1] <= 1e-10 and report.loop_residual <= 1e-12
        # the two limbs' platforms coincide (the rigid cut; J_T's condition number ~25 turns
        # the 1e-10 m position tolerance into up to ~1e-11 here)
        assert sol.closure_residual <= 1e-10
        # forward kinematics through the whole PKM from the actuated angles alone, Newton
        # started 0.02 rad away from the solution in every dependent coordinate
        start = sol.q.copy()
        start[chain.dependent] += 0.02
        q_fk = chain.positions(sol.q[chain.independent], start)
        np.testing.assert_allclose(q_fk, sol.q, atol=1e-10)
        for limb in range(2):
            np.testing.assert_allclose(pkm.platform_position(q_fk, limb), target, atol=1e-10)
        assert np.abs(evaluate(chain.model, chain.rows, q_fk).residual).max() <= 1e-12


def test_platform_rates_match_finite_differences(pkm):
    home = pkm.platform_position(pkm.chain.assembled)
    h = 1e-5

    def coordinates(t):
        p, v, a = parabola(np.array([t]), home)
        return pkm.solve(p[0], v[0], a[0], start, NESTED)

    for t in (0.05, 0.3, 0.71):
        start = None
        sol = coordinates(t)
        start = sol.q
        plus, minus = coordinates(t + h), coordinates(t - h)
        np.testing.assert_allclose(sol.qd, (plus.q - minus.q) / (2 * h), atol=1e-7)
        np.testing.assert_allclose(sol.qdd, (plus.qd - minus.qd) / (2 * h), atol=1e-5)
        scale = np.abs(sol.qdd).max()
        assert scale > 1.0                        # the check is not vacuous


def test_algorithm_1_from_far_away_is_damped(pkm):
    """A cold start 0.15 m from the target (the zero configuration to the parabola at
    t = 0.71 s): the undamped algorithm 1 overshot (error 0.145 -> 0.79 m), wandered for 29
    iterations on numpy 2.4 and failed after 30 on numpy 1.23; damped, the error falls at
    every outer step and is met in a few."""
    home = pkm.platform_position(pkm.chain.assembled)
    for t in (0.3, 0.71):
        p, v, a = parabola(np.array([t]), home)
        sol = pkm.solve(p[0], v[0], a[0], None, NESTED)
        np.testing.assert_allclose(sol.q, expected_coordinates(pkm, p[0, 0], p[0, 2]),
                                   atol=1e-10)
        for report in sol.limbs:
            e = report.task_error
            assert report.outer <= 6 and e[0] > 0.1
            assert all(b < a for a, b in zip(e, e[1:]))


def test_newton_iterations_along_the_parabola_at_1_ms(pkm):
    """Seed 003 sec. 6.4.1 at its 1 ms sampling: algorithm 1 needs 1 to 3 outer steps,
    algorithm 2 1 to 3 inner steps per loop and outer step, algorithm 3 up to 3."""
    home = pkm.platform_position(pkm.chain.assembled)
    t = np.arange(0.0, 0.06, 1e-3)
    p, v, a = parabola(t, home)
    nested = compound = None
    for k in range(len(t)):
        sol_n = pkm.solve(p[k], v[k], a[k], nested, NESTED)
        sol_c = pkm.solve(p[k], v[k], a[k], compound, COMPOUND)
        nested, compound = sol_n.q, sol_c.q
        np.testing.assert_allclose(sol_c.q, sol_n.q, atol=1e-10)
        if k == 0:
            continue
        for rn, rc in zip(sol_n.limbs, sol_c.limbs):
            assert 1 <= rn.outer <= 3 and 1 <= rc.outer <= 3
            assert all(1 <= it <= 3 for step in rn.inner for it in step)
            # Newton-Raphson: the error falls at least quadratically once small
            e = rn.task_error
            assert all(e[i + 1] <= max(10 * e[i] ** 2 / 1e-2, 1e-10) for i in range(len(e) - 1))


def test_torques_along_the_parabola_by_power_balance_and_forward_dynamics(pkm):
    """Inverse dynamics of the closed chain at the platform path: the actuators' power
    equals dE/dt (central differences of the energy along the path, step 1e-4 s), and the
    embedded forward dynamics under these torques gives back the actuated accelerations."""
    chain = pkm.chain
    ind = chain.independent
    home = pkm.platform_position(chain.assembled)

    def state(t, start):
        p, v, a = parabola(np.array([t]), home)
        return pkm.solve(p[0], v[0], a[0], start)

    def energy(t, start):
        s = state(t, start)
        return cc.energy(chain, s.q, s.qd)

    h = 1e-4
    for t in (0.1, 0.4, 0.85):
        sol = state(t, None)
        loads = cc.inverse_dynamics(chain, sol.q[ind], sol.qd[ind], sol.qdd[ind], sol.q)
        np.testing.assert_allclose(loads.q, sol.q, atol=1e-10)   # ID's own Newton agrees
        power = loads.effort @ sol.qd[ind]
        dE = (energy(t + h, sol.q) - energy(t - h, sol.q)) / (2 * h)
        assert abs(power) > 0.1                       # the check is not vacuous (W)
        assert abs(dE - power) <= 1e-6 * max(1.0, abs(power))
        qdd_i, _, _ = cc.forward_dynamics(chain, sol.q[ind], sol.qd[ind], loads.effort, sol.q)
        np.testing.assert_allclose(qdd_i, sol.qdd[ind], atol=1e-8)


def test_not_a_parallel_mechanism_and_bad_inputs_are_refused(pkm):
    chain = ClosedChain.build(load_model(EXAMPLES / "five_bar.yaml"))
    with pytest.raises(NotAParallelMechanism, match=r"five_bar.yaml: loops.cuts: no rigid \(F\)"):
        ParallelMechanism.build(chain)
    with pytest.raises(ValueError, match=r"platform velocity: expected 3 finite numbers"):
        pkm.solve(np.zeros(3), [0.0, np.nan, 0.0], np.zeros(3))
    with pytest.raises(ValueError, match=r"algorithm 'newton', expected 'nested' or"):
        pkm.solve(np.zeros(3), np.zeros(3), np.zeros(3), algorithm="newton")
