"""URDF in: a URDF document (a file's text or the ``robot_description`` topic's) as a model
document, the dict :func:`~charmie_dynamics.model.loader.model_from_dict` validates, with an
optional mechanism overlay (YAML) for what URDF cannot say.

Mapping (docs/model_format.md, "URDF"):

* every ``<link>`` is a body of the same name; a link named ``world`` is the ground; the root
  link, unless it is ``world``, is fixed to the world at the origin;
* ``<inertial>``: ``mass``; ``com`` = the inertial origin's ``xyz``; the inertia, given in
  the inertial frame (``rpy``), rotated into the link frame (``R I R^T``); a link without
  ``<inertial>`` is ``virtual`` (massless);
* every ``<joint>`` is the joint preceding its child link: ``origin xyz`` -> ``origin``,
  ``rpy`` -> ``rotation: {rpy: [r, p, y]}``; revolute and continuous -> R, prismatic -> P,
  fixed -> F; the coordinate is the joint's name; ``<axis>`` normalized, written ``x`` ...
  ``-z`` when it is exactly a coordinate axis and as a list of 3 numbers otherwise;
  ``<limit>``: lower and upper (revolute and prismatic, when lower < upper; lower > upper
  refused), velocity and effort (when > 0: URDF writes 0 for unknown; negative refused); ``<dynamics
  damping friction>`` ->
  ``friction`` (viscous, coulomb); ``<mimic joint multiplier offset>`` -> the leader's
  coordinate with ``multiplier`` and ``offset`` (composed along a chain of mimics);
* a ``floating`` joint is a free-flyer (``type: floating``, its coordinate the joint's name;
  model/joint.py), accepted only where its parent is the world link (the loader refuses it
  elsewhere); ``planar`` joints are refused;
* the overlay's ``base: {coordinates: [x, y, yaw]}`` puts the root link (base_link, REP 103)
  on a planar base fed by the odometry (:func:`_planar_base`);
* ``floating_base=True`` (Pinocchio's ``buildModelFromUrdf(path, JointModelFreeFlyer())``)
  joins the root link to the world by a free-flyer named ``root_joint`` instead of fixing
  it; refused where the root link is ``world`` (the ground cannot fly).

Numbers are read as xs:double, as urdfdom reads them (``_XS_DOUBLE``). The XML is parsed by
expat with the document type refused: no DOCTYPE, hence no entity (billion laughs) and no
external entity. Every error is a :class:`ModelError` naming the
source and the element.
"""
from __future__ import annotations

import logging
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional
from xml.parsers import expat

import numpy as np

from ..documents import DEFAULT_MAX_BYTES, bounded, check_size, parse_yaml, read_text
from ..linalg import direction_and_length
from .joint_types import JOINT_TYPES
from .kinds import MECHANISM_KINDS
from .loader import FORMAT, LENGTH_UNITS, model_from_dict
from .model import Model
from .rotations import rpy_to_matrix
from .validation import (MAX_ANGLE_RAD, MAX_ANGULAR_VELOCITY, MAX_BODIES, MAX_EFFORT, MAX_LENGTH_M,
                         MAX_LINEAR_VELOCITY, ModelError, either, name_problem, show)

OVERLAY_FORMAT = "charmie_dynamics/overlay/1"
OVERLAY_KEYS = {"format", "units", "gravity", "links", "joints", "actuators", "base"} | \
    {kind.section for kind in MECHANISM_KINDS}
#: URDF's joint types read, and the model file's type each becomes (the joint types' own)
URDF_JOINT_TYPES = {urdf: spec.letter for spec in JOINT_TYPES for urdf in spec.urdf_types}
ROOT_JOINT = "root_joint"           # Pinocchio's name of the free-flyer of floating_base
AXIS_NAMES = ("x", "y", "z")

# Numbers as urdfdom reads them (xs:double, finite): ASCII digits with an optional fraction
# and exponent, separated by XML whitespace. Python's float() alone also takes '1_0' (10),
# non-ASCII digits, 'infinity' and Unicode spaces, where urdfdom and Pinocchio read otherwise.
XML_WHITESPACE = " \t\r\n"
_XML_SPACE = re.compile(f"[{XML_WHITESPACE}]+")
_XS_DOUBLE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

_log = logging.getLogger(__name__)


def is_urdf(text: str) -> bool:
    """A URDF (XML) text rather than a YAML model: its first character is '<'."""
    return text.lstrip("\ufeff \t\r\n").startswith("<")


def _parse_xml(text: str, source: str) -> ET.Element:
    """The element tree of ``text`` (attributes only: URDF keeps its data there), refusing a
    document type declaration, which is where entities (billion laughs) would be declared."""
    stack: list[ET.Element] = []
    done: list[ET.Element] = []
    parser = expat.ParserCreate()

    def start(tag: str, attributes: dict) -> None:
        stack.append(ET.Element(tag, attributes) if not stack
                     else ET.SubElement(stack[-1], tag, attributes))

    def end(tag: str) -> None:
        done.append(stack.pop())

    def refuse(*_: Any) -> None:
        raise ModelError(f"{source}: line {parser.CurrentLineNumber}: a DOCTYPE or entity "
                         "declaration, expected none (refused: entity expansion)")

    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.StartDoctypeDeclHandler = parser.EntityDeclHandler = refuse
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise ModelError(f"{source}: not valid XML: {expat.ErrorString(exc.code)} (line "
                         f"{exc.lineno}, column {exc.offset})") from None
    root = done[-1]
    if root.tag != "robot":
        raise ModelError(f"{source}: root element <{bounded(root.tag, 60)}>, expected <robot>")
    return root


@dataclass(frozen=True)
class _Urdf:
    """Attribute access that reports ``source: joint 'x' <origin rpy>: got .., expected ..``."""

    source: str

    def fail(self, where: str, message: str) -> ModelError:
        return ModelError(bounded(f"{self.source}: {where}: {message}", 600))

    def name(self, element: ET.Element, kind: str) -> str:
        name = element.get("name")
        if not name:
            raise self.fail(f"<{kind}>", "missing name, expected a name attribute")
        return name

    def numbers(self, element: Optional[ET.Element], attribute: str, where: str, n: int,
                default: tuple) -> np.ndarray:
        text = None if element is None else element.get(attribute)
        if text is None:
            return np.array(default, dtype=float)
        tokens = _XML_SPACE.split(text.strip(XML_WHITESPACE))
        values = [float(v) for v in tokens if _XS_DOUBLE.fullmatch(v)]
        if len(values) != n or len(tokens) != n or not all(math.isfinite(v) for v in values):
            raise self.fail(f"{where} <{element.tag} {attribute}>",
                            f"got {show(text)}, expected {n} finite number(s) written as "
                            "xs:double (ASCII digits, '.', an exponent; no '_')")
        return np.array(values)

    def number(self, element: Optional[ET.Element], attribute: str, where: str,
               default: float) -> float:
        return float(self.numbers(element, attribute, where, 1, (default,))[0])

    def link_ref(self, joint: ET.Element, tag: str, where: str, links: Mapping) -> str:
        element = joint.find(tag)
        link = None if element is None else element.get("link")
        if link not in links:
            raise self.fail(f"{where} <{tag}>", f"got {show(link)}, expected the name of a "
                                                "<link> of the robot")
        return link


def _axis(u: _Urdf, joint: ET.Element, where: str) -> Any:
    """The unit axis: a letter (``-z``) when exactly a coordinate axis, else 3 numbers."""
    axis = u.numbers(joint.find("axis"), "xyz", where, 3, (1.0, 0.0, 0.0))
    axis, norm = direction_and_length(axis)
    if not norm > 0:
        raise u.fail(f"{where} <axis xyz>", "got the zero vector, expected a non-zero axis")
    k = int(np.argmax(np.abs(axis)))
    if np.count_nonzero(axis) == 1:
        return ("-" if axis[k] < 0 else "") + AXIS_NAMES[k]
    return axis.tolist()


def _inertial(u: _Urdf, link: ET.Element, scale: float) -> dict:
    """mass, com and inertia (link frame) of a link, or ``virtual`` without ``<inertial>``."""
    inertial = link.find("inertial")
    if inertial is None:
        return {"virtual": True}
    where = f"link {show(link.get('name'))} <inertial>"
    origin = inertial.find("origin")
    com = u.numbers(origin, "xyz", where, 3, (0.0, 0.0, 0.0))
    rotation = rpy_to_matrix(*u.numbers(origin, "rpy", where, 3, (0.0, 0.0, 0.0)))
    mass_element = inertial.find("mass")
    if mass_element is None or mass_element.get("value") is None:
        raise u.fail(f"{where} <mass value>", "missing, expected the mass in kg")
    element = inertial.find("inertia")
    if element is None:
        raise u.fail(f"{where} <inertia>", "missing, expected ixx ixy ixz iyy iyz izz")
    c = {key: u.number(element, key, where, 0.0) for key in ("ixx", "ixy", "ixz", "iyy", "iyz",
                                                               "izz")}
    inertia = np.array([[c["ixx"], c["ixy"], c["ixz"]], [c["ixy"], c["iyy"], c["iyz"]],
                        [c["ixz"], c["iyz"], c["izz"]]])
    inertia = rotation @ inertia @ rotation.T       # inertial frame -> link frame
    return {"mass": u.number(mass_element, "value", where, 0.0),
            "com": (com / scale).tolist(), "inertia": (inertia / scale ** 2).tolist()}


def _limits(u: _Urdf, joint: ET.Element, kind: str, where: str, scale: float) -> dict:
    element = joint.find("limit")
    if element is None:
        return {}
    length = scale if kind == "prismatic" else 1.0     # revolute values stay in rad
    revolute = kind != "prismatic"
    bounds = {"velocity": MAX_ANGULAR_VELOCITY if revolute else MAX_LINEAR_VELOCITY,
              "effort": MAX_EFFORT, "lower": MAX_ANGLE_RAD if revolute else MAX_LENGTH_M}
    bounds["upper"] = bounds["lower"]
    values = {key: u.number(element, key, where, 0.0) for key in bounds}
    # refused rather than read as "no limit", which hid them (urdfdom and Pinocchio take
    # them as written; no URDF of example-robot-data has one)
    for key in ("effort", "velocity"):
        if values[key] < 0:
            raise u.fail(f"{where} <limit {key}>", f"got {values[key]:g}, expected a number "
                                                   ">= 0 (0: unknown)")
    if kind != "continuous" and values["lower"] > values["upper"]:
        raise u.fail(f"{where} <limit lower upper>", f"got lower {values['lower']:g} > upper "
                                                     f"{values['upper']:g}, expected lower <= "
                                                     "upper")
    # URDF requires every attribute: 0 velocity or effort means unknown, lower = upper no
    # range, and values past the format's plausibility bounds (1e4 rad/s, 1e16 rad) none
    huge = sorted(key for key, value in values.items() if abs(value) > bounds[key])
    if huge:
        _log.warning("%s: %s <limit>: %s beyond the plausibility bounds, taken as no limit",
                     u.source, where, ", ".join(huge))
    keep = {key: value for key, value in values.items() if key not in huge}
    out = {key: keep[key] / (length if key == "velocity" else 1.0)
           for key in ("velocity", "effort") if keep.get(key, 0.0) > 0}
    if kind != "continuous" and "lower" in keep and "upper" in keep \
            and keep["lower"] < keep["upper"]:
        out.update(lower=keep["lower"] / length, upper=keep["upper"] / length)
    return out


def _couplings(u: _Urdf, joints: Mapping[str, ET.Element]) -> dict[str, tuple[str, float, float]]:
    """Joint name -> (coordinate, multiplier, offset): a mimic joint's value is
    ``multiplier * coordinate + offset``, composed along a chain of mimics to its root.
    Linear in the number of joints: each joint's mimic is read once and each leader resolved
    once (memoised), so a chain of n mimics costs n steps, not n^2."""
    out: dict[str, tuple[str, float, float]] = {}
    for name in joints:
        path: list[tuple[str, float, float]] = []     # (joint, multiplier, offset) to resolve
        on_path: set[str] = set()                     # the cycle check, O(1) per step
        current = name
        while current not in out:
            step = _mimic_step(u, joints, current)
            if step is None:                          # a joint that mimics none: a root
                out[current] = (current, 1.0, 0.0)
                break
            leader, km, ko = step
            on_path.add(current)
            path.append((current, km, ko))
            if leader in on_path:
                chain = [joint for joint, _, _ in path] + [leader]
                raise u.fail(f"joint {show(current)} <mimic> joint",
                             f"mimic cycle {' -> '.join(chain)}, expected a chain that ends at "
                             "a joint")
            current = leader
        for joint, km, ko in reversed(path):           # value = km * leader's + ko
            root, m, offset = out[current]
            out[joint] = (root, km * m, km * offset + ko)
            current = joint
    return out


def _mimic_step(u: _Urdf, joints: Mapping[str, ET.Element],
                name: str) -> Optional[tuple[str, float, float]]:
    """The leader, multiplier and offset of joint ``name``'s ``<mimic>``; None without one."""
    mimic = joints[name].find("mimic")
    if mimic is None:
        return None
    where = f"joint {show(name)} <mimic>"
    leader = mimic.get("joint")
    if leader not in joints or joints[leader].get("type") == "fixed":
        raise u.fail(f"{where} joint", f"got {show(leader)}, expected a moving joint "
                                       "of the robot")
    return leader, u.number(mimic, "multiplier", where, 1.0), u.number(mimic, "offset", where,
                                                                      0.0)


def _joint(u: _Urdf, joint: ET.Element, coupling: tuple[str, float, float],
           scale: float) -> dict:
    """The body fields given by the joint preceding it: origin, rotation, joint."""
    name = joint.get("name")
    where = f"joint {show(name)}"
    kind = joint.get("type")
    if kind == "planar":
        raise u.fail(f"{where} type", f"got {kind!r}: planar joints are not supported, "
                                      f"expected {either(URDF_JOINT_TYPES)}")
    if kind not in URDF_JOINT_TYPES:
        raise u.fail(f"{where} type", f"got {show(kind)}, expected {either(URDF_JOINT_TYPES)}")
    origin = joint.find("origin")
    body: dict = {"origin": (u.numbers(origin, "xyz", where, 3, (0.0, 0.0, 0.0)) / scale).tolist()}
    rpy = u.numbers(origin, "rpy", where, 3, (0.0, 0.0, 0.0))
    if rpy.any():
        body["rotation"] = {"rpy": rpy.tolist()}
    spec: dict = {"type": URDF_JOINT_TYPES[kind]}
    body["joint"] = spec
    if kind == "fixed":
        return body
    if kind == "floating":
        spec["coordinate"] = name
        return body
    coordinate, multiplier, offset = coupling
    spec.update(axis=_axis(u, joint, where), coordinate=coordinate)
    if multiplier != 1.0:
        spec["multiplier"] = multiplier
    if offset != 0.0:
        spec["offset"] = offset / (scale if kind == "prismatic" else 1.0)
    limits = _limits(u, joint, kind, where, scale)
    if limits:
        spec["limits"] = limits
    dynamics = joint.find("dynamics")
    if dynamics is not None:
        viscous = u.number(dynamics, "damping", where, 0.0)
        spec["friction"] = {"viscous": viscous * (scale if kind == "prismatic" else 1.0),
                            "coulomb": u.number(dynamics, "friction", where, 0.0)}
    return body


def urdf_document(text: str, source: str, overlay: Optional[Mapping] = None,
                  overlay_source: str = "overlay", floating_base: bool = False) -> dict:
    """The model document (format ``charmie_dynamics/model/1``) of a URDF text, with the
    parsed ``overlay`` merged in and, with ``floating_base``, a free-flyer ``root_joint``
    at the root link (module docstring); raises :class:`ModelError` naming the element or
    field."""
    u = _Urdf(source)
    robot = _parse_xml(text, source)
    link_elements, joint_elements = robot.findall("link"), robot.findall("joint")
    # counted before any per-joint work: the loader's body cap, plus the world link
    for tag, elements, most in (("link", link_elements, MAX_BODIES + 1),
                                ("joint", joint_elements, MAX_BODIES)):
        if len(elements) > most:
            raise u.fail("<robot>", f"got {len(elements)} <{tag}> elements, expected at most "
                                    f"{most} (the model's limit of {MAX_BODIES} bodies)")
    links = {u.name(link, "link"): link for link in link_elements}
    joints = {u.name(joint, "joint"): joint for joint in joint_elements}
    if len(links) != len(link_elements) or len(joints) != len(joint_elements):
        raise u.fail("<robot>", "duplicate link or joint names, expected unique names")
    if not links:
        raise u.fail("<robot>", "no <link>, expected at least one")
    preceding: dict[str, tuple[str, ET.Element]] = {}      # child link -> (parent link, joint)
    for name, joint in joints.items():
        where = f"joint {show(name)}"
        parent = u.link_ref(joint, "parent", where, links)
        child = u.link_ref(joint, "child", where, links)
        if child in preceding or child == "world":
            raise u.fail(f"{where} <child>", f"link {show(child)} is already the child of "
                                             "another joint or is the world, expected a tree")
        preceding[child] = (parent, joint)
    roots = [name for name in links if name not in preceding]
    if len(roots) != 1:
        raise u.fail("<robot>", f"root links {show(roots)}, expected exactly one link that is "
                                "no joint's child")
    if floating_base and roots[0] == "world":
        raise u.fail("<robot>", "floating_base: the root link is 'world', the ground, expected "
                                "a robot whose root link is its base")
    scale = 1.0
    if overlay is not None:
        scale = _overlay_scale(overlay, overlay_source)
    couplings = _couplings(u, joints)
    bodies = []
    for name, link in links.items():
        if name == "world":
            continue
        if name in preceding:
            parent, joint = preceding[name]
            if joint.get("type") == "floating" and parent != "world":
                raise u.fail(f"joint {show(joint.get('name'))} type",
                             f"got 'floating' under link {show(parent)}, expected a floating "
                             "joint (free-flyer) only under the world link (the root joint)")
            body = {"name": name, "parent": parent,
                    **_joint(u, joint, couplings[joint.get("name")], scale)}
        else:
            body = {"name": name, "parent": "world", "joint": {"type": "F"}}
            if floating_base:
                body["joint"] = {"type": "floating", "coordinate": ROOT_JOINT}
        body.update(_inertial(u, link, scale))
        bodies.append(body)
    doc = {"format": FORMAT, "name": robot.get("name") or "robot", "bodies": bodies}
    if overlay is not None:
        _merge_overlay(doc, overlay, overlay_source, joints, preceding)
    return doc


# --- the mechanism overlay -------------------------------------------------------------------

def _overlay_fail(source: str, where: str, message: str) -> ModelError:
    return ModelError(bounded(f"{source}: {where}: {message}", 600))


def _overlay_scale(overlay: Mapping, source: str) -> float:
    """Check the overlay's top level; its length unit in m (the URDF's lengths are converted
    to it, so the merged document has one unit and the loader converts it once)."""
    if not isinstance(overlay, Mapping):
        raise _overlay_fail(source, "top level", f"got {show(overlay)}, expected a mapping")
    unknown = sorted(set(map(str, overlay)) - OVERLAY_KEYS)
    if unknown:
        raise _overlay_fail(source, "top level",
                            f"unknown field(s) {', '.join(unknown)}; expected some of "
                            f"{', '.join(sorted(OVERLAY_KEYS))}")
    if overlay.get("format") != OVERLAY_FORMAT:
        raise _overlay_fail(source, "format", f"got {show(overlay.get('format'))}, expected "
                                              f"{OVERLAY_FORMAT!r}")
    units = overlay.get("units") or {}
    if not isinstance(units, Mapping) or set(units) - {"length"}:
        raise _overlay_fail(source, "units", f"got {show(units)}, expected {{length: m}} or "
                                             "{length: mm} (URDF angles are radians)")
    unit = units.get("length", "m")
    if unit not in LENGTH_UNITS:
        raise _overlay_fail(source, "units.length", f"got {show(unit)}, expected m or mm")
    return LENGTH_UNITS[unit]


def _section(overlay: Mapping, key: str, source: str, kind: type) -> Any:
    value = overlay.get(key) or kind()
    if not isinstance(value, kind):
        raise _overlay_fail(source, key, f"got {show(value)}, expected a "
                                         f"{'mapping' if kind is dict else 'list'}")
    return value


def _merge_overlay(doc: dict, overlay: Mapping, source: str, joints: Mapping[str, ET.Element],
                   preceding: Mapping[str, tuple[str, ET.Element]]) -> None:
    """Named points on links, joint friction, actuators (``drives``: a URDF joint), springs,
    balancers, torsion springs (between links) and gravity from the overlay, checked against
    the URDF's names."""
    bodies = {body["name"]: body for body in doc["bodies"]}
    child_of = {joint.get("name"): child for child, (_, joint) in preceding.items()}
    if "units" in overlay:
        doc["units"] = overlay["units"]
    if "gravity" in overlay:
        doc["gravity"] = overlay["gravity"]
    for link, entry in _section(overlay, "links", source, dict).items():
        where = f"links.{bounded(link, 80)}"
        if link not in bodies:
            raise _overlay_fail(source, where, "expected the name of a link of the URDF (not "
                                               "world)")
        if not isinstance(entry, Mapping) or set(entry) - {"points"}:
            raise _overlay_fail(source, where, f"got {show(entry)}, expected {{points: {{NAME: "
                                               "[x, y, z]}}")
        bodies[link]["points"] = entry.get("points") or {}
    for name, entry in _section(overlay, "joints", source, dict).items():
        where = f"joints.{bounded(name, 80)}"
        if name not in child_of or joints[name].get("type") == "fixed":
            raise _overlay_fail(source, where, "expected the name of a moving joint of the URDF")
        if not isinstance(entry, Mapping) or set(entry) - {"friction"}:
            raise _overlay_fail(source, where, f"got {show(entry)}, expected {{friction: "
                                               "{viscous: .., coulomb: ..}}")
        bodies[child_of[name]]["joint"]["friction"] = entry.get("friction")
    actuators = []
    for k, entry in enumerate(_section(overlay, "actuators", source, list)):
        if not isinstance(entry, Mapping):
            raise _overlay_fail(source, f"actuators[{k}]", f"got {show(entry)}, expected a "
                                                           "mapping")
        drives = entry.get("drives")
        if drives not in child_of or joints[drives].get("type") == "fixed":
            raise _overlay_fail(source, f"actuators[{k}].drives", f"got {show(drives)}, "
                                "expected the name of a moving joint of the URDF")
        actuators.append({**entry, "drives": child_of[drives]})
    doc["actuators"] = actuators
    if overlay.get("base") is not None:
        _planar_base(doc, overlay["base"], source, joints)
    for kind in MECHANISM_KINDS:
        doc[kind.section] = _section(overlay, kind.section, source, list)


def _planar_base(doc: dict, entry: Any, source: str, joints: Mapping[str, ET.Element]) -> None:
    """``base: {coordinates: [x, y, yaw]}``: the URDF's root link (REP 103's base_link, its
    frame the base_link the odometry moves) rides a planar base, two massless bodies
    ``<root>_base_x`` and ``<root>_base_y`` sliding along the world's x and y and the root
    turning about z, as the model file's ``base:`` (docs/model_format.md "Base")."""
    if not isinstance(entry, Mapping) or set(entry) != {"coordinates"}:
        raise _overlay_fail(source, "base", f"got {show(entry)}, expected {{coordinates: [x, y, "
                                            "yaw]}}: the names of the base's planar coordinates")
    names = entry["coordinates"]
    # a URDF joint's name, a mimic's or a fixed one's included, would read that joint's
    # value from joint_states as the base's
    taken = {b.get("joint", {}).get("coordinate") for b in doc["bodies"]} | set(joints)
    if not (isinstance(names, list) and len(names) == 3 and len(set(map(str, names))) == 3
            and all(isinstance(n, str) and n not in taken for n in names)):
        raise _overlay_fail(source, "base.coordinates", f"got {show(names)}, expected three "
                                                        "coordinate names [x, y, yaw] that no "
                                                        "URDF joint has")
    for k, name in enumerate(names):
        problem = name_problem(name)
        if problem:
            raise _overlay_fail(source, f"base.coordinates[{k}]", problem)
    roots = [b for b in doc["bodies"] if b["parent"] == "world"]
    if len(roots) != 1 or roots[0]["joint"].get("type") != "F":
        raise _overlay_fail(source, "base", "expected a URDF whose root link is the robot's base "
                                            "(fixed to the world), got "
                                            f"{show([b['name'] for b in roots])}")
    root = roots[0]
    x_body, y_body = f"{root['name']}_base_x", f"{root['name']}_base_y"
    if {x_body, y_body} & {b["name"] for b in doc["bodies"]}:
        raise _overlay_fail(source, "base", f"links {x_body} or {y_body} exist, expected the "
                                            "names free for the planar base's bodies")
    doc["bodies"] += [
        {"name": x_body, "parent": "world", "virtual": True,
         "joint": {"type": "P", "axis": "x", "coordinate": names[0]}},
        {"name": y_body, "parent": x_body, "virtual": True,
         "joint": {"type": "P", "axis": "y", "coordinate": names[1]}}]
    root["parent"] = y_body
    root["joint"] = {"type": "R", "axis": "z", "coordinate": names[2]}
    doc["base"] = {"coordinates": list(names)}


def read_overlay(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The parsed overlay file (validated when merged); raises :class:`ModelError`."""
    return parse_yaml(read_text(path, "overlay file", max_bytes, error=ModelError), str(path),
                      error=ModelError)


def model_from_urdf(text: str, source: str = "<urdf>", *,
                    overlay: Optional[str | Path] = None,
                    max_bytes: int = DEFAULT_MAX_BYTES, floating_base: bool = False) -> Model:
    """The validated model of a URDF text (a file's or the robot_description topic's), with
    the mechanism overlay file ``overlay`` and, with ``floating_base``, a free-flyer at the
    root link (module docstring); raises :class:`ModelError` only."""
    check_size(text, source, max_bytes, error=ModelError)
    if overlay is None:
        return model_from_dict(urdf_document(text, source, floating_base=floating_base),
                               source)
    doc = urdf_document(text, source, read_overlay(overlay, max_bytes), str(overlay),
                        floating_base)
    return model_from_dict(doc, f"{source} + {overlay}")
