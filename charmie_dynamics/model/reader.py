"""Reading a model: a YAML model file or a URDF (with an optional mechanism overlay), from a
file or a text, dispatched on the content (a URDF's first character is '<').

Both go through the package's one guard (:mod:`charmie_dynamics.documents`) and end in
:func:`~charmie_dynamics.model.loader.model_from_dict`; every error is a :class:`ModelError`.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional

from ..documents import DEFAULT_MAX_BYTES, check_size, parse_yaml, read_text
from .loader import model_from_dict
from .model import Model
from .urdf import is_urdf, model_from_urdf
from .validation import ModelError


def model_from_text(text: str, source: str, max_bytes: int = DEFAULT_MAX_BYTES, *,
                    overlay: Optional[str | Path] = None, floating_base: bool = False) -> Model:
    """Parse and validate a model document (a file's text or a topic's message): YAML, or a
    URDF (its first character '<') with an optional mechanism ``overlay`` file and, with
    ``floating_base``, a free-flyer joining its root link to the world (Pinocchio's root
    joint, model/urdf.py); refuses a text over ``max_bytes`` before parsing it. Raises
    :class:`ModelError` only."""
    if is_urdf(text):
        return model_from_urdf(text, source, overlay=overlay, max_bytes=max_bytes,
                               floating_base=floating_base)
    if overlay is not None:
        raise ModelError(f"{source}: an overlay ({overlay}) was given for a YAML model, "
                         "expected a URDF (overlays add mechanisms to URDFs)")
    if floating_base:
        raise ModelError(f"{source}: floating_base was given for a YAML model, expected a "
                         "URDF (a YAML model writes its free-flyer as a joint of type floating)")
    check_size(text, source, max_bytes, error=ModelError)
    return model_from_dict(parse_yaml(text, source, error=ModelError), source)


def read_model_file(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES, *,
                    overlay: Optional[str | Path] = None,
                    floating_base: bool = False) -> tuple[Model, str]:
    """The validated model and the exact text it was built from (YAML, or a URDF with an
    optional ``overlay`` file). The file must be a regular file (never a FIFO or a device) of
    at most ``max_bytes``; ``floating_base``: see :func:`model_from_text`; raises
    :class:`ModelError`."""
    text = read_text(path, "model file", max_bytes, error=ModelError)
    return model_from_text(text, str(path), max_bytes, overlay=overlay,
                           floating_base=floating_base), text


def model_hash(text: str) -> str:
    """A model text's SHA-256, 16 hex digits: what the dynamics node's ``accept_model_hash``
    names and what a dataset's manifest records."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def load_model(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES, *,
               overlay: Optional[str | Path] = None, floating_base: bool = False) -> Model:
    """Read, validate and convert a model file, YAML or URDF (dispatched on the content;
    ``overlay``: a mechanism overlay file for a URDF; ``floating_base``: a free-flyer
    ``root_joint`` at a URDF's root link, as Pinocchio's ``buildModelFromUrdf(path,
    JointModelFreeFlyer())``); raises :class:`ModelError`."""
    return read_model_file(path, max_bytes, overlay=overlay, floating_base=floating_base)[0]

