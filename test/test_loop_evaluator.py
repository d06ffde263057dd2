"""The loop evaluator (evaluators/loop_evaluator.py), the dynamics node's pipeline for models
with loops, against independent means: the closed chain's inverse dynamics by mass matrix and
bias forces (dynamics/closed_chain.py: tau = G^T (H qdd + b)), the tree's inverse dynamics
with the cut wrenches applied giving S^T tau (zero at every passive joint: the cut wrenches'
signs and points), forward kinematics of the solved coordinates (TF, loop closure), the
momentum balance of the whole mechanism on its root joints (finite differences of the
centres of mass), and the errors of a singular or unassemblable input."""
import math

import numpy as np
import pytest

from charmie_dynamics import forward_kinematics, load_model
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.evaluators.evaluator import Evaluator
from charmie_dynamics.evaluators.loop_evaluator import (LoopEvaluator, LoopJumpError,
                                                        LoopSingularityError, MaxJumpError,
                                                        NonFiniteInput, evaluator_for)
from charmie_dynamics.model.model import JointType
from charmie_dynamics.model.rotations import quaternion_matrix
from conftest import CHARMIE, ROOT

FIVE_BAR = ROOT / "config" / "examples" / "five_bar.yaml"
IRSBOT2 = ROOT / "config" / "examples" / "irsbot2.yaml"


@pytest.fixture(scope="module")
def five_bar():
    return LoopEvaluator(load_model(FIVE_BAR))


def path(evaluator, k: int, step: float = 0.03):
    """Independent positions, rates and accelerations along a path from the assembled
    configuration (each state near the last: the warm start follows the branch)."""
    chain = evaluator.chain
    x0 = chain.assembled[chain.independent]
    n = len(x0)
    rng = np.random.default_rng(7 + k)
    direction = np.linspace(1.0, -0.5, n)
    return (x0 + step * k * direction, rng.normal(0.0, 0.5, n), rng.normal(0.0, 2.0, n))


def scale(a) -> float:
    return max(1.0, float(np.max(np.abs(a))))


@pytest.mark.parametrize("file", [FIVE_BAR, IRSBOT2], ids=["five_bar", "irsbot2"])
def test_efforts_state_and_cut_wrenches_equal_the_closed_chain(file):
    evaluator = LoopEvaluator(load_model(file))
    chain, model = evaluator.chain, evaluator.model
    assert evaluator.input_names == chain.independent_names
    for k in range(6):
        x, xd, xdd = path(evaluator, k, 0.03 if file == FIVE_BAR else 0.01)
        out = evaluator(x, xd, xdd)
        ref = cc.inverse_dynamics(chain, x, xd, xdd, evaluator.last_solution)
        np.testing.assert_allclose(out.efforts, ref.effort, rtol=0, atol=1e-9 * scale(ref.effort))
        for got, want in ((out.state.q, ref.q), (out.state.qd, ref.qd), (out.state.qdd, ref.qdd)):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * scale(want))
        np.testing.assert_allclose(evaluator.multipliers, ref.multipliers, rtol=0,
                                   atol=1e-9 * scale(ref.multipliers))
        # the tree with the cut wrenches applied: S^T tau (zero at the passive joints)
        expected = np.zeros(model.n_coordinates)
        expected[chain.independent] = ref.effort
        np.testing.assert_allclose(out.loads.coordinate_effort, expected, rtol=0,
                                   atol=1e-9 * scale(ref.tree_effort))
        assert max(evaluator.report.residual) <= 1e-12


def world_poses(evaluator, out) -> dict:
    """World rotation and origin of every moving body, composed from the TF poses."""
    parents, children = evaluator.frames.parents, evaluator.frames.children
    poses = {None: (np.eye(3), np.zeros(3))}
    for parent, child, p, q in zip(parents, children, out.translations, out.quaternions):
        R0, O0 = poses[parent]
        poses[child] = (R0 @ quaternion_matrix(*q), O0 + R0 @ p)
    return poses


def test_tf_covers_every_body_and_closes_the_loop(five_bar):
    model = five_bar.model
    for k in range(5):
        x, xd, xdd = path(five_bar, k)
        out = five_bar(x, xd, xdd)
        fk = forward_kinematics(model, out.state.q)
        moving = [model.body_names[i] for i in range(model.n_bodies)
                  if model.joint_type[i] != JointType.FIXED]
        assert set(five_bar.frames.children) == set(moving) == set(model.body_names)
        poses = world_poses(five_bar, out)
        for i, name in enumerate(model.body_names):
            np.testing.assert_allclose(poses[name][0], fk.rotation_world[i], rtol=0, atol=1e-12)
            np.testing.assert_allclose(poses[name][1], fk.origin_world[i], rtol=0, atol=1e-12)
        tip1 = poses["link2_1"][1] + poses["link2_1"][0] @ model.point("link2_1.tip").local
        tip2 = poses["link2_2"][1] + poses["link2_2"][0] @ model.point("link2_2.tip").local
        np.testing.assert_allclose(tip1, tip2, rtol=0, atol=1e-9)
        assert np.degrees(out.state.q[model.coordinate_index[model.body_index("link1_1")]]) \
            == pytest.approx(np.degrees(x[0]), abs=1e-12)


def test_root_joint_forces_balance_the_momentum(five_bar):
    """Both legs stand on the ground: their root joint forces (world) carry the whole
    mechanism, sum m_i (a_ci - g), the cut forces cancelling inside it; the centres of mass'
    accelerations by central differences of the solved positions along x(t)."""
    model, chain = five_bar.model, five_bar.chain
    x, xd, xdd = path(five_bar, 2)
    out = five_bar(x, xd, xdd)
    roots = [i for i in range(model.n_bodies) if model.parent[i] < 0]
    force = sum(out.loads.joint_force_world[i] for i in roots)

    def com(t: float) -> np.ndarray:
        q = chain.positions(x + xd * t + 0.5 * xdd * t * t, out.state.q)
        fk = forward_kinematics(model, q)
        return fk.origin_world + np.einsum("bij,bj->bi", fk.rotation_world, model.com)

    h = 1e-4
    acc = (com(h) - 2 * com(0.0) + com(-h)) / h**2
    expected = np.sum(model.mass[:, None] * (acc - model.gravity), axis=0)
    np.testing.assert_allclose(force, expected, rtol=0, atol=1e-5 * scale(expected))


def test_gravity_compensation_keeps_the_rates_in_the_state(five_bar):
    chain = five_bar.chain
    x, xd, xdd = path(five_bar, 1)
    still = cc.inverse_dynamics(chain, x, np.zeros(2), np.zeros(2))
    moving = five_bar(x, xd, xdd, gravity_only=True)
    np.testing.assert_allclose(moving.efforts, still.effort, rtol=0, atol=1e-9 * scale(still.effort))
    assert np.abs(moving.state.qd).max() > 0.1          # the state keeps its rates
    np.testing.assert_allclose(five_bar.gravity(x).efforts, still.effort, rtol=0,
                               atol=1e-9 * scale(still.effort))


def elbow_angle(t1: float, gap: float | None) -> float:
    """theta1_2 putting the five-bar's elbows ``gap`` m apart, or (None) as close as they
    come, at theta1_1 = t1: elbow 1 at 0.6 m from base 1, elbow 2 on a 0.7 m circle around
    base 2 (0.2 m away); |1.1 - 1.2| = 0.1 m is the folded, singular distance."""
    e1 = 0.6 * np.array([np.cos(t1), np.sin(t1)])
    c = e1 - np.array([0.2, 0.0])
    d0 = float(np.linalg.norm(c))
    phi = float(np.arctan2(c[1], c[0]))
    return phi if gap is None else phi + float(np.arccos((d0**2 + 0.49 - gap**2) / (1.4 * d0)))


def test_singular_and_unassemblable_inputs_raise_and_keep_the_last_solution(five_bar):
    x, xd, xdd = path(five_bar, 0)
    good = five_bar(x, xd, xdd)
    efforts, solution = good.efforts.copy(), five_bar.last_solution.copy()
    t1 = np.radians(85.0)
    singular = np.array([t1, elbow_angle(t1, 0.1)])       # elbows folded: 0.1 m apart
    apart = np.array([t1, elbow_angle(t1, None)])          # elbows 0.084 m apart: no loop
    with pytest.raises(LoopSingularityError, match="condition number .* > 1e"):
        five_bar(singular, np.zeros(2), np.zeros(2))
    with pytest.raises(LoopSingularityError, match="Newton-Raphson stopped"):
        five_bar(apart, np.zeros(2), np.zeros(2))
    with pytest.raises(NonFiniteInput, match="non-finite input: position theta1_1 = nan"):
        five_bar(np.array([np.nan, 0.0]), np.zeros(2), np.zeros(2))
    np.testing.assert_array_equal(five_bar.last_solution, solution)
    np.testing.assert_array_equal(five_bar(x, xd, xdd).efforts, efforts)   # goes on as before


def test_evaluator_for_chooses_by_loops(charmie):
    assert type(evaluator_for(charmie)) is Evaluator
    assert evaluator_for(charmie).input_names == charmie.input_names
    assert type(evaluator_for(load_model(FIVE_BAR))) is LoopEvaluator
    with pytest.raises(ValueError, match=r"expected \(2,\) each: theta1_1, theta1_2"):
        LoopEvaluator(load_model(FIVE_BAR))(np.zeros(4), np.zeros(4), np.zeros(4))


def test_charmie_file_is_not_a_loop_model():
    assert load_model(CHARMIE).loops is None


@pytest.mark.parametrize("cut_type, n_joints", [("R", 6), ("P", 6), ("U", 5), ("S", 4),
                                                ("F", 7), ("planar", 4)])
def test_cut_wrenches_of_every_cut_type_leave_no_effort_at_passive_joints(cut_type, n_joints):
    """A random spatial chain closed onto the ground by each cut type (test_closed_chains'
    ``spatial_loop``), moved off its assembled configuration (a prismatic or planar cut then
    slides: its cut points part, and the predecessor's force must act at the successor's
    point): the tree with the cut wrenches gives S^T tau."""
    from test_closed_chains import spatial_loop
    axes = {"R": {"axis": [1, -2, 0.5]}, "P": {"axis": [1, -2, 0.5]},
            "planar": {"axis": [1, -2, 0.5]}, "U": {"axis": "z", "axis_b": "x"}}
    chain = spatial_loop(cut_type, n_joints, 7, **axes.get(cut_type, {}))[0]
    evaluator = LoopEvaluator(chain.model)
    rng = np.random.default_rng(3)
    for dx in (0.05, 0.1):
        x = chain.assembled[chain.independent] + dx
        xd, xdd = rng.uniform(-1, 1, 1), rng.uniform(-1, 1, 1)
        out = evaluator(x, xd, xdd)
        ref = cc.inverse_dynamics(chain, x, xd, xdd)
        expected = np.zeros(chain.model.n_coordinates)
        expected[chain.independent] = ref.effort
        np.testing.assert_allclose(out.loads.coordinate_effort, expected, rtol=0,
                                   atol=1e-9 * scale(ref.tree_effort))
    if cut_type in ("P", "planar"):
        q = out.state.q
        fk = forward_kinematics(chain.model, q)
        cut = chain.model.loops.cuts[0]
        gap = fk.to_world(cut.body_b, cut.origin_b) - fk.to_world(cut.body_a, cut.origin_a)
        assert np.linalg.norm(gap) > 1e-3            # the case the point matters for


def test_a_jump_of_the_inputs_keeps_the_assembly_branch():
    """The attack's sequence: (50, 55) deg, one sample at (64, 41), (50, 55) again. A single
    warm start from (64, 41) converged on the mirrored elbows (efforts [9.70, 10.35] instead
    of [43.36, -28.64]) and the node stayed there; continuation follows the branch."""
    evaluator = LoopEvaluator(load_model(FIVE_BAR))
    zero = np.zeros(2)
    a, b = np.radians([50.0, 55.0]), np.radians([64.0, 41.0])
    first = evaluator(a, zero, zero).efforts.copy()
    solution = evaluator.last_solution.copy()
    at_b = evaluator(b, zero, zero).efforts.copy()
    walked = LoopEvaluator(load_model(FIVE_BAR))          # (64, 41) reached in 1-deg steps
    for s in np.linspace(0.0, 1.0, 15):
        walked(a + s * (b - a), zero, zero)
    np.testing.assert_allclose(at_b, walked.result.efforts, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(evaluator(a, zero, zero).efforts, first, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(evaluator.last_solution, solution, atol=1e-9)


def test_crossing_a_singular_configuration_is_refused_and_the_branch_kept():
    """Both cranks turned together pass the stretched-elbows singular configuration at
    180 deg: a step from 178 to 182 deg landed on the other branch (every row satisfied, no
    sample near enough for the condition limit), and the same crank angles then gave other
    loads (200 deg against -160 deg). Refused instead, and the branch is kept: back at 178
    deg the loads are those of before."""
    evaluator = LoopEvaluator(load_model(FIVE_BAR))
    zero = np.zeros(2)
    for degrees in range(30, 179, 2):
        evaluator(np.radians([degrees, degrees]), zero, zero)
    before = evaluator.result.efforts.copy()
    with pytest.raises(LoopSingularityError, match="crossed a singular configuration"):
        evaluator(np.radians([182.0, 182.0]), zero, zero)
    np.testing.assert_allclose(evaluator(np.radians([178.0, 178.0]), zero, zero).efforts,
                               before, rtol=1e-9, atol=1e-9)
    other = LoopEvaluator(load_model(FIVE_BAR))
    with pytest.raises(LoopSingularityError, match="crossed a singular configuration"):
        other(np.radians([200.0, 200.0]), zero, zero)


def test_a_far_glitch_does_not_lock_the_irsbot2_out():
    """One input 0.57 and 0.71 rad away, then the real position again: it was refused as
    loop_singular from then on (the warm start left on a configuration it could not leave)."""
    evaluator = LoopEvaluator(load_model(IRSBOT2))
    x0 = evaluator.chain.assembled[evaluator.chain.independent]
    zero = np.zeros(len(x0))
    before = evaluator(x0, zero, zero).efforts.copy()
    try:
        evaluator(x0 + np.array([0.57, 0.71]), zero, zero)
    except LoopSingularityError:
        pass                                 # refused is fine; what follows must not be
    np.testing.assert_allclose(evaluator(x0, zero, zero).efforts, before, rtol=1e-9, atol=1e-9)


def test_a_last_solution_the_loops_cannot_leave_falls_back_to_the_assembled_branch(five_bar):
    x, xd, xdd = path(five_bar, 2)
    expected = LoopEvaluator(load_model(FIVE_BAR))(x, xd, xdd).efforts.copy()
    five_bar.last_solution = np.full_like(five_bar.last_solution, 1e6)  # Newton cannot start here
    np.testing.assert_allclose(five_bar(x, xd, xdd).efforts, expected, rtol=1e-9, atol=1e-9)


def test_a_singular_input_far_from_the_assembly_keeps_the_warm_start():
    """max_jump 0.5, the five-bar walked to (85, 95) deg, 1.0 rad from its assembled
    configuration; one input where the loop cannot close, (85, 105) deg. The attack: the
    warm start was reset to the assembled configuration, so the gravity compensation at the
    last valid input and the valid inputs after it became jumps (zeros published, loop_jump
    rejections). Now both equal those of an evaluator that never saw the glitch, and the
    closed chain's (dynamics/closed_chain.py, not this evaluator)."""
    bounded = LoopEvaluator(load_model(FIVE_BAR), max_jump=0.5)
    x0, zero = bounded.chain.assembled[bounded.chain.independent], np.zeros(2)
    goal = np.radians([85.0, 95.0])
    for s in np.linspace(0.0, 1.0, 20):
        bounded(x0 + s * (goal - x0), zero, zero)
    solution = bounded.last_solution.copy()
    with pytest.raises(LoopSingularityError, match="Newton-Raphson stopped") as raised:
        bounded(np.radians([85.0, 105.0]), zero, zero)
    assert not isinstance(raised.value, LoopJumpError)
    np.testing.assert_array_equal(bounded.last_solution, solution)
    gravity = cc.inverse_dynamics(bounded.chain, goal, zero, zero).effort
    np.testing.assert_allclose(bounded.gravity(goal).efforts, gravity, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(bounded(goal, zero, zero).efforts, gravity, rtol=1e-9, atol=1e-9)


def test_gravity_between_far_inputs_neither_undoes_nor_forgets_their_following():
    """max_jump 0.5: a valid input, then an input 1.2 rad away repeated, with the node's
    watchdog call (``gravity`` at the last valid input) between every two. The attack: each
    gravity call walked the warm start back to the old pose and forgot the far input, so a
    robot that moved, reporting slower than the watchdog, was never reached. Now the gravity
    is the last valid input's throughout and the far input is evaluated at the fourth
    report (remembered, followed 0.5, followed 0.5, then 0.2 away), equal to the unbounded
    evaluator's result."""
    model = load_model(FIVE_BAR)
    bounded, zero = LoopEvaluator(model, max_jump=0.5), np.zeros(2)
    x0 = bounded.chain.assembled[bounded.chain.independent]
    good = np.radians([50.0, 55.0])
    for s in np.linspace(0.0, 1.0, 10):
        bounded(x0 + s * (good - x0), zero, zero)
    gravity = cc.inverse_dynamics(bounded.chain, good, zero, zero).effort
    far = good + 1.2
    outcomes = ("not followed", "followed 0.5 toward them", "followed 0.5 toward them")
    for outcome in outcomes:
        with pytest.raises(LoopJumpError, match=outcome):
            bounded(far, zero, zero)
        np.testing.assert_allclose(bounded.gravity(good).efforts, gravity, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(bounded(far, zero, zero).efforts,
                               LoopEvaluator(model)(far, zero, zero).efforts, rtol=1e-9, atol=1e-9)
    # the gravity of a position beyond max_jump from the last evaluated input is refused,
    # and changes nothing either
    solution = bounded.last_solution.copy()
    with pytest.raises(LoopJumpError, match="gravity compensation is solved only within"):
        bounded.gravity(good)
    np.testing.assert_array_equal(bounded.last_solution, solution)


def test_gravity_starts_from_the_last_input_the_caller_kept():
    """The node refuses some evaluated inputs (a dependent coordinate beyond its limits);
    refused in a row, each within max_jump of the one before, they walked the start of the
    gravity compensation more than max_jump from the last valid input (the read of the
    change): ``refuse_last`` puts it back, the warm start stays with the inputs."""
    bounded, zero = LoopEvaluator(load_model(FIVE_BAR), max_jump=0.5), np.zeros(2)
    x0 = bounded.chain.assembled[bounded.chain.independent] + 0.05
    bounded(x0, zero, zero)
    for step in (0.3, 0.6, 0.9):
        bounded(x0 + step, zero, zero)
        bounded.refuse_last()
    gravity = cc.inverse_dynamics(bounded.chain, x0, zero, zero).effort
    np.testing.assert_allclose(bounded.gravity(x0).efforts, gravity, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(bounded.last_solution[bounded.chain.independent], x0 + 0.9,
                               atol=1e-12)


def test_a_jump_beyond_the_followed_length_is_refused(five_bar):
    x, xd, xdd = path(five_bar, 0)
    five_bar(x, xd, xdd)
    with pytest.raises(LoopSingularityError, match="not followed"):
        five_bar(x + 100.0, xd, xdd)


def test_a_far_input_costs_a_bounded_continuation_and_is_reached_over_inputs(monkeypatch):
    """max_jump 0.3 rad: an input 1.2 rad away is refused as a jump; repeated (a robot that
    really is there), each call moves the solution 0.3 rad toward it with at most
    0.3 / MAX_STEP + 1 Newton solves (the unbounded evaluator's one call took 1.2 / MAX_STEP),
    and the fifth is evaluated: equal to the unbounded evaluator's result on the same branch."""
    from charmie_dynamics.evaluators.loop_evaluator import LoopJumpError
    from charmie_dynamics.mechanisms.closed_chains import embedding
    bounded = LoopEvaluator(load_model(FIVE_BAR), max_jump=0.3)
    x0 = bounded.chain.assembled[bounded.chain.independent]
    zero = np.zeros(2)
    target = x0 + np.array([1.2, 0.6])
    solves = []
    newton = embedding.ClosedChain._newton
    monkeypatch.setattr(embedding.ClosedChain, "_newton",
                        lambda self, *a, **k: solves.append(1) or newton(self, *a, **k))
    for _ in range(4):
        solves.clear()
        with pytest.raises(LoopJumpError, match="a jump beyond max_loop_jump 0.3"):
            bounded(target, zero, zero)
        assert len(solves) <= len(bounded.chain.groups) * (round(0.3 / embedding.MAX_STEP) + 1)
    solves.clear()
    got = bounded(target, zero, zero).efforts.copy()
    assert len(solves) <= len(bounded.chain.groups) * (round(0.3 / embedding.MAX_STEP) + 2)
    expected = LoopEvaluator(load_model(FIVE_BAR))(target, zero, zero).efforts
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_a_wrapped_encoder_is_the_same_configuration():
    """An unlimited revolute input 2 pi away (an encoder wrapping at +-pi) is the state
    itself for the bounded evaluator, not a jump."""
    bounded = LoopEvaluator(load_model(FIVE_BAR), max_jump=0.3)
    assert bounded._wraps.all()                      # the five-bar's base joints: no limits
    x0 = bounded.chain.assembled[bounded.chain.independent] + 0.05
    zero = np.zeros(2)
    at_x0 = bounded(x0, zero, zero).efforts.copy()
    np.testing.assert_allclose(bounded(x0 + np.array([2 * np.pi, -2 * np.pi]), zero, zero).efforts,
                               at_x0, rtol=1e-9, atol=1e-9)


def test_a_lone_far_glitch_moves_nothing():
    """One far input (or far inputs that disagree) leaves the solution where it was: the
    valid input after it is evaluated as if the glitch had not come (the attack: four far
    samples dragged the solution 2 rad away, and the valid inputs after them were refused;
    a solution moved max_jump away was refused by rounding, 0.50000000000000044 > 0.5)."""
    from charmie_dynamics.evaluators.loop_evaluator import LoopJumpError
    bounded = LoopEvaluator(load_model(FIVE_BAR), max_jump=0.5)
    x0 = bounded.chain.assembled[bounded.chain.independent] + 0.05
    zero = np.zeros(2)
    expected = bounded(x0, zero, zero).efforts.copy()
    solution = bounded.last_solution.copy()
    for far in (np.array([2.0, 0.0]), np.array([-2.0, 1.0]), np.array([0.0, -2.0])):
        with pytest.raises(LoopJumpError, match="not followed"):
            bounded(x0 + far, zero, zero)
        np.testing.assert_array_equal(bounded.last_solution, solution)
    np.testing.assert_allclose(bounded(x0, zero, zero).efforts, expected, rtol=1e-9, atol=1e-9)
    # exactly max_jump away, to rounding, is not a jump
    step = np.array([0.5, 0.0]) * (1 + 1e-12)
    bounded(x0 + step, zero, zero)


@pytest.mark.parametrize("max_jump", [math.inf, 0.5])
def test_a_non_finite_input_is_named_not_taken_for_a_singularity(max_jump):
    """A NaN or infinite position, rate or acceleration: NonFiniteInput (a NonFiniteLoads)
    naming the value (the attack: a NaN rate read "non-finite constraint values (the state
    ran through a singular configuration)", a NaN acceleration "inputs too large"); in a
    path, the sample too. The next valid input is evaluated as before."""
    evaluator = LoopEvaluator(load_model(FIVE_BAR), max_jump=max_jump)
    x, xd, xdd = path(evaluator, 1)
    expected = evaluator(x, xd, xdd).efforts.copy()
    for k, kind in enumerate(("position", "rate", "acceleration")):
        for bad in (math.nan, math.inf):
            given = [x.copy(), xd.copy(), xdd.copy()]
            given[k][1] = bad
            with pytest.raises(NonFiniteInput, match=rf"^five_bar: non-finite input: {kind} "
                                                     rf"theta1_2 = {bad}; expected finite"):
                evaluator(*given)
            np.testing.assert_array_equal(evaluator(x, xd, xdd).efforts, expected)
    # far from the assembled configuration (more than max_jump), the warm start is kept too
    # (a NaN rate reset it to the assembled configuration: the next inputs became jumps)
    far = x + np.radians([40.0, 30.0])
    for step in np.linspace(0.0, 1.0, 9):
        evaluator(x + step * (far - x), xd, xdd)
    expected = evaluator(far, xd, xdd).efforts.copy()
    with pytest.raises(NonFiniteInput):
        evaluator(far, np.array([math.nan, 0.0]), xdd)
    np.testing.assert_array_equal(evaluator(far, xd, xdd).efforts, expected)
    if max_jump == math.inf:
        xs, xds, xdds = (np.stack([a, a]) for a in (x, xd, xdd))
        xds[1, 0] = math.nan
        with pytest.raises(NonFiniteInput, match="sample 1: non-finite input: rate theta1_1"):
            evaluator.path(xs, xds, xdds)


def test_a_huge_jump_names_max_loop_jump_and_the_coordinate():
    """An input 1e18 away: a jump beyond max_loop_jump, naming the coordinate, its value as
    given and the distance modulo 2 pi (the five-bar's base joints wrap; the message said
    only "moved by 2.97", the wrapped distance)."""
    evaluator = LoopEvaluator(load_model(FIVE_BAR), max_jump=0.5)
    x, xd, xdd = path(evaluator, 1)
    evaluator(x, xd, xdd)
    with pytest.raises(LoopJumpError, match=r"^five_bar: a jump beyond max_loop_jump 0\.5 "
                                            r"\(rad or m\): theta1_1 = 1e\+18 lies [0-9.]+ from "
                                            r"the last solution [0-9.]+ \(modulo 2 pi\): not "
                                            r"followed"):
        evaluator(x + np.array([1e18, 0.0]), xd, xdd)


@pytest.mark.parametrize("value", [math.nan, -1.0, 0.0, 1e-300, 9.99e-7, "1", True])
def test_evaluator_for_refuses_a_max_loop_jump_below_its_floor(five_bar, value):
    """max_loop_jump NaN, negative, zero, below 1e-6 (1e-300 refused the evaluator's own
    first call) or not a number: MaxJumpError naming the argument and its range, for a tree
    as for a loop model (NaN was taken: every jump compared False, unbounded); inf, 1e-6
    and a positive number are taken."""
    for model in (five_bar.model, load_model(CHARMIE)):
        with pytest.raises(MaxJumpError, match=r"^max_loop_jump = .*, expected a number >= "
                                               r"1e-06 \(rad or m; inf: unbounded\)$"):
            evaluator_for(model, max_loop_jump=value)
    with pytest.raises(MaxJumpError, match="^max_jump = "):
        LoopEvaluator(five_bar.model, max_jump=value)
    assert evaluator_for(five_bar.model, max_loop_jump=0.25).max_jump == 0.25
    assert LoopEvaluator(five_bar.model, max_jump=1e-6).max_jump == 1e-6
