"""What the view draws, as plain arrays (numpy only: no viewer library, no rclpy).

* Body visuals are read back from the URDF that RViz shows (``urdf_from_model``): the same
  spheres and cylinders, in the same colours, so the two views cannot drift apart.
* Auxiliary segments (actuators, springs, balancer levers and hangers) are cylinders from
  their start to their end at the current configuration (RViz keeps the reference length).
* Reaction forces are arrows from the joint point to ``origin + marker_scale * force``, as
  the dynamics node's ``wrench_markers``.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..dynamics import inverse_dynamics
from ..evaluators.evaluator import NonFiniteLoads
from ..evaluators.loop_evaluator import LoopEvaluator, LoopSingularityError
from ..export.urdf import _AUX_COLOURS, AUX_RADIUS, rpy_to_matrix, urdf_from_model
from ..kinematics import forward_kinematics, resolve_state
from ..kinematics.forward import Placements
from ..kinematics.indirect import MechanismRangeError
from ..mechanisms.auxiliary import auxiliary_segments, segment_names
from ..model.model import Model
from ..model.rotations import quaternions
from ..trajectories import Trajectory

ARROW_COLOUR = (255, 77, 0)          # the dynamics node's marker colour (1.0, 0.3, 0.0)
SEGMENT_RADIUS_DEFAULT = 0.01        # m, as urdf.py for a kind without its own radius


@dataclass(frozen=True)
class Visual:
    """One primitive of a body, in the body frame (a cylinder lies along its own z)."""

    body: int
    shape: str                   # "sphere" or "cylinder"
    radius: float                # m
    length: float                # m (0 for a sphere)
    position: np.ndarray         # (3,) centre, body frame
    wxyz: np.ndarray             # (4,) orientation, body frame
    colour: tuple[int, int, int]


@dataclass(frozen=True)
class SegmentStyle:
    name: str
    kind: str
    radius: float
    colour: tuple[int, int, int]


@dataclass(frozen=True)
class Poses:
    """Everything that moves, for N samples: world poses of the bodies, segment ends and
    arrows (start, tip)."""

    body_wxyz: np.ndarray        # (N, nb, 4)
    body_position: np.ndarray    # (N, nb, 3)
    segment_wxyz: np.ndarray     # (N, ns, 4), z along the segment
    segment_centre: np.ndarray   # (N, ns, 3)
    segment_length: np.ndarray   # (N, ns)
    arrows: np.ndarray           # (N, na, 2, 3)


def _rgb(rgba: str) -> tuple[int, int, int]:
    r, g, b = (float(v) for v in rgba.split()[:3])
    return round(255 * r), round(255 * g), round(255 * b)


def wxyz(R: np.ndarray) -> np.ndarray:
    """Quaternions (w, x, y, z), the viewer's order, of rotations (..., 3, 3)."""
    return np.roll(quaternions(R), 1, axis=-1)


def body_visuals(model: Model) -> list[Visual]:
    """The link visuals of ``urdf_from_model(model)`` (bodies only)."""
    robot = ET.fromstring(urdf_from_model(model, include_auxiliary=False))
    colours = {m.get("name"): _rgb(m.find("color").get("rgba"))
               for m in robot.findall("material") if m.find("color") is not None}
    visuals = []
    for link in robot.findall("link"):
        if link.get("name") not in model.body_names:
            continue                                    # the root link "world"
        body = model.body_index(link.get("name"))
        for visual in link.findall("visual"):
            origin = visual.find("origin")
            xyz = np.array([float(v) for v in origin.get("xyz").split()])
            R = rpy_to_matrix(*(float(v) for v in origin.get("rpy").split()))
            geometry = visual.find("geometry")[0]
            length = float(geometry.get("length", 0.0))
            visuals.append(Visual(body, geometry.tag, float(geometry.get("radius")), length, xyz,
                                  wxyz(R), colours[visual.find("material").get("name")]))
    return visuals


def segment_styles(model: Model) -> list[SegmentStyle]:
    """Name, kind, radius and colour of every auxiliary segment, as urdf.py draws them."""
    return [SegmentStyle(name, kind, AUX_RADIUS.get(kind, SEGMENT_RADIUS_DEFAULT),
                         _rgb(" ".join(str(c) for c in _AUX_COLOURS[kind])))
            for name, kind, _ in segment_names(model)]


def wrench_arrows(placements: Placements, force_world: np.ndarray, bodies: Sequence[int],
                  marker_scale: float) -> np.ndarray:
    """(..., len(bodies), 2, 3): from each body's joint point to ``+ marker_scale * force``."""
    start = placements.origin_world[..., list(bodies), :]
    tip = start + marker_scale * force_world[..., list(bodies), :]
    return np.stack([start, tip], axis=-2)


def poses(model: Model, placements: Placements, arrows: np.ndarray) -> Poses:
    """The drawing's moving parts for the samples of ``placements`` (leading axes flattened)."""
    rotation, origin = placements.per_sample(model)
    segments = auxiliary_segments(model, placements)
    n = rotation.shape[0]
    if segments:
        seg_R = np.stack([s.rotation.reshape(n, 3, 3) for s in segments], axis=1)
        seg_centre = np.stack([(s.start + s.end).reshape(n, 3) / 2 for s in segments], axis=1)
        seg_length = np.stack([s.length.reshape(n) for s in segments], axis=1)
    else:
        seg_R, seg_centre = np.zeros((n, 0, 3, 3)), np.zeros((n, 0, 3))
        seg_length = np.zeros((n, 0))
    return Poses(wxyz(rotation[:, :, 1]), origin[:, :, 1], wxyz(seg_R), seg_centre, seg_length,
                 arrows.reshape((n,) + arrows.shape[-3:]))


def motion_poses(model: Model, trajectory: Trajectory, wrench_bodies: Sequence[int],
                 marker_scale: float) -> Poses:
    """Every sample of a motion with the reaction-force arrows of its inverse dynamics."""
    state = resolve_state(model, trajectory.x, trajectory.xd, trajectory.xdd)
    loads = inverse_dynamics(model, state)
    arrows = wrench_arrows(loads.placements, loads.joint_force_world, wrench_bodies, marker_scale)
    return poses(model, loads.placements, arrows)


def loop_motion_poses(evaluator: LoopEvaluator, trajectory: Trajectory,
                      wrench_bodies: Sequence[int], marker_scale: float) -> Poses:
    """Every sample of a motion of a model with loops (``trajectory.x``: its independent
    coordinates, in ``evaluator.input_names`` order) drawn closed: each sample evaluated as
    the dynamics node evaluates it (the loops solved warm-started from the last sample, the
    arrows' joint forces with the cut joints' constraint wrenches). A sample the evaluator
    refuses raises its error (:class:`LoopSingularityError`, :class:`NonFiniteLoads`,
    :class:`MechanismRangeError`) with its index in ``sample``."""
    model, k = evaluator.model, len(trajectory.t)
    q = np.empty((k, model.n_coordinates))
    arrows = np.empty((k, len(wrench_bodies), 2, 3))
    for i in range(k):
        try:
            out = evaluator(trajectory.x[i], trajectory.xd[i], trajectory.xdd[i])
        except (LoopSingularityError, NonFiniteLoads, MechanismRangeError) as exc:
            exc.sample = i
            raise
        q[i] = out.state.q
        arrows[i] = wrench_arrows(out.loads.placements, out.loads.joint_force_world,
                                  wrench_bodies, marker_scale)
    return poses(model, forward_kinematics(model, q), arrows)
