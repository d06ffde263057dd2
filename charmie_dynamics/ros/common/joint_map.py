"""The robot's names and units for the model's inputs and outputs (pure Python: no rclpy here).

A ros2_control robot publishes its joints under its URDF's names (``left_shoulder_joint``),
the model names its coordinates after the papers (``theta7a``, ``act4``): the
``joint_name_map`` parameter (entries ``MODEL=HARDWARE``) or a ``joint_map_file``::

    names:                 # model name: hardware name
      theta7a: left_shoulder_joint
      act4: lift_actuator
    scale:                 # model value = scale * hardware value + offset (velocity: scale *)
      act4: 0.001          # the sensor reports millimetres
    offset:
      act4: 0.45           # ... from another zero
    effort_scale:          # hardware effort = effort_scale * model effort (N, N m)
      act4: 0.0125         # the drive takes amperes: 80 N per A
    links:                 # model body: URDF link
      body_3: base_link
      body_4: lift_link

map every name the dynamics node reads (joint_states, actuator_states) and writes
(joint_loads, actuator_loads, the feedforward and its stamped copy, completed_joint_states,
solved_joint_states). Unmapped names keep the model's name; a mapped one is read under its
hardware name only. Scale and offset convert the measured positions and velocities into the
model's SI units, and back on every position and velocity the node publishes; ``effort_scale``
converts every effort it publishes (the feedforward, joint and actuator loads) into the
drive's unit; it is not derived from ``scale``: a drive's command unit (A, a percentage) need
not be the conjugate of its position unit. The feedforward is clamped and checked against the
model's limits before it is scaled. ``links`` names the frame of each model body after the
robot's URDF link (TF, the loads' and wrenches' frames, the exported URDF); unmapped bodies
keep their names.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Mapping, Optional, Sequence

import numpy as np

from ...documents import DocumentError, parse_yaml, read_text
from ...model.validation import name_problem, yaml_exponent_problem

if TYPE_CHECKING:
    from ...model.parameters import ModelParameters

FILE_SECTIONS = ("names", "scale", "offset", "effort_scale", "links")
#: Largest scale, offset or effort scale, and the inverse of the smallest scale or effort
#: scale: 1e6 turns km into mm or N into uN, and keeps a converted value (published
#: positions are divided by the scale) of plausible size finite
MAX_FACTOR = 1e6


class JointMapError(ValueError):
    """A joint map that cannot be used; the message names the parameter or file, the entry
    and what is expected."""


@dataclass(frozen=True)
class JointMap:
    """Model name <-> hardware name, and the linear conversion of measured values."""

    hardware: Mapping[str, str] = field(default_factory=dict)   # model -> hardware
    scale: Mapping[str, float] = field(default_factory=dict)    # model name -> factor
    offset: Mapping[str, float] = field(default_factory=dict)   # model name -> m or rad
    source: str = "joint_name_map"
    effort_scale: Mapping[str, float] = field(default_factory=dict)   # model name -> factor
    links: Mapping[str, str] = field(default_factory=dict)     # model body -> URDF link

    def __post_init__(self) -> None:
        object.__setattr__(self, "model", {hw: m for m, hw in self.hardware.items()})
        object.__setattr__(self, "converted", tuple(set(self.scale) | set(self.offset)))

    def to_model(self, names: Iterable[str]) -> list[str]:
        """The model names of a message's names (an unmapped name is its own)."""
        model = self.model
        return [model.get(n, n) for n in names] if model else list(names)

    def message_to_model(self, names: Iterable[str]) -> list[str]:
        """The model names of a joint_states message's names: with a map, the robot speaks
        hardware names only. A model name the map gives another hardware name (``act4`` where
        ``act4: lift_actuator``) is not taken for that input (its value would be read in the
        model's units and then scaled again): it comes back as a name the model does not use,
        ``act4 (a model name; the map reads lift_actuator)``, ignored and counted as any
        foreign name (joint_state_policy merge) or refused (strict)."""
        model, hardware = self.model, self.hardware
        if not model:
            return list(names)
        return [model[n] if n in model
                else f"{n} (a model name; the map reads {hardware[n]})" if n in hardware
                else n for n in names]

    def to_hardware(self, names: Iterable[str]) -> list[str]:
        hardware = self.hardware
        return [hardware.get(n, n) for n in names] if hardware else list(names)

    def convert(self, positions: dict[str, float], velocities: dict[str, float]) -> None:
        """Measured values (model names) into the model's units, in place."""
        for name in self.converted:
            if name in positions:
                k = self.scale.get(name, 1.0)
                positions[name] = k * positions[name] + self.offset.get(name, 0.0)
                if name in velocities:
                    velocities[name] = k * velocities[name]

    def position_factors(self, names: Sequence[str]) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """(scale, offset) arrays over ``names`` (model names), or None where no name is
        converted: a measured position becomes ``scale * value + offset`` in the model's
        units (a velocity ``scale * value``), a published one ``(q - offset) / scale`` in the
        hardware's (``qd / scale``)."""
        if not any(n in self.scale or n in self.offset for n in names):
            return None
        return (np.array([self.scale.get(n, 1.0) for n in names]),
                np.array([self.offset.get(n, 0.0) for n in names]))

    def effort_out(self, names: Sequence[str]) -> Optional[np.ndarray]:
        """The ``effort_scale`` factors over ``names`` (model names), or None where none is
        given."""
        if not any(n in self.effort_scale for n in names):
            return None
        return np.array([self.effort_scale.get(n, 1.0) for n in names])

    def check_links(self, body_names: Sequence[str], base_body: Optional[str], base_frame: str,
                    world_frame: str, model_source: str, own_frame: Optional[str] = None) -> None:
        """Raise :class:`JointMapError` for a ``links`` entry naming a body the model does not
        have, two bodies on one frame, a link named as ``world_frame``, or a base body's link
        other than ``base_frame``. ``own_frame``: the name of one more frame (a turned base
        body's own, base_link's fixed child), which no body may take."""
        known = set(body_names)
        for body, link in self.links.items():
            if body not in known:
                raise JointMapError(f"{self.source}: links.{body}: not a body of the model "
                                    f"{model_source} (expected one of "
                                    f"{', '.join(list(body_names)[:8])}...)")
            if link == world_frame:
                raise JointMapError(f"{self.source}: links.{body}: {link!r} is world_frame, "
                                    "expected a link of the robot")
        if base_body in self.links and base_frame and self.links[base_body] != base_frame:
            raise JointMapError(f"{self.source}: links.{base_body}: {self.links[base_body]!r}, "
                                f"but base_frame names the base body {base_frame!r}: expected "
                                "the same name (or base_frame empty)")
        seen: dict[str, str] = {own_frame: f"{own_frame} (the base body's own frame)"} \
            if own_frame else {}
        for body in body_names:
            frame = base_frame if body == base_body and base_frame else self.links.get(body, body)
            if frame in seen:
                raise JointMapError(f"{self.source}: links: bodies {seen[frame]!r} and {body!r} "
                                    f"would both be frame {frame!r}, expected one body per link")
            seen[frame] = body

    def check_model(self, model: "ModelParameters", model_source: str, base_frame: str = "",
                    world_frame: str = "world", own_frame: Optional[str] = None) -> None:
        """:meth:`check` on the model's inputs and coordinates, then :meth:`check_links` on
        its bodies (base body from its ``base:``)."""
        self.check(tuple(dict.fromkeys(model.input_names + model.coordinate_names)), model_source)
        self.check_links(model.body_names, model.base.body if model.base else None, base_frame,
                         world_frame, model_source, own_frame)

    def check(self, model_names: Sequence[str], model_source: str) -> None:
        """Raise :class:`JointMapError` for a mapped name the model does not know, or a
        hardware name that is another of the model's names (a message could not tell them
        apart)."""
        known = set(model_names)
        for name in list(self.hardware) + list(self.scale) + list(self.offset) \
                + list(self.effort_scale):
            if name not in known:
                raise JointMapError(f"{self.source}: {name!r} is not an input or coordinate of "
                                    f"the model {model_source} (expected one of "
                                    f"{', '.join(list(model_names)[:8])}...)")
        for name, hw in self.hardware.items():
            if hw != name and hw in known and self.hardware.get(hw, hw) == hw:
                raise JointMapError(f"{self.source}: {name!r} -> {hw!r}: {hw!r} is also the "
                                    f"model's own name of another joint, expected a name "
                                    f"no other joint has (or map {hw!r} too)")


def _entries(entries: Sequence[str]) -> dict[str, str]:
    """``MODEL=HARDWARE`` strings (empty ones ignored: a ROS string array cannot be empty)."""
    pairs: dict[str, str] = {}
    for entry in entries:
        if not entry:
            continue
        model, sep, hardware = (s.strip() for s in entry.partition("="))
        if not (sep and model and hardware):
            raise JointMapError(f"joint_name_map entry {entry!r}: expected MODEL=HARDWARE "
                                "(e.g. theta7a=left_shoulder_joint)")
        if model in pairs:
            raise JointMapError(f"joint_name_map: {model!r} mapped twice, expected once")
        problem = name_problem(hardware)
        if problem:
            raise JointMapError(f"joint_name_map entry {entry!r}: {problem}")
        pairs[model] = hardware
    return pairs


def _numbers(section: object, path: str, name: str) -> dict[str, float]:
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise JointMapError(f"{path}: {name}: expected a mapping MODEL_NAME: NUMBER")
    values = {}
    for key, value in section.items():
        problem = yaml_exponent_problem(value)
        if problem:
            raise JointMapError(f"{path}: {name}.{key}: {problem}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or abs(value) > MAX_FACTOR \
                or (name != "offset" and abs(value) < 1.0 / MAX_FACTOR):
            raise JointMapError(f"{path}: {name}.{key}: {value!r}, expected a finite number"
                                + (f", not 0, at least {1.0 / MAX_FACTOR:g} and"
                                   if name != "offset" else ",")
                                + f" at most {MAX_FACTOR:g} in size")
        values[str(key)] = float(value)
    return values


def read_joint_map(entries: Sequence[str], path: str = "", max_bytes: int = 1 << 20) -> JointMap:
    """The map of the ``joint_name_map`` parameter's entries and the ``joint_map_file``
    ``path`` (empty: none); a name mapped in both, two model names on one hardware name, or
    a malformed entry raise :class:`JointMapError`."""
    hardware = _entries(entries)
    scale: dict[str, float] = {}
    offset: dict[str, float] = {}
    effort_scale: dict[str, float] = {}
    links: dict[str, str] = {}
    source = "joint_name_map"
    if path:
        source = f"joint_name_map and {path}" if hardware else path
        try:
            document = parse_yaml(read_text(path, "joint map file", max_bytes), path)
        except DocumentError as exc:
            raise JointMapError(str(exc)) from None
        document = {} if document is None else document
        if not isinstance(document, dict) or not set(document) <= set(FILE_SECTIONS):
            raise JointMapError(f"{path}: expected a mapping with the sections "
                                f"{', '.join(FILE_SECTIONS)}")
        names = document.get("names") or {}
        if not isinstance(names, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in names.items()):
            raise JointMapError(f"{path}: names: expected a mapping MODEL_NAME: HARDWARE_NAME")
        for model, hw in names.items():
            problem = name_problem(hw)           # a URDF joint's name on a topic
            if problem:
                raise JointMapError(f"{path}: names.{model}: {problem}")
        for model, hw in names.items():
            if model in hardware:
                raise JointMapError(f"{path}: names.{model}: mapped in joint_name_map too, "
                                    "expected once")
            hardware[model] = hw
        scale = _numbers(document.get("scale"), path, "scale")
        offset = _numbers(document.get("offset"), path, "offset")
        effort_scale = _numbers(document.get("effort_scale"), path, "effort_scale")
        links = _links(document.get("links"), path)
    seen: dict[str, str] = {}
    for model, hw in hardware.items():
        if hw in seen:
            raise JointMapError(f"{source}: {seen[hw]!r} and {model!r} both map to {hw!r}, "
                                "expected one model name per hardware name")
        seen[hw] = model
    return JointMap(hardware, scale, offset, source, effort_scale, links)


def _links(section: object, path: str) -> dict[str, str]:
    """The ``links`` section: model body -> URDF link, one body per link."""
    if section is None:
        return {}
    if not isinstance(section, dict) or not all(isinstance(k, str) for k in section):
        raise JointMapError(f"{path}: links: expected a mapping MODEL_BODY: URDF_LINK")
    seen: dict[str, str] = {}
    for body, link in section.items():
        problem = name_problem(link)             # a TF frame id (tf2 refuses a leading /)
        if problem:
            raise JointMapError(f"{path}: links.{body}: {problem}")
        if link in seen:
            raise JointMapError(f"{path}: links: {seen[link]!r} and {body!r} both map to link "
                                f"{link!r}, expected one body per link")
        seen[link] = body
    return dict(section)
