"""The robot in a viser scene: one frame (small axes) per body with its URDF visuals under it,
a cylinder per auxiliary segment, the reaction forces as arrows. Imported only by
``charmie-dynamics view`` (viser is an optional dependency: the ``view`` extra)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import viser

from ..model.model import Model
from .drawing import ARROW_COLOUR, Poses, body_visuals, segment_styles

AXES_LENGTH = 0.06                   # m, body frames
AXES_RADIUS = 0.003
# the dynamics node's marker: shaft diameter 0.01 m, head diameter 0.02 m, head length 0.03 m
ARROW_SHAFT_RADIUS, ARROW_HEAD_RADIUS, ARROW_HEAD_LENGTH = 0.005, 0.01, 0.03


def linear_light(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """sRGB -> linear light: viser's arrows take linear colours (its meshes take sRGB), so
    without this the arrows come out lighter and yellower than the RViz markers."""
    c = np.asarray(rgb) / 255.0
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return tuple(int(v) for v in np.round(255 * c))


def body_node(name: str) -> str:
    """The scene node of a body. viser's node names are paths whose '/' makes a node the
    child of another, posed relative to it; body names may hold '/' (URDF names such as
    ``LFoot/FSR/HeelLeft_sensor``), so each '/' of the name becomes ':', which names never
    hold: every body's frame stays a direct child of ``/robot``, posed in the world frame."""
    return "/robot/" + name.replace("/", ":")


@dataclass(frozen=True)
class Camera:
    """The page's initial camera (world frame, z up); ``fov`` vertical, degrees."""

    position: tuple[float, float, float]
    look_at: tuple[float, float, float]
    fov: float


class RobotScene:
    """Scene nodes created once; :meth:`show` poses them (one atomic update per sample)."""

    def __init__(self, server: viser.ViserServer, model: Model, camera: Camera) -> None:
        self.server = server
        scene = server.scene
        scene.set_up_direction("+z")
        server.initial_camera.position = camera.position
        server.initial_camera.look_at = camera.look_at
        server.initial_camera.up = (0.0, 0.0, 1.0)
        server.initial_camera.fov = np.radians(camera.fov)
        scene.add_grid("/ground", width=4.0, height=4.0, cell_size=0.25, section_size=1.0)
        self.frames = [scene.add_frame(body_node(name), axes_length=AXES_LENGTH,
                                       axes_radius=AXES_RADIUS)
                       for name in model.body_names]
        for k, v in enumerate(body_visuals(model)):
            name = f"{body_node(model.body_names[v.body])}/visual_{k}"
            if v.shape == "sphere":
                scene.add_icosphere(name, radius=v.radius, color=v.colour, position=v.position)
            else:
                scene.add_cylinder(name, radius=v.radius, height=v.length, color=v.colour,
                                   position=v.position, wxyz=v.wxyz)
        # unit height, stretched along z to the segment's length at each sample
        self.segments = [scene.add_cylinder(f"/auxiliary/{s.name}", radius=s.radius, height=1.0,
                                            color=s.colour)
                         for s in segment_styles(model)]
        self.arrows: Optional[viser.ArrowsHandle] = None     # created with the first arrows

    def show(self, poses: Poses, k: int) -> None:
        """Pose everything as sample ``k`` of ``poses``."""
        with self.server.atomic():
            for frame, q, p in zip(self.frames, poses.body_wxyz[k], poses.body_position[k]):
                frame.wxyz, frame.position = q, p
            for seg, q, p, length in zip(self.segments, poses.segment_wxyz[k],
                                         poses.segment_centre[k], poses.segment_length[k]):
                seg.wxyz, seg.position, seg.scale = q, p, (1.0, 1.0, float(length))
            self._show_arrows(poses.arrows[k])

    def _show_arrows(self, points: np.ndarray) -> None:
        if self.arrows is None and len(points):
            self.arrows = self.server.scene.add_arrows(
                "/reaction_forces", points, linear_light(ARROW_COLOUR),
                shaft_radius=ARROW_SHAFT_RADIUS, head_radius=ARROW_HEAD_RADIUS,
                head_length=ARROW_HEAD_LENGTH)
        elif self.arrows is not None:
            self.arrows.visible = bool(len(points))
            if len(points):
                self.arrows.points = points
