"""The compiled kernels and their plain-Python fallback are one implementation: the same
functions run with numba disabled (CHARMIE_DYNAMICS_JIT=0) give the same results."""
import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from charmie_dynamics import bundled_model, jit, load_model, resolve_state
from charmie_dynamics.dynamics import Payload, inverse_dynamics
from charmie_dynamics.dynamics.inverse import InverseDynamicsData
from charmie_dynamics.kinematics import JointSpaceState, StateError

SCRIPT = """
import json, sys
import numpy as np
from charmie_dynamics import bundled_model, jit, load_model, resolve_state
from charmie_dynamics.dynamics import Payload, inverse_dynamics
x, xd, xdd = (np.array(v) for v in json.loads(sys.stdin.read()))
model = load_model(bundled_model())
loads = inverse_dynamics(model, resolve_state(model, x, xd, xdd),
                         payloads=[Payload("body_12a.D12a", 0.7)])
print(json.dumps({"jit": jit.ENABLED, "effort": loads.coordinate_effort.tolist(),
                  "actuators": loads.actuator_force.tolist(),
                  "wrenches": loads.joint_wrenches.tolist(),
                  "origins": loads.placements.origin_world.tolist()}))
"""


def random_inputs(model, rng, n):
    x = rng.uniform(-1.0, 1.0, (n, model.n_coordinates))
    for a in model.actuators:
        x[:, model.input_names.index(a.name)] = rng.uniform(*a.stroke, n)
    return x, rng.normal(size=x.shape), rng.normal(size=x.shape)


@pytest.fixture(scope="module")
def charmie():
    return load_model(bundled_model())


def test_plain_python_fallback_equals_compiled(charmie):
    assert jit.ENABLED, "numba is a dependency: the tests run the compiled kernels"
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(7), 3)
    env = dict(os.environ, CHARMIE_DYNAMICS_JIT="0")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], input=json.dumps(
        [x.tolist(), xd.tolist(), xdd.tolist()]), env=env, capture_output=True, text=True,
        timeout=300, check=True)
    plain = json.loads(proc.stdout)
    assert plain["jit"] is False
    loads = inverse_dynamics(charmie, resolve_state(charmie, x, xd, xdd),
                             payloads=[Payload("body_12a.D12a", 0.7)])
    for key, ours in (("effort", loads.coordinate_effort), ("actuators", loads.actuator_force),
                      ("wrenches", loads.joint_wrenches),
                      ("origins", loads.placements.origin_world)):
        np.testing.assert_allclose(ours, plain[key], rtol=1e-12, atol=1e-9, err_msg=key)


def test_reused_data_equals_fresh_results(charmie):
    rng = np.random.default_rng(3)
    x, xd, xdd = random_inputs(charmie, rng, 4)
    data = InverseDynamicsData(charmie, (4,))
    state = resolve_state(charmie, x, xd, xdd)
    first = inverse_dynamics(charmie, state, data=data).coordinate_effort.copy()
    # a second batch through the same buffers, then the first again
    x2, xd2, xdd2 = random_inputs(charmie, rng, 4)
    other = inverse_dynamics(charmie, resolve_state(charmie, x2, xd2, xdd2), data=data)
    np.testing.assert_allclose(other.coordinate_effort, inverse_dynamics(
        charmie, resolve_state(charmie, x2, xd2, xdd2)).coordinate_effort, rtol=0, atol=0)
    again = inverse_dynamics(charmie, resolve_state(charmie, x, xd, xdd, out=state), data=data)
    np.testing.assert_array_equal(again.coordinate_effort, first)


def test_data_of_another_shape_is_refused(charmie):
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(1), 2)
    with pytest.raises(ValueError, match="sample shape"):
        inverse_dynamics(charmie, resolve_state(charmie, x, xd, xdd),
                         data=InverseDynamicsData(charmie, (3,)))


def test_keep_efforts_equals_the_full_results(charmie):
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(11), 5)
    state = resolve_state(charmie, x, xd, xdd)
    full = inverse_dynamics(charmie, state, payloads=[Payload("body_12a.D12a", 0.4)])
    lean = inverse_dynamics(charmie, state, payloads=[Payload("body_12a.D12a", 0.4)],
                            data=InverseDynamicsData(charmie, (5,), keep="efforts"))
    for name in ("coordinate_effort", "actuator_force", "spring_tension"):
        np.testing.assert_array_equal(getattr(lean, name), getattr(full, name), err_msg=name)
    np.testing.assert_array_equal(lean.loops.buffer, full.loops.buffer)
    assert lean.placements is None and lean.joint_wrenches is None


def test_quaternions_match_scipy_for_every_branch():
    from scipy.spatial.transform import Rotation

    from charmie_dynamics.model.rotations import quaternions
    R = Rotation.random(500, random_state=2).as_matrix()
    # Shepperd's four branches: trace largest, then each diagonal entry largest
    special = np.stack([np.eye(3), np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]),
                        np.diag([-1.0, -1.0, 1.0])])
    R = np.concatenate([R, special])
    q = quaternions(R)
    ref = Rotation.from_matrix(R).as_quat()               # (x, y, z, w)
    sign = np.where(np.sum(q * ref, axis=-1) < 0, -1.0, 1.0)[:, None]
    np.testing.assert_allclose(q, sign * ref, atol=1e-14)


def test_quaternion_matrix_matches_scipy():
    from scipy.spatial.transform import Rotation

    from charmie_dynamics.model.rotations import quaternion_matrix
    q = Rotation.random(50, random_state=4).as_quat()        # (x, y, z, w)
    for k, R in enumerate(Rotation.from_quat(q).as_matrix()):
        np.testing.assert_allclose(quaternion_matrix(*q[k]), R, atol=1e-14)


def test_turned_poses_match_scipy():
    """rotations.turn_poses (the node's REP 103 base_link on /tf): the poses whose parent is
    the turned frame premultiplied by the turn, those whose child it is postmultiplied by
    its transpose, the others untouched; against SciPy's rotations."""
    from scipy.spatial.transform import Rotation

    from charmie_dynamics.model.rotations import turn_poses
    q = Rotation.random(40, random_state=4).as_quat()       # (x, y, z, w)
    t = np.random.default_rng(4).normal(size=(40, 3))
    turn = Rotation.random(random_state=5).as_matrix()
    parents, children = np.array([0, 7, 39]), np.array([3, 8])
    turned_q, turned_t = q.copy(), t.copy()
    turn_poses(turn, turned_t, turned_q, parents, children)
    R, expected_t = Rotation.from_quat(q).as_matrix(), t.copy()
    R[parents] = turn @ R[parents]
    expected_t[parents] = t[parents] @ turn.T
    R[children] = R[children] @ turn.T
    np.testing.assert_allclose(Rotation.from_quat(turned_q).as_matrix(), R, atol=1e-14)
    np.testing.assert_allclose(turned_t, expected_t, atol=1e-14)
    untouched = np.setdiff1d(np.arange(40), np.r_[parents, children])
    np.testing.assert_array_equal(turned_q[untouched], q[untouched])
    np.testing.assert_allclose(np.linalg.norm(turned_q, axis=1), 1.0, atol=1e-15)


def test_shapes_the_kernels_cannot_take_are_refused(charmie):
    """numba does not check bounds: wrong shapes must be refused before the kernels."""
    from charmie_dynamics import forward_kinematics, load_model
    from charmie_dynamics.mechanisms.auxiliary import auxiliary_segments
    from conftest import EXAMPLES
    with pytest.raises(ValueError, match="expected"):
        forward_kinematics(charmie, np.zeros(3))
    with pytest.raises(ValueError, match="bodies"):
        auxiliary_segments(charmie, forward_kinematics(load_model(EXAMPLES["puma"]), np.zeros(6)))
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(5), 1)
    state = resolve_state(charmie, x[0], xd[0], xdd[0])
    short = JointSpaceState(state.q, state.qd, state.qdd, state.actuator_length[:1],
                            state.actuator_velocity, state.actuator_acceleration,
                            state.actuator_jacobian)
    with pytest.raises(StateError, match="actuator_length"):
        resolve_state(charmie, x[0], xd[0], xdd[0], out=short)


def test_copied_state_is_written_not_its_stale_views(charmie):
    import copy
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(6), 2)
    state = resolve_state(charmie, x[0], xd[0], xdd[0])
    inverse_dynamics(charmie, state)                     # caches the kernel views on the state
    twin = copy.deepcopy(state)
    resolve_state(charmie, x[1], xd[1], xdd[1], out=twin)
    np.testing.assert_array_equal(twin.q, resolve_state(charmie, x[1], xd[1], xdd[1]).q)


def test_first_bad_actuator_is_named(charmie):
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(8), 1)
    for name in ("act4", "act5"):
        x[0, charmie.input_names.index(name)] = 9.0
    with pytest.raises(ValueError, match="act4"):
        resolve_state(charmie, x, xd, xdd)


STATE_FIELDS = ("q", "qd", "qdd", "actuator_length", "actuator_velocity",
                "actuator_acceleration", "actuator_jacobian")


def _loads_arrays(loads):
    return [loads.coordinate_effort, loads.actuator_force, loads.spring_tension,
            loads.joint_wrenches, loads.applied, loads.hanger_force, loads.placements.origins,
            loads.placements.rotations, loads.motion.buffer, loads.tree.buffer]


def _free_flyer_inputs(rng):
    from test_free_flyer import floating_model
    from test_urdf_import import random_states
    model = floating_model(0)
    return model, tuple(a[:3] for a in random_states(model, rng))


@pytest.mark.parametrize("which", ["charmie", "free-flyer"])
@pytest.mark.parametrize("lead", [(), (3,)], ids=str)
def test_own_out_skips_the_checks_with_the_same_numbers(charmie, which, lead):
    """resolve_state's ``out`` of its own arrays (allocated by it, writable C-contiguous
    float64 by construction) goes to the kernel unchecked; a state of the caller's arrays
    takes every check. Both give the fresh call's numbers bit for bit, through
    inverse_dynamics with fresh and reused buffers, state after state."""
    rng = np.random.default_rng(11)
    model, inputs = (charmie, random_inputs(charmie, rng, 3)) if which == "charmie" else \
        _free_flyer_inputs(rng)
    pick = (lambda a, k: a[k]) if lead == () else (lambda a, k: np.roll(a, k, axis=0))
    own = resolve_state(model, *(pick(a, 2) for a in inputs))
    assert "_allocated" in own.__dict__
    foreign = JointSpaceState(*(np.empty_like(getattr(own, f)) for f in STATE_FIELDS))
    data = InverseDynamicsData(model, lead)
    for k in range(3):
        args = [pick(a, k) for a in inputs]
        fresh = resolve_state(model, *args)
        fresh_loads = inverse_dynamics(model, fresh)
        for out in (own, foreign):
            assert resolve_state(model, *args, out=out) is out
            for f in STATE_FIELDS:
                assert getattr(out, f).tobytes() == getattr(fresh, f).tobytes(), f
            for reused, new in zip(_loads_arrays(inverse_dynamics(model, out, data=data)),
                                   _loads_arrays(fresh_loads)):
                assert reused.tobytes() == new.tobytes()


def test_foreign_out_is_still_checked(charmie):
    """Only the arrays resolve_state made skip the checks: a state of the caller's arrays, a
    state made for other sizes and a copy (which does not carry the record) are checked."""
    import copy
    import pickle
    x, xd, xdd = random_inputs(charmie, np.random.default_rng(12), 2)
    own = resolve_state(charmie, x[0], xd[0], xdd[0])
    frozen = np.array(own.qd)
    frozen.flags.writeable = False
    for bad, field in ((dataclasses.replace(own, qd=frozen), "qd"),
                       (dataclasses.replace(own, q=np.asfortranarray(own.q)[None, :]), "q"),
                       (dataclasses.replace(own, qdd=own.qdd.astype(np.float32)), "qdd")):
        assert "_allocated" not in bad.__dict__
        with pytest.raises(StateError, match=f"out.{field}: expected a writable C-contiguous"):
            resolve_state(charmie, x[0], xd[0], xdd[0], out=bad)
    batch = resolve_state(charmie, x, xd, xdd)              # its own, for 2 samples
    with pytest.raises(StateError, match="out.q: expected .* of shape"):
        resolve_state(charmie, x[0], xd[0], xdd[0], out=batch)
    for twin in (copy.copy(own), copy.deepcopy(own), pickle.loads(pickle.dumps(own))):
        assert "_allocated" not in twin.__dict__ and "_samples" not in twin.__dict__
        assert resolve_state(charmie, x[1], xd[1], xdd[1], out=twin) is twin
        np.testing.assert_array_equal(twin.q, resolve_state(charmie, x[1], xd[1], xdd[1]).q)
