"""The compiled simulator step (simulation/actuated_step.py) against the Python step it
compiles, integrate.step with the held actuator efforts' tau(t, q, qd): CHARMIE following the
validation motion for 1,000 steps of 1 ms by efforts a controller holds over 10 ms periods
(the simulator node's zero-order hold), Euler and RK4, with and without a claw meeting its
stop; the same with numba off (in a subprocess, fewer steps: plain Python is about a thousand times slower)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from charmie_dynamics import resolve_state
from charmie_dynamics.dynamics.actuation import friction, input_jacobians, input_space_dynamics
from charmie_dynamics.kinematics import inputs_from_dict
from charmie_dynamics.model import Model
from charmie_dynamics.simulation import coordinate_limits
from charmie_dynamics.simulation.actuated_step import (HeldStepData, compiled_step_reason,
                                                       held_efforts, held_input_steps)
from charmie_dynamics.simulation.integrate import step
from charmie_dynamics.trajectories import Trajectory, validation

ROOT = Path(__file__).resolve().parent.parent
DT, PERIOD = 1e-3, 10          # s, steps per held command
TOLERANCE = 1e-12


class Run(NamedTuple):
    q: np.ndarray              # (periods + 1, n): at the start and each period's end
    qd: np.ndarray
    handed_back: int           # steps the compiled path left to Python (0 for Python alone)


def start(model: Model, stop: str = "") -> tuple[np.ndarray, np.ndarray, Trajectory]:
    """The validation motion's start (actuators at 400 mm) and the motion; with ``stop``
    ("upper" or "lower"), claw a 5 mm inside that stop, moving towards it at 1 rad/s, and told
    to go 0.1 rad past it (a gripper closed onto its stop: the impact, then the contact)."""
    q = resolve_state(model, *inputs_from_dict(model, {"act4": 0.4, "act5": 0.4})).q
    qd = np.zeros_like(q)
    reference = validation(model, DT)
    if stop:
        k = model.coordinate("theta13a")
        outward = 1.0 if stop == "upper" else -1.0
        lower, upper = coordinate_limits(model)
        bound = upper[k] if stop == "upper" else lower[k]
        q[k], qd[k] = bound - 0.005 * outward, outward
        x = reference.x.copy()
        x[:, k] = bound + 0.1 * outward
        xd, xdd = (a.copy() for a in (reference.xd, reference.xdd))
        xd[:, k] = xdd[:, k] = 0.0
        reference = Trajectory(reference.t, x, xd, xdd)
    return q, qd, reference


KP, KD = 100.0, 20.0            # the simulator node's pd gains, 1/s^2 and 1/s


def command(model: Model, reference: Trajectory, k: int, q: np.ndarray, qd: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """The efforts a controller at 100 Hz holds over a period: computed torque along the
    validation motion at sample k (the simulator node's pd law, clamped at the limits) from
    the state at the period's start, and the node's Coulomb smoothing velocities
    2 dt coulomb (H_x^-1)_ii."""
    Hx, b, xd = input_space_dynamics(model, q, qd)
    x, _, _ = input_jacobians(model, q)
    space = model.compiled.actuator_space
    smoothing = np.maximum(2.0 * DT * space.coulomb * np.diag(np.linalg.inv(Hx)), 1e-9)
    a = reference.xdd[k] + KP * (reference.x[k] - x) + KD * (reference.xd[k] - xd)
    u = Hx @ a + b + friction(space, xd, smoothing)
    return np.clip(u, -space.effort_limit, space.effort_limit), smoothing


def simulate(model: Model, method: str, steps: int, stop: str, compiled: bool) -> Run:
    """``steps`` steps (a whole number of periods), the state kept at the end of each period;
    ``compiled``: as the simulator node takes them (the compiled step, and integrate.step for
    each step it hands back), else integrate.step alone."""
    q, qd, reference = start(model, stop)
    qs, qds = [q.copy()], [qd.copy()]
    data = HeldStepData(model) if compiled else None
    handed_back = 0
    for period in range(steps // PERIOD):
        u, smoothing = command(model, reference, PERIOD * period, q, qd)
        k = 0
        while k < PERIOD:
            if compiled:
                done = held_input_steps(model, q, qd, u, smoothing, PERIOD - k, DT, method,
                                        data=data)
                q, qd, k = data.q.copy(), data.qd.copy(), k + done
                if k == PERIOD:
                    break
                handed_back += 1
            t = DT * (PERIOD * period + k)
            q, qd = (a.copy() for a in step(model, t, q, qd, held_efforts(model, u, smoothing),
                                            DT, method, dynamics="aba"))
            k += 1
        qs.append(q)
        qds.append(qd)
    return Run(np.array(qs), np.array(qds), handed_back)


@pytest.mark.parametrize("stop", ["", "upper", "lower"],
                         ids=["free", "claw meets its upper stop", "claw meets its lower stop"])
@pytest.mark.parametrize("method", ["euler", "rk4"])
def test_compiled_step_equals_the_python_step(charmie, method, stop):
    python = simulate(charmie, method, 1000, stop, compiled=False)
    compiled = simulate(charmie, method, 1000, stop, compiled=True)
    np.testing.assert_allclose(compiled.q, python.q, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(compiled.qd, python.qd, rtol=0, atol=TOLERANCE)
    moved = np.abs(python.q[-1] - python.q[0])
    assert moved.max() > 0.05, moved                 # a motion, not a robot at rest
    k = charmie.coordinate("theta13a")
    lower, upper = coordinate_limits(charmie)
    on_stop = python.q[:, k] == (lower[k] if stop == "lower" else upper[k])
    if stop:     # the impact is handed back to Python, the contact after it is compiled
        assert 0 < compiled.handed_back < 5 and on_stop[1:].all(), compiled.handed_back
    else:
        assert compiled.handed_back == 0
        assert not np.any((python.q[:, k] == lower[k]) | (python.q[:, k] == upper[k]))


def test_an_actuator_leaving_its_stroke_is_handed_back(charmie):
    """act5 pushed hard past its stroke: the compiled path stops before the step that leaves
    it; the Python step then raises the package's error, naming the actuator."""
    q, qd, reference = start(charmie)
    u, smoothing = command(charmie, reference, 0, q, qd)
    u[charmie.input_names.index("act5")] += 5e4
    data = HeldStepData(charmie)
    done = held_input_steps(charmie, q, qd, u, smoothing, 5000, DT, "rk4", data=data)
    assert 0 < done < 5000
    with pytest.raises(ValueError, match="act5"):
        for _ in range(100):
            q, qd = step(charmie, 0.0, data.q, data.qd, held_efforts(charmie, u, smoothing), DT,
                         "rk4", dynamics="aba")
            data.q[:], data.qd[:] = q, qd


def test_models_and_arguments_it_cannot_run(charmie):
    assert compiled_step_reason(charmie) is None
    assert "cholesky" in compiled_step_reason(charmie, "cholesky")
    with pytest.raises(ValueError, match="expected \\(\\)"):
        HeldStepData(charmie, (2,))
    q, qd, _ = start(charmie)
    with pytest.raises(ValueError, match="method"):
        held_input_steps(charmie, q, qd, q, None, 1, DT, "midpoint")
    with pytest.raises(ValueError, match="shapes"):
        held_input_steps(charmie, q[:-1], qd, q, None, 1, DT, "rk4")


SCRIPT = """
import json, sys
sys.path.insert(0, "test")
from charmie_dynamics import jit, load_model
from conftest import CHARMIE
from test_actuated_step import simulate
model = load_model(CHARMIE)
out = {"jit": jit.ENABLED}
for method in ("euler", "rk4"):
    runs = [simulate(model, method, 30, "upper", compiled) for compiled in (False, True)]
    out[method] = [[r.q[-1].tolist(), r.qd[-1].tolist(), r.handed_back] for r in runs]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_equal_with_numba_off(charmie):
    """The kernels as plain Python (CHARMIE_DYNAMICS_JIT=0): the compiled step's code equals
    the Python step there, and both equal the compiled run (30 steps, the claw meeting its
    stop)."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env={**os.environ, "CHARMIE_DYNAMICS_JIT": "0"})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert not out["jit"]
    for method in ("euler", "rk4"):
        (python_q, python_qd, _), (plain_q, plain_qd, handed_back) = out[method]
        assert handed_back > 0                       # the impact went to Python
        compiled = simulate(charmie, method, 30, "upper", compiled=True)
        for got in (python_q, plain_q):
            np.testing.assert_allclose(got, compiled.q[-1], rtol=0, atol=TOLERANCE)
        for got in (python_qd, plain_qd):
            np.testing.assert_allclose(got, compiled.qd[-1], rtol=0, atol=TOLERANCE)
