"""The model's derived constants held by it (``model.compiled``) and a Data object for every
algorithm (Pinocchio's ``algorithm(model, data, ...)``): with ``data=`` each public function
writes into the data's buffers and returns them, the very same objects at every call, equal
exactly to a call without data; data of another model or sample shape is refused before a
kernel runs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

from charmie_dynamics import JointSpaceState, load_model, resolve_state
from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.dynamics.aba import ArticulatedBodyData, articulated_body_solve
from charmie_dynamics.dynamics.actuation import actuator_space
from charmie_dynamics.dynamics.forward import ForwardDynamicsData, forward_dynamics
from charmie_dynamics.dynamics.inverse import InverseDynamicsData
from charmie_dynamics.dynamics.mass_matrix import (BiasForcesData, MassMatrixData, bias_forces,
                                                   mass_matrix)
from charmie_dynamics.kinematics.forward import ForwardKinematicsData, forward_kinematics
from charmie_dynamics.kinematics.motion import MotionData, body_motion
from charmie_dynamics.mechanisms.auxiliary import SegmentsData, auxiliary_segments
from charmie_dynamics.model import model_from_dict
from charmie_dynamics.model.actuator_geometry import indirect_joints
from charmie_dynamics.simulation.integrate import (SimulationData, StepData, simulate, step,
                                                   stop_at_limits)
from conftest import CHARMIE

LEADS = [(), (3,), (2, 2)]


def _case(model, lead: tuple[int, ...], seed: int) -> dict[str, Any]:
    """A state of ``model`` with sample shape ``lead``: positions inside the strokes."""
    rng = np.random.default_rng(seed)
    shape = lead + (model.n_coordinates,)
    x = rng.uniform(-1.0, 1.0, shape)
    for a in model.actuators:
        x[..., model.input_names.index(a.name)] = rng.uniform(*a.stroke, lead)
    state = resolve_state(model, x, rng.normal(size=shape), rng.normal(size=shape))
    tau = rng.normal(size=shape)
    return {"state": state, "q": state.q, "qd": state.qd, "qdd": state.qdd, "tau": tau,
            "tau_fn": lambda t, q, qd: tau * (1.0 + t),
            "placements": forward_kinematics(model, state.q)}


STEPS = 3            # of the simulations below
DT = 2e-3            # s


@dataclass(frozen=True)
class Algorithm:
    name: str
    data: Callable[..., Any]                     # (model, lead) -> data
    call: Callable[..., Any]                     # (model, case, data or None) -> result
    arrays: Callable[[Any], list[np.ndarray]]    # the result's arrays


ALGORITHMS = [
    Algorithm("forward_kinematics", ForwardKinematicsData,
              lambda m, c, d: forward_kinematics(m, c["q"], data=d),
              lambda r: [r.joint_values, r.rotations, r.origins]),
    Algorithm("body_motion", MotionData,
              lambda m, c, d: body_motion(m, c["placements"], c["qd"], c["qdd"],
                                          base_acceleration=-m.gravity, data=d),
              lambda r: [r.buffer]),
    Algorithm("auxiliary_segments", SegmentsData,
              lambda m, c, d: auxiliary_segments(m, c["placements"], data=d),
              lambda r: [a for s in r for a in (s.start, s.end, s.length, s.rotation)]),
    Algorithm("inverse_dynamics", InverseDynamicsData,
              lambda m, c, d: inverse_dynamics(m, c["state"], data=d),
              lambda r: [r.coordinate_effort, r.actuator_force, r.joint_wrenches,
                         r.spring_tension, r.motion.buffer, r.placements.origins]),
    Algorithm("mass_matrix", MassMatrixData,
              lambda m, c, d: mass_matrix(m, c["q"], data=d), lambda r: [r]),
    Algorithm("mass_matrix(placements)", MassMatrixData,
              lambda m, c, d: mass_matrix(m, c["q"], placements=c["placements"], data=d),
              lambda r: [r]),
    Algorithm("articulated_body_solve", ArticulatedBodyData,
              lambda m, c, d: articulated_body_solve(m, c["placements"], c["tau"], data=d),
              lambda r: [r]),
    Algorithm("forward_dynamics(cholesky)", ForwardDynamicsData,
              lambda m, c, d: forward_dynamics(m, c["q"], c["qd"], c["tau"], data=d),
              lambda r: [r]),
    Algorithm("forward_dynamics(aba)", ForwardDynamicsData,
              lambda m, c, d: forward_dynamics(m, c["q"], c["qd"], c["tau"], method="aba",
                                               data=d),
              lambda r: [r]),
    Algorithm("bias_forces", BiasForcesData,
              lambda m, c, d: bias_forces(m, c["q"], c["qd"], data=d), lambda r: [r]),
    # the random states leave CHARMIE's joint limits: the stops clip them and stop rates
    Algorithm("stop_at_limits", StepData,
              lambda m, c, d: stop_at_limits(m, c["q"], 10.0 * c["qd"], data=d), list),
    Algorithm("step(rk4)", StepData,
              lambda m, c, d: step(m, 0.1, c["q"], c["qd"], c["tau_fn"], DT, data=d), list),
    Algorithm("step(euler, aba, no limits)", StepData,
              lambda m, c, d: step(m, 0.1, c["q"], c["qd"], c["tau_fn"], DT, "euler",
                                   dynamics="aba", limits=False, data=d), list),
    # simulate checks that q0 is within the limits: these states are not
    Algorithm("simulate(rk4)", lambda m, lead: SimulationData(m, lead, steps=STEPS),
              lambda m, c, d: simulate(m, c["q"], c["qd"], c["tau_fn"], STEPS * DT, DT,
                                       limits=False, data=d), list),
    Algorithm("simulate(euler, aba)", lambda m, lead: SimulationData(m, lead, steps=STEPS),
              lambda m, c, d: simulate(m, c["q"], c["qd"], None, STEPS * DT, DT, "euler",
                                       dynamics="aba", limits=False, data=d), list),
]
IDS = [a.name for a in ALGORITHMS]


@pytest.mark.parametrize("lead", LEADS, ids=str)
@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=IDS)
def test_data_gives_the_fresh_results_in_its_own_buffers(charmie, algorithm, lead):
    data = algorithm.data(charmie, lead)
    first_case, second_case = _case(charmie, lead, 1), _case(charmie, lead, 2)
    first = algorithm.call(charmie, first_case, data)
    for ours, fresh in zip(algorithm.arrays(first),
                           algorithm.arrays(algorithm.call(charmie, first_case, None))):
        assert ours.shape == fresh.shape
        np.testing.assert_array_equal(ours, fresh)
    second = algorithm.call(charmie, second_case, data)
    assert second is first                       # the data's own result, no new one
    for ours, fresh in zip(algorithm.arrays(second),
                           algorithm.arrays(algorithm.call(charmie, second_case, None))):
        np.testing.assert_array_equal(ours, fresh)


def _laid_out(a: np.ndarray, how: str) -> np.ndarray:
    """The values of ``a`` in another memory layout (the kernels' types differ by it)."""
    if how == "read-only":
        out = a.copy()
        out.flags.writeable = False
        return out
    if how == "unaligned":                # float64 at an odd byte offset
        raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
        out = np.frombuffer(raw.data, dtype=float, count=a.size, offset=1).reshape(a.shape)
        out[...] = a
        return out
    wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],))   # "strided": every other entry
    wide[..., ::2] = a
    return wide[..., ::2]


@pytest.mark.parametrize("how", ["read-only", "unaligned", "strided"])
def test_inverse_dynamics_data_takes_arrays_of_any_layout_after_its_first_call(charmie, how):
    """One data for states whose arrays are laid out otherwise (the kernels' argument types
    differ by it): the fresh results, bit for bit, before and after a state laid out plainly.
    A guard for a data that would keep the kernel's entry point of its first call's types
    (numba's typing skipped: tried, 0.5 us of 7.8 us per call, not kept)."""
    data = InverseDynamicsData(charmie, (3,))
    plain, other = _case(charmie, (3,), 1), _case(charmie, (3,), 2)
    fields = ("q", "qd", "qdd", "actuator_length", "actuator_velocity", "actuator_acceleration",
              "actuator_jacobian")
    odd = JointSpaceState(
        *(_laid_out(getattr(other["state"], f), how) for f in fields))
    for case_state in (plain["state"], odd, plain["state"], odd):
        ours = inverse_dynamics(charmie, case_state, data=data)
        fresh = inverse_dynamics(charmie, case_state)
        for a, b in zip((ours.coordinate_effort, ours.actuator_force, ours.joint_wrenches),
                        (fresh.coordinate_effort, fresh.actuator_force, fresh.joint_wrenches)):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        inverse_dynamics(charmie, odd, data=data).coordinate_effort,
        inverse_dynamics(charmie, other["state"]).coordinate_effort)


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=IDS)
def test_data_of_another_model_or_shape_is_refused(charmie, algorithm):
    case = _case(charmie, (3,), 5)
    twin = load_model(CHARMIE)                   # equal parameters, another model
    with pytest.raises(ValueError, match="is for charmie with sample shape \\(3,\\), got"):
        algorithm.call(charmie, case, algorithm.data(twin, (3,)))
    with pytest.raises(ValueError, match="with sample shape \\(2,\\), got charmie with \\(3,\\)"):
        algorithm.call(charmie, case, algorithm.data(charmie, (2,)))
    with pytest.raises(ValueError, match="sample shape \\(\\), got charmie with \\(3,\\)"):
        algorithm.call(charmie, case, algorithm.data(charmie, ()))


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=IDS)
def test_data_of_another_algorithm_is_refused(charmie, algorithm):
    case = _case(charmie, (), 6)
    other = MotionData if algorithm.data is not MotionData else ForwardKinematicsData
    with pytest.raises(TypeError, match=f"got {other.__name__}, expected"):
        algorithm.call(charmie, case, other(charmie, ()))


def test_a_simulation_of_another_length_is_refused(charmie):
    """SimulationData holds the whole motion: its number of steps is part of its shape."""
    case = _case(charmie, (3,), 8)
    data = SimulationData(charmie, (3,), steps=STEPS)
    expected = (f"SimulationData is for charmie with sample shape \\(3,\\), got charmie "
                f"with \\(3,\\) \\(steps {STEPS}, got {STEPS + 1}\\)")
    with pytest.raises(ValueError, match=expected):
        simulate(charmie, case["q"], case["qd"], None, (STEPS + 1) * DT, DT, limits=False,
                 data=data)


def test_the_stages_and_steps_are_the_workspace_arrays(charmie):
    """A simulation with data leaves its motion and its last step in the data's arrays:
    the last RK4 stage rates are qd + dt a3, the last state that of the motion."""
    case = _case(charmie, (2,), 9)
    data = SimulationData(charmie, (2,), steps=STEPS)
    motion = simulate(charmie, case["q"], case["qd"], case["tau_fn"], STEPS * DT, DT,
                      limits=False, data=data)
    assert motion is data.simulation
    last = data.step
    np.testing.assert_array_equal(last.q, motion.q[-1])
    np.testing.assert_array_equal(last.qd, motion.qd[-1])
    np.testing.assert_array_equal(last.stage_qd[2], motion.qd[-2] + DT * last.stage_qdd[2])
    # the stages are distinct arrays: a1..a4 of one step differ
    assert len({a.tobytes() for a in last.stage_qdd}) == 4


def test_the_stops_use_the_workspace(charmie):
    """These random states leave CHARMIE's limits and move outward: the stops clip them and
    apply an impulse with the workspace's mass matrix (every sample at a stop; a batch where
    only some are computes those in buffers of their own: integrate._some_rows)."""
    case = _case(charmie, (3,), 10)
    data = StepData(charmie, (3,))
    k = charmie.coordinate("d4")
    case["q"][:, k], case["qd"][:, k] = data.upper[k] + 0.001, 0.1     # every sample at a stop
    q, qd = stop_at_limits(charmie, case["q"], 10.0 * case["qd"], data=data)
    assert q is data.q and qd is data.qd
    assert np.any(q != case["q"]) and "mass" in vars(data)
    assert np.all((q >= data.lower) & (q <= data.upper))


def test_results_are_views_of_the_data_buffers(charmie):
    """The returned arrays are the data's, not copies: writing one shows in the other."""
    case = _case(charmie, (3,), 7)
    fk = ForwardKinematicsData(charmie, (3,))
    assert np.shares_memory(forward_kinematics(charmie, case["q"], data=fk).rotations,
                            fk.rotations)
    H = MassMatrixData(charmie, (3,))
    assert np.shares_memory(mass_matrix(charmie, case["q"], data=H), H.H)
    segments = SegmentsData(charmie, (3,))
    result = auxiliary_segments(charmie, case["placements"], data=segments)
    assert all(np.shares_memory(s.start, segments.ends) for s in result)


def test_the_model_holds_its_derived_constants_built_once(charmie):
    model = load_model(CHARMIE)
    assert "compiled" not in vars(model)         # loading builds none of them
    compiled = model.compiled
    assert model.compiled is compiled
    assert actuator_space(model) is compiled.actuator_space
    assert not compiled.spatial_inertias.flags.writeable
    assert [j.actuator for j in compiled.indirect_joints] == list(model.actuator_names)
    for held, built in zip(compiled.indirect_joints, indirect_joints(model)):
        assert (held.c0, held.alpha, held.beta, held.perp2) == \
            (built.c0, built.alpha, built.beta, built.perp2)
    # every model has its own: equal parameters, equal constants, separate arrays
    assert charmie.compiled is not compiled
    np.testing.assert_array_equal(charmie.compiled.packed.body_vec, compiled.packed.body_vec)
    M = compiled.spatial_inertias
    np.testing.assert_array_equal(M, np.swapaxes(M, -1, -2))
    np.testing.assert_array_equal(M[:, 3, 3], model.mass)
    # the bodies of each coordinate and the ABA's coupling verdict: CHARMIE's claw halves
    # (one coordinate, sibling joints) reduce together
    assert compiled.aba_coupling is None
    assert [[model.body_names[i] for i in g] for g in compiled.coordinate_bodies] == \
        [[b.name for b in model.bodies if b.coordinate == c] for c in model.coordinate_names]
    assert any(len(g) > 1 for g in compiled.coordinate_bodies)


def test_forward_dynamics_takes_the_coupling_from_the_compiled_model():
    """The ABA's coupling verdict is built once with model.compiled, not per call or per
    Data: every ForwardDynamicsData holds the model's own string (the same object)."""
    from test_forward_dynamics import COUPLED_CHAIN

    model = model_from_dict(COUPLED_CHAIN)
    reason = model.compiled.aba_coupling
    assert "'q2' moves the joints of b, c, which have different parents" in reason
    assert model.compiled.coordinate_bodies == ((0,), (1, 2))
    assert all(ForwardDynamicsData(model, lead).coupling is reason for lead in ((), (4,)))
    with pytest.raises(ValueError, match="'q2' moves the joints of b, c") as error:
        ArticulatedBodyData(model)
    assert error.value.args[0] == f"{reason}, use method='cholesky'"
