"""A model's parameters: bodies ordered parents first, as flat arrays, plus mechanisms.

:class:`ModelParameters` is what the loader validates and what the constants derived from
it (model/compiled.py) are built from; :class:`~.model.Model` adds those constants. The split
lets the builders below the model (packed.py, actuator_geometry.py, compiled.py) take the
parameters without importing the module that holds them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from types import MappingProxyType
from typing import Mapping, Optional

import numpy as np

from ..documents import bounded
from .cut_joints import Loops


class JointType(IntEnum):
    """Joint preceding a body: seed 000 section 3.2, JT_i; FLOATING is the free-flyer
    (6 degrees of freedom, Pinocchio's JointModelFreeFlyer), allowed only on a root body;
    HELICAL turns about its axis and slides along it by ``pitch`` per radian (Pinocchio's
    JointModelHelicalUnaligned, model/joint.py)."""

    FIXED = 0
    REVOLUTE = 1
    PRISMATIC = 2
    FLOATING = 3
    HELICAL = 4

    @property
    def angular(self) -> bool:
        """Its one coordinate is an angle (rad; its effort a torque, N m): a helical joint's
        too, its slide following from the angle."""
        return self is JointType.REVOLUTE or self is JointType.HELICAL

    @property
    def linear(self) -> bool:
        """Its one coordinate is a length (m; its effort a force, N)."""
        return self is JointType.PRISMATIC

    @property
    def unit(self) -> str:
        """The SI unit of its one coordinate ("" for none or a free-flyer's six)."""
        return "rad" if self.angular else "m" if self.linear else ""


#: a free-flyer's velocity coordinates (Pinocchio's v: linear velocity of the body origin,
#: then angular velocity, both in the body frame) and configuration entries (Pinocchio's q:
#: position of the body origin in the parent frame, then the unit quaternion x, y, z, w),
#: appended to its coordinate name as NAME.vx ... and NAME.x ...
FREE_FLYER_VELOCITIES = ("vx", "vy", "vz", "wx", "wy", "wz")
FREE_FLYER_CONFIGURATION = ("x", "y", "z", "qx", "qy", "qz", "qw")


@dataclass(frozen=True)
class JointLimits:
    """Optional joint limits in SI units (rad or m; rad/s or m/s; N m or N)."""

    lower: Optional[float] = None
    upper: Optional[float] = None
    velocity: Optional[float] = None
    effort: Optional[float] = None


@dataclass(frozen=True)
class Friction:
    """Joint or actuator friction, seed 004 eq. 43: viscous * rate + coulomb * sign(rate).

    SI: N m s/rad and N m for a revolute joint, N s/m and N for a prismatic joint or a linear
    actuator.
    """

    viscous: float = 0.0
    coulomb: float = 0.0


@dataclass(frozen=True)
class Body:
    """One rigid body of the tree and the joint that precedes it (SI units)."""

    name: str
    parent: str                    # a body name or "world"
    joint_type: JointType
    axis: np.ndarray               # unit joint axis in the joint frame (any direction), (3,)
    coordinate: Optional[str]      # coordinate name, None for fixed joints
    multiplier: float              # joint value = multiplier * coordinate + offset
    rotation: np.ndarray           # constant rotation parent -> joint frame, (3, 3)
    origin: np.ndarray             # joint point on the parent, parent frame (B point), (3,)
    mass: float
    com: np.ndarray                # centre of mass in the body frame (r_AiCi), (3,)
    inertia: np.ndarray            # inertia about the com in the body frame, (3, 3)
    points: Mapping[str, np.ndarray]
    virtual: bool = False
    limits: JointLimits = field(default_factory=JointLimits)
    friction: Friction = field(default_factory=Friction)
    offset: float = 0.0            # rad or m: a mimic joint's offset (see multiplier)
    pitch: float = 0.0             # m/rad: a helical joint's slide per radian, 0 otherwise


@dataclass(frozen=True)
class PointRef:
    """A named point ``BODY.POINT``; ``body`` is an index into ``Model.bodies``."""

    body: int
    name: str                      # "BODY.POINT"
    local: np.ndarray              # coordinates in the body frame, (3,)


@dataclass(frozen=True)
class Actuator:
    """A linear actuator between two bodies that drives the joint of ``drives``; limits in
    SI units (N, m/s), None where the model gives none."""

    name: str
    drives: int                    # index of the body whose preceding joint is driven
    base: PointRef                 # anchor on the joint's parent
    end: PointRef                  # anchor on the joint's child
    branch: int                    # +1 or -1: assembly branch
    stroke: tuple[float, float]    # length limits, m
    default_length: float          # m
    force_limit: Optional[float] = None
    friction: Friction = field(default_factory=Friction)
    velocity_limit: Optional[float] = None


@dataclass(frozen=True)
class SpringParams:
    """Linear extension spring, seed 000 eq. 35: F = k (L - L0) + F0 (tension positive).
    A torsion spring's law has the same form in its angle: N m/rad, rad, N m."""

    stiffness: float               # N/m
    free_length: float             # m
    preload: float                 # N


@dataclass(frozen=True, eq=False)
class PlanarBase:
    """A mobile base (the model file's ``base:``, docs/model_format.md "Base"): the
    coordinates of its planar joints, x and y along the world's x and y axes and the yaw about
    its z axis (CHARMIE's d1, d2, theta3: seed 000 section 3.1), which a base controller's
    odometry gives; ``body``, the body the yaw turns (the base body); ``rotation``, that body's
    frame in REP 103's ``base_link`` (x forward, y left, z up), a rotation about z (CHARMIE's
    body_3 has x to the robot's right and y forward: Rz(-pi/2))."""

    coordinates: tuple[str, str, str]
    body: str
    rotation: np.ndarray

    @property
    def heading(self) -> float:
        """The base body's yaw in base_link (rad): the model's yaw coordinate is the
        odometry's yaw plus this (-pi/2 for CHARMIE)."""
        return math.atan2(self.rotation[1, 0], self.rotation[0, 0])


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class ModelParameters:
    """The parameters of a multibody model in SI units; bodies are ordered parents first.

    The flat arrays (index = body index) are what the recursions loop over:
    ``parent`` (-1 for the world), ``joint_type``, ``axis``, ``rotation``, ``origin``,
    ``coordinate_index`` (-1 for fixed joints), ``multiplier``, ``offset`` (joint value =
    multiplier * coordinate + offset), ``pitch`` (helical joints, m/rad), ``mass``, ``com``,
    ``inertia``. Models compare and
    hash by identity.

    Coordinates are velocity coordinates: qd, qdd and the efforts have ``nv`` =
    ``n_coordinates`` entries (``coordinate_names``). The configuration q has ``nq`` entries
    (``configuration_names``): the same, except that a free-flyer's 6 coordinates
    (FREE_FLYER_VELOCITIES, from ``coordinate_index``) have 7 configuration entries
    (FREE_FLYER_CONFIGURATION, from ``configuration_index``), as in Pinocchio.
    ``coordinate_configuration`` (nv,): the configuration entry of each coordinate's value
    (a free-flyer's: its x, y, z, qx, qy, qz, which have no limits), for the joint stops.
    """

    name: str
    source: str
    gravity: np.ndarray
    bodies: tuple[Body, ...]
    actuators: tuple[Actuator, ...] = ()
    #: each kind of mechanism's (model/kinds/) by its section: springs, balancers, ...
    mechanisms: Mapping[str, tuple] = field(default_factory=dict)
    loops: Optional[Loops] = None              # closed loops (cut_joints.py), None for a tree
    base: Optional[PlanarBase] = None          # a mobile base's planar joints, None if none
    coordinate_names: tuple[str, ...] = field(init=False)
    body_names: tuple[str, ...] = field(init=False)
    parent: np.ndarray = field(init=False)
    joint_type: np.ndarray = field(init=False)
    axis: np.ndarray = field(init=False)
    rotation: np.ndarray = field(init=False)
    origin: np.ndarray = field(init=False)
    coordinate_index: np.ndarray = field(init=False)
    multiplier: np.ndarray = field(init=False)
    offset: np.ndarray = field(init=False)
    pitch: np.ndarray = field(init=False)
    configuration_names: tuple[str, ...] = field(init=False)
    configuration_index: np.ndarray = field(init=False)
    coordinate_configuration: np.ndarray = field(init=False)
    mass: np.ndarray = field(init=False)
    com: np.ndarray = field(init=False)
    inertia: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        names = tuple(b.name for b in self.bodies)
        index = {n: i for i, n in enumerate(names)}
        # a dict keeps the first-seen order and finds a coupled joint's coordinate in O(1)
        cindex: dict[str, int] = {}
        first_q: dict[str, int] = {}       # coordinate name -> its first configuration entry
        q_names: list[str] = []
        to_q: list[int] = []               # coordinate_configuration
        for b in self.bodies:
            if b.coordinate is None or b.coordinate in first_q:
                continue
            first_q[b.coordinate], cindex[b.coordinate] = len(q_names), len(to_q)
            if b.joint_type == JointType.FLOATING:
                to_q.extend(range(len(q_names), len(q_names) + 6))
                q_names.extend(f"{b.coordinate}.{part}" for part in FREE_FLYER_CONFIGURATION)
            else:
                to_q.append(len(q_names))
                q_names.append(b.coordinate)
        parts = {b.coordinate: tuple(f"{b.coordinate}.{part}" for part in FREE_FLYER_VELOCITIES)
                 if b.joint_type == JointType.FLOATING else (b.coordinate,)
                 for b in self.bodies if b.coordinate is not None}
        values = {
            "coordinate_names": tuple(n for c in cindex for n in parts[c]),
            "body_names": names,
            "parent": np.array([index.get(b.parent, -1) for b in self.bodies], dtype=int),
            "joint_type": np.array([int(b.joint_type) for b in self.bodies], dtype=int),
            "axis": _frozen([b.axis for b in self.bodies]),
            "rotation": _frozen([b.rotation for b in self.bodies]),
            "origin": _frozen([b.origin for b in self.bodies]),
            "coordinate_index": np.array(
                [cindex[b.coordinate] if b.coordinate is not None else -1 for b in self.bodies],
                dtype=int),
            "configuration_names": tuple(q_names),
            "configuration_index": np.array(
                [first_q[b.coordinate] if b.coordinate is not None else -1 for b in self.bodies],
                dtype=int),
            "coordinate_configuration": np.array(to_q, dtype=int),
            "multiplier": _frozen([b.multiplier for b in self.bodies]),
            "offset": _frozen([b.offset for b in self.bodies]),
            "pitch": _frozen([b.pitch for b in self.bodies]),
            "mass": _frozen([b.mass for b in self.bodies]),
            "com": _frozen([b.com for b in self.bodies]),
            "inertia": _frozen([b.inertia for b in self.bodies]),
        }
        for key in ("parent", "joint_type", "coordinate_index", "configuration_index",
                    "coordinate_configuration"):
            values[key].flags.writeable = False
        values["mechanisms"] = MappingProxyType(dict(self.mechanisms))
        for key, value in values.items():
            object.__setattr__(self, key, value)

    @property
    def springs(self) -> tuple:
        """The model's ``kinds.spring.Spring``s (``mechanisms``' springs)."""
        return self.mechanisms.get("springs", ())

    @property
    def balancers(self) -> tuple:
        """The model's ``kinds.balancer.Balancer``s."""
        return self.mechanisms.get("balancers", ())

    @property
    def torsion_springs(self) -> tuple:
        """The model's ``kinds.torsion_spring.TorsionSpring``s."""
        return self.mechanisms.get("torsion_springs", ())

    @property
    def n_bodies(self) -> int:
        return len(self.bodies)

    @property
    def n_coordinates(self) -> int:
        """nv: velocity coordinates (entries of qd, qdd and the efforts)."""
        return len(self.coordinate_names)

    @cached_property
    def nv(self) -> int:
        """Pinocchio's name of :attr:`n_coordinates`."""
        return len(self.coordinate_names)

    @cached_property
    def nq(self) -> int:
        """Entries of the configuration q: nv plus one per free-flyer."""
        return len(self.configuration_names)

    @cached_property
    def free_flyers(self) -> tuple[int, ...]:
        """The bodies whose joint is a free-flyer (JointType.FLOATING)."""
        return tuple(i for i, b in enumerate(self.bodies)
                     if b.joint_type == JointType.FLOATING)

    @cached_property
    def actuator_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.actuators)

    @property
    def driven_coordinates(self) -> dict[str, str]:
        """Coordinate name -> name of the actuator that drives it."""
        return {self.bodies[a.drives].coordinate: a.name for a in self.actuators}

    @cached_property
    def input_names(self) -> tuple[str, ...]:
        """Independent inputs: the coordinates, with each driven one replaced by its actuator."""
        driven = self.driven_coordinates
        return tuple(driven.get(c, c) for c in self.coordinate_names)

    @property
    def total_mass(self) -> float:
        return float(self.mass.sum())

    @cached_property
    def _body_indices(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.body_names)}

    def body_index(self, name: str) -> int:
        try:
            return self._body_indices[name]
        except (KeyError, TypeError):           # TypeError: an unhashable name
            raise KeyError(f"unknown body {bounded(repr(name), 80)}; bodies: "
                           f"{bounded(', '.join(self.body_names))}") from None

    def coordinate(self, name: str) -> int:
        try:
            return self.coordinate_names.index(name)
        except ValueError:
            raise KeyError(f"unknown coordinate {bounded(repr(name), 80)}; coordinates: "
                           f"{bounded(', '.join(self.coordinate_names))}") from None

    def point(self, ref: str) -> PointRef:
        """Resolve ``"BODY.POINT"``; the body's origin is ``"BODY.origin"``, its com
        ``"BODY.com"``."""
        body, _, name = ref.rpartition(".")     # body names may hold '.', point names not
        i = self.body_index(body)
        if name == "origin":
            local = np.zeros(3)
        elif name == "com":
            local = self.bodies[i].com
        elif name in self.bodies[i].points:
            local = self.bodies[i].points[name]
        else:
            raise KeyError(f"unknown point {bounded(repr(ref), 80)}; points of {body}: "
                           f"{bounded(', '.join(self.bodies[i].points) or 'none')}")
        return PointRef(i, ref, _frozen(local))

    def children(self, i: int) -> list[int]:
        return [j for j in range(self.n_bodies) if self.parent[j] == i]
