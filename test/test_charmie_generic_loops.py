"""CHARMIE's two actuator loops by the generic method (issue 13 item 5): the variant of
test/charmie_generic_loops.py, solved by constraint embedding, against the closed forms
(seed 001 section 4.2: kinematics/indirect.py; seed 000 section 5.2: mechanisms/loops.py).
Two independent methods: d4, theta5, their rates and accelerations and every effort,
actuator forces included, agree to 1e-9; the loop wrench's split differs where the paper
assumes one (eq. 36 row 6, eq. 38) and the minimum-norm multipliers choose another."""
from __future__ import annotations

import numpy as np
import pytest

from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.kinematics import resolve_state
from charmie_dynamics.mechanisms.closed_chains import ClosedChain
from charmie_dynamics.model.loader import model_from_dict
from charmie_generic_loops import generic_loops_document


@pytest.fixture(scope="module")
def generic():
    return ClosedChain.build(model_from_dict(generic_loops_document(), "charmie variant"))


def random_inputs(model, rng):
    n = len(model.input_names)
    x, xd, xdd = rng.uniform(-0.3, 0.3, n), rng.uniform(-0.2, 0.2, n), rng.uniform(-0.5, 0.5, n)
    for k, name in enumerate(model.input_names):
        if name in model.actuator_names:
            x[k], xd[k], xdd[k] = rng.uniform(0.33, 0.47), 0.1 * xd[k], 0.1 * xdd[k]
    return x, xd, xdd


def both(charmie, generic, rng):
    x, xd, xdd = random_inputs(charmie, rng)
    state = resolve_state(charmie, x, xd, xdd)
    closed = inverse_dynamics(charmie, state)
    pick = [charmie.input_names.index(name) for name in generic.independent_names]
    loads = cc.inverse_dynamics(generic, x[pick], xd[pick], xdd[pick])
    return state, closed, loads


def test_mobility_of_the_variant(generic):
    for info in generic.groups:
        assert (info.rank, info.mobility, info.group.gruebler) == (2, 1, -2)
        assert len(info.redundant) == 3                  # the planar loops' spatial rows
    assert set(generic.dependent_names) == {"d4", "theta5", "act4_angle", "act5_angle"}


def test_generic_loops_match_the_closed_forms(charmie, generic):
    rng = np.random.default_rng(13)
    gm = generic.model
    efforts = dict.fromkeys(generic.independent_names)
    for _ in range(5):
        state, closed, loads = both(charmie, generic, rng)
        for name in ("d4", "theta5"):
            c, g = charmie.coordinate(name), gm.coordinate(name)
            np.testing.assert_allclose([loads.q[g], loads.qd[g], loads.qdd[g]],
                                       [state.q[c], state.qd[c], state.qdd[c]], atol=1e-9)
        for k, name in enumerate(generic.independent_names):
            efforts[name] = loads.effort[k]
        for k, name in enumerate(charmie.actuator_names):
            assert efforts[name] == pytest.approx(closed.actuator_force[k], rel=1e-9, abs=1e-9)
        for name in generic.independent_names:
            if name not in charmie.actuator_names:
                c = charmie.coordinate(name)
                assert efforts[name] == pytest.approx(closed.coordinate_effort[c], abs=1e-9)


def cut_wrench(generic, loads, cut: str, multipliers: np.ndarray):
    """Force and couple (world frame) that the cut joint's rows apply on its successor body
    (dynamics/closed_chain.py: lambda e on B; lambda (u x w) on A, its opposite on B)."""
    _, values = generic.velocity_map(loads.q)
    R = values.placements.rotation_world
    rows = generic.rows
    force, couple = np.zeros(3), np.zeros(3)
    for r, name in enumerate(rows.names):
        if not name.startswith(cut + "."):
            continue
        u = R[rows.body_a[r]] @ rows.u[r]
        if rows.kind[r] == 0:
            force += multipliers[r] * u
        else:
            couple -= multipliers[r] * np.cross(u, R[rows.body_b[r]] @ rows.w[r])
    return force, couple


def test_loop_wrench_split_paper_and_minimum_norm(charmie, generic):
    """act4 (prismatic joint, eq. 42): the paper's split is the minimum-norm one. act5
    (revolute joint, eqs. 36-38): the same force across the joint axis a, but the paper gives
    the actuator half of the force along a (eq. 36 row 6) and half of the torque across a
    (eq. 38) where the minimum norm gives it none; the difference lies in the indeterminate
    space of the redundant rows (both satisfy the equations of motion)."""
    rng = np.random.default_rng(5)
    state, closed, loads = both(charmie, generic, rng)
    fk = closed.placements
    for k, act in enumerate(charmie.actuators):
        R = fk.rotation_world[act.drives]
        paper_force = R @ closed.loops.actuator_end_force[k]
        paper_couple = R @ closed.loops.actuator_couple[k]
        force, couple = cut_wrench(generic, loads, f"{act.name}_end", loads.multipliers)
        a = R @ charmie.axis[act.drives]
        across = np.eye(3) - np.outer(a, a)
        np.testing.assert_allclose(across @ force, across @ paper_force, atol=1e-9)
        if act.name == "act4":
            np.testing.assert_allclose(force, paper_force, atol=1e-9)
            np.testing.assert_allclose(couple, paper_couple, atol=1e-9)
        else:
            assert abs(a @ force) < 1e-9 and np.abs(couple).max() < 1e-9
            assert abs(a @ paper_force) > 1.0 or np.abs(paper_couple).max() > 1.0
    # the paper's wrenches as multipliers: lambda_min + (a vector of the indeterminate space)
    _, values = generic.velocity_map(loads.q)
    rows = generic.rows
    paper = loads.multipliers.copy()
    for k, act in enumerate(charmie.actuators):
        R = fk.rotation_world[act.drives]
        f = R @ closed.loops.actuator_end_force[k]
        c = R @ closed.loops.actuator_couple[k]
        mine = [r for r, n in enumerate(rows.names) if n.startswith(f"{act.name}_end.")]
        Ra, Rb = values.placements.rotation_world[rows.body_a[mine[0]]], \
            values.placements.rotation_world[rows.body_b[mine[0]]]
        basis = np.array([np.concatenate([Ra @ rows.u[r], np.zeros(3)]) if rows.kind[r] == 0
                          else np.concatenate([np.zeros(3), -np.cross(Ra @ rows.u[r],
                                                                      Rb @ rows.w[r])])
                          for r in mine]).T
        paper[mine] = np.linalg.lstsq(basis, np.concatenate([f, c]), rcond=None)[0]
        np.testing.assert_allclose(basis @ paper[mine], np.concatenate([f, c]), atol=1e-9)
    Jd = values.jacobian[:, generic.dependent]
    np.testing.assert_allclose(Jd.T @ paper, loads.tree_effort[generic.dependent], atol=1e-8)
    delta = paper - loads.multipliers
    in_null = loads.indeterminate @ (loads.indeterminate.T @ delta)
    np.testing.assert_allclose(in_null, delta, atol=1e-8)
    assert np.abs(delta).max() > 1.0
