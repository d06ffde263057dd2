"""The study file (YAML): its schema, read through the package's guard and validated, every
error naming the file, the field and what is valid.

    kind: optimize                # sweep | optimize | envelope
    model: ../charmie.yaml        # relative to the study file (default: bundled CHARMIE)
    motions: [validation, {trajectory: traj.csv}, {samples: 200, seed: 1}]
    dt: 0.01                      # sample period of the bundled motions, s
    payloads: [{}, {body_12a.D12a: 2.0}]    # load cases: point -> kg (default: none)
    parameters:
      - {path: springs.spring_5s.stiffness, bounds: [0.5, 4.5]}
      - {name: balancer_preload, bounds: [0, 150],
         paths: [balancers.balancer_left.spring.preload, balancers.balancer_right.spring.preload]}
    objective: act5.peak_force    # or a weighted sum {act4.peak_force: 1, act5.peak_force: 1}
    constraints: [effort_limits, spring_tension]    # the stroke and the loop: always checked
    sweep: {method: grid, points: 11}        # or {method: lhs, samples: 100, seed: 1}
    optimize: {seed: 1, population: 12, iterations: 40, polish: true}

A path with an index is quoted inside a flow mapping (``{path: "bodies.body_4.points.S4[1]"}``):
YAML reads ``[`` there as the start of a list.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..documents import DocumentError, bounded, parse_yaml, read_text
from ..dynamics import Payload
from ..model import ModelError, model_from_dict
from ..model.validation import MAX_MASS_KG, shown_non_mapping, yaml_exponent_problem
from ..trajectories import MAX_DT, MIN_DT, MOTIONS
from .parameters import Parameter, ParameterPathError, document_value, field_of, parse_path

KINDS = ("sweep", "optimize", "envelope")
CONSTRAINTS = ("stroke", "effort_limits", "spring_tension")
MAX_PARAMETERS = 16
#: Motions and payload cases: each multiplies the states every design evaluates.
MAX_MOTIONS = MAX_PAYLOAD_CASES = 16
#: A sampled motion's states: a workspace's gravity loads need thousands, not millions.
MAX_SAMPLES = 20_000
#: States per design (motions' samples x payload cases): about 17.6 kB each while a design is
#: evaluated, so at most about 2 GB.
MAX_STATES = 100_000
#: Designs of a sweep or an optimisation: about 40 designs/s on the bundled model, so under an
#: hour on a core.
MAX_DESIGNS = 100_000


class StudyError(DocumentError):
    """A study file that cannot be run: names the file, the field and what is valid."""


@dataclass(frozen=True)
class MotionSpec:
    """A bundled motion (``name``), a trajectory CSV (``trajectory``) or ``samples`` random
    static states within the position limits (``seed``): the gravity loads of a workspace."""

    label: str
    name: Optional[str] = None
    trajectory: Optional[Path] = None
    samples: int = 0
    seed: int = 0


@dataclass(frozen=True)
class SweepSpec:
    method: str = "grid"
    points: tuple[int, ...] = ()
    samples: int = 0
    seed: int = 0


@dataclass(frozen=True)
class OptimizeSpec:
    seed: int = 0
    population: int = 10
    iterations: int = 30
    polish: bool = True


@dataclass(frozen=True)
class Study:
    """A validated study file; the model's text is kept for the best model file."""

    source: str
    kind: str
    model_path: Path
    model_text: str
    model_document: Any
    motions: tuple[MotionSpec, ...]
    dt: float
    payload_cases: tuple[tuple[Payload, ...], ...]
    parameters: tuple[Parameter, ...]
    objective: dict[str, float] = field(default_factory=dict)
    constraints: frozenset[str] = frozenset(CONSTRAINTS)
    sweep: SweepSpec = SweepSpec()
    optimize: OptimizeSpec = OptimizeSpec()


class _Fields:
    """Checks of one study file's fields; errors ``FILE: FIELD: got ..., expected ...``."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, why: str) -> StudyError:
        return StudyError(f"{self.source}: {where}: {why}")

    def got(self, where: str, value: Any, expected: str) -> StudyError:
        return self.fail(where, f"got {bounded(repr(value), 80)}, expected {expected}")

    def mapping(self, value: Any, where: str, keys: set[str]) -> dict:
        if not isinstance(value, dict):
            shown = shown_non_mapping(value, where, lambda v: bounded(repr(v), 80))
            raise self.fail(where, f"got {shown}, expected a mapping")
        unknown = sorted(set(map(str, value)) - keys)
        if unknown:
            raise self.fail(where, f"unknown key(s) {bounded(', '.join(unknown), 200)}, "
                                   f"expected {', '.join(sorted(keys))}")
        return value

    def number(self, value: Any, where: str, lo: float = -math.inf, hi: float = math.inf) -> float:
        problem = yaml_exponent_problem(value)      # '1e308': a string, not a contradiction
        if problem:
            raise self.fail(where, problem)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not lo <= value <= hi:
            raise self.got(where, value, f"a number in [{lo:g}, {hi:g}]")
        return float(value)

    def integer(self, value: Any, where: str, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.got(where, value, f"an integer in [{lo}, {hi}]")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.got(where, value, "a non-empty string")
        return value


def read_study(path: str | Path, default_model: Path) -> Study:
    """Read and validate a study file; model paths are relative to the study file. Raises
    :class:`StudyError` (the model's own errors: :class:`ModelError`)."""
    source = str(path)
    data = parse_yaml(read_text(path, "study file", error=StudyError), source, error=StudyError)
    f = _Fields(source)
    data = f.mapping(data, "top level", {"kind", "model", "motions", "dt", "payloads",
                                         "parameters", "objective", "constraints", "sweep",
                                         "optimize"})
    kind = data.get("kind")
    if kind not in KINDS:
        raise f.got("kind", kind, " | ".join(KINDS))
    model_path = default_model if data.get("model") is None else \
        Path(path).parent / f.text(data["model"], "model")
    try:
        model_text = read_text(model_path, "model file", error=ModelError)
        if model_text.lstrip().startswith("<"):
            raise f.fail("model", f"{model_path} is a URDF, expected a YAML model file (the "
                                  "best model file is the original text, edited)")
        document = parse_yaml(model_text, str(model_path), error=ModelError)
        model = model_from_dict(document, str(model_path))
    except ModelError as exc:
        raise f.fail("model", str(exc)) from None
    if model.loops is not None:
        raise f.fail("model", f"{model_path} has closed loops (loops:), expected a tree with "
                              "indirect actuators (the studies solve no cut joints)")
    dt = f.number(data.get("dt", 0.01), "dt", MIN_DT, MAX_DT)
    motions = _motions(f, data.get("motions", ["validation"]), Path(path).parent)
    cases = _payloads(f, data.get("payloads", [{}]), model)
    parameters = _parameters(f, data.get("parameters", []), document, str(model_path))
    if kind != "envelope" and not parameters:
        raise f.fail("parameters", f"got none, expected at least one for kind {kind}")
    if kind == "envelope" and parameters:
        raise f.fail("parameters", "an envelope evaluates the model as it is, expected none")
    from .outputs import output_names
    objective = _objective(f, data.get("objective"), output_names(model), kind)
    constraints = data.get("constraints", list(CONSTRAINTS))
    if not isinstance(constraints, list) or not all(
            isinstance(c, str) and c in CONSTRAINTS for c in constraints):
        raise f.got("constraints", constraints, f"a list of {', '.join(CONSTRAINTS)}")
    return Study(source, kind, model_path, model_text, document, motions, dt, cases,
                 parameters, objective, frozenset(constraints),
                 _sweep(f, data.get("sweep", {}), len(parameters)),
                 _optimize(f, data.get("optimize", {}), len(parameters)))


def _motions(f: _Fields, value: Any, base: Path) -> tuple[MotionSpec, ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_MOTIONS:
        raise f.got("motions", value, f"a list of 1 to {MAX_MOTIONS} motions")
    out = []
    for k, item in enumerate(value):
        where = f"motions[{k}]"
        if isinstance(item, str):
            if item not in MOTIONS:
                raise f.got(where, item, f"one of {', '.join(sorted(MOTIONS))}, "
                                         "{trajectory: FILE} or {samples: N, seed: S}")
            out.append(MotionSpec(item, name=item))
        elif isinstance(item, dict) and "trajectory" in item:
            f.mapping(item, where, {"trajectory"})
            file = base / f.text(item["trajectory"], f"{where}.trajectory")
            out.append(MotionSpec(file.stem, trajectory=file))
        else:
            item = f.mapping(item, where, {"samples", "seed"})
            n = f.integer(item.get("samples"), f"{where}.samples", 1, MAX_SAMPLES)
            seed = f.integer(item.get("seed", 0), f"{where}.seed", 0, 2**32 - 1)
            out.append(MotionSpec(f"samples{k}", samples=n, seed=seed))
    return tuple(out)


def _payloads(f: _Fields, value: Any, model) -> tuple[tuple[Payload, ...], ...]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_PAYLOAD_CASES:
        raise f.got("payloads", value, f"a list of 1 to {MAX_PAYLOAD_CASES} load cases "
                                       "{BODY.POINT: KG}")
    cases = []
    for k, case in enumerate(value):
        case = f.mapping(case or {}, f"payloads[{k}]", set(map(str, case or {})))
        loads = []
        for point, mass in case.items():
            where = f"payloads[{k}].{point}"
            try:
                model.point(str(point))
            except KeyError as exc:
                raise f.fail(where, str(exc.args[0])) from None
            loads.append(Payload(str(point), f.number(mass, where, 0.0, MAX_MASS_KG)))
        cases.append(tuple(loads))
    return tuple(cases)


def _parameters(f: _Fields, value: Any, document: Any, model_source: str
                ) -> tuple[Parameter, ...]:
    if not isinstance(value, list) or len(value) > MAX_PARAMETERS:
        raise f.got("parameters", value, f"a list of at most {MAX_PARAMETERS} parameters")
    out: list[Parameter] = []
    seen: dict[tuple, str] = {}          # a path -> where it was given first
    for k, item in enumerate(value):
        where = f"parameters[{k}]"
        item = f.mapping(item, where, {"name", "path", "paths", "bounds"})
        texts = item.get("paths", [item.get("path")] if "path" in item else None)
        if not isinstance(texts, list) or not texts or ("path" in item and "paths" in item):
            raise f.got(where, item, "path: P or paths: [P, ...] (linked values)")
        paths = []
        for n, text in enumerate(texts):
            try:
                path = parse_path(f.text(text, f"{where}.paths[{n}]"))
                document_value(document, path)
            except ParameterPathError as exc:
                raise f.fail(f"{where}.path", f"{exc} in {model_source}") from None
            # two parameters on one value (each path names a number): the later would win,
            # the earlier do nothing
            if path in seen:
                raise f.fail(f"{where}.paths[{n}]", f"{text!r} sets a value that {seen[path]} "
                                                    "sets too, expected each model value in "
                                                    "one parameter")
            seen[path] = f"{where}.paths[{n}]"
            paths.append(path)
            # one value in two quantities (a preload and a stiffness) has no unit
            if field_of(document, path) != field_of(document, paths[0]):
                raise f.fail(f"{where}.paths[{n}]", f"{text!r} is a {field_of(document, path)}, "
                                                    f"paths[0] a {field_of(document, paths[0])}, "
                                                    "expected linked paths of one field "
                                                    "(one quantity, one unit)")
        name = f.text(item.get("name", texts[0]), f"{where}.name")
        bounds = item.get("bounds")
        if not isinstance(bounds, list) or len(bounds) != 2:
            raise f.got(f"{where}.bounds", bounds, "[lower, upper] in the model file's units")
        lo, hi = (f.number(b, f"{where}.bounds[{n}]") for n, b in enumerate(bounds))
        if not lo < hi:
            raise f.got(f"{where}.bounds", bounds, "lower < upper")
        parameter = Parameter(name, tuple(paths), lo, hi)
        for bound in (lo, hi):
            try:        # the field's own range is the loader's: each bound must load
                model_from_dict(parameter.apply(document, bound), model_source)
            except ModelError as exc:
                raise f.fail(f"{where}.bounds", f"{bound:g} is outside the field's range: "
                                                f"{exc}") from None
        out.append(parameter)
    if len({p.name for p in out}) < len(out):
        raise f.fail("parameters", "duplicate names, expected one name per parameter")
    return tuple(out)


def _objective(f: _Fields, value: Any, names: list[str], kind: str) -> dict[str, float]:
    if value is None:
        if kind == "optimize":
            raise f.fail("objective", "missing, expected an output name or {OUTPUT: WEIGHT}")
        return {}
    weights = {value: 1.0} if isinstance(value, str) else value
    if not isinstance(weights, dict) or not weights:
        raise f.got("objective", value, "an output name or {OUTPUT: WEIGHT}")
    for name, weight in weights.items():
        if name not in names:
            near = [n for n in names if n.split(".")[-1] == str(name).split(".")[-1]][:6]
            raise f.fail("objective", f"unknown output {bounded(repr(name), 80)}, expected "
                                      f"one of the model's outputs, e.g. "
                                      f"{', '.join(near or names[:6])}")
        f.number(weight, f"objective.{name}")
    return {str(k): float(v) for k, v in weights.items()}


def _sweep(f: _Fields, value: Any, n_parameters: int) -> SweepSpec:
    value = f.mapping(value or {}, "sweep", {"method", "points", "samples", "seed"})
    method = value.get("method", "grid")
    if method not in ("grid", "lhs"):
        raise f.got("sweep.method", method, "grid | lhs")
    points = value.get("points", 11)
    points = [points] * n_parameters if isinstance(points, int) else points
    if not isinstance(points, list) or len(points) != n_parameters:
        raise f.got("sweep.points", points, "an integer or one per parameter")
    points = [f.integer(p, "sweep.points", 2, MAX_DESIGNS) for p in points]
    if method == "grid" and math.prod(points) > MAX_DESIGNS:
        raise f.got("sweep.points", points, f"at most {MAX_DESIGNS} designs in all")
    return SweepSpec(method, tuple(points),
                     f.integer(value.get("samples", 64), "sweep.samples", 1, MAX_DESIGNS),
                     f.integer(value.get("seed", 0), "sweep.seed", 0, 2**32 - 1))


def _optimize(f: _Fields, value: Any, n_parameters: int) -> OptimizeSpec:
    value = f.mapping(value or {}, "optimize", {"seed", "population", "iterations", "polish"})
    polish = value.get("polish", True)
    if not isinstance(polish, bool):
        raise f.got("optimize.polish", polish, "true or false")
    spec = OptimizeSpec(f.integer(value.get("seed", 0), "optimize.seed", 0, 2**32 - 1),
                        f.integer(value.get("population", 10), "optimize.population", 4, 200),
                        f.integer(value.get("iterations", 30), "optimize.iterations", 1, 10_000),
                        polish)
    if optimize_designs(spec, n_parameters) > MAX_DESIGNS:
        raise f.fail("optimize", f"population {spec.population} x (iterations "
                                 f"{spec.iterations} + 1) x {n_parameters} parameter(s) make "
                                 f"{optimize_designs(spec, n_parameters)} designs, expected at "
                                 f"most {MAX_DESIGNS}")
    return spec


def optimize_designs(spec: OptimizeSpec, n_parameters: int) -> int:
    """The designs differential evolution evaluates at most (scipy's count: population x
    parameters per generation, the first one included), before the polish."""
    return spec.population * (spec.iterations + 1) * n_parameters


def designs_of(study: Study) -> int:
    """The designs the study evaluates (an optimisation's: at most, before the polish)."""
    if study.kind == "envelope":
        return 1
    if study.kind == "optimize":
        return optimize_designs(study.optimize, len(study.parameters))
    return math.prod(study.sweep.points) if study.sweep.method == "grid" else study.sweep.samples
