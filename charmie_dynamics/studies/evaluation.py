"""One design evaluated: the model document edited, loaded through the loader, and every load
case (motion x payloads) evaluated by the batched kernels as ``analyze`` does
(``resolve_state`` + ``inverse_dynamics``); its outputs (outputs.py), or the reason it is
infeasible.

Infeasible (counted by reason, never raised): ``model_refused`` (the loader refuses the
edited model), ``stroke`` (an actuator leaves its stroke), ``loop_does_not_assemble``,
``velocity_limit``, ``limits`` (an implausible input), ``non_finite``, and with the study's
constraints ``effort_limit`` and ``spring_tension`` (a spring pushes).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..dynamics import inverse_dynamics
from ..dynamics.inverse import Loads
from ..identification.base import input_ranges
from ..kinematics import resolve_state
from ..kinematics.indirect import ActuatorRangeError, MechanismRangeError
from ..model import Model, ModelError, model_from_dict
from ..trajectories import Trajectory, from_csv, motion, violation
from .outputs import Case, CaseLoads, constraint_margins, summarise
from .parameters import Parameter, document_value
from .study_file import MAX_STATES, MotionSpec, Study, StudyError

#: An infeasible design's objective: worse than any feasible one, finite for the optimisers.
PENALTY = 1e30


@dataclass(frozen=True)
class Outcome:
    """One design: its parameter values; outputs and constraint margins, or why not."""

    values: tuple[float, ...]
    outputs: Optional[dict[str, float]] = None
    margins: Optional[dict[str, float]] = None
    reason: Optional[str] = None
    message: Optional[str] = None

    @property
    def feasible(self) -> bool:
        return self.reason is None


def _samples(model: Model, spec: MotionSpec) -> Trajectory:
    """Random static states within the inputs' position ranges (identification's: the joint
    limits, the actuators' strokes, +-0.5 m or +-pi rad where the model gives none)."""
    lo, hi, _ = input_ranges(model)
    x = lo + (hi - lo) * np.random.default_rng(spec.seed).random((spec.samples, len(lo)))
    zero = np.zeros_like(x)
    return Trajectory(np.arange(spec.samples, dtype=float), x, zero, zero)


def cases_of(study: Study, model: Model) -> list[Case]:
    """The study's load cases on the unchanged model (the motions are sampled once);
    StudyError once the states per design pass :data:`MAX_STATES`, before any design."""
    cases = []
    states = 0
    for n, spec in enumerate(study.motions):
        traj = None
        if spec.name is not None:
            traj = motion(model, spec.name, study.dt)
        elif spec.trajectory is not None:
            traj = from_csv(model, str(spec.trajectory))
        # counted before a sampled motion is drawn
        states += (spec.samples if traj is None else len(traj.t)) * len(study.payload_cases)
        if states > MAX_STATES:
            raise StudyError(f"{study.source}: motions[{n}]: the motions so far make {states} "
                             f"states per design (samples x {len(study.payload_cases)} payload "
                             f"case(s)), expected at most {MAX_STATES}")
        if traj is None:
            traj = _samples(model, spec)
        for k, payloads in enumerate(study.payload_cases):
            label = spec.label if len(study.payload_cases) == 1 else f"{spec.label}+payloads{k}"
            cases.append(Case(label, traj, payloads))
    return cases


class Infeasible(Exception):
    """Why a design cannot be used: ``reason`` (a short key) and the first message."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class DesignProblem:
    """What a worker needs to evaluate designs: picklable, sent once per batch of designs."""

    source: str
    document: Any
    parameters: tuple[Parameter, ...]
    cases: tuple[Case, ...]
    constraints: frozenset[str]
    objective: tuple[tuple[str, float], ...]

    @classmethod
    def of(cls, study: Study) -> "DesignProblem":
        model = model_from_dict(study.model_document, str(study.model_path))
        return cls(str(study.model_path), study.model_document, study.parameters,
                   tuple(cases_of(study, model)), study.constraints,
                   tuple(study.objective.items()))

    @property
    def start(self) -> tuple[float, ...]:
        """The model file's own values of the parameters."""
        return tuple(document_value(self.document, p.paths[0]) for p in self.parameters)

    def model(self, values: tuple[float, ...]) -> Model:
        """The design's model, validated; ModelError names the study's parameters."""
        document = self.document
        for parameter, value in zip(self.parameters, values):
            document = parameter.apply(document, value)
        where = ", ".join(f"{p.name}={v:.6g}" for p, v in zip(self.parameters, values))
        return model_from_dict(document, f"{self.source} [{where}]" if where else self.source)

    def loads(self, model: Model) -> list[CaseLoads]:
        """Every case evaluated; raises :class:`Infeasible`."""
        out = []
        for case in self.cases:
            traj = case.trajectory
            bad = violation(model, traj)
            if bad is not None:
                raise Infeasible("velocity_limit" if bad.quantity == "velocity" else "limits",
                                 f"{case.label}: sample {bad.sample}: {bad}")
            try:
                state = resolve_state(model, traj.x, traj.xd, traj.xdd)
            except ActuatorRangeError as exc:
                raise Infeasible("stroke", f"{case.label}: {exc}") from None
            except MechanismRangeError as exc:
                raise Infeasible("loop_does_not_assemble", f"{case.label}: {exc}") from None
            loads: Loads = inverse_dynamics(model, state, payloads=case.payloads)
            efforts = model.in_input_order(loads.coordinate_effort, loads.actuator_force)
            speeds = model.in_input_order(state.qd, state.actuator_velocity)
            result = CaseLoads(case, speeds, efforts,
                               state.actuator_length.copy(), loads.spring_tension.copy(),
                               loads.coordinate_effort.copy(), state.qd.copy(),
                               loads.actuator_force.copy())
            if not all(np.all(np.isfinite(a)) for a in (result.efforts, result.spring_tension)):
                raise Infeasible("non_finite", f"{case.label}: loads are not finite")
            out.append(result)
        return out

    def evaluate(self, values: tuple[float, ...]) -> Outcome:
        """The design's outputs and margins, or its reason (never raises for a design)."""
        values = tuple(float(v) for v in values)
        try:
            model = self.model(values)
        except ModelError as exc:
            return Outcome(values, reason="model_refused", message=str(exc))
        try:
            loads = self.loads(model)
            outputs = summarise(model, loads)
            margins = constraint_margins(model, loads, outputs)
            for name, key in (("effort_limits", "effort_limit"),
                              ("spring_tension", "spring_tension")):
                worst = min(((m, n) for n, m in margins.items() if n.startswith(key)),
                            default=None)
                if name in self.constraints and worst is not None and worst[0] < 0:
                    raise Infeasible(key, f"{worst[1]}: margin {worst[0]:.6g}")
        except Infeasible as exc:
            return Outcome(values, reason=exc.reason, message=str(exc))
        return Outcome(values, outputs, margins)

    def objective_of(self, outcome: Outcome) -> float:
        """The weighted sum of the objective's outputs; :data:`PENALTY` when infeasible."""
        if not outcome.feasible:
            return PENALTY
        return float(sum(w * outcome.outputs[name] for name, w in self.objective))


