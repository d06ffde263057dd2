"""``fk``, ``id`` and ``validate-model`` on a model with loops: the state gives
the independent coordinates (``ClosedChain.independent_names``); the dependent ones are
solved by constraint embedding (mechanisms/closed_chains) from the assembled configuration;
``id`` evaluates as the dynamics node does (evaluators/loop_evaluator.py), with payloads,
external wrenches and ``--gravity-only``."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..errors import InputError
from ..evaluators.loop_evaluator import LoopEvaluator
from ..mechanisms.closed_chains import ClosedChain
from ..model.model import Model


def independent_state(chain: ClosedChain, state: Mapping[str, Any], inputs, source: str
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The independent entries of ``inputs`` (positions, velocities, accelerations over the
    model's inputs); InputError when ``state`` gives a dependent coordinate."""
    dependent = set(chain.dependent_names)
    for key in ("positions", "velocities", "accelerations"):
        for name in state.get(key) or {}:
            if name in dependent:
                raise InputError(f"{source}: {key}.{name}: a dependent coordinate of the loops, "
                                 "solved from them; expected only independent coordinates: "
                                 f"{', '.join(chain.independent_names)}")
    pick = [chain.model.input_names.index(name) for name in chain.independent_names]
    return tuple(np.asarray(a)[pick] for a in inputs)


def loops_summary(chain: ClosedChain) -> str:
    """One line per loop group: mobility, rank, Gruebler count, redundant rows."""
    return "\n".join(
        f"  {info.label}: mobility {info.mobility} (constraint Jacobian of rank {info.rank}, "
        f"Gruebler count {info.group.gruebler}); redundant rows: "
        f"{', '.join(info.redundant) or 'none'}" for info in chain.groups)


def solve_report(evaluator: LoopEvaluator) -> dict[str, Any]:
    """Newton-Raphson's report of the evaluator's last solve, as JSON."""
    report = evaluator.report
    return {"newton_iterations": report.iterations, "residual": report.residual,
            "condition": report.condition}


def loop_id_report(evaluator: LoopEvaluator, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                   gravity_only: bool = False) -> dict[str, Any]:
    """The JSON document printed by ``id`` for a model with loops (SI units), from the
    dynamics node's evaluation (evaluators/loop_evaluator.py, with the evaluator's payloads and
    external wrenches); the joint wrenches are added by ``id`` from ``evaluator.result``."""
    out = evaluator(x, xd, xdd, gravity_only)
    model: Model = evaluator.model
    state = out.state
    return {
        "model": model.name,
        "gravity_only": gravity_only,
        "joint_efforts": dict(zip(evaluator.input_names, out.efforts.tolist())),
        "coordinates": dict(zip(model.coordinate_names, state.q.tolist())),
        "velocities": dict(zip(model.coordinate_names, state.qd.tolist())),
        "accelerations": dict(zip(model.coordinate_names, state.qdd.tolist())),
        "cut_multipliers": dict(zip(evaluator.chain.rows.names, evaluator.multipliers.tolist())),
        "indeterminate": evaluator.indeterminate.T.tolist(),
        "loops": solve_report(evaluator),
    }
