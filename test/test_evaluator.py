"""The evaluator (evaluators/evaluator.py): one call equals the separate core calls
(resolve_state, inverse_dynamics, forward kinematics, auxiliary_segments) to 1e-12, writes
into the same buffers every call, and refuses what the core refuses, with the core's errors."""
import numpy as np
import pytest

from charmie_dynamics import (ActuatorRangeError, auxiliary_segments, forward_kinematics,
                              indirect_joints, inputs_from_dict, load_model, resolve_state)
from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.evaluators.evaluator import Evaluator, NonFiniteLoads
from charmie_dynamics.model.model import JointType
from charmie_dynamics.model.rotations import quaternion_matrix
from conftest import EXAMPLES

TOL = 1e-12


@pytest.fixture(scope="module")
def evaluator(charmie):
    return Evaluator(charmie)


def random_inputs(model, rng):
    """Positions within the actuators' strokes, any velocities and accelerations."""
    x, _, _ = inputs_from_dict(model)
    n = len(x)
    x = x + rng.uniform(-0.5, 0.5, n)
    for joint in indirect_joints(model):
        lo, hi = joint.stroke
        x[joint.coordinate] = rng.uniform(lo, hi)
    return x, rng.normal(0.0, 0.5, n), rng.normal(0.0, 2.0, n)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=TOL * max(1.0, float(np.max(np.abs(b)))))


def rotation(xyzw):
    return np.array([quaternion_matrix(*q) for q in xyzw])


@pytest.mark.parametrize("gravity_only", [False, True])
def test_equals_the_separate_core_calls(charmie, evaluator, gravity_only):
    rng = np.random.default_rng(12)
    for _ in range(5):
        x, xd, xdd = random_inputs(charmie, rng)
        result = evaluator(x, xd, xdd, gravity_only=gravity_only)
        state = resolve_state(charmie, x, xd, xdd)
        loads = inverse_dynamics(charmie, state, gravity_only=gravity_only)
        for name in ("q", "qd", "qdd", "actuator_length", "actuator_velocity",
                     "actuator_acceleration", "actuator_jacobian"):
            close(getattr(result.state, name), getattr(state, name))
        close(result.loads.coordinate_effort, loads.coordinate_effort)
        close(result.actuator_force, loads.actuator_force)
        close(result.loads.joint_wrenches, loads.joint_wrenches)
        close(result.loads.spring_tension, loads.spring_tension)
        # efforts in input order: the actuators' axial forces in their inputs' slots
        slots = [charmie.input_names.index(a) for a in charmie.actuator_names]
        expected = loads.coordinate_effort.copy()
        expected[slots] = loads.actuator_force
        close(result.efforts, expected)


def test_tf_poses_equal_forward_kinematics_and_auxiliary_segments(charmie, evaluator):
    rng = np.random.default_rng(3)
    x, xd, xdd = random_inputs(charmie, rng)
    result = evaluator(x, xd, xdd)
    placements = forward_kinematics(charmie, resolve_state(charmie, x, xd, xdd).q)
    segments = auxiliary_segments(charmie, placements)
    moving = [i for i in range(charmie.n_bodies) if charmie.joint_type[i] != JointType.FIXED]
    assert len(result.translations) == len(moving) + len(segments) == len(result.quaternions)
    nm = len(moving)
    close(result.translations[:nm], placements.origin_parent[moving])
    close(rotation(result.quaternions[:nm]), placements.rotation_parent[moving])
    for k, seg in enumerate(segments):
        R = placements.rotation_world[seg.body]
        close(result.translations[nm + k], R.T @ (seg.start - placements.origin_world[seg.body]))
        close(rotation(result.quaternions[nm + k: nm + k + 1])[0], R.T @ seg.rotation)
    np.testing.assert_allclose(np.linalg.norm(result.quaternions, axis=1), 1.0, atol=1e-14)
    names = charmie.body_names
    frames = evaluator.frames
    assert frames.children == tuple(names[i] for i in moving) + tuple(s.name for s in segments)
    assert frames.parents[:nm] == tuple(
        None if charmie.parent[i] < 0 else names[charmie.parent[i]] for i in moving)
    assert frames.parents[nm:] == tuple(names[s.body] for s in segments)


def test_gravity_is_the_watchdogs_fallback(charmie, evaluator):
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(5))
    result = evaluator.gravity(x)
    zeros = np.zeros_like(x)
    loads = inverse_dynamics(charmie, resolve_state(charmie, x, zeros, zeros), gravity_only=True)
    close(result.loads.coordinate_effort, loads.coordinate_effort)
    close(result.actuator_force, loads.actuator_force)
    # gravity_only keeps the state's rates; the loads are those at rest
    result = evaluator(x, xd, xdd, gravity_only=True)
    close(result.state.qd, resolve_state(charmie, x, xd, xdd).qd)
    close(result.loads.coordinate_effort, loads.coordinate_effort)


def test_every_call_writes_into_the_same_buffers(charmie, evaluator):
    rng = np.random.default_rng(7)
    first = evaluator(*random_inputs(charmie, rng))
    arrays = [first.efforts, first.actuator_force, first.translations, first.quaternions,
              first.state.q, first.state.qd, first.loads.coordinate_effort,
              first.loads.joint_wrenches, first.loads.placements.rotations]
    before = [a.copy() for a in arrays]
    second = evaluator(*random_inputs(charmie, rng))
    third = evaluator.gravity(random_inputs(charmie, rng)[0])
    again = [second.efforts, second.actuator_force, second.translations, second.quaternions,
             second.state.q, second.state.qd, second.loads.coordinate_effort,
             second.loads.joint_wrenches, second.loads.placements.rotations]
    for a, b, c in zip(arrays, again, [third.efforts, third.actuator_force, third.translations,
                                       third.quaternions, third.state.q, third.state.qd,
                                       third.loads.coordinate_effort,
                                       third.loads.joint_wrenches,
                                       third.loads.placements.rotations]):
        assert a is b is c
    # ... and the buffers hold the newest values (not a copy taken once)
    assert any(not np.array_equal(a, b) for a, b in zip(before, arrays))


def test_inputs_of_any_layout_meet_the_fixed_entry(charmie, evaluator):
    """The evaluator calls its kernel's entry point for the types of its first call (no
    dispatch): inputs that are lists, read-only, strided or big-endian are made
    contiguous float64 first and give, bit for bit, what contiguous float64 inputs give."""
    rng = np.random.default_rng(3)
    x, xd, xdd = random_inputs(charmie, rng)
    expected = evaluator(x, xd, xdd).efforts.copy()
    strided = np.empty((len(x), 2))
    strided[:, 0] = xd
    read_only = xdd.copy()
    read_only.flags.writeable = False
    for args in ([list(x), strided[:, 0], read_only],
                 [x.astype(">f8"), np.asfortranarray(xd), np.broadcast_to(xdd, (1, len(x)))[0]]):
        np.testing.assert_array_equal(evaluator(*args).efforts, expected)


def test_refuses_with_the_cores_errors(charmie, evaluator):
    x, xd, xdd = inputs_from_dict(charmie)
    joint = indirect_joints(charmie)[0]
    bad = x.copy()
    bad[joint.coordinate] = joint.stroke[1] + 0.01
    with pytest.raises(ActuatorRangeError, match=joint.actuator):
        evaluator(bad, xd, xdd)
    bad = x.copy()
    bad[joint.coordinate] = np.nan
    with pytest.raises(ActuatorRangeError):
        evaluator(bad, xd, xdd)
    huge = np.where(np.arange(len(x)) == joint.coordinate, 0.0, 1e200)
    with pytest.raises(NonFiniteLoads, match="not finite"):
        evaluator(x, huge, xdd)
    with pytest.raises(ValueError, match="expected"):
        evaluator(x[:-1], xd, xdd)
    # a refused input leaves the evaluator usable
    result = evaluator(x, xd, xdd)
    close(result.loads.coordinate_effort,
          inverse_dynamics(charmie, resolve_state(charmie, x, xd, xdd)).coordinate_effort)


def test_a_model_without_mechanisms():
    """PUMA (seed 002): no actuators, springs or balancers, so no auxiliary poses."""
    model = load_model(EXAMPLES["puma"])
    evaluator = Evaluator(model)
    rng = np.random.default_rng(1)
    x, xd, xdd = (rng.normal(size=model.n_coordinates) for _ in range(3))
    result = evaluator(x, xd, xdd)
    close(result.efforts, inverse_dynamics(model, resolve_state(model, x, xd, xdd)).coordinate_effort)
    assert len(result.quaternions) == len(evaluator.frames.children) == sum(
        t != JointType.FIXED for t in model.joint_type)
