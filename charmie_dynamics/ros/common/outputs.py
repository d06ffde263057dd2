"""What the dynamics node makes of an evaluation before publishing it (pure Python: no rclpy
here): the feedforward in its order, clamped on request, with the inputs beyond their effort
limit; the grids of stamps on which /tf and the loads are published; the bodies whose joint
wrench is published, and their topics."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Sequence

import numpy as np

from ...dynamics.actuation import actuator_space
from ...dynamics.inverse import base_body
from ...model.model import JointType, Model
from ...model.rotations import turn_poses
from .joint_map import JointMap

WRENCH_TOPICS = "joint_wrenches"
#: Which frames the dynamics node publishes (parameter ``publish_tf``)
TF_POLICIES = ("all", "not_in_urdf", "auxiliary", "none")


def base_bodies(model: Model) -> tuple[set[int], Optional[int]]:
    """The bodies the planar base's coordinates move (``model.base``; the odometry's with
    ``publish_base_transform: false``), and the base body, or None for a model without
    ``base:``."""
    if model.base is None:
        return set(), None
    chain = {i for i, body in enumerate(model.bodies) if body.coordinate in model.base.coordinates}
    return chain, model.body_index(model.base.body)


def turned_base(model: Model) -> bool:
    """Whether the model's ``base:`` turns its base body in base_link (CHARMIE's body_3)."""
    return model.base is not None and not np.allclose(model.base.rotation, np.eye(3),
                                                      atol=1e-15)


def base_frame_name(model: Model, base_frame: str, links: Mapping[str, str]) -> Optional[str]:
    """The published name (before the prefix) of the base body's frame: ``base_frame``, else
    its ``links`` name, else ``base_link`` where the model's ``base:`` turns it, else the
    body's own; None for a model without ``base:``."""
    if model.base is None:
        return None
    body = model.base.body
    return base_frame or links.get(body) or ("base_link" if turned_base(model) else body)


def frame_name_clash(model: Model, world_frame: str, base_frame: str) -> Optional[str]:
    """Why ``world_frame`` or ``base_frame`` (the base body's published name,
    :func:`base_frame_name`) cannot name frames of ``model`` (the name of another body, of a
    turned base body's own frame, or of each other: a frame would get two parents, or itself
    as parent), or None."""
    base = base_bodies(model)[1]
    # a turned base body's own name is its frame's, base_link's fixed child
    own = model.body_names[base] if base is not None and not turned_base(model) else None
    for key, name in (("world_frame", world_frame), ("base_frame", base_frame)):
        if name and name != (own if key == "base_frame" else None) and name in model.body_names:
            return f"{key} {name!r} is the name of a body of {model.name}, expected another name"
    if world_frame and world_frame == base_frame:
        return (f"world_frame {world_frame!r} is also the base body's frame, expected another "
                "name (set base_frame)")
    return None


@dataclass(frozen=True)
class FramePlan:
    """What the dynamics node publishes of the evaluator's poses: the indices of the poses
    on /tf, each pose's (parent, child) frame names, whether fixed bodies go on /tf_static,
    and the root frame (the frame of the loads' headers and the markers). The base body's
    frame is published as REP 103's base_link: ``turn`` (its frame in base_link, None where
    that is the identity) turns the poses of ``turned_parents`` (entries of ``poses`` whose
    parent is the base body: turn * pose) and ``turned_children`` (whose child it is: pose *
    turn^T), and the base body's wrench (``base_body``)."""

    poses: tuple[int, ...]
    parents: tuple[str, ...]
    children: tuple[str, ...]
    static: bool
    root: str
    frame: dict[str, str]              # body name -> published frame name (prefix included)
    turn: Optional[np.ndarray] = None
    turned_parents: tuple[int, ...] = ()
    turned_children: tuple[int, ...] = ()
    base_body: Optional[str] = None
    prefix: str = ""

    def turn_poses(self, translations: np.ndarray, quaternions_xyzw: np.ndarray) -> None:
        """The entries of ``poses`` (translations (n, 3), quaternions (n, 4) x y z w,
        contiguous float64), in place, with the base body's frame replaced by base_link's
        (one compiled call for a /tf message: ``rotations.turn_poses``)."""
        if self.turn is not None:
            if translations.shape != (len(self.poses), 3) \
                    or quaternions_xyzw.shape != (len(self.poses), 4):
                raise ValueError(f"poses of shapes {translations.shape} and "
                                 f"{quaternions_xyzw.shape}, expected ({len(self.poses)}, 3) "
                                 f"and ({len(self.poses)}, 4)")
            turn_poses(self.turn, translations, quaternions_xyzw, *self._turned)

    @functools.cached_property
    def _turned(self) -> tuple[np.ndarray, np.ndarray]:
        """``turned_parents`` and ``turned_children`` as the kernel takes them (it indexes
        without bounds checks: each an entry of ``poses``)."""
        turned = (np.array(self.turned_parents, dtype=np.int64),
                  np.array(self.turned_children, dtype=np.int64))
        if any(((k < 0) | (k >= len(self.poses))).any() for k in turned) \
                or np.shape(self.turn) != (3, 3):
            raise ValueError(f"a frame plan's turned poses {self.turned_parents}, "
                             f"{self.turned_children}: expected entries of its "
                             f"{len(self.poses)} poses and a 3x3 turn")
        return turned


def frame_plan(model: Model, pose_parents: Sequence[Optional[str]],
               pose_children: Sequence[str], n_body_poses: int, inputs: Sequence[str], policy: str,
               publish_base: bool, base_frame: str, world_frame: str,
               prefix: str, links: Mapping[str, str] = MappingProxyType({})) -> FramePlan:
    """The frames to publish (see :data:`TF_POLICIES`). ``pose_parents``/``pose_children``:
    the evaluator's poses (its first ``n_body_poses`` the moving bodies, parent None for the
    world, then the auxiliary segments). ``not_in_urdf``: a body whose joint coordinate is
    not among ``inputs`` (the coordinates on /joint_states: without the node's solved joint
    states, an indirectly actuated joint's or a loop's dependent one has no value there, so
    robot_state_publisher cannot place it) and every auxiliary segment (not a URDF joint).
    ``auxiliary``: the segments alone. ``publish_base`` false: no transform of a body moved by
    a base coordinate; the base body (:func:`base_bodies`) is the root. Frames are named
    ``prefix`` + the URDF link of ``links`` (body -> link; the joint map's ``links:``) or the
    body's name; the base body ``base_frame`` when given, else, where the model's ``base:``
    turns it, its ``links`` name or ``base_link``."""
    bodies = {name: i for i, name in enumerate(model.body_names)}
    base_chain, base = base_bodies(model)
    frame = {name: prefix + links.get(name, name) for name in model.body_names}
    frame[world_frame] = prefix + world_frame
    base_name = model.body_names[base] if base is not None else None
    turn = model.base.rotation if turned_base(model) else None
    if base_name is not None:
        # a turned base body's frame is base_link, not the body's (export-urdf's name too)
        frame[base_name] = prefix + base_frame_name(model, base_frame, links)
    root = frame[base_name] if base_name is not None and not publish_base \
        else frame[world_frame]
    measured = set(inputs)
    kept = []
    for k, child in enumerate(pose_children):
        i = bodies[child] if k < n_body_poses else None
        body = model.bodies[i] if i is not None else None
        if body is not None and not publish_base and i in base_chain:
            continue
        if policy == "none" or (policy == "not_in_urdf" and body is not None
                                and body.coordinate in measured) \
                or (policy == "auxiliary" and body is not None):
            continue
        kept.append(k)
    names = lambda n: frame.get(n, prefix + n)       # noqa: E731 (segments: own names)
    return FramePlan(
        tuple(kept), tuple(names(pose_parents[k] or world_frame) for k in kept),
        tuple(names(pose_children[k]) for k in kept), policy == "all", root, frame, turn,
        tuple(j for j, k in enumerate(kept) if turn is not None and pose_parents[k] == base_name),
        tuple(j for j, k in enumerate(kept) if turn is not None and k < n_body_poses
              and pose_children[k] == base_name),
        base_name if turn is not None else None, prefix)


def static_frames(model: Model, plan: FramePlan, world_frame: str
                  ) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """(parent frame, child frame, rotation, translation) of every fixed body (/tf_static with
    ``publish_tf: all``); one fixed on the base body is placed in base_link (``plan.turn``);
    none on a body above the base body whose frame is not published (the odometry's). A
    turned base body's own frame is base_link's fixed child under the body's name, as in
    ``export-urdf``'s URDF (whose links draw the body there)."""
    chain, base = base_bodies(model)
    unpublished = chain - {base} if base is not None \
        and plan.root == plan.frame[model.body_names[base]] else set()
    out = []
    for i in np.flatnonzero(model.joint_type == JointType.FIXED):
        if model.parent[i] in unpublished:
            continue
        parent = world_frame if model.parent[i] < 0 else model.body_names[model.parent[i]]
        turn = plan.turn if plan.turn is not None and parent == plan.base_body else np.eye(3)
        out.append((plan.frame[parent], plan.frame[model.body_names[i]],
                    turn @ model.rotation[i], turn @ model.origin[i]))
    if plan.turn is not None:       # the base body's own frame, as export-urdf writes it
        out.append((plan.frame[plan.base_body], plan.prefix + plan.base_body, plan.turn,
                    np.zeros(3)))
    return out


def wrench_bodies(model: Model, names: Sequence[str]) -> list[str]:
    """The bodies of the ``wrench_joints`` parameter (empty entries ignored), or where it
    names none (its default ``[""]``) the model's base body: the first body with mass, whose
    joint wrench is the load on the floor or the mount (``Loads.base_body``; CHARMIE's
    body_3), so that the default suits any model."""
    given = [name for name in names if name]
    return given or [model.body_names[base_body(model)]]


def wrench_topic(body: str) -> str:
    """``joint_wrenches/<body>`` as a valid ROS topic name: body names may hold '-' and '.',
    which topic names may not, and '/' (kept as namespaces, empty levels dropped); other
    characters become '_', a level starting with a digit gets a leading '_'."""
    levels = [re.sub(r"\W", "_", level, flags=re.ASCII) for level in body.split("/") if level]
    return "/".join([WRENCH_TOPICS] + ["_" + w if w[0].isdigit() else w for w in levels])


class FeedforwardMap:
    """Efforts in ``names`` order (the evaluator's inputs: ``model.input_names``, or a model
    with loops' independent coordinates) -> the feedforward in ``joints`` order, in the
    drives' units (``factors``: the joint map's ``effort_scale`` in ``joints`` order, or
    None)."""

    def __init__(self, model: Model, names: Sequence[str], joints: Sequence[str],
                 factors: Optional[np.ndarray] = None) -> None:
        self.names = tuple(names)
        self.index = [self.names.index(j) for j in joints]
        self.factors = factors
        self.effort_limit = actuator_space(model).effort_limit[
            [model.input_names.index(n) for n in self.names]]

    def beyond_limits(self, efforts: np.ndarray) -> tuple[str, ...]:
        """The inputs whose effort is beyond the model's effort or force limit."""
        beyond = np.abs(efforts) > self.effort_limit
        return tuple(n for n, b in zip(self.names, beyond) if b) if beyond.any() else ()

    def __call__(self, efforts: np.ndarray, clamp: bool) -> np.ndarray:
        """The feedforward, clamped at the model's limits with ``clamp``."""
        if clamp:
            efforts = np.clip(efforts, -self.effort_limit, self.effort_limit)
        return efforts[self.index] if self.factors is None else efforts[self.index] * self.factors

    def zeros(self) -> np.ndarray:
        return np.zeros(len(self.index))


@dataclass(frozen=True)
class OutputUnits:
    """The joint map's conversions of the published numbers (``JointMap.position_factors`` and
    ``effort_out``, None where a group has none): positions and velocities of every coordinate
    and of the inputs, efforts of both; and which coordinates the node solves (published on
    joint_states with ``publish_solved_joint_states``)."""

    coordinates: Optional[tuple[np.ndarray, np.ndarray]] = None
    coordinate_efforts: Optional[np.ndarray] = None
    inputs: Optional[tuple[np.ndarray, np.ndarray]] = None
    input_efforts: Optional[np.ndarray] = None
    solved: tuple[int, ...] = ()

    @classmethod
    def of(cls, joint_map: JointMap, coordinates: Sequence[str], inputs: Sequence[str],
           solved: Sequence[str] = ()) -> "OutputUnits":
        return cls(joint_map.position_factors(coordinates), joint_map.effort_out(coordinates),
                   joint_map.position_factors(inputs), joint_map.effort_out(inputs),
                   tuple(list(coordinates).index(c) for c in solved))


def hardware_positions(conversion: Optional[tuple[np.ndarray, np.ndarray]], q: np.ndarray,
                       qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities in the hardware's units: ``(q - offset) / scale``."""
    if conversion is None:
        return q, qd
    scale, offset = conversion
    return (q - offset) / scale, qd / scale


def hardware_efforts(factors: Optional[np.ndarray], efforts: np.ndarray) -> np.ndarray:
    return efforts if factors is None else efforts * factors


@dataclass
class StampGrid:
    """Stamps (integer ns) on a grid 1/rate apart: the evaluations that publish an output
    at most ``rate`` times a second (/tf at ``tf_rate``, the loads at ``output_rate``), so
    that jitter in the input stamps does not lower its average rate; a gap of more than a
    period, or time going back, restarts the grid."""

    next_due: Optional[int] = None

    def due(self, stamp: int, rate_hz: float) -> bool:
        """Whether ``stamp`` gets the output (rate 0: every stamp)."""
        if rate_hz <= 0:
            return True
        period, due = int(1e9 / rate_hz), self.next_due
        if not (due is None or stamp >= due or stamp < due - 2 * period):
            return False
        on_grid = due is not None and due <= stamp < due + period
        self.next_due = (due if on_grid else stamp) + period
        return True

    def reset(self) -> None:
        self.next_due = None
