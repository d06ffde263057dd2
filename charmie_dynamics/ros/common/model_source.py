"""Where the nodes' models come from (pure Python: no rclpy here): a model file (YAML, or a
URDF with an optional mechanism overlay) turned into what the model loader publishes, and a
``robot_description`` URDF (with the dynamics node's overlay file) turned into a model.

The loader publishes on the model topic a text the dynamics node loads like any model file:
the YAML file as read, or for a URDF the model document (``charmie_dynamics/model/1``) of
the URDF with the overlay merged in. A topic thus carries one self-contained document (no
overlay path that would have to exist on the subscriber's machine), and the loader validates
exactly the text it publishes.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import yaml

from ...documents import read_text
from ...export.urdf import urdf_from_model
from ...model import ModelError, model_from_text
from ...model.model import Model
from ...model.urdf import is_urdf, read_overlay, urdf_document
from .joint_map import JointMap, JointMapError

#: ``topic``: model texts on model_topic; ``robot_description``: URDFs on robot_description
#: with overlay_file; ``file``: model_file only, nothing from DDS
MODEL_SOURCES = ("topic", "robot_description", "file")


@dataclass(frozen=True)
class PublishedModel:
    """A validated model with the texts the loader publishes."""

    model: Model
    text: str              # model topic: a model document the dynamics node loads
    description: str       # robot_description: a URDF


def model_to_publish(path: str | Path, overlay: Optional[str | Path], max_bytes: int,
                     frame_prefix: str = "", joint_map: JointMap = JointMap()) -> PublishedModel:
    """Read ``path`` (YAML, or a URDF with the mechanism ``overlay`` file); raises
    :class:`ModelError` naming the file and field. The URDF made from a YAML model names its
    joints and links by ``joint_map`` (its ``names`` and ``links``, as the dynamics node
    publishes them)."""
    text = read_text(path, "model file", max_bytes, error=ModelError)
    if not is_urdf(text):
        model = model_from_text(text, str(path), max_bytes, overlay=overlay)   # refuses an overlay
        try:
            joint_map.check_model(model, str(path))
        except JointMapError as exc:
            raise ModelError(str(exc)) from None
        return PublishedModel(model, text, urdf_from_model(
            model, frame_prefix=frame_prefix, names=joint_map.hardware, links=joint_map.links))
    if frame_prefix:
        raise ModelError(f"{path}: frame_prefix {frame_prefix!r} with a URDF model file, "
                         "expected '' (a URDF is published as read; robot_state_publisher's "
                         "frame_prefix renames frames)")
    if joint_map.hardware or joint_map.links:
        raise ModelError(f"{path}: joint_map_file {joint_map.source} with a URDF model file, "
                         "expected '' (a URDF is published as read, under its own names)")
    source = str(path) if overlay is None else f"{path} + {overlay}"
    document = urdf_as_document(text, path, overlay, max_bytes)
    return PublishedModel(model_from_text(document, source, max_bytes), document, text)


def urdf_as_document(text: str, path: str | Path, overlay: Optional[str | Path],
                     max_bytes: int) -> str:
    """The model document the loader publishes for the URDF ``text`` read from ``path`` with
    the mechanism ``overlay`` file; raises :class:`ModelError`."""
    parsed = None if overlay is None else read_overlay(overlay, max_bytes)
    return yaml.safe_dump(urdf_document(text, str(path), parsed, str(overlay)),
                          sort_keys=False, default_flow_style=None)


def model_from_description(text: str, source: str, max_bytes: int,
                           overlay: Optional[str | Path]) -> Model:
    """The model of a ``robot_description`` text (a URDF) with the mechanism ``overlay``
    file; raises :class:`ModelError` (a YAML text included: robot_description is a URDF)."""
    if not is_urdf(text):
        raise ModelError(f"{source}: a text that does not start with '<', expected a URDF")
    return model_from_text(text, source, max_bytes, overlay=overlay)
