"""``fk``, ``id`` and ``validate-model`` on a model with loops (issue 13): the state gives
the independent coordinates (``ClosedChain.independent_names``); the dependent ones are
solved by constraint embedding (mechanisms/closed_chains, dynamics/closed_chain.py) from the
assembled configuration."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..dynamics import closed_chain as cc
from ..errors import InputError
from ..mechanisms.closed_chains import ClosedChain, SolveReport
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


def solved_coordinates(chain: ClosedChain, x: np.ndarray) -> tuple[np.ndarray, dict[str, Any]]:
    """All coordinates for the independent ones, and Newton-Raphson's report as JSON."""
    report = SolveReport()
    q = chain.positions(x, None, report)
    return q, {"newton_iterations": report.iterations, "residual": report.residual,
               "condition": report.condition}


def loop_id_report(chain: ClosedChain, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray
                   ) -> dict[str, Any]:
    """The JSON document printed by ``id`` for a model with loops (SI units)."""
    loads = cc.inverse_dynamics(chain, x, xd, xdd)
    model: Model = chain.model
    return {
        "model": model.name,
        "joint_efforts": dict(zip(chain.independent_names, loads.effort.tolist())),
        "coordinates": dict(zip(model.coordinate_names, loads.q.tolist())),
        "velocities": dict(zip(model.coordinate_names, loads.qd.tolist())),
        "accelerations": dict(zip(model.coordinate_names, loads.qdd.tolist())),
        "cut_multipliers": dict(zip(chain.rows.names, loads.multipliers.tolist())),
        "indeterminate": loads.indeterminate.T.tolist(),
        "loops": {"newton_iterations": loads.report.iterations,
                  "residual": loads.report.residual, "condition": loads.report.condition},
    }
