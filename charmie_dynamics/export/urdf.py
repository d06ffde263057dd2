"""URDF export of a model, for RViz (RobotModel, Effort displays) and URDF parsers.

``urdf_from_model(model)`` writes one link per body and one joint per body:

* Links: a root link ``world``, then each body under its own name; ``<inertial>`` with the
  body's mass, centre of mass and inertia about the com in the body frame (virtual bodies
  have none). The drawing of a body is a small sphere at its origin and a thin cylinder from
  the origin to each child joint point and each named point (virtual bodies are not drawn),
  coloured per chain (a new chain starts at each branch that carries further bodies).
* Joints: a revolute or prismatic joint is named after its coordinate (``theta8a``, ``d4``)
  because those are the names published on ``joint_states``, and its URDF value IS the
  coordinate's value. A coordinate that moves several joints (``multiplier``) gives its name
  to one of them whose multiplier is +1 or -1, the first with offset 0 if any, else the first
  (the *leader*, whose URDF axis is the model axis times that sign; a leader's own offset o,
  the joint value being +-coordinate + o, is folded into its ``<origin>``: a turn by o about
  the axis, or a shift by o along it); every other joint of the coordinate is
  ``<coordinate>_<body>`` with ``<mimic joint="<coordinate>" multiplier="m_body"
  offset="o_body"/>`` (its joint value is ``m_body * coordinate + o_body`` about its own
  model axis). A coordinate whose
  joints all have ``|multiplier| != 1`` cannot be given its value in URDF, and names that
  collide (a fixed joint ``a_joint`` beside a coordinate ``a_joint``): ModelError naming the
  model's source.
  Fixed joints are ``<body>_joint``. URDF has no helical joint: a model with one (type H)
  is refused (ModelError naming the body).
* ``<origin>``: ``xyz`` = the joint point on the parent, ``rpy`` = URDF fixed-axis
  roll-pitch-yaw of the constant rotation R_c (R_c = Rz(yaw) Ry(pitch) Rx(roll)); ``<axis>``
  is the model axis, which is already in the joint frame (a prismatic joint slides along it).
* ``<limit>``: the model's limits are those of the joint value (multiplier * coordinate +
  offset); the leader's are converted to the coordinate (less the offset, divided by the
  multiplier, bounds swapped when it is negative), taken per field from the first joint of
  the coordinate that has them; a mimic joint without its own limits gets the coordinate's
  times its multiplier plus its offset.
  A revolute joint with neither bound becomes ``continuous``; a missing bound otherwise is
  written as -1000 / +1000 (rad or m: URDF requires both on revolute and prismatic joints
  and this package has no position limits of its own there). Unknown effort and velocity
  are written as 0 (URDF requires the attributes).
* ``<dynamics damping friction>``: the joint's viscous and Coulomb friction (when nonzero).
* With ``include_auxiliary``: one massless link per auxiliary segment (``act4``,
  ``spring_5s``, ``balancer_left_lever``, ... as named by ``auxiliary_segments``), its frame
  being the segment's (origin at the start, z along the segment), attached to the segment's
  body by a ``floating`` joint ``<segment>_joint`` whose TF the dynamics node publishes
  (robot_state_publisher does not). The joint origin and the cylinder drawn from 0 to the
  segment's length along z are those of the reference configuration: every coordinate 0
  and every actuator at its default length (a drawing only).

A model with loops is written as its spanning tree (URDF describes trees only: no cut
joint), with an XML comment naming the cut joints left out and the independent
coordinates; the dynamics node solves the loops and publishes the TF of every body.

``frame_prefix`` is prepended to every link name (not to joint names), as
robot_state_publisher's ``frame_prefix`` does. Gravity is not part of URDF.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from types import MappingProxyType
from typing import Mapping, Optional

import numpy as np

from ..documents import bounded
from ..model.joint_types import joint_type_spec
from ..model.kinds import MECHANISM_KINDS, items
from ..model.model import Body, JointType, Model, PointRef
from ..model.rotations import rpy_to_matrix  # noqa: F401  (view/drawing.py imports it from here)
from ..model.rotations import axis_rotation
from ..model.urdf import OVERLAY_FORMAT
from ..model.validation import MAX_ERROR, ModelError

UNBOUNDED = 1000.0           # written for a missing bound of a revolute or prismatic joint
BODY_RADIUS = 0.015          # m, cylinders from a body origin to its points
ORIGIN_RADIUS = 0.025        # m, sphere at a body origin
AUX_RADIUS = {"actuator": 0.02, "spring": 0.008, "lever": 0.012, "hanger": 0.01}

_CHAIN_COLOURS = [(0.60, 0.60, 0.65), (0.85, 0.33, 0.10), (0.00, 0.45, 0.74),
                  (0.47, 0.67, 0.19), (0.49, 0.18, 0.56), (0.93, 0.69, 0.13),
                  (0.30, 0.75, 0.93), (0.64, 0.08, 0.18)]
_AUX_COLOURS = {"actuator": (0.15, 0.15, 0.15), "spring": (0.95, 0.85, 0.10),
                "lever": (0.55, 0.35, 0.20), "hanger": (0.55, 0.35, 0.20)}


# --- rotations -----------------------------------------------------------------------------

def matrix_to_rpy(R: np.ndarray) -> tuple[float, float, float]:
    """(roll, pitch, yaw) with ``R = Rz(yaw) Ry(pitch) Rx(roll)``, pitch in [-pi/2, pi/2].

    Robust at and near gimbal lock (pitch = +-pi/2): yaw is taken from the first column
    (0 when it vanishes exactly), pitch from ``R[2, 0]`` and the first column's length, and
    roll from ``Rz(yaw)^T R`` (= ``Ry(pitch) Rx(roll)``), so that an inaccurate yaw near the
    lock, where only yaw - roll or yaw + roll is defined, is absorbed into the roll.
    """
    R = np.asarray(R, dtype=float)
    c = math.hypot(R[0, 0], R[1, 0])
    yaw = math.atan2(R[1, 0], R[0, 0]) if c > 0 else 0.0
    cy, sy = math.cos(yaw), math.sin(yaw)
    pitch = math.atan2(-R[2, 0], c)
    roll = math.atan2(sy * R[0, 2] - cy * R[1, 2], cy * R[1, 1] - sy * R[0, 1])
    return roll, pitch, yaw


def _z_to(d: np.ndarray) -> np.ndarray:
    """A rotation whose z axis is the unit vector ``d``."""
    z = d / np.linalg.norm(d)
    helper = np.array([1.0, 0, 0]) if abs(z[0]) < 0.9 else np.array([0, 1.0, 0])
    x = helper - (helper @ z) * z
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


# --- formatting ----------------------------------------------------------------------------

def _num(x: float) -> str:
    x = float(x)
    return repr(0.0 if x == 0 else x)


def _vec(v) -> str:
    return " ".join(_num(x) for x in v)


def _origin(parent: ET.Element, xyz, R: Optional[np.ndarray] = None) -> None:
    rpy = (0.0, 0.0, 0.0) if R is None else matrix_to_rpy(R)
    ET.SubElement(parent, "origin", xyz=_vec(xyz), rpy=_vec(rpy))


def _cylinder(link: ET.Element, start: np.ndarray, end: np.ndarray, radius: float,
              material: str) -> None:
    d = np.asarray(end, dtype=float) - np.asarray(start, dtype=float)
    length = float(np.linalg.norm(d))
    if length < 1e-9:
        return
    visual = ET.SubElement(link, "visual")
    _origin(visual, (np.asarray(start) + np.asarray(end)) / 2, _z_to(d))
    geometry = ET.SubElement(visual, "geometry")
    ET.SubElement(geometry, "cylinder", radius=_num(radius), length=_num(length))
    ET.SubElement(visual, "material", name=material)


def _sphere(link: ET.Element, radius: float, material: str) -> None:
    visual = ET.SubElement(link, "visual")
    _origin(visual, (0, 0, 0))
    ET.SubElement(ET.SubElement(visual, "geometry"), "sphere", radius=_num(radius))
    ET.SubElement(visual, "material", name=material)


# --- joints --------------------------------------------------------------------------------

def _joint_limits(body: Body) -> list[Optional[float]]:
    lim = body.limits
    return [lim.lower, lim.upper, lim.velocity, lim.effort]


def _scale_limits(lim: list[Optional[float]], m: float, offset: float = 0.0
                  ) -> list[Optional[float]]:
    """Limits of ``value`` -> limits of ``m * value + offset``."""
    lower, upper, velocity, effort = lim
    lower = None if lower is None else lower * m + offset
    upper = None if upper is None else upper * m + offset
    if m < 0:
        lower, upper = upper, lower
    return [lower, upper,
            None if velocity is None else velocity * abs(m),
            None if effort is None else effort / abs(m)]


def _merge(first: list[Optional[float]], second: list[Optional[float]]) -> list[Optional[float]]:
    return [a if a is not None else b for a, b in zip(first, second)]


def _leader_origin(model: Model, i: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``<origin>`` (xyz, rotation) of body i's joint as a leader, whose URDF value is
    the coordinate alone: its offset o folded into the constant placement (module
    docstring), R_c Rot(a, o) for a revolute joint, B + R_c a o for a prismatic one."""
    origin, R_c, o = model.origin[i], model.rotation[i], float(model.offset[i])
    if o == 0.0:
        return origin, R_c
    if model.bodies[i].joint_type.linear:
        return origin + R_c @ model.axis[i] * o, R_c
    return origin, R_c @ axis_rotation(model.axis[i], o)


def _joint_plan(model: Model, names: Mapping[str, str] = MappingProxyType({})) -> list[dict]:
    """Name, type, axis, limits and mimic of the URDF joint preceding each body; a leading
    joint is named after its coordinate, or the coordinate's ``names`` entry."""
    leader: dict[str, int] = {}
    coord_limits: dict[str, list[Optional[float]]] = {}
    for c in model.coordinate_names:
        members = [i for i, b in enumerate(model.bodies) if b.coordinate == c]
        unit = [i for i in members if abs(model.bodies[i].multiplier) == 1.0]
        if not unit:
            raise ModelError(bounded(
                f"{model.source}: URDF export of {model.name!r}: coordinate {c!r} (bodies "
                f"{', '.join(model.bodies[i].name for i in members)}): no joint with multiplier "
                "+1 or -1, so no URDF joint can take the coordinate's value (multipliers "
                f"{[model.bodies[i].multiplier for i in members]})", MAX_ERROR))
        # a leader without offset needs no change of its origin (see the module docstring)
        leader[c] = next((i for i in unit if model.bodies[i].offset == 0.0), unit[0])
        lim: list[Optional[float]] = [None] * 4
        for i in [leader[c]] + [i for i in members if i != leader[c]]:
            b = model.bodies[i]
            lim = _merge(lim, _scale_limits(_joint_limits(b), 1.0 / b.multiplier,
                                            -b.offset / b.multiplier))
        coord_limits[c] = lim
    plan = []
    for i, b in enumerate(model.bodies):
        entry: dict = {"axis": None, "limits": None, "mimic": None,
                       "origin": (model.origin[i], model.rotation[i])}
        spec = joint_type_spec(b.joint_type)
        if spec.code is JointType.FIXED:
            entry.update(name=f"{b.name}_joint", type=spec.urdf_type(limited=False))
            plan.append(entry)
            continue
        c = b.coordinate
        if leader[c] == i:
            entry.update(name=names.get(c, c), axis=np.sign(b.multiplier) * model.axis[i],
                         limits=coord_limits[c], origin=_leader_origin(model, i))
        else:
            entry.update(name=f"{c}_{b.name}", axis=model.axis[i],
                         limits=_merge(_joint_limits(b),
                                       _scale_limits(coord_limits[c], b.multiplier, b.offset)),
                         mimic=(names.get(c, c), b.multiplier))
        lower, upper = entry["limits"][:2]
        entry["type"] = spec.urdf_type(limited=lower is not None or upper is not None)
        plan.append(entry)
    return plan


def _link_names(model: Model, links: Mapping[str, str]
                ) -> tuple[dict[str, str], Optional[int], str]:
    """Each body's URDF link (``links`` or its name) and the base body whose frame is turned
    in REP 103's base_link (``model.base``), or None. That body's link keeps the model's
    frame (its inertia, its drawing, the overlay's points) under the body's own name, a fixed
    child of ``links[body]`` (``base_link`` by default), the link the yaw joint moves and
    every child of the body hangs from, in its axes, as the dynamics node publishes them: its
    name third."""
    link_of = {b.name: links.get(b.name, b.name) for b in model.bodies}
    if model.base is None or np.allclose(model.base.rotation, np.eye(3), atol=1e-15):
        return link_of, None, ""
    base_link = links.get(model.base.body, "base_link")
    link_of[model.base.body] = model.base.body
    return link_of, model.body_index(model.base.body), base_link


def _base_link(robot: ET.Element, model: Model, i: int, joint: dict, frame_prefix: str,
               link_of: Mapping[str, str], base_link: str, joint_names: list,
               link_names: list) -> None:
    """The yaw joint to REP 103's base_link, then base_link -> the base body's own frame
    (fixed, ``model.base.rotation``). The turn about z commutes with the yaw joint's turn
    about z, so it is folded into the joint's origin."""
    body = model.bodies[i]
    ET.SubElement(robot, "link", name=frame_prefix + base_link)
    link_names.append(base_link)
    element = ET.SubElement(robot, "joint", name=joint["name"], type=joint["type"])
    joint_names.append(joint["name"])
    ET.SubElement(element, "parent", link=frame_prefix + link_of[model.body_names[model.parent[i]]])
    ET.SubElement(element, "child", link=frame_prefix + base_link)
    xyz, R_c = joint["origin"]
    _origin(element, xyz, R_c @ model.base.rotation.T)
    _motion(element, joint, body)
    fixed = ET.SubElement(robot, "joint", name=f"{body.name}_joint", type="fixed")
    joint_names.append(f"{body.name}_joint")
    ET.SubElement(fixed, "parent", link=frame_prefix + base_link)
    ET.SubElement(fixed, "child", link=frame_prefix + body.name)
    _origin(fixed, np.zeros(3), model.base.rotation)


def _motion(element: ET.Element, joint: dict, body: Body) -> None:
    """A moving joint's ``<axis>``, ``<limit>`` and ``<dynamics>`` (its friction)."""
    ET.SubElement(element, "axis", xyz=_vec(joint["axis"]))
    lower, upper, velocity, effort = joint["limits"]
    attributes = {}
    if joint["type"] != "continuous":
        attributes["lower"] = _num(-UNBOUNDED if lower is None else lower)
        attributes["upper"] = _num(UNBOUNDED if upper is None else upper)
    attributes["effort"] = _num(0.0 if effort is None else effort)
    attributes["velocity"] = _num(0.0 if velocity is None else velocity)
    ET.SubElement(element, "limit", attributes)
    if body.friction.viscous or body.friction.coulomb:
        ET.SubElement(element, "dynamics", damping=_num(body.friction.viscous),
                      friction=_num(body.friction.coulomb))


def _chains(model: Model) -> list[int]:
    """Colour index per body: a child of a branching body that carries bodies starts a chain."""
    chain = [0] * model.n_bodies
    count = 0
    for i in range(model.n_bodies):
        p = int(model.parent[i])
        if p < 0:
            chain[i] = 0
            continue
        if len(model.children(p)) > 1 and model.children(i):
            count += 1
            chain[i] = count
        else:
            chain[i] = chain[p]
    return chain


# --- the document --------------------------------------------------------------------------

def _reference_segments(model: Model):
    """Auxiliary segments and placements at every coordinate 0, actuators at default length."""
    from ..kinematics.forward import forward_kinematics
    from ..kinematics.state import inputs_from_dict, resolve_state
    from ..mechanisms.auxiliary import auxiliary_segments

    state = resolve_state(model, *inputs_from_dict(model))
    placements = forward_kinematics(model, state.q)
    return placements, auxiliary_segments(model, placements)


def check_exportable(model: Model) -> None:
    """ModelError for a model the URDF export cannot write: one with a free-flyer (not
    written yet) or a joint URDF has no type for (a helical joint)."""
    if model.free_flyers:
        raise ModelError(f"{model.source}: URDF export of {model.name!r}: body "
                         f"{model.body_names[model.free_flyers[0]]!r} has a floating joint "
                         "(free-flyer), expected a model without one (not written yet)")
    for b in model.bodies:
        spec = joint_type_spec(b.joint_type)
        if not spec.urdf_types:
            raise ModelError(bounded(f"{model.source}: URDF export of {model.name!r}: body "
                                     f"{b.name!r} has {spec.described}, expected none: URDF "
                                     "has no such joint", MAX_ERROR))


def urdf_from_model(model: Model, *, include_auxiliary: bool = True,
                    frame_prefix: str = "", names: Mapping[str, str] = MappingProxyType({}),
                    links: Mapping[str, str] = MappingProxyType({})) -> str:
    """The model as a URDF document (see the module docstring for the conventions); a model
    with a free-flyer is refused (ModelError): not written yet; so is one with a helical
    joint, which URDF cannot describe. ``names`` (coordinate -> the robot's joint name) and
    ``links`` (body -> URDF link): a joint map's sections, as the dynamics node uses them."""
    check_exportable(model)
    robot = ET.Element("robot", name=model.name)
    if model.loops is not None:
        robot.append(ET.Comment(_loops_comment(model)))
    chains = _chains(model)
    used_chains = sorted(set(c for c, b in zip(chains, model.bodies) if not b.virtual))
    for c in used_chains:
        r, g, b = _CHAIN_COLOURS[c % len(_CHAIN_COLOURS)]
        material = ET.SubElement(robot, "material", name=f"{model.name}_chain{c}")
        ET.SubElement(material, "color", rgba=f"{r} {g} {b} 1")

    link_names = ["world"]
    joint_names: list[str] = []
    ET.SubElement(robot, "link", name=frame_prefix + "world")
    plan = _joint_plan(model, names)
    link_of, turned, base_link = _link_names(model, links)
    for i, (body, joint) in enumerate(zip(model.bodies, plan)):
        if i == turned:       # REP 103's base_link, massless, turned from the base body
            _base_link(robot, model, i, joint, frame_prefix, link_of, base_link, joint_names,
                       link_names)
        link = ET.SubElement(robot, "link", name=frame_prefix + link_of[body.name])
        link_names.append(link_of[body.name])
        if not body.virtual:
            inertial = ET.SubElement(link, "inertial")
            _origin(inertial, body.com)
            ET.SubElement(inertial, "mass", value=_num(body.mass))
            I = body.inertia
            ET.SubElement(inertial, "inertia", ixx=_num(I[0, 0]), ixy=_num(I[0, 1]),
                          ixz=_num(I[0, 2]), iyy=_num(I[1, 1]), iyz=_num(I[1, 2]),
                          izz=_num(I[2, 2]))
            material = f"{model.name}_chain{chains[i]}"
            _sphere(link, ORIGIN_RADIUS, material)
            targets = [model.origin[k] for k in model.children(i)] + list(body.points.values())
            seen: list[np.ndarray] = []
            for point in targets:
                point = np.asarray(point, dtype=float)
                if any(np.allclose(point, other, rtol=0, atol=1e-12) for other in seen):
                    continue
                seen.append(point)
                _cylinder(link, np.zeros(3), np.asarray(point), BODY_RADIUS, material)

        if i == turned:
            continue
        element = ET.SubElement(robot, "joint", name=joint["name"], type=joint["type"])
        joint_names.append(joint["name"])
        p = int(model.parent[i])
        xyz, R_c = joint["origin"]
        parent = "world" if p < 0 else link_of[model.bodies[p].name]
        if p == turned:      # on base_link, in its axes: the dynamics node's /tf
            parent, xyz, R_c = base_link, model.base.rotation @ xyz, model.base.rotation @ R_c
        ET.SubElement(element, "parent", link=frame_prefix + parent)
        ET.SubElement(element, "child", link=frame_prefix + link_of[body.name])
        _origin(element, xyz, R_c)
        if joint["type"] != "fixed":
            _motion(element, joint, body)
        if joint["mimic"] is not None:
            leader, multiplier = joint["mimic"]
            ET.SubElement(element, "mimic", joint=leader, multiplier=_num(multiplier),
                          offset=_num(model.offset[i]))

    if include_auxiliary and (model.actuators or model.springs or model.balancers):
        placements, segments = _reference_segments(model)
        for kind, rgb in _AUX_COLOURS.items():
            material = ET.SubElement(robot, "material", name=f"{model.name}_{kind}")
            ET.SubElement(material, "color", rgba=" ".join(str(x) for x in rgb) + " 1")
        for seg in segments:
            link = ET.SubElement(robot, "link", name=frame_prefix + seg.name)
            link_names.append(seg.name)
            length = float(seg.length)
            _cylinder(link, np.zeros(3), np.array([0.0, 0.0, length]),
                      AUX_RADIUS.get(seg.kind, 0.01), f"{model.name}_{seg.kind}")
            element = ET.SubElement(robot, "joint", name=f"{seg.name}_joint", type="floating")
            joint_names.append(f"{seg.name}_joint")
            Rb = placements.rotation_world[seg.body]
            Ob = placements.origin_world[seg.body]
            parent = link_of[model.bodies[seg.body].name]
            if seg.body == turned:
                parent, Rb = base_link, Rb @ model.base.rotation.T
            ET.SubElement(element, "parent", link=frame_prefix + parent)
            ET.SubElement(element, "child", link=frame_prefix + seg.name)
            _origin(element, Rb.T @ (seg.start - Ob), Rb.T @ seg.rotation)

    for kind, names in (("link", link_names), ("joint", joint_names)):
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ModelError(bounded(
                f"{model.source}: URDF export of {model.name!r}: duplicate {kind} names "
                f"{', '.join(duplicates)} (URDF {kind} names must be unique: a fixed joint is "
                "named <body>_joint, a leading joint after its coordinate, a mimic joint "
                "<coordinate>_<body>)", MAX_ERROR))
    ET.indent(robot, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def _loops_comment(model: Model) -> str:
    """The URDF's note on a model with loops: URDF describes trees, so the file holds the
    spanning tree and names the cut joints it leaves out (the dynamics node solves the
    loops and publishes TF of every body, dependent joints included)."""
    names = model.body_names
    cuts = "; ".join(f"{c.name} ({c.type}: {names[c.body_a]} - {names[c.body_b]})"
                     for c in model.loops.cuts)
    return (f" {model.name} has closed loops; URDF cannot express them: this is its spanning "
            f"tree, without the cut joints {cuts}. Independent coordinates: "
            f"{', '.join(model.loops.independent)}; the dynamics node solves the others and "
            "publishes their TF. ").replace("--", "- -")      # "--" may not be in a comment


def overlay_from_model(model: Model, names: Mapping[str, str] = MappingProxyType({}),
                       links: Mapping[str, str] = MappingProxyType({})) -> dict:
    """The mechanism overlay (charmie_dynamics/model/urdf.py) that, with the URDF of
    ``urdf_from_model(model, include_auxiliary=False, names=names, links=links)``, loads back
    as ``model``: named points, actuators (driving the URDF joint of their body), springs,
    balancers, torsion springs, gravity; SI units. Not the ``base:`` section: loaded back,
    the planar base's joints are plain joints (the overlay's ``base:`` puts a new planar base
    under a root link fixed to the world; docs/ros.md). A turned base body keeps its points on its
    own link (the body's frame: the balancers' equations are written in it); an actuator's
    point on it is also given on base_link, in its axes, the parent of the joints it drives.
    A model the URDF export cannot write is refused as :func:`urdf_from_model` refuses it."""
    check_exportable(model)
    plan = _joint_plan(model, names)
    link_of, turned, base_link = _link_names(model, links)

    def point(p: PointRef) -> str:
        return f"{link_of[model.body_names[p.body]]}.{p.name.split('.', 1)[1]}"

    def link(body: int) -> str:
        return link_of[model.body_names[body]]

    def actuator_point(p: PointRef) -> str:
        return f"{base_link}.{p.name.split('.', 1)[1]}" if p.body == turned else point(p)

    points = {link_of[b.name]: {k: [float(x) for x in v] for k, v in b.points.items()}
              for b in model.bodies if b.points}
    if turned is not None:
        points[base_link] = {p.name.split(".", 1)[1]:
                             [float(x) for x in model.base.rotation @ p.local]
                             for a in model.actuators for p in (a.base, a.end) if p.body == turned}
    actuators = []
    for a in model.actuators:
        entry = {"name": a.name, "drives": plan[a.drives]["name"], "base": actuator_point(a.base),
                 "end": actuator_point(a.end), "branch": a.branch, "stroke": list(a.stroke),
                 "default_length": a.default_length}
        if a.force_limit is not None:
            entry["force_limit"] = a.force_limit
        if a.velocity_limit is not None:
            entry["velocity_limit"] = a.velocity_limit
        if a.friction.viscous or a.friction.coulomb:
            entry["friction"] = {"viscous": a.friction.viscous, "coulomb": a.friction.coulomb}
        actuators.append(entry)
    return {
        "format": OVERLAY_FORMAT,
        "units": {"length": "m"},
        "gravity": [float(g) for g in model.gravity],
        "links": {name: {"points": p} for name, p in points.items() if p},
        "actuators": actuators,
        **{kind.section: [kind.overlay_entry(item, point, link) for item in items(model, kind)]
           for kind in MECHANISM_KINDS},
    }
