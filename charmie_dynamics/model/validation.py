"""The model loader's validation vocabulary: typed field access whose every error names the
file, the entry and field, the bad value and what was expected (``FieldReader``), the
plausibility bounds and size limits of a model (docs/model_format.md lists them), and
:class:`ModelError`. The loader (loader.py) and the URDF reader (urdf.py) speak it."""
from __future__ import annotations

import math
import re
import reprlib
import struct
from typing import Any, Callable, Iterable, Mapping, Optional

import numpy as np

from ..documents import DocumentError, bounded
from .rotations import zxz_euler

# Plausibility bounds (SI, magnitudes; docs/model_format.md lists them). A robot model longer
# than MAX_LENGTH_M almost surely holds millimetres declared as m; the others refuse values
# whose products overflow or swamp every other term of the recursions (a 1e300 kg body).
MAX_LENGTH_M = 100.0
MAX_MASS_KG = 1e6
MAX_INERTIA = MAX_MASS_KG * MAX_LENGTH_M ** 2       # kg m^2: the heaviest body at the longest reach
MAX_ANGLE_RAD = 1e3                                 # rotations and revolute position limits
MAX_ANGULAR_VELOCITY = 1e3                          # rad/s
MAX_LINEAR_VELOCITY = 1e2                           # m/s
MAX_EFFORT = 1e7                                    # N or N m: efforts, forces, Coulomb, preloads
MAX_VISCOUS = 1e7                                   # N s/m or N m s/rad
MAX_STIFFNESS = 1e9                                 # N/m
MAX_GRAVITY = 100.0                                 # m/s^2, each component
MULTIPLIER_RANGE = (1e-3, 1e3)                      # |multiplier| of a coupled joint
MAX_PITCH = 1.0                                     # m/rad: a helical joint's slide per radian
# Inertias within this tolerance of positive semi-definite load with a warning (Pinocchio
# accepts them): max(relative * largest eigenvalue, absolute kg m^2).
INERTIA_RELATIVE_TOLERANCE = 1e-6
INERTIA_ABSOLUTE_TOLERANCE = 1e-7
# Shortest joint axis or quaternion taken as a direction (normalised at load), and how far a
# rotation matrix may be from orthonormal with determinant +1 (URDF files print 6 digits).
MIN_DIRECTION = 1e-9
ROTATION_TOLERANCE = 1e-6
# Sizes: every entry costs work, and YAML aliases repeat an entry without repeating its text.
MAX_BODIES = 10_000                                 # and as many actuators, springs, balancers
MAX_POINTS = 100_000                                # named points in the whole model
# Said after a length-like value that is too large.
UNITS_HINT = ": are the units (units.length) right?"
# Longest error message: names and values are cut, a list of 10,000 bodies is not repeated.
MAX_ERROR = 600
# Longest name. Names become TF frame ids, JointState names and topic names: the dynamics
# node publishes joint_wrenches/<body>, and rcl refuses a full topic name longer than 247
# characters (RMW_TOPIC_MAX_NAME_LENGTH, 255 less the DDS prefix), so a 231-character body
# name killed the node. 128 leaves the node's namespace 103 characters; the longest name in
# the bundled models and the 69 URDFs of example-robot-data has 56.
MAX_NAME = 128




def shown_non_mapping(data: Any, where: str, show: Callable[[Any], str]) -> str:
    """How a value that should be a mapping is named in an error: a whole file read as one
    scalar (not YAML at all, e.g. /etc/passwd) by its length, never quoted back."""
    if where == "top level" and isinstance(data, str):
        return f"{len(data)} characters of text"
    return f"{type(data).__name__} {show(data)}"

class ModelError(DocumentError):
    """A model file that cannot be used; the message says where and why."""


_ANGLES = struct.Struct("3d")
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 3, 6, 6, 60, 60


def either(options: Iterable[str]) -> str:
    """Options for a message: "a, b or c"."""
    *head, last = options
    return f"{', '.join(head)} or {last}" if head else last


def show(value: Any) -> str:
    """A bounded repr for messages: a document's YAML aliases can make a value huge."""
    return _REPR.repr(value)


# what YAML 1.2 and JSON read as a number but PyYAML's YAML 1.1 as a string: 1e17, 1.0e17
DECIMAL_EXPONENT_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


class FieldReader:
    """Typed field access that reports ``file: where.field: got X, expected Y``."""

    def __init__(self, source: str, length_scale: float, angle_scale: float):
        self.source = source
        self.length = length_scale
        self.angle = angle_scale
        # inertias read and not yet checked: (where, mass, matrix), for _check_inertias
        self.inertias: list[tuple[str, float, np.ndarray]] = []
        # ZXZ Euler rotations made so far, by the bytes of their angles (exact: -0.0 is not 0.0)
        self.rotations: dict[bytes, np.ndarray] = {}

    def zxz_euler(self, angles: list[float]) -> np.ndarray:
        """``zxz_euler(*angles)`` (a new array), computed once per model for each triple:
        a model repeats a few rotations (a chain's bodies all have the default [0, 0, 0])."""
        key = _ANGLES.pack(*angles)
        rotation = self.rotations.get(key)
        if rotation is None:
            rotation = self.rotations[key] = zxz_euler(*angles)
        return rotation.copy()

    def fail(self, where: str, message: str) -> ModelError:
        return ModelError(bounded(f"{self.source}: {where}: {message}", MAX_ERROR))

    def mapping(self, data: Any, where: str) -> Mapping:
        if type(data) is not dict and not isinstance(data, Mapping):    # dict: the common case
            raise self.fail(where, f"got {shown_non_mapping(data, where, show)}, "
                                   "expected a mapping")
        return data

    def get(self, data: Mapping, key: str, where: str, default: Any = ...) -> Any:
        if key not in data:
            if default is ...:
                raise self.fail(f"{where}.{key}", "missing required field, expected a value")
            return default
        return data[key]

    def check_keys(self, data: Mapping, allowed: set | frozenset, where: str) -> None:
        if data.keys() <= allowed:                            # the common case: all known
            return
        unknown = sorted(set(data) - allowed, key=str)        # keys may be numbers or null
        if unknown:
            raise self.fail(where, f"unknown field(s) {', '.join(map(str, unknown))}; "
                                   f"expected some of {', '.join(sorted(allowed))}")

    def number(self, value: Any, where: str, *, positive: bool = False,
               nonnegative: bool = False) -> float:
        if not (type(value) is float and math.isfinite(value)):     # the common case: none
            problem = yaml_exponent_problem(value)
            if problem:
                raise self.fail(where, problem)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(where, f"got {show(value)}, expected a number")
            try:
                value = float(value)
            except OverflowError:
                raise self.fail(where, "got an integer too large for a float, expected a "
                                       "finite number") from None
            if not math.isfinite(value):
                raise self.fail(where, f"got {show(value)}, expected a finite number")
        if positive and value <= 0:
            raise self.fail(where, f"got {show(value)}, expected a number > 0")
        if nonnegative and value < 0:
            raise self.fail(where, f"got {show(value)}, expected a number >= 0")
        return value

    def choice(self, value: Any, options: Mapping | tuple, where: str) -> Any:
        if not isinstance(value, str) or value not in options:
            raise self.fail(where, f"got {show(value)}, expected {either(options)}")
        return value

    def vector(self, value: Any, where: str, n: int = 3) -> np.ndarray:
        return np.array(self.numbers(value, where, n))

    def numbers(self, value: Any, where: str, n: int = 3) -> list[float]:
        """A list of ``n`` finite numbers, as floats."""
        floats = finite_floats(value, n)
        if floats is not None:
            return floats
        if not isinstance(value, (list, tuple)) or len(value) != n:
            raise self.fail(where, f"got {show(value)}, expected a list of {n} numbers")
        return [self.number(v, f"{where}[{k}]") for k, v in enumerate(value)]

    def magnitudes(self, value: Any, where: str, limit: float, what: str, unit: str,
                   scale: float = 1.0, hint: str = "") -> list[float]:
        """:meth:`numbers` (3) times ``scale``, each refused as :meth:`magnitude` refuses it."""
        floats = self.numbers(value, where)
        if scale != 1.0:
            floats = [v * scale for v in floats]
        if -limit <= min(floats) and max(floats) <= limit:     # finite: |v| <= limit each
            return floats
        return [self.magnitude(v, f"{where}[{k}]", limit, what, unit, scale, hint)
                for k, v in enumerate(value)]

    def magnitude(self, value: Any, where: str, limit: float, what: str, unit: str,
                  scale: float = 1.0, hint: str = "", **kw: bool) -> float:
        """``number(value) * scale`` (SI), refused when its magnitude exceeds ``limit``."""
        v = self.number(value, where, **kw) * scale
        if abs(v) > limit:
            shown = show(value) if scale == 1.0 else f"{show(value)} ({v:g} {unit})"
            raise self.fail(where, f"got {shown}, expected |{what}| <= {limit:g} {unit}{hint}")
        return v

    def length_value(self, value: Any, where: str, **kw: bool) -> float:
        return self.magnitude(value, where, MAX_LENGTH_M, "length", "m", self.length, UNITS_HINT,
                              **kw)

    def sized_list(self, value: Any, where: str, limit: int) -> list:
        """A list of at most ``limit`` entries."""
        if not isinstance(value, list):
            raise self.fail(where, f"got {show(value)}, expected a list")
        if len(value) > limit:
            raise self.fail(where, f"got {len(value)} entries, expected at most {limit}")
        return value

    def length_vector(self, value: Any, where: str) -> np.ndarray:
        return np.array(self.magnitudes(value, where, MAX_LENGTH_M, "length", "m", self.length,
                                        UNITS_HINT))

    def named_entry(self, data: Any, where: str, keys: set[str] | frozenset[str],
                    dotted: bool = False) -> tuple[dict, str, str]:
        """Entry ``where`` of a list section (``bodies[3]``): a mapping with a ``name`` and no
        key outside ``keys``; returns it, its name and its place with the name, as errors
        about its fields give it (``bodies[3] (body_4)``)."""
        data = self.mapping(data, where)
        name = self.name(self.get(data, "name", where), f"{where}.name", dotted=dotted)
        named = f"{where} ({name})"
        self.check_keys(data, keys, named)
        return data, name, named

    def name(self, value: Any, where: str, dotted: bool = False) -> str:
        """A name of letters, digits and _, at most ``MAX_NAME`` characters; with ``dotted``
        (the model, bodies and coordinates, whose URDF names often have them) also -, . and
        / but not a leading / (names become TF frame ids, which tf2 refuses with a leading
        /): a reference BODY.POINT is split at its last '.', so point names never hold a
        '.'."""
        problem = name_problem(value, dotted)
        if problem:
            raise self.fail(where, problem)
        return value


def yaml_exponent_problem(value: Any) -> Optional[str]:
    """Why ``value``, a text that reads as a number, is not one (YAML 1.1 reads ``1e308`` as a
    string: an exponent needs a dot and a sign), or None."""
    if isinstance(value, str) and DECIMAL_EXPONENT_TEXT.fullmatch(value.strip()):
        return (f"got {show(value)}, text to YAML 1.1 (a number with an exponent needs a dot "
                "and a signed exponent, as 1.0e+17), expected a number")
    return None


def name_problem(value: Any, dotted: bool = True) -> Optional[str]:
    """Why ``value`` is not a name (:meth:`FieldReader.name`), or None: the rule of every
    name that becomes a frame id, a joint name on a topic or a URDF link."""
    if (not isinstance(value, str) or not value or value.startswith("/")
            or not _name_characters_allowed(value, dotted)):
        what = "letters, digits, _, -, . and / (not first)" if dotted else "letters, digits and _"
        return f"got {show(value)}, expected a name of {what}"
    if len(value) > MAX_NAME:
        return (f"got a name of {len(value)} characters ({show(value)}), expected at most "
                f"{MAX_NAME} (names become topic names and TF frame ids)")
    return None


_NAME_EXTRA = {False: str.maketrans("", "", "_"), True: str.maketrans("", "", "_-./")}


def _name_characters_allowed(value: str, dotted: bool) -> bool:
    """Every character of ``value`` a letter or digit (``str.isalnum``) or one of _ (and,
    with ``dotted``, - . /)."""
    rest = value.translate(_NAME_EXTRA[dotted])
    return not rest or rest.isalnum()


def finite_floats(value: Any, n: int) -> Optional[list[float]]:
    """The ``n`` entries of the list ``value`` as floats when each is a finite float or an
    int (not a bool) that converts: what :meth:`FieldReader.numbers` accepts, without building
    the places of its messages; None for anything else (the checks then say what)."""
    if type(value) not in (list, tuple) or len(value) != n:
        return None
    out = []
    for v in value:
        kind = type(v)
        if kind is int and -_EXACT_INT <= v <= _EXACT_INT:
            v = float(v)
        elif kind is not float or not math.isfinite(v):
            return None
        out.append(v)
    return out


_EXACT_INT = 2 ** 53           # ints up to here convert to float without rounding or overflow
