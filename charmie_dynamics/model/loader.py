"""Validate a model document (format in docs/model_format.md) and build the model.

Files and texts are read by :mod:`charmie_dynamics.model.reader` (YAML, or a URDF through
:mod:`charmie_dynamics.model.urdf`), the text read and parsed by the package's one guard (:mod:`charmie_dynamics.documents`:
regular files only, a size cap, strict UTF-8, PyYAML's safe loader with every parser
exception turned into a :class:`ModelError`). Every check raises :class:`ModelError` whose
message names the file, the entry and field, the bad value and what was expected. Lengths
written in millimetres (``units: {length: mm}``) are converted to metres here, once.
"""
from __future__ import annotations

import logging
import math
import re
import reprlib
import struct
from collections import Counter
from typing import Any, Mapping, Optional

import numpy as np

from ..documents import DocumentError, bounded
from ..linalg import direction_and_length
from .cut_joints import CUT_TYPES, CutJoint, Loops, loop_groups, t_needs_axis
from .model import (Actuator, Balancer, Body, Friction, JointLimits, JointType, Model,
                    PointRef, Spring, SpringParams)
from .parameters import FREE_FLYER_CONFIGURATION, FREE_FLYER_VELOCITIES
from .rotations import AXES, quaternion_matrix, rpy_to_matrix, zxz_euler

FORMAT = "charmie_dynamics/model/1"
LENGTH_UNITS = {"m": 1.0, "mm": 1e-3}
ANGLE_UNITS = {"rad": 1.0, "deg": math.pi / 180.0}
JOINT_TYPES = {"R": JointType.REVOLUTE, "P": JointType.PRISMATIC, "F": JointType.FIXED,
               "floating": JointType.FLOATING}
JOINT_AXES = ("x", "y", "z", "-x", "-y", "-z")
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


_log = logging.getLogger(__name__)


class ModelError(DocumentError):
    """A model file that cannot be used; the message says where and why."""


_ANGLES = struct.Struct("3d")
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict, _REPR.maxstring, _REPR.maxother = 3, 6, 6, 60, 60


def _show(value: Any) -> str:
    """A bounded repr for messages: a document's YAML aliases can make a value huge."""
    return _REPR.repr(value)


# what YAML 1.2 and JSON read as a number but PyYAML's YAML 1.1 as a string: 1e17, 1.0e17
DECIMAL_EXPONENT_TEXT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")


class _Reader:
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
            raise self.fail(where, f"got {type(data).__name__} {_show(data)}, expected a mapping")
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
            if isinstance(value, str) and DECIMAL_EXPONENT_TEXT.fullmatch(value.strip()):
                raise self.fail(where, f"got {_show(value)}, text to YAML 1.1 (a number with "
                                       "an exponent needs a dot and a signed exponent, as "
                                       "1.0e+17), expected a number")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(where, f"got {_show(value)}, expected a number")
            try:
                value = float(value)
            except OverflowError:
                raise self.fail(where, "got an integer too large for a float, expected a "
                                       "finite number") from None
            if not math.isfinite(value):
                raise self.fail(where, f"got {_show(value)}, expected a finite number")
        if positive and value <= 0:
            raise self.fail(where, f"got {_show(value)}, expected a number > 0")
        if nonnegative and value < 0:
            raise self.fail(where, f"got {_show(value)}, expected a number >= 0")
        return value

    def choice(self, value: Any, options: Mapping | tuple, where: str) -> Any:
        if not isinstance(value, str) or value not in options:
            *head, last = options
            raise self.fail(where, f"got {_show(value)}, expected {', '.join(head)} or {last}")
        return value

    def vector(self, value: Any, where: str, n: int = 3) -> np.ndarray:
        return np.array(self.numbers(value, where, n))

    def numbers(self, value: Any, where: str, n: int = 3) -> list[float]:
        """A list of ``n`` finite numbers, as floats."""
        floats = _finite_floats(value, n)
        if floats is not None:
            return floats
        if not isinstance(value, (list, tuple)) or len(value) != n:
            raise self.fail(where, f"got {_show(value)}, expected a list of {n} numbers")
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
            shown = _show(value) if scale == 1.0 else f"{_show(value)} ({v:g} {unit})"
            raise self.fail(where, f"got {shown}, expected |{what}| <= {limit:g} {unit}{hint}")
        return v

    def length_value(self, value: Any, where: str, **kw: bool) -> float:
        return self.magnitude(value, where, MAX_LENGTH_M, "length", "m", self.length, UNITS_HINT,
                              **kw)

    def sized_list(self, value: Any, where: str, limit: int) -> list:
        """A list of at most ``limit`` entries."""
        if not isinstance(value, list):
            raise self.fail(where, f"got {_show(value)}, expected a list")
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
        if (not isinstance(value, str) or not value or value.startswith("/")
                or not _name_characters_allowed(value, dotted)):
            what = "letters, digits, _, -, . and / (not first)" if dotted else \
                "letters, digits and _"
            raise self.fail(where, f"got {_show(value)}, expected a name of {what}")
        if len(value) > MAX_NAME:
            raise self.fail(where, f"got a name of {len(value)} characters ({_show(value)}), "
                                   f"expected at most {MAX_NAME} (names become topic names "
                                   "and TF frame ids)")
        return value


_NAME_EXTRA = {False: str.maketrans("", "", "_"), True: str.maketrans("", "", "_-./")}


def _name_characters_allowed(value: str, dotted: bool) -> bool:
    """Every character of ``value`` a letter or digit (``str.isalnum``) or one of _ (and,
    with ``dotted``, - . /)."""
    rest = value.translate(_NAME_EXTRA[dotted])
    return not rest or rest.isalnum()


def _finite_floats(value: Any, n: int) -> Optional[list[float]]:
    """The ``n`` entries of the list ``value`` as floats when each is a finite float or an
    int (not a bool) that converts: what :meth:`_Reader.numbers` accepts, without building
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


def _inertia(r: _Reader, value: Any, mass: float, where: str) -> np.ndarray:
    """Inertia about the com: full matrix, components, or an estimate from a primitive;
    queued for :func:`_check_inertias` (its checks run on all bodies at once)."""
    s2 = r.length ** 2
    if isinstance(value, (list, tuple)):
        if len(value) != 3:
            raise r.fail(where, f"got {_show(value)}, expected a 3x3 matrix")
        inertia = np.array([r.vector(row, f"{where}[{k}]") for k, row in enumerate(value)])
        if s2 != 1.0:                   # x * 1.0 is x: a model in metres needs no scaling
            inertia *= s2
    else:
        value = r.mapping(value, where)
        if "solid_box" in value:
            r.check_keys(value, {"solid_box"}, where)
            sx, sy, sz = (r.length_value(v, f"{where}.solid_box[{k}]", positive=True)
                          for k, v in enumerate(r.vector(value["solid_box"], f"{where}.solid_box")))
            inertia = mass / 12.0 * np.diag([sy**2 + sz**2, sx**2 + sz**2, sx**2 + sy**2])
        elif "solid_cylinder" in value:
            r.check_keys(value, {"solid_cylinder"}, where)
            cyl = r.mapping(value["solid_cylinder"], f"{where}.solid_cylinder")
            r.check_keys(cyl, {"radius", "length", "axis"}, f"{where}.solid_cylinder")
            rad = r.length_value(r.get(cyl, "radius", f"{where}.solid_cylinder"),
                                 f"{where}.solid_cylinder.radius", positive=True)
            ln = r.length_value(r.get(cyl, "length", f"{where}.solid_cylinder"),
                                f"{where}.solid_cylinder.length", positive=True)
            ax = r.choice(r.get(cyl, "axis", f"{where}.solid_cylinder", "z"), tuple(AXES),
                          f"{where}.solid_cylinder.axis")
            transverse = mass * (3 * rad**2 + ln**2) / 12.0
            diag = np.full(3, transverse)
            diag[AXES[ax]] = mass * rad**2 / 2.0
            inertia = np.diag(diag)
        else:
            r.check_keys(value, _INERTIA_KEYS, where)
            given = [value.get(k, 0.0) for k in _INERTIA_ORDER]
            floats = _finite_floats(given, 6) if _INERTIA_DIAGONAL <= value.keys() else None
            if floats is None:          # the checks, in key order, say what is wrong
                floats = [r.number(r.get(value, k, where, 0.0 if k[1] != k[2] else ...),
                                   f"{where}.{k}") for k in _INERTIA_ORDER]
            xx, xy, xz, yy, yz, zz = floats
            inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            if s2 != 1.0:
                inertia *= s2
    r.inertias.append((where, mass, inertia))
    return inertia


_INERTIA_KEYS = {"ixx", "iyy", "izz", "ixy", "ixz", "iyz"}
_INERTIA_ORDER = tuple(sorted(_INERTIA_KEYS))
_INERTIA_DIAGONAL = {"ixx", "iyy", "izz"}


def _check_inertias(r: _Reader) -> None:
    """The checks of the inertias queued by :func:`_inertia` (``r.inertias``), in file order:
    entries within MAX_INERTIA, a symmetric, positive semi-definite matrix (a warning for
    a singular one or one beyond the triangle inequality). One numpy pass over all of them
    (batched ``eigvalsh``, the per-matrix routine); only the bodies it flags are looked at
    one by one, for their messages."""
    pending, r.inertias = r.inertias, []
    if not pending:
        return
    stack = np.array([inertia for _, _, inertia in pending])
    largest = np.abs(stack).max(axis=(1, 2))
    symmetric = np.isclose(stack, np.swapaxes(stack, 1, 2), rtol=1e-9, atol=1e-15).all(
        axis=(1, 2))
    usable = (largest <= MAX_INERTIA) & symmetric
    eig = np.zeros((len(pending), 3))
    eig[usable] = np.linalg.eigvalsh(stack[usable])
    tol = np.maximum(INERTIA_RELATIVE_TOLERANCE * eig[:, 2], INERTIA_ABSOLUTE_TOLERANCE)
    excess = np.max([eig[:, k] - eig[:, (k + 1) % 3] - eig[:, (k + 2) % 3] for k in range(3)],
                    axis=0)
    masses = np.array([mass for _, mass, _ in pending])
    singular = (eig[:, 0] <= 0) & ((eig[:, 2] > 0) | (masses > 0))
    flagged = ~usable | (eig[:, 0] < -tol) | singular | (excess > 1e-12 * eig[:, 2])
    for k in np.flatnonzero(flagged).tolist():
        _inertia_messages(r, *pending[k], eig[k])


def _inertia_messages(r: _Reader, where: str, mass: float, inertia: np.ndarray,
                      eig: np.ndarray) -> None:
    """The error or warnings of one inertia flagged by :func:`_check_inertias` (``eig``:
    its eigenvalues, ascending, where its entries are within bounds and symmetric)."""
    if np.abs(inertia).max() > MAX_INERTIA:
        raise r.fail(where, f"got entries up to {np.abs(inertia).max():g} kg m^2 (SI), expected "
                            f"|entry| <= {MAX_INERTIA:g} kg m^2")
    if not np.allclose(inertia, inertia.T, rtol=1e-9, atol=1e-15):
        raise r.fail(where, f"got {inertia.tolist()}, expected a symmetric matrix")
    # Pinocchio accepts point masses, singular inertias and rounding noise (-3.5e-8
    # eigenvalues) from exported URDFs: within this tolerance they load with a warning;
    # beyond it the kinetic energy could be negative, so the recursions would be wrong.
    tol = max(INERTIA_RELATIVE_TOLERANCE * eig.max(), INERTIA_ABSOLUTE_TOLERANCE)
    if eig.min() < -tol:
        raise r.fail(where, f"eigenvalues {eig.tolist()} (SI), expected a positive "
                            f"semi-definite matrix (eigenvalues >= -{tol:g})")
    if eig.min() <= 0 and (eig.max() > 0 or mass > 0):      # not a massless dummy
        _log.warning("%s: %s: singular inertia, eigenvalues %s (SI): accepted as Pinocchio "
                     "does (a point mass or rounding noise)", r.source, where, eig.tolist())
    # A rigid body has I1 <= I2 + I3; URDFs break it (1e-6 kg dummy bases with only izz,
    # sensor links) and Pinocchio accepts them: the recursions need only the semi-definite
    # matrix, so a violation is a warning
    excess = max(eig[k] - eig[(k + 1) % 3] - eig[(k + 2) % 3] for k in range(3))
    if excess > 1e-12 * eig.max():
        _log.warning("%s: %s: principal moments %s (SI) violate the triangle inequality "
                     "I1 <= I2 + I3 by %g (no rigid body has them): accepted as Pinocchio "
                     "does", r.source, where, eig.tolist(), excess)


def _direction(r: _Reader, value: Any, where: str, n: int) -> np.ndarray:
    """A list of ``n`` numbers, normalised; refused when shorter than MIN_DIRECTION."""
    direction, length = direction_and_length(r.vector(value, where, n))
    if not length > MIN_DIRECTION:
        raise r.fail(where, f"got {_show(value)} of length {length:g}, expected a nonzero "
                            f"vector (length > {MIN_DIRECTION:g}), normalised at load")
    return direction


def _axis(r: _Reader, value: Any, where: str) -> np.ndarray:
    """A joint axis: "x", "-y", ... or a list of 3 numbers (any direction)."""
    if isinstance(value, str):
        name = r.choice(value, JOINT_AXES, where)
        axis = np.zeros(3)
        axis[AXES[name[-1]]] = -1.0 if name.startswith("-") else 1.0
        return axis
    if not isinstance(value, (list, tuple)):
        raise r.fail(where, f"got {_show(value)}, expected {', '.join(JOINT_AXES[:-1])} or "
                            f"{JOINT_AXES[-1]}, or a list of 3 numbers")
    return _direction(r, value, where, 3)


def _rotation(r: _Reader, value: Any, where: str) -> np.ndarray:
    """A constant rotation: ZXZ Euler angles [a, b, c], {rpy: [r, p, y]} (URDF: Rz(y) Ry(p)
    Rx(r)), {quaternion: [x, y, z, w]} or {matrix: 3x3 rows}; angles in the file's unit."""
    def angles(v: Any, at: str) -> list[float]:
        return r.magnitudes(v, at, MAX_ANGLE_RAD, "angle", "rad", r.angle)

    if isinstance(value, (list, tuple)):
        return r.zxz_euler(angles(value, where))
    value = r.mapping(value, where)
    forms = ("rpy", "quaternion", "matrix")
    if len(value) != 1 or next(iter(value)) not in forms:
        raise r.fail(where, f"got {_show(value)}, expected a list of 3 ZXZ Euler angles or one "
                            "of {rpy: [r, p, y]}, {quaternion: [x, y, z, w]}, {matrix: 3x3}")
    form, data = next(iter(value.items()))
    at = f"{where}.{form}"
    if form == "rpy":
        return rpy_to_matrix(*angles(data, at))
    if form == "quaternion":
        return quaternion_matrix(*_direction(r, data, at, 4))
    if not isinstance(data, (list, tuple)) or len(data) != 3:
        raise r.fail(at, f"got {_show(data)}, expected 3 rows of 3 numbers")
    matrix = np.array([r.vector(row, f"{at}[{k}]") for k, row in enumerate(data)])
    error = float(np.abs(matrix.T @ matrix - np.eye(3)).max())
    det = float(np.linalg.det(matrix))
    if error > ROTATION_TOLERANCE or abs(det - 1.0) > ROTATION_TOLERANCE:
        raise r.fail(at, f"got {_show(data)} (max |R^T R - 1| = {error:.3g}, det {det:.9g}), "
                         f"expected a rotation: orthonormal with determinant +1 within "
                         f"{ROTATION_TOLERANCE:g}")
    u, _, vt = np.linalg.svd(matrix)
    return u @ vt     # the nearest rotation: placements stay rigid to rounding


_NO_LIMITS, _NO_FRICTION = JointLimits(), Friction()     # frozen: one each for every joint


def _limits(r: _Reader, value: Any, jtype: JointType, where: str) -> JointLimits:
    if value is None:
        return _NO_LIMITS
    value = r.mapping(value, where)
    r.check_keys(value, {"lower", "upper", "velocity", "effort"}, where)
    if jtype.angular:
        pos, units = r.angle, {"position": (MAX_ANGLE_RAD, "rad"), "effort": (MAX_EFFORT, "N m"),
                               "velocity": (MAX_ANGULAR_VELOCITY, "rad/s")}
    else:
        pos, units = r.length, {"position": (MAX_LENGTH_M, "m"), "effort": (MAX_EFFORT, "N"),
                                "velocity": (MAX_LINEAR_VELOCITY, "m/s")}
    out = {}
    for key, what, scale in (("lower", "position", pos), ("upper", "position", pos),
                             ("velocity", "velocity", pos), ("effort", "effort", 1.0)):
        if key in value:
            limit, unit = units[what]
            out[key] = r.magnitude(value[key], f"{where}.{key}", limit, what, unit, scale,
                                   "" if jtype.angular or key == "effort" else UNITS_HINT,
                                   positive=key in ("velocity", "effort"))
    if "lower" in out and "upper" in out and out["lower"] >= out["upper"]:
        raise r.fail(where, f"lower {_show(value['lower'])} >= upper {_show(value['upper'])}, expected lower < upper")
    return JointLimits(**out)


def _friction(r: _Reader, value: Any, linear: bool, where: str) -> Friction:
    """Viscous (per length unit when linear) and Coulomb coefficients, both >= 0."""
    if value is None:
        return _NO_FRICTION
    value = r.mapping(value, where)
    r.check_keys(value, {"viscous", "coulomb"}, where)
    viscous = r.magnitude(value.get("viscous", 0.0), f"{where}.viscous", MAX_VISCOUS, "viscous",
                          "N s/m" if linear else "N m s/rad", 1.0 / r.length if linear else 1.0,
                          nonnegative=True)
    coulomb = r.magnitude(value.get("coulomb", 0.0), f"{where}.coulomb", MAX_EFFORT, "coulomb",
                          "N" if linear else "N m", nonnegative=True)
    return Friction(viscous, coulomb)


_BODY_KEYS = frozenset({"name", "parent", "origin", "rotation", "joint", "mass", "com", "inertia",
                        "points", "virtual"})
_JOINT_KEYS = frozenset({"type", "axis", "coordinate", "multiplier", "offset", "limits",
                         "friction"})
_JOINT_TYPE_NAMES = tuple(JOINT_TYPES)


def _body(r: _Reader, data: Any, k: int, max_points: int) -> Body:
    """Body ``k``; at most ``max_points`` named points (the model's remaining budget)."""
    data, name, where = r.named_entry(data, f"bodies[{k}]", _BODY_KEYS, dotted=True)
    if name == "world":
        raise r.fail(f"{where}.name", "'world' is the ground and cannot be declared as a body")
    parent = r.name(r.get(data, "parent", where), f"{where}.parent", dotted=True)
    origin = r.length_vector(r.get(data, "origin", where, [0, 0, 0]), f"{where}.origin")
    rotation = _rotation(r, r.get(data, "rotation", where, [0, 0, 0]), f"{where}.rotation")
    joint = r.mapping(r.get(data, "joint", where), f"{where}.joint")
    r.check_keys(joint, _JOINT_KEYS, f"{where}.joint")
    jtype = JOINT_TYPES[r.choice(r.get(joint, "type", f"{where}.joint"), _JOINT_TYPE_NAMES,
                                 f"{where}.joint.type")]
    axis = np.zeros(3)
    coordinate: Optional[str] = None
    multiplier, offset = 1.0, 0.0
    if jtype == JointType.FLOATING:
        extra = sorted(set(joint) & {"axis", "multiplier", "offset", "limits", "friction"})
        if extra:
            raise r.fail(f"{where}.joint", f"got {', '.join(extra)} for a floating joint "
                                           "(free-flyer), expected only type and coordinate")
        if parent != "world":
            raise r.fail(f"{where}.joint.type", f"a floating joint (free-flyer) on a body whose "
                                                f"parent is {_show(parent)}, expected it only on a "
                                                "body whose parent is world (the root joint)")
        coordinate = r.name(r.get(joint, "coordinate", f"{where}.joint"),
                            f"{where}.joint.coordinate", dotted=True)
    elif jtype != JointType.FIXED:
        axis = _axis(r, r.get(joint, "axis", f"{where}.joint"), f"{where}.joint.axis")
        coordinate = r.name(r.get(joint, "coordinate", f"{where}.joint"),
                            f"{where}.joint.coordinate", dotted=True)
        multiplier = r.number(r.get(joint, "multiplier", f"{where}.joint", 1.0),
                              f"{where}.joint.multiplier")
        if multiplier == 0:
            raise r.fail(f"{where}.joint.multiplier", "got 0, expected a non-zero number")
        low, high = MULTIPLIER_RANGE
        if not low <= abs(multiplier) <= high:
            raise r.fail(f"{where}.joint.multiplier", f"got {_show(multiplier)}, expected "
                                                      f"{low:g} <= |multiplier| <= {high:g}")
        if "offset" in joint:       # in the joint value's unit, like its limits
            offset = (r.magnitude(joint["offset"], f"{where}.joint.offset", MAX_ANGLE_RAD,
                                  "angle", "rad", r.angle) if jtype.angular else
                      r.length_value(joint["offset"], f"{where}.joint.offset"))
    else:
        extra = sorted(set(joint) & {"axis", "coordinate", "multiplier", "offset", "limits",
                                     "friction"})
        if extra:
            raise r.fail(f"{where}.joint", f"got {', '.join(extra)} for a fixed joint (F), "
                                           "expected none")
    limits = _limits(r, joint.get("limits"), jtype, f"{where}.joint.limits")
    friction = _friction(r, joint.get("friction"), jtype.linear,
                         f"{where}.joint.friction")
    virtual = r.get(data, "virtual", where, False)
    if not isinstance(virtual, bool):
        raise r.fail(f"{where}.virtual", f"got {_show(virtual)}, expected true or false")
    if virtual:
        extra = sorted(set(data) & {"mass", "com", "inertia"})
        if extra:
            raise r.fail(where, f"a virtual (massless) body takes no {', '.join(extra)}")
        mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
    else:
        # mass 0 with an inertia is allowed: URDFs (and Pinocchio) have such dummy links
        mass = r.magnitude(r.get(data, "mass", where), f"{where}.mass", MAX_MASS_KG, "mass", "kg",
                           nonnegative=True)
        com = r.length_vector(r.get(data, "com", where), f"{where}.com")
        inertia = _inertia(r, r.get(data, "inertia", where), mass, f"{where}.inertia")
    points_data = r.mapping(r.get(data, "points", where, {}) or {}, f"{where}.points")
    if len(points_data) > max_points:
        raise r.fail(f"{where}.points", f"the model's named points exceed {MAX_POINTS}, expected "
                                        f"at most {MAX_POINTS} in all")
    points = {}
    for pname, pval in points_data.items():
        pname = r.name(pname, f"{where}.points")
        if pname in ("origin", "com"):
            raise r.fail(f"{where}.points.{pname}", "reserved name, expected another point name")
        points[pname] = r.length_vector(pval, f"{where}.points.{pname}")
    return Body(name=name, parent=parent, joint_type=jtype, axis=axis, coordinate=coordinate,
                multiplier=multiplier, rotation=rotation, origin=origin, mass=mass,
                com=com, inertia=inertia, points=points, virtual=virtual, limits=limits,
                friction=friction, offset=offset)


def _order_parents_first(r: _Reader, bodies: list[Body]) -> list[Body]:
    """Depth-first from the world, children in file order (chains stay together); one pass
    over the bodies and an explicit stack, so a chain of any length is ordered in O(n)."""
    children: dict[str, list[Body]] = {}
    names: set[str] = set()
    for k, b in enumerate(bodies):
        if b.name in names:
            raise r.fail(f"bodies[{k}].name", f"duplicate body name {_show(b.name)}, expected unique names")
        names.add(b.name)
        children.setdefault(b.parent, []).append(b)
    for k, b in enumerate(bodies):
        if b.parent != "world" and b.parent not in names:
            raise r.fail(f"bodies[{k}] ({b.name}).parent",
                         f"unknown parent {_show(b.parent)}, expected world or one of the bodies")
    ordered: list[Body] = []
    stack = children.get("world", [])[::-1]
    while stack:
        b = stack.pop()
        ordered.append(b)
        stack.extend(children.get(b.name, [])[::-1])
    if len(ordered) != len(bodies):
        seen = {b.name for b in ordered}
        cycle = ", ".join(sorted(b.name for b in bodies if b.name not in seen))
        raise r.fail("bodies", f"cycle in the parent relation among {cycle}, expected a tree "
                               "rooted at world")
    return ordered


def _point(r: _Reader, model: Model, value: Any, where: str) -> PointRef:
    if not isinstance(value, str) or "." not in value:
        raise r.fail(where, f"got {_show(value)}, expected BODY.POINT")
    try:
        return model.point(value)
    except KeyError as exc:
        raise r.fail(where, exc.args[0]) from None


def _spring_params(r: _Reader, data: Mapping, where: str) -> SpringParams:
    return SpringParams(
        stiffness=r.magnitude(r.get(data, "stiffness", where), f"{where}.stiffness",
                              MAX_STIFFNESS, "stiffness", "N/m", 1.0 / r.length, nonnegative=True),
        free_length=r.length_value(r.get(data, "free_length", where), f"{where}.free_length",
                                   positive=True),
        preload=r.magnitude(r.get(data, "preload", where, 0.0), f"{where}.preload", MAX_EFFORT,
                            "preload", "N"))


def _actuator(r: _Reader, tree: Model, data: Any, k: int) -> Actuator:
    data, name, where = r.named_entry(data, f"actuators[{k}]", {
        "name", "drives", "base", "end", "branch", "stroke", "default_length", "force_limit",
        "velocity_limit", "friction"})
    drives_name = r.get(data, "drives", where)
    try:
        drives = tree.body_index(drives_name)
    except KeyError:
        raise r.fail(f"{where}.drives", f"got {_show(drives_name)}, expected a body name") from None
    body = tree.bodies[drives]
    if body.joint_type in (JointType.FIXED, JointType.FLOATING):
        raise r.fail(f"{where}.drives", f"{drives_name} has a {body.joint_type.name.lower()} "
                                        "joint, expected R or P")
    base = _point(r, tree, r.get(data, "base", where), f"{where}.base")
    end = _point(r, tree, r.get(data, "end", where), f"{where}.end")
    if tree.body_names[base.body] != body.parent:
        raise r.fail(f"{where}.base", f"got a point of {tree.body_names[base.body]}, expected a "
                                      f"point of {body.parent} (the driven joint's parent)")
    if end.body != drives:
        raise r.fail(f"{where}.end", f"got a point of {tree.body_names[end.body]}, expected a "
                                     f"point of {drives_name}")
    branch = r.get(data, "branch", where)
    if branch not in (1, -1) or isinstance(branch, bool):
        raise r.fail(f"{where}.branch", f"got {_show(branch)}, expected +1 or -1")
    stroke = r.get(data, "stroke", where)
    if not isinstance(stroke, (list, tuple)) or len(stroke) != 2:
        raise r.fail(f"{where}.stroke", f"got {_show(stroke)}, expected [min, max]")
    lo, hi = (r.length_value(v, f"{where}.stroke[{i}]", positive=True) for i, v in enumerate(stroke))
    if lo >= hi:
        raise r.fail(f"{where}.stroke", f"got {_show(stroke)}, expected min < max")
    default = r.length_value(r.get(data, "default_length", where), f"{where}.default_length",
                             positive=True)
    if not lo <= default <= hi:
        raise r.fail(f"{where}.default_length", f"got {_show(data['default_length'])}, expected a "
                                                f"value within the stroke {_show(stroke)}")
    force_limit, velocity_limit = data.get("force_limit"), data.get("velocity_limit")
    if force_limit is not None:
        force_limit = r.magnitude(force_limit, f"{where}.force_limit", MAX_EFFORT, "force", "N",
                                  positive=True)
    if velocity_limit is not None:      # length units per second
        velocity_limit = r.magnitude(velocity_limit, f"{where}.velocity_limit",
                                     MAX_LINEAR_VELOCITY, "velocity", "m/s", r.length,
                                     UNITS_HINT, positive=True)
    return Actuator(name=name, drives=drives, base=base, end=end, branch=int(branch),
                    stroke=(lo, hi), default_length=default, force_limit=force_limit,
                    velocity_limit=velocity_limit,
                    friction=_friction(r, data.get("friction"), True, f"{where}.friction"))


def _spring(r: _Reader, tree: Model, data: Any, k: int) -> Spring:
    data, name, where = r.named_entry(data, f"springs[{k}]", {
        "name", "between", "stiffness", "free_length", "preload"})
    between = r.get(data, "between", where)
    if not isinstance(between, (list, tuple)) or len(between) != 2:
        raise r.fail(f"{where}.between", f"got {_show(between)}, expected [BODY.POINT, BODY.POINT]")
    start = _point(r, tree, between[0], f"{where}.between[0]")
    end = _point(r, tree, between[1], f"{where}.between[1]")
    return Spring(name=name, start=start, end=end, params=_spring_params(r, data, where))


def _balancer(r: _Reader, tree: Model, data: Any, k: int) -> Balancer:
    data, name, where = r.named_entry(data, f"balancers[{k}]", {
        "name", "pivot", "hanger", "lever_length", "hanger_length", "spring_attach", "side",
        "spring"})
    pivot = _point(r, tree, r.get(data, "pivot", where), f"{where}.pivot")
    hanger = _point(r, tree, r.get(data, "hanger", where), f"{where}.hanger")
    lever = r.length_value(r.get(data, "lever_length", where), f"{where}.lever_length", positive=True)
    hang = r.length_value(r.get(data, "hanger_length", where), f"{where}.hanger_length", positive=True)
    attach = r.length_value(r.get(data, "spring_attach", where), f"{where}.spring_attach",
                            positive=True)
    if attach > lever:
        raise r.fail(f"{where}.spring_attach", f"got {_show(data['spring_attach'])}, expected a "
                                               f"distance <= lever_length {_show(data['lever_length'])}")
    side = r.get(data, "side", where)
    if side not in (1, -1) or isinstance(side, bool):
        raise r.fail(f"{where}.side", f"got {_show(side)}, expected +1 or -1")
    spring = r.mapping(r.get(data, "spring", where), f"{where}.spring")
    r.check_keys(spring, {"anchor", "stiffness", "free_length", "preload"}, f"{where}.spring")
    anchor = _point(r, tree, r.get(spring, "anchor", f"{where}.spring"), f"{where}.spring.anchor")
    if anchor.body != pivot.body:
        raise r.fail(f"{where}.spring.anchor", "expected a point of the pivot's body")
    if abs(anchor.local[1] - pivot.local[1]) > 1e-9:
        raise r.fail(f"{where}.spring.anchor", f"y = {anchor.local[1]:g} m, expected the lever's "
                                               f"plane y = {pivot.local[1]:g} m (the pivot's)")
    return Balancer(name=name, pivot=pivot, hanger=hanger, spring_anchor=anchor,
                    lever_length=lever, hanger_length=hang, spring_attach=attach, side=int(side),
                    spring=_spring_params(r, spring, f"{where}.spring"))


def _check_free_flyer_names(r: _Reader, bodies: list[Body]) -> None:
    """A floating joint's coordinate is its own (no coupled joint shares it), and the names
    of its velocity and configuration entries (NAME.vx, NAME.qw, ...) are no other
    coordinate's."""
    users = Counter(b.coordinate for b in bodies if b.coordinate is not None)
    for b in bodies:
        if b.joint_type != JointType.FLOATING:
            continue
        taken = sorted({f"{b.coordinate}.{p}" for p in FREE_FLYER_VELOCITIES
                        + FREE_FLYER_CONFIGURATION} & set(users))
        if users[b.coordinate] > 1 or taken:
            raise r.fail(f"bodies ({b.name}).joint.coordinate",
                         f"{_show(b.coordinate)} of a floating joint is shared with another "
                         f"joint or its entries {', '.join(taken) or 'NAME.vx ...'} name other "
                         "coordinates, expected a coordinate of its own")


def model_from_dict(data: Any, source: str = "<memory>") -> Model:
    """Validate a parsed model document and build the :class:`Model` (SI units)."""
    base = _Reader(source, 1.0, 1.0)
    data = base.mapping(data, "top level")
    base.check_keys(data, {"format", "name", "units", "gravity", "bodies", "actuators", "springs",
                           "balancers", "loops"}, "top level")
    fmt = base.get(data, "format", "top level")
    if fmt != FORMAT:
        raise base.fail("format", f"got {_show(fmt)}, expected {_show(FORMAT)}")
    units = base.mapping(base.get(data, "units", "top level", {}) or {}, "units")
    base.check_keys(units, {"length", "angle"}, "units")
    length_unit = base.choice(units.get("length", "m"), tuple(LENGTH_UNITS), "units.length")
    angle_unit = base.choice(units.get("angle", "rad"), tuple(ANGLE_UNITS), "units.angle")
    r = _Reader(source, LENGTH_UNITS[length_unit], ANGLE_UNITS[angle_unit])
    name = r.name(r.get(data, "name", "top level"), "name", dotted=True)
    gravity_data = r.get(data, "gravity", "top level", [0.0, 0.0, -9.81])
    r.vector(gravity_data, "gravity")
    gravity = np.array([r.magnitude(v, f"gravity[{k}]", MAX_GRAVITY, "gravity", "m/s^2")
                        for k, v in enumerate(gravity_data)])
    bodies_data = r.sized_list(r.get(data, "bodies", "top level"), "bodies", MAX_BODIES)
    if not bodies_data:
        raise r.fail("bodies", "got an empty list, expected a non-empty list")
    bodies: list[Body] = []
    points_left = MAX_POINTS            # checked before a body's points are read
    try:
        for k, item in enumerate(bodies_data):
            bodies.append(_body(r, item, k, points_left))
            points_left -= len(bodies[-1].points)
    except ModelError:
        _check_inertias(r)              # an inertia read before the failing field: first
        raise
    _check_inertias(r)
    bodies = _order_parents_first(r, bodies)
    _check_free_flyer_names(r, bodies)
    tree = Model(name=name, source=source, gravity=gravity, bodies=tuple(bodies))
    sections = {}
    for key, build in (("actuators", _actuator), ("springs", _spring), ("balancers", _balancer)):
        items = r.sized_list(r.get(data, key, "top level", []) or [], key, MAX_BODIES)
        sections[key] = tuple(build(r, tree, item, k) for k, item in enumerate(items))
    counts = Counter([b.name for b in bodies] + [x.name for s in sections.values() for x in s])
    dup = sorted(n for n, count in counts.items() if count > 1)
    if dup:
        raise r.fail("top level", f"duplicate name(s) {', '.join(dup)} across bodies, actuators, "
                                  "springs and balancers, expected unique names")
    coords = set(tree.coordinate_names)
    for a in sections["actuators"]:
        if a.name in coords:
            raise r.fail(f"actuators ({a.name}).name", "the name is also a joint coordinate")
    driven = Counter(tree.bodies[a.drives].coordinate for a in sections["actuators"])
    users = Counter(b.coordinate for b in bodies)
    for a in sections["actuators"]:
        c = tree.bodies[a.drives].coordinate
        if driven[c] > 1 or users[c] > 1:
            moved = ", ".join(b.name for b in bodies if b.coordinate == c)
            raise r.fail(f"actuators ({a.name}).drives",
                         f"coordinate {_show(c)} must be driven by one actuator and move one joint, "
                         f"it moves {moved}")
        if tree.bodies[a.drives].offset != 0.0:     # the closed forms solve the joint value
            raise r.fail(f"actuators ({a.name}).drives", f"the joint of "
                         f"{tree.body_names[a.drives]} has an offset, expected none on a joint "
                         "driven by an actuator")
    if data.get("loops") is not None:
        sections["loops"] = _loops(r, tree, data["loops"], driven)
    model = tree if not any(sections.values()) else \
        Model(name=name, source=source, gravity=gravity, bodies=tuple(bodies), **sections)
    from .actuator_geometry import check_actuator_geometry
    for a in model.actuators:
        try:
            check_actuator_geometry(model, a)
        except ValueError as exc:
            raise r.fail(f"actuators ({a.name})", str(exc)) from None
    return model


def _cut(r: _Reader, tree: Model, data: Any, k: int) -> CutJoint:
    """Cut joint ``k`` of the loops section (model/cut_joints.py)."""
    data, name, where = r.named_entry(data, f"loops.cuts[{k}]", {
        "name", "type", "predecessor", "successor", "rotation", "successor_rotation", "axis",
        "axis_b"})
    jtype = r.choice(r.get(data, "type", where), tuple(CUT_TYPES), f"{where}.type")
    a = _point(r, tree, r.get(data, "predecessor", where), f"{where}.predecessor")
    b = _point(r, tree, r.get(data, "successor", where), f"{where}.successor")
    if a.body == b.body:
        raise r.fail(f"{where}.successor", f"a point of {tree.body_names[a.body]}, the "
                                           "predecessor's body, expected a point of another body")
    axes = {}
    for key, needed in (("axis", t_needs_axis(jtype)), ("axis_b", jtype == "U")):
        if needed:
            axes[key] = _axis(r, r.get(data, key, where), f"{where}.{key}")
        elif key in data:
            raise r.fail(f"{where}.{key}", f"given for a {jtype} cut joint, expected none")
    axis, axis_b = axes.get("axis", np.zeros(3)), axes.get("axis_b", np.zeros(3))
    if jtype == "U" and abs(float(axis @ axis_b)) > 1e-9:
        raise r.fail(f"{where}.axis_b", f"not perpendicular to axis (cosine "
                                        f"{float(axis @ axis_b):.3g}), expected perpendicular")
    rot = {key: _rotation(r, r.get(data, key, where, [0, 0, 0]), f"{where}.{key}")
           for key in ("rotation", "successor_rotation")}
    return CutJoint(name=name, type=jtype, body_a=a.body, origin_a=a.local, body_b=b.body,
                    origin_b=b.local, rotation_a=rot["rotation"],
                    rotation_b=rot["successor_rotation"], axis=axis, axis_b=axis_b)


def _loops(r: _Reader, tree: Model, data: Any, driven: Counter) -> Loops:
    """The loops section: cut joints, the independent coordinates, the assembly guess; the
    fundamental loops and their Gruebler count (model/cut_joints.py). The checks that need
    the assembled configuration (the constraint Jacobian's rank) run when the closed chain is
    built (mechanisms/closed_chains)."""
    data = r.mapping(data, "loops")
    r.check_keys(data, {"independent", "guess", "cuts"}, "loops")
    if driven:
        raise r.fail("loops", "a model with actuators (their closed forms) and loops, "
                              "expected one or the other: write the actuators as loops (docs/"
                              "closed_chains.md)")
    cuts_data = r.get(data, "cuts", "loops")
    if not isinstance(cuts_data, list):
        raise r.fail("loops.cuts", f"got {_show(cuts_data)}, expected a list of cut joints")
    # Each cut closes a loop and removes at least 3 freedoms (CUT_TYPES); more cuts than
    # bodies over-constrain any tree (n bodies have at most n joint coordinates besides a
    # free-flyer's), and the cap bounds the loops' cost before any cut is read.
    if not 1 <= len(cuts_data) <= tree.n_bodies:
        raise r.fail("loops.cuts", f"got {len(cuts_data)} cut joints, expected 1 to "
                                   f"{tree.n_bodies} (at most one per body of the tree)")
    cuts = tuple(_cut(r, tree, item, k) for k, item in enumerate(cuts_data))
    names = Counter(c.name for c in cuts)
    bodies = set(tree.body_names)
    dup = sorted(n for n, count in names.items() if count > 1 or n in bodies)
    if dup:
        raise r.fail("loops.cuts", f"duplicate name(s) {', '.join(dup)}, expected names unique "
                                   "among cut joints and bodies")
    index = {c: k for k, c in enumerate(tree.coordinate_names)}    # O(1) look-ups
    independent = r.sized_list(r.get(data, "independent", "loops"), "loops.independent",
                               tree.n_coordinates)
    chosen: set[int] = set()
    for k, c in enumerate(independent):
        where = f"loops.independent[{k}]"
        if not isinstance(c, str) or c not in index:
            raise r.fail(where, f"got {_show(c)}, expected a coordinate of the model: "
                                f"{', '.join(tree.coordinate_names)}")
        if index[c] in chosen:
            raise r.fail(where, f"{c} listed twice, expected each independent coordinate once")
        chosen.add(index[c])
    guess = np.zeros(tree.n_coordinates)
    guess_data = r.mapping(r.get(data, "guess", "loops", {}) or {}, "loops.guess")
    if len(guess_data) > tree.n_coordinates:
        raise r.fail("loops.guess", f"got {len(guess_data)} entries, expected at most "
                                    f"{tree.n_coordinates} (one per coordinate)")
    first_joint = {}                   # coordinate -> the first body its joint moves
    for b in reversed(tree.bodies):
        if b.coordinate is not None:
            first_joint[b.coordinate] = b
    for c, value in guess_data.items():
        where = f"loops.guess.{c}"
        if not isinstance(c, str) or c not in index:
            raise r.fail(where, "expected a coordinate of the model")
        first = first_joint.get(c)
        if first is None:           # a free-flyer's velocity entry (NAME.vx ...): no joint's
            raise r.fail(where, "a free-flyer's velocity, expected a coordinate of a loop's "
                                "revolute or prismatic joints")
        guess[index[c]] = (r.magnitude(value, where, MAX_ANGLE_RAD, "angle", "rad", r.angle)
                           if first.joint_type.angular
                           else r.length_value(value, where))
    groups = loop_groups(tree.coordinate_index, tree.parent, cuts, chosen)
    in_loops = set().union(*(g.coordinates for g in groups))
    for c in sorted(chosen - in_loops):
        raise r.fail("loops.independent", f"{tree.coordinate_names[c]} moves no body of a "
                                          "loop, expected coordinates of the loops' joints")
    for g in groups:
        if not g.dependent:
            raise r.fail("loops.independent", f"{g.label(Loops(cuts, (), guess, groups))}: "
                                              "every coordinate declared independent, expected "
                                              "some dependent ones to solve")
    return Loops(cuts, tuple(tree.coordinate_names[c] for c in sorted(chosen)), guess, groups)
