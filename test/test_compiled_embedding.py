"""The compiled constraint embedding (mechanisms/closed_chains/compiled.py) against the numpy
one it compiles (embedding.py's ``ClosedChain.state``, dynamics/closed_chain.py's
``inverse_dynamics_reference``), on the five-bar, the IRSBot-2, the carpet-scraping machine
and CHARMIE with its actuator loops written as generic cut joints: the coordinates, rates,
accelerations, G, Phi_q and gamma (seed 003 eqs. 12-17, algorithm 2), the minimum-norm
multipliers and the efforts (seed 002 eq. 8) equal to 1e-12 (relative to each array's
largest entry, at least 1), along motions (each state warm-started from the last solution)
and from cold starts (followed from the assembled configuration); the same Newton-Raphson
iterations; the same errors; and as plain Python (CHARMIE_DYNAMICS_JIT=0) the same results."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from charmie_dynamics import load_model
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.evaluators.loop_evaluator import LoopEvaluator, NonFiniteInput, PathError
from charmie_dynamics.mechanisms.closed_chains import ClosedChain, LoopSingularityError
from charmie_dynamics.mechanisms.closed_chains.compiled import Embedding
from charmie_dynamics.model.loader import model_from_dict
from charmie_generic_loops import generic_loops_document

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("five_bar", "irsbot2", "scraping_machine")
TOLERANCE = 1e-12


def model_of(name: str):
    if name == "charmie_generic":
        return model_from_dict(generic_loops_document(), "charmie variant")
    return load_model(ROOT / "config" / "examples" / f"{name}.yaml")


@pytest.fixture(scope="module", params=EXAMPLES + ("charmie_generic",))
def chain(request) -> ClosedChain:
    return ClosedChain.build(model_of(request.param))


@pytest.fixture(scope="module", params=EXAMPLES)
def evaluator(request) -> LoopEvaluator:
    """(CHARMIE-generic has no LoopEvaluator: the tree's evaluator at the default inputs
    finds its balancers out of reach.)"""
    return LoopEvaluator(model_of(request.param))


def close(a: np.ndarray, b: np.ndarray) -> float:
    """The largest difference relative to the reference's largest entry (at least 1)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    return float(np.max(np.abs(a - b), initial=0.0) / max(1.0, np.max(np.abs(a), initial=0.0)))


def motion(chain: ClosedChain, samples: int = 40, speed: float = 0.2):
    """A smooth motion of the independent coordinates from the assembled configuration,
    10 ms apart."""
    x0 = chain.assembled[chain.independent]
    direction = np.linspace(1.0, -0.5, len(x0))
    t = 0.01 * np.arange(samples)
    x = x0 + speed * np.sin(2 * np.pi * t)[:, None] * direction / (2 * np.pi)
    xd = speed * np.cos(2 * np.pi * t)[:, None] * direction
    xdd = -2 * np.pi * speed * np.sin(2 * np.pi * t)[:, None] * direction
    return x, xd, xdd


def test_state_equals_numpy_along_a_motion(chain):
    embedding = Embedding(chain)
    last = chain.assembled
    for x, xd, xdd in zip(*motion(chain)):
        q, qd, qdd, G, values = chain.state(x, xd, xdd, last)
        b = embedding.state(x, xd, xdd, last)
        for name, ref, got in (("q", q, b.q), ("qd", qd, b.qd), ("qdd", qdd, b.qdd),
                               ("G", G, b.G), ("Phi", values.residual, b.phi),
                               ("Phi_q", values.jacobian, b.jacobian),
                               ("gamma", values.gamma, b.gamma)):
            assert close(ref, got) <= TOLERANCE, name
        last = q


def test_state_equals_numpy_from_cold_starts(chain):
    embedding = Embedding(chain)
    rng = np.random.default_rng(25)
    x0 = chain.assembled[chain.independent]
    solved = 0
    for _ in range(6):
        x = x0 + rng.uniform(-0.15, 0.15, len(x0))
        xd, xdd = rng.uniform(-0.3, 0.3, len(x0)), rng.uniform(-1.0, 1.0, len(x0))
        try:
            q, qd, qdd, G, _ = chain.state(x, xd, xdd)
        except LoopSingularityError as exc:
            with pytest.raises(LoopSingularityError) as info:
                embedding.state(x, xd, xdd)
            assert str(info.value) == str(exc)
            continue
        b = embedding.state(x, xd, xdd)
        for ref, got in ((q, b.q), (qd, b.qd), (qdd, b.qdd), (G, b.G)):
            assert close(ref, got) <= TOLERANCE
        solved += 1
    assert solved >= 3


def test_inverse_dynamics_equals_numpy(chain):
    """closed_chain.inverse_dynamics (compiled embedding) against inverse_dynamics_reference:
    efforts, multipliers, coordinates, H qdd + b, iterations."""
    last = chain.assembled
    for x, xd, xdd in zip(*motion(chain, 25)):
        ref = cc.inverse_dynamics_reference(chain, x, xd, xdd, last)
        loads = cc.inverse_dynamics(chain, x, xd, xdd, last)
        for name in ("q", "qd", "qdd", "effort", "multipliers", "tree_effort"):
            assert close(getattr(ref, name), getattr(loads, name)) <= TOLERANCE, name
        assert loads.report.iterations == ref.report.iterations
        assert loads.indeterminate.shape == ref.indeterminate.shape
        last = ref.q


def test_evaluator_equals_numpy(evaluator):
    """The LoopEvaluator (one kernel per state) against inverse_dynamics_reference, along a
    motion and after it a jump (followed by continuation)."""
    chain = evaluator.chain
    evaluator.last_solution = chain.assembled.copy()
    last = chain.assembled
    for x, xd, xdd in zip(*motion(chain, 25)):
        ref = cc.inverse_dynamics_reference(chain, x, xd, xdd, last)
        out = evaluator(x, xd, xdd)
        assert close(ref.effort, out.efforts) <= TOLERANCE
        assert close(ref.multipliers, evaluator.multipliers) <= TOLERANCE
        assert close(ref.q, out.state.q) <= TOLERANCE
        assert evaluator.report.iterations == ref.report.iterations
        last = ref.q
    jump = x + 0.12 * np.linspace(1.0, -1.0, len(x))
    ref = cc.inverse_dynamics_reference(chain, jump, xd, xdd, chain.approach(jump, last))
    out = evaluator(jump, xd, xdd)
    assert close(ref.effort, out.efforts) <= TOLERANCE
    assert close(ref.q, out.state.q) <= TOLERANCE


def test_singular_inputs_raise_the_same_errors():
    """The five-bar's elbows moved apart until its loop is singular and then cannot close,
    and a NaN input: wherever the numpy solve raises, the compiled one raises the same
    error, word for word (condition number, no convergence, non-finite values, a jump too
    far to follow (1e18 too: numba's ceil of 1e18 / 0.05 wrapped, and the kernel tried one
    Newton solve instead), both cranks followed to 200 deg across the stretched elbows' singular
    configuration: a change of assembly branch)."""
    chain = ClosedChain.build(model_of("five_bar"))
    embedding = Embedding(chain)
    x0 = chain.assembled[chain.independent]
    raised = set()
    t1 = np.radians(85.0)
    for x in [np.array([t1, elbow_angle(t1, gap)]) for gap in (0.1, 0.15, None)] + [
            x0 + np.array([d, -d]) for d in np.linspace(0.0, 3.0, 7)] + [
            np.array([np.nan, 0.0]), x0 + 12.0, np.array([1e18, 0.5]),
            np.array([0.5, 1e300]), np.radians([200.0, 200.0])]:
        try:
            q = chain.state(x, np.zeros(2), np.zeros(2))[0]
        except LoopSingularityError as numpy_error:
            with pytest.raises(LoopSingularityError) as compiled_error:
                embedding.state(x, np.zeros(2), np.zeros(2))
            assert str(compiled_error.value) == str(numpy_error)
            assert compiled_error.value.loop == numpy_error.loop
            raised.add(str(numpy_error).split(":")[1][:12])
            continue
        assert close(q, embedding.state(x, np.zeros(2), np.zeros(2)).q) <= TOLERANCE
    assert len(raised) >= 5, raised


def elbow_angle(t1: float, gap: float | None) -> float:
    """theta1_2 putting the five-bar's elbows ``gap`` m apart, or (None) as close as they
    come (test_loop_evaluator.py): 0.1 m is the folded, singular distance."""
    e1 = 0.6 * np.array([np.cos(t1), np.sin(t1)])
    c = e1 - np.array([0.2, 0.0])
    d0 = float(np.linalg.norm(c))
    phi = float(np.arctan2(c[1], c[0]))
    return phi if gap is None else phi + float(np.arccos((d0**2 + 0.49 - gap**2) / (1.4 * d0)))


NUMBA_OFF_SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, "test")
from charmie_dynamics import jit
from test_compiled_embedding import model_of, motion
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.mechanisms.closed_chains import ClosedChain
from charmie_dynamics.mechanisms.closed_chains.compiled import Embedding
out = {"jit": jit.ENABLED}
for name in ("five_bar", "irsbot2", "scraping_machine", "charmie_generic"):
    chain = ClosedChain.build(model_of(name))
    x, xd, xdd = (a[3] for a in motion(chain, 4))
    b = Embedding(chain).state(x, xd, xdd)
    loads = cc.inverse_dynamics(chain, x, xd, xdd)
    out[name] = {"q": b.q.tolist(), "qdd": b.qdd.tolist(), "G": b.G.tolist(),
                 "effort": loads.effort.tolist(), "multipliers": loads.multipliers.tolist()}
print(json.dumps(out))
"""


@pytest.mark.slow
def test_equal_with_numba_off():
    """The kernels as plain Python (CHARMIE_DYNAMICS_JIT=0) give the compiled results."""
    results = []
    for flag in ("1", "0"):
        proc = subprocess.run([sys.executable, "-c", NUMBA_OFF_SCRIPT], capture_output=True,
                              text=True, timeout=900, cwd=ROOT,
                              env={**os.environ, "CHARMIE_DYNAMICS_JIT": flag})
        assert proc.returncode == 0, proc.stderr
        results.append(json.loads(proc.stdout))
    compiled, plain = results
    assert compiled.pop("jit") and not plain.pop("jit")
    for name, arrays in compiled.items():
        for key, value in arrays.items():
            assert close(value, plain[name][key]) <= TOLERANCE, (name, key)


def test_path_equals_successive_calls(evaluator):
    """LoopEvaluator.path (every sample in one kernel call, for ``analyze``) equals the
    evaluator called sample by sample (to rounding: the kernels are compiled apart, and LLVM
    may contract their products differently), and a failing sample is named."""
    chain = evaluator.chain
    x, xd, xdd = motion(chain, 30)
    x[12:] += 0.08 * np.linspace(1.0, -1.0, x.shape[1])       # a jump, followed
    evaluator.last_solution = chain.assembled.copy()
    one = [(evaluator(*s).efforts.copy(), evaluator.last_solution.copy(),
            evaluator.multipliers.copy(), sum(evaluator.report.iterations)) for s in zip(x, xd, xdd)]
    evaluator.last_solution = chain.assembled.copy()
    path = evaluator.path(x, xd, xdd)
    for k, got in enumerate((path.efforts, path.q, path.multipliers)):
        assert close([o[k] for o in one], got) <= TOLERANCE
    np.testing.assert_array_equal(path.iterations.sum(axis=1), [o[3] for o in one])
    assert close(one[-1][1], evaluator.last_solution) <= TOLERANCE
    bad = x.copy()
    bad[7] += 12.0                                   # farther than continuation follows
    with pytest.raises(PathError, match="not followed") as info:
        evaluator.path(bad, xd, xdd)
    assert info.value.sample == 7 and len(info.value.result.q) == 7
    assert close(path.efforts[:7], info.value.result.efforts) <= TOLERANCE
    bad[7] = np.nan                                  # named as the input, not a failed solve
    with pytest.raises(NonFiniteInput, match="sample 7: non-finite input: position"):
        evaluator.path(bad, xd, xdd)
