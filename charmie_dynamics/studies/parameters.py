"""A study's parameters: values addressed by path in the model document, in the file's units.

A path is dotted keys with optional list indices: ``springs.spring_5s.stiffness``,
``balancers.balancer_left.spring.preload``, ``bodies.body_4.points.S4[1]``. A key on a list
picks the entry with that ``name`` (bodies, actuators, springs, balancers). A parameter may
write several paths (linked parameters: the left and the right balancer's preload).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..identification.model_file import PathKey

_PART = re.compile(r"([A-Za-z0-9_\-]+)((?:\[\d+\])*)")
_INDEX = re.compile(r"\[(\d+)\]")

Path = tuple[PathKey, ...]


class ParameterPathError(ValueError):
    """A path that is not well formed or that the model document lacks."""


def parse_path(text: str) -> Path:
    """``springs.spring_5s.stiffness`` -> ("springs", "spring_5s", "stiffness");
    ``points.S4[1]`` -> ("points", "S4", 1)."""
    keys: list[PathKey] = []
    for part in text.split("."):
        found = _PART.fullmatch(part)
        if found is None:
            raise ParameterPathError(f"{text!r}: expected dotted keys with optional [index], "
                                     "e.g. springs.spring_5s.stiffness or "
                                     "bodies.body_4.points.S4[1]")
        keys.append(found.group(1))
        keys += [int(k) for k in _INDEX.findall(found.group(2))]
    return tuple(keys)


def show_path(path: Path) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if n else k)
                   for n, k in enumerate(path))


def _child(node: Any, key: PathKey, path: Path) -> Any:
    if isinstance(key, int):
        if isinstance(node, list) and 0 <= key < len(node):
            return node[key]
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, dict) and item.get("name") == key:
                return item
    elif isinstance(node, dict) and key in node:
        return node[key]
    what = f"item [{key}]" if isinstance(key, int) else repr(key)
    raise ParameterPathError(f"{show_path(path)}: the model has no {what} there")


def field_of(document: Any, path: Path) -> str:
    """The field ``path`` names, whichever entry and component: what picks a list's entry
    (a body's name, an index) and a point's name become ``*`` and the last indices go, so
    linked paths of one quantity (``balancers.*.spring.preload``, ``bodies.*.points.*``)
    have one field."""
    node, parts = document, []
    for n, key in enumerate(path):
        # an entry of a list picked by name or by index, a point by its name: any of them
        named = isinstance(node, list) or (n and path[n - 1] == "points")
        parts.append("*" if named else key)
        node = _child(node, key, path)
    while isinstance(parts[-1], int):
        parts.pop()
    return show_path(tuple(parts))


def document_value(document: Any, path: Path) -> float:
    """The number at ``path`` (ParameterPathError when absent or not a number)."""
    node = document
    for key in path:
        node = _child(node, key, path)
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise ParameterPathError(f"{show_path(path)}: got {type(node).__name__}, expected a "
                                 "number")
    return float(node)


def with_value(document: Any, path: Path, value: float) -> Any:
    """A copy of ``document`` with ``value`` at ``path``: only the containers on the path are
    copied (a design costs a few small copies, not a deep copy of the model)."""
    if not path:
        return value
    key, rest = path[0], path[1:]
    child = _child(document, key, path)
    new = with_value(child, rest, value)
    if isinstance(document, list):
        index = key if isinstance(key, int) else next(
            k for k, item in enumerate(document) if item is child)
        return document[:index] + [new] + document[index + 1:]
    return {**document, key: new}


@dataclass(frozen=True)
class Parameter:
    """One varied value written at one or more paths, within [lower, upper] (file units)."""

    name: str
    paths: tuple[Path, ...]
    lower: float
    upper: float

    def apply(self, document: Any, value: float) -> Any:
        for path in self.paths:
            document = with_value(document, path, value)
        return document
