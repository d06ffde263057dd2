"""Validate a model document (format in docs/model_format.md) and build the model.

Files and texts are read by :mod:`charmie_dynamics.model.reader` (YAML, or a URDF through
:mod:`charmie_dynamics.model.urdf`), the text read and parsed by the package's one guard
(:mod:`charmie_dynamics.documents`:
regular files only, a size cap, strict UTF-8, PyYAML's safe loader with every parser
exception turned into a :class:`ModelError`). Every check raises :class:`ModelError` whose
message names the file, the entry and field, the bad value and what was expected (the
vocabulary: validation.py). Lengths written in millimetres (``units: {length: mm}``) are converted
to metres here, once.
"""
from __future__ import annotations

import logging
import math
from collections import Counter
from typing import Any

import numpy as np

from ..documents import bounded
from .cut_joints import CUT_TYPES, CutJoint, Loops, loop_groups, t_needs_axis
from .fields import read_axis, read_direction, read_friction, read_point
from .joint_types import JOINT_KEYS, LETTERS, by_letter
from .joint_types.cylindrical import cylindrical_bodies, is_cylindrical
from .kinds import MECHANISM_KINDS
from .model import Actuator, Body, JointType, Model, PlanarBase
from .parameters import FREE_FLYER_CONFIGURATION, FREE_FLYER_VELOCITIES
from .rotations import AXES, quaternion_matrix, rpy_to_matrix
from .validation import (INERTIA_ABSOLUTE_TOLERANCE, INERTIA_RELATIVE_TOLERANCE, MAX_ANGLE_RAD,
                         MAX_BODIES, MAX_EFFORT, MAX_GRAVITY, MAX_INERTIA, MAX_LINEAR_VELOCITY,
                         MAX_MASS_KG, MAX_POINTS, ROTATION_TOLERANCE, UNITS_HINT, FieldReader,
                         ModelError, finite_floats, show)

FORMAT = "charmie_dynamics/model/1"
LENGTH_UNITS = {"m": 1.0, "mm": 1e-3}
ANGLE_UNITS = {"rad": 1.0, "deg": math.pi / 180.0}

_log = logging.getLogger(__name__)


def _inertia(r: FieldReader, value: Any, mass: float, where: str) -> np.ndarray:
    """Inertia about the com: full matrix, components, or an estimate from a primitive;
    queued for :func:`_check_inertias` (its checks run on all bodies at once)."""
    s2 = r.length ** 2
    if isinstance(value, (list, tuple)):
        if len(value) != 3:
            raise r.fail(where, f"got {show(value)}, expected a 3x3 matrix")
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
            floats = finite_floats(given, 6) if _INERTIA_DIAGONAL <= value.keys() else None
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


def _check_inertias(r: FieldReader) -> None:
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


def _inertia_messages(r: FieldReader, where: str, mass: float, inertia: np.ndarray,
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


def _rotation(r: FieldReader, value: Any, where: str) -> np.ndarray:
    """A constant rotation: ZXZ Euler angles [a, b, c], {rpy: [r, p, y]} (URDF: Rz(y) Ry(p)
    Rx(r)), {quaternion: [x, y, z, w]} or {matrix: 3x3 rows}; angles in the file's unit."""
    def angles(v: Any, at: str) -> list[float]:
        return r.magnitudes(v, at, MAX_ANGLE_RAD, "angle", "rad", r.angle)

    if isinstance(value, (list, tuple)):
        return r.zxz_euler(angles(value, where))
    value = r.mapping(value, where)
    forms = ("rpy", "quaternion", "matrix")
    if len(value) != 1 or next(iter(value)) not in forms:
        raise r.fail(where, f"got {show(value)}, expected a list of 3 ZXZ Euler angles or one "
                            "of {rpy: [r, p, y]}, {quaternion: [x, y, z, w]}, {matrix: 3x3}")
    form, data = next(iter(value.items()))
    at = f"{where}.{form}"
    if form == "rpy":
        return rpy_to_matrix(*angles(data, at))
    if form == "quaternion":
        return quaternion_matrix(*read_direction(r, data, at, 4))
    if not isinstance(data, (list, tuple)) or len(data) != 3:
        raise r.fail(at, f"got {show(data)}, expected 3 rows of 3 numbers")
    matrix = np.array([r.vector(row, f"{at}[{k}]") for k, row in enumerate(data)])
    error = float(np.abs(matrix.T @ matrix - np.eye(3)).max())
    det = float(np.linalg.det(matrix))
    if error > ROTATION_TOLERANCE or abs(det - 1.0) > ROTATION_TOLERANCE:
        raise r.fail(at, f"got {show(data)} (max |R^T R - 1| = {error:.3g}, det {det:.9g}), "
                         f"expected a rotation: orthonormal with determinant +1 within "
                         f"{ROTATION_TOLERANCE:g}")
    u, _, vt = np.linalg.svd(matrix)
    return u @ vt     # the nearest rotation: placements stay rigid to rounding


_BODY_KEYS = frozenset({"name", "parent", "origin", "rotation", "joint", "mass", "com", "inertia",
                        "points", "virtual"})


def _bodies(r: FieldReader, data: Any, k: int, max_points: int) -> list[Body]:
    """Body ``k`` (:func:`_body`), or the two bodies of a cylindrical joint
    (``joint_types/cylindrical.py``)."""
    if not is_cylindrical(data):
        return [_body(r, data, k, max_points)]
    return cylindrical_bodies(r, data, k, lambda entry: _body(r, entry, k, max_points))


def _body(r: FieldReader, data: Any, k: int, max_points: int) -> Body:
    """Body ``k``; at most ``max_points`` named points (the model's remaining budget)."""
    data, name, where = r.named_entry(data, f"bodies[{k}]", _BODY_KEYS, dotted=True)
    if name == "world":
        raise r.fail(f"{where}.name", "'world' is the ground and cannot be declared as a body")
    parent = r.name(r.get(data, "parent", where), f"{where}.parent", dotted=True)
    origin = r.length_vector(r.get(data, "origin", where, [0, 0, 0]), f"{where}.origin")
    rotation = _rotation(r, r.get(data, "rotation", where, [0, 0, 0]), f"{where}.rotation")
    joint = r.mapping(r.get(data, "joint", where), f"{where}.joint")
    r.check_keys(joint, JOINT_KEYS, f"{where}.joint")
    jtype = by_letter(r.choice(r.get(joint, "type", f"{where}.joint"), LETTERS,
                               f"{where}.joint.type"))
    fields = jtype.fields(r, joint, f"{where}.joint", parent)
    virtual = r.get(data, "virtual", where, False)
    if not isinstance(virtual, bool):
        raise r.fail(f"{where}.virtual", f"got {show(virtual)}, expected true or false")
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
    return Body(name=name, parent=parent, joint_type=jtype.code, axis=fields.axis,
                coordinate=fields.coordinate, multiplier=fields.multiplier, rotation=rotation,
                origin=origin, mass=mass, com=com, inertia=inertia, points=points,
                virtual=virtual, limits=fields.limits, friction=fields.friction,
                offset=fields.offset, pitch=fields.pitch)


def _order_parents_first(r: FieldReader, bodies: list[Body], file_index: list[int]
                         ) -> list[Body]:
    """Depth-first from the world, children in file order (chains stay together); one pass
    over the bodies and an explicit stack, so a chain of any length is ordered in O(n).
    ``file_index``: each body's entry in the file (a cylindrical joint's two bodies share
    one)."""
    def made_by_the_loader(j: int) -> bool:         # a cylindrical joint's NAME_slide
        return j + 1 < len(bodies) and file_index[j + 1] == file_index[j]

    children: dict[str, list[Body]] = {}
    names: dict[str, int] = {}
    for k, b in enumerate(bodies):
        if b.name in names:
            note = " (also the virtual body of a cylindrical joint, NAME_slide)" \
                if made_by_the_loader(names[b.name]) or made_by_the_loader(k) else ""
            raise r.fail(f"bodies[{file_index[k]}].name",
                         f"duplicate body name {show(b.name)}{note}, expected unique names")
        names[b.name] = k
        children.setdefault(b.parent, []).append(b)
    for k, b in enumerate(bodies):
        if b.parent != "world" and b.parent not in names:
            entry = bodies[k + 1].name if made_by_the_loader(k) else b.name   # the file's
            raise r.fail(f"bodies[{file_index[k]}] ({entry}).parent",
                         f"unknown parent {show(b.parent)}, expected world or one of the bodies")
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


def _actuator(r: FieldReader, tree: Model, data: Any, k: int) -> Actuator:
    data, name, where = r.named_entry(data, f"actuators[{k}]", {
        "name", "drives", "base", "end", "branch", "stroke", "default_length", "force_limit",
        "velocity_limit", "friction"})
    drives_name = r.get(data, "drives", where)
    try:
        drives = tree.body_index(drives_name)
    except KeyError:
        raise r.fail(f"{where}.drives", f"got {show(drives_name)}, expected a body name") from None
    body = tree.bodies[drives]
    if body.joint_type not in (JointType.REVOLUTE, JointType.PRISMATIC):
        raise r.fail(f"{where}.drives", f"{drives_name} has a {body.joint_type.name.lower()} "
                                        "joint, expected R or P")
    base = read_point(r, tree, r.get(data, "base", where), f"{where}.base")
    end = read_point(r, tree, r.get(data, "end", where), f"{where}.end")
    if tree.body_names[base.body] != body.parent:
        raise r.fail(f"{where}.base", f"got a point of {tree.body_names[base.body]}, expected a "
                                      f"point of {body.parent} (the driven joint's parent)")
    if end.body != drives:
        raise r.fail(f"{where}.end", f"got a point of {tree.body_names[end.body]}, expected a "
                                     f"point of {drives_name}")
    branch = r.get(data, "branch", where)
    if branch not in (1, -1) or isinstance(branch, bool):
        raise r.fail(f"{where}.branch", f"got {show(branch)}, expected +1 or -1")
    stroke = r.get(data, "stroke", where)
    if not isinstance(stroke, (list, tuple)) or len(stroke) != 2:
        raise r.fail(f"{where}.stroke", f"got {show(stroke)}, expected [min, max]")
    lo, hi = (r.length_value(v, f"{where}.stroke[{i}]", positive=True)
              for i, v in enumerate(stroke))
    if lo >= hi:
        raise r.fail(f"{where}.stroke", f"got {show(stroke)}, expected min < max")
    default = r.length_value(r.get(data, "default_length", where), f"{where}.default_length",
                             positive=True)
    if not lo <= default <= hi:
        raise r.fail(f"{where}.default_length", f"got {show(data['default_length'])}, expected a "
                                                f"value within the stroke {show(stroke)}")
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
                    friction=read_friction(r, data.get("friction"), True, f"{where}.friction"))


def _check_free_flyer_names(r: FieldReader, bodies: list[Body]) -> None:
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
                         f"{show(b.coordinate)} of a floating joint is shared with another "
                         f"joint or its entries {', '.join(taken) or 'NAME.vx ...'} name other "
                         "coordinates, expected a coordinate of its own")


def model_from_dict(data: Any, source: str = "<memory>") -> Model:
    """Validate a parsed model document and build the :class:`Model` (SI units)."""
    base = FieldReader(source, 1.0, 1.0)
    data = base.mapping(data, "top level")
    base.check_keys(data, {"format", "name", "units", "gravity", "bodies", "actuators", "loops",
                           "base"} | {kind.section for kind in MECHANISM_KINDS}, "top level")
    fmt = base.get(data, "format", "top level")
    if fmt != FORMAT:
        raise base.fail("format", f"got {show(fmt)}, expected {show(FORMAT)}")
    units = base.mapping(base.get(data, "units", "top level", {}) or {}, "units")
    base.check_keys(units, {"length", "angle"}, "units")
    length_unit = base.choice(units.get("length", "m"), tuple(LENGTH_UNITS), "units.length")
    angle_unit = base.choice(units.get("angle", "rad"), tuple(ANGLE_UNITS), "units.angle")
    r = FieldReader(source, LENGTH_UNITS[length_unit], ANGLE_UNITS[angle_unit])
    name = r.name(r.get(data, "name", "top level"), "name", dotted=True)
    gravity_data = r.get(data, "gravity", "top level", [0.0, 0.0, -9.81])
    r.vector(gravity_data, "gravity")
    gravity = np.array([r.magnitude(v, f"gravity[{k}]", MAX_GRAVITY, "gravity", "m/s^2")
                        for k, v in enumerate(gravity_data)])
    bodies_data = r.sized_list(r.get(data, "bodies", "top level"), "bodies", MAX_BODIES)
    if not bodies_data:
        raise r.fail("bodies", "got an empty list, expected a non-empty list")
    bodies: list[Body] = []
    file_index: list[int] = []            # each body's entry in the file
    points_left = MAX_POINTS            # checked before a body's points are read
    try:
        for k, item in enumerate(bodies_data):
            made = _bodies(r, item, k, points_left)
            bodies.extend(made)
            file_index.extend([k] * len(made))
            points_left -= len(bodies[-1].points)
    except ModelError:
        _check_inertias(r)              # an inertia read before the failing field: first
        raise
    _check_inertias(r)
    if len(bodies) > MAX_BODIES:
        raise r.fail("bodies", f"{len(bodies)} bodies once each cylindrical joint is two, "
                               f"expected at most {MAX_BODIES}")
    bodies = _order_parents_first(r, bodies, file_index)
    _check_free_flyer_names(r, bodies)
    tree = Model(name=name, source=source, gravity=gravity, bodies=tuple(bodies))
    sections: dict[str, Any] = {}
    mechanisms = {}
    for key, build in (("actuators", _actuator),
                       *((kind.section, kind.load) for kind in MECHANISM_KINDS)):
        items = r.sized_list(r.get(data, key, "top level", []) or [], key, MAX_BODIES)
        built = tuple(build(r, tree, item, k) for k, item in enumerate(items))
        if key == "actuators":
            sections[key] = built
        elif built:
            mechanisms[key] = built
    counts = Counter([b.name for b in bodies] + [a.name for a in sections["actuators"]]
                     + [x.name for s in mechanisms.values() for x in s])
    dup = sorted(n for n, count in counts.items() if count > 1)
    if dup:
        labels = ", ".join(kind.label for kind in MECHANISM_KINDS[:-1])
        raise r.fail("top level", f"duplicate name(s) {', '.join(dup)} across bodies, actuators, "
                                  f"{labels} and {MECHANISM_KINDS[-1].label}, expected unique "
                                  "names")
    if mechanisms:
        sections["mechanisms"] = mechanisms
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
                         f"coordinate {show(c)} must be driven by one actuator and move one joint, "
                         f"it moves {moved}")
        if tree.bodies[a.drives].offset != 0.0:     # the closed forms solve the joint value
            raise r.fail(f"actuators ({a.name}).drives", f"the joint of "
                         f"{tree.body_names[a.drives]} has an offset, expected none on a joint "
                         "driven by an actuator")
    if data.get("loops") is not None:
        sections["loops"] = _loops(r, tree, data["loops"], driven)
    if data.get("base") is not None:
        sections["base"] = _planar_base(r, tree, data["base"])
    model = tree if not any(sections.values()) else \
        Model(name=name, source=source, gravity=gravity, bodies=tuple(bodies), **sections)
    from .actuator_geometry import check_actuator_geometry
    for a in model.actuators:
        try:
            check_actuator_geometry(model, a)
        except ValueError as exc:
            raise r.fail(f"actuators ({a.name})", str(exc)) from None
    return model


#: The planar base's joints in order (docs/model_format.md "Base"): type, axis, parent
_BASE_JOINTS = ((JointType.PRISMATIC, (1.0, 0.0, 0.0), "x"),
                (JointType.PRISMATIC, (0.0, 1.0, 0.0), "y"),
                (JointType.REVOLUTE, (0.0, 0.0, 1.0), "yaw"))


def _planar_base(r: FieldReader, tree: Model, data: Any) -> PlanarBase:
    """``base: {coordinates: [x, y, yaw], rotation: ...}``: three joints in a chain from the
    world, prismatic along the world's x, then y, then revolute about z, none turned,
    offset or coupled, and none moved off the z axis (the odometry's x, y and yaw are then
    the coordinates themselves, the yaw shifted by the base's heading in base_link)."""
    data = r.mapping(data, "base")
    r.check_keys(data, {"coordinates", "rotation"}, "base")
    names = r.get(data, "coordinates", "base")
    if not isinstance(names, (list, tuple)) or len(names) != 3:
        raise r.fail("base.coordinates", f"got {show(names)}, expected [x, y, yaw]: the names "
                                         "of the base's three planar coordinates")
    parent = -1
    for k, (name, (jtype, axis, role)) in enumerate(zip(names, _BASE_JOINTS)):
        where = f"base.coordinates[{k}]"
        moved = [i for i, b in enumerate(tree.bodies) if b.coordinate == name] \
            if isinstance(name, str) else []
        if len(moved) != 1:
            raise r.fail(where, f"got {show(name)}, expected the coordinate of the base's {role} "
                                "joint, moving one body")
        i = moved[0]
        b = tree.bodies[i]
        after = "the world" if parent < 0 else tree.body_names[parent]
        problems = (
            (int(tree.parent[i]) != parent, f"its parent is not {after}"),
            (b.joint_type != jtype, f"its joint is not {jtype.name.lower()}"),
            (not np.allclose(b.axis, axis, atol=1e-12), f"its axis is not {list(axis)}"),
            (b.multiplier != 1.0 or b.offset != 0.0, "it has a multiplier or an offset"),
            (not np.allclose(b.rotation, np.eye(3), atol=1e-12), "its joint has a rotation"),
            (not np.allclose(b.origin[:2], 0.0, atol=1e-12), "its origin has an x or a y"))
        problem = next((text for failed, text in problems if failed), None)
        if problem:
            raise r.fail(where, f"{show(name)} moves {b.name}: {problem}, expected the base's "
                                f"{role} joint ({jtype.name.lower()} about/along "
                                f"{list(axis)}, the child of {after}, no rotation, no x or y "
                                "in its origin, multiplier 1, offset 0)")
        parent = i
    rotation = _rotation(r, r.get(data, "rotation", "base", [0.0, 0.0, 0.0]), "base.rotation")
    if abs(rotation[2, 2] - 1.0) > 1e-9:
        raise r.fail("base.rotation", "expected a rotation about z (the base body's frame in "
                                      "REP 103's base_link, whose z is up as the world's)")
    rotation.flags.writeable = False
    return PlanarBase(tuple(names), tree.body_names[parent], rotation)


def _cut(r: FieldReader, tree: Model, data: Any, k: int) -> CutJoint:
    """Cut joint ``k`` of the loops section (model/cut_joints.py)."""
    data, name, where = r.named_entry(data, f"loops.cuts[{k}]", {
        "name", "type", "predecessor", "successor", "rotation", "successor_rotation", "axis",
        "axis_b"})
    jtype = r.choice(r.get(data, "type", where), tuple(CUT_TYPES), f"{where}.type")
    a = read_point(r, tree, r.get(data, "predecessor", where), f"{where}.predecessor")
    b = read_point(r, tree, r.get(data, "successor", where), f"{where}.successor")
    if a.body == b.body:
        raise r.fail(f"{where}.successor", f"a point of {tree.body_names[a.body]}, the "
                                           "predecessor's body, expected a point of another body")
    axes = {}
    for key, needed in (("axis", t_needs_axis(jtype)), ("axis_b", jtype == "U")):
        if needed:
            axes[key] = read_axis(r, r.get(data, key, where), f"{where}.{key}")
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


def _loops(r: FieldReader, tree: Model, data: Any, driven: Counter) -> Loops:
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
        raise r.fail("loops.cuts", f"got {show(cuts_data)}, expected a list of cut joints")
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
            raise r.fail(where, f"got {show(c)}, expected a coordinate of the model: "
                                f"{bounded(', '.join(tree.coordinate_names))}")
        if index[c] in chosen:
            raise r.fail(where, f"{c} listed twice, expected each independent coordinate once")
        chosen.add(index[c])
    guess = np.zeros(tree.n_coordinates)
    guess_data = r.mapping(r.get(data, "guess", "loops", {}) or {}, "loops.guess")
    first_joint = {}                   # coordinate -> the first body its joint moves
    for b in reversed(tree.bodies):
        if b.coordinate is not None:
            first_joint[b.coordinate] = b
    for c, value in guess_data.items():
        where = f"loops.guess.{c}"
        if not isinstance(c, str) or c not in index:
            raise r.fail(where, f"expected a coordinate of the model: "
                                f"{bounded(', '.join(tree.coordinate_names))}")
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
