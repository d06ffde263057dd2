"""The model file with identified parameters: the original YAML text, edited in place.

Every other line, comment and value stays as written. The values changed are each body's
``mass``, ``com`` and ``inertia`` (written as ``{ixx, iyy, izz, ixy, ixz, iyz}`` about the
centre of mass, kg times the file's length unit squared), each spring's, balancer spring's
and torsion spring's ``stiffness`` and ``preload`` (the free length or angle is kept:
preload = t0 + k L0), and the friction of each input (its actuator's, or the first joint of
its coordinate); every line that holds a changed value ends with the comment
``# identified`` (appended to a comment already there). Values are in the file's units
(``units.length``, ``units.angle``), with 12 significant digits. A key the file leaves out
(a default) is inserted. :func:`edited_model_text` sets any value at a path of the document
the same way (the design studies' best model file).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import yaml

from ..documents import DocumentError, compose_yaml
from ..model.kinds import MECHANISM_KINDS, items
from ..model.loader import ANGLE_UNITS, LENGTH_UNITS
from ..model.model import Model
from .regressor import ParameterLayout, with_parameters

MARK = "identified"


class ModelFileError(DocumentError):
    """A model text this module cannot edit (not a YAML model file)."""


def _number(v: float) -> str:
    return f"{float(v):.12g}"


def _vector(v: np.ndarray) -> str:
    return "[" + ", ".join(_number(x) for x in v) + "]"


def _flow(values: dict[str, float]) -> str:
    return "{" + ", ".join(f"{k}: {_number(v)}" for k, v in values.items()) + "}"


@dataclass(frozen=True)
class _Edit:
    """Replace the text from (line, column) to (end_line, end_column) by ``text`` (a whole
    new line when it ends with a newline), zero-based."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


def _get(node: Any, key: str) -> Optional[tuple[Any, Any]]:
    """(key node, value node) of ``key`` in a mapping node, or None."""
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return k, v
    return None


def _content_end(node: Any) -> Any:
    """The mark after the last character of ``node``'s own text: a block collection's end
    mark lies at the next token (the next key's line), its last leaf's does not."""
    while isinstance(node, (yaml.SequenceNode, yaml.MappingNode)) and not node.flow_style \
            and node.value:
        node = node.value[-1]
        node = node[1] if isinstance(node, tuple) else node
    return node.end_mark


def _set(node: yaml.MappingNode, key: str, text: str, edits: list[_Edit], mark: str = MARK
         ) -> None:
    """Set ``key`` of a mapping node to the YAML text ``text`` (replaced or inserted; an
    inserted line carries the comment ``mark``)."""
    found = _get(node, key)
    if found is not None:
        k, v = found
        end = _content_end(v)
        if isinstance(v, yaml.CollectionNode) and not v.flow_style:
            # a block value (a matrix as rows "- [..]" below its key) becomes a flow value on
            # the key's line: written in its place, it would run into the next key
            edits.append(_Edit(k.end_mark.line, k.end_mark.column, end.line, end.column,
                               f": {text}"))
        else:
            edits.append(_Edit(v.start_mark.line, v.start_mark.column, end.line, end.column,
                               text))
    elif node.flow_style:                   # {a: 1, b: 2}: before the closing brace
        end = node.end_mark
        edits.append(_Edit(end.line, end.column - 1, end.line, end.column - 1,
                           f", {key}: {text}"))
    else:                                   # a new line after the mapping's last entry
        first_key = node.value[0][0]
        line = _content_end(node.value[-1][1]).line
        edits.append(_Edit(line + 1, 0, line + 1, 0,
                           " " * first_key.start_mark.column + f"{key}: {text}  # {mark}\n"))


def _named(sequence: Any, name: str, where: str) -> yaml.MappingNode:
    for item in (sequence.value if isinstance(sequence, yaml.SequenceNode) else []):
        found = _get(item, "name")
        if found is not None and found[1].value == name:
            return item
    raise ModelFileError(f"{where}: no entry named {name!r}")


#: A key of a model document's path: a mapping's key, a named entry of a list (bodies,
#: actuators, springs, balancers: by ``name``) or a list index.
PathKey = str | int


def edited_model_text(text: str, source: str, values: list[tuple[tuple[PathKey, ...], float]],
                      mark: str) -> str:
    """``text`` (a YAML model file) with each value set at its path (the last key a mapping's
    key or a list index), in the file's units, every changed line marked ``# mark``; raises
    :class:`ModelFileError` for a URDF or a path the file lacks (a missing last key of a
    mapping is inserted)."""
    if text.lstrip().startswith("<"):
        raise ModelFileError(f"{source}: a URDF; only YAML model files are edited")
    node = root = compose_yaml(text, source, error=ModelFileError)
    edits: list[_Edit] = []
    for path, value in values:
        node, where = root, source
        for key in path[:-1]:
            node = _child(node, key, where)
            where = f"{where}: {key}" if where == source else f"{where}.{key}"
        last = path[-1]
        if isinstance(last, int):
            item = _child(node, last, where)
            edits.append(_Edit(item.start_mark.line, item.start_mark.column,
                               item.end_mark.line, item.end_mark.column, _number(value)))
        elif isinstance(node, yaml.MappingNode):
            _set(node, last, _number(value), edits, mark)
        else:
            raise ModelFileError(f"{where}: expected a mapping holding {last!r}")
    return _apply(text, edits, mark)


def _child(node: Any, key: PathKey, where: str) -> Any:
    """A mapping's value, a list's named entry (a string key) or a list's item (an index)."""
    if isinstance(key, int):
        if isinstance(node, yaml.SequenceNode) and 0 <= key < len(node.value):
            return node.value[key]
        raise ModelFileError(f"{where}: no item [{key}]")
    if isinstance(node, yaml.SequenceNode):
        return _named(node, key, where)
    found = _get(node, key) if isinstance(node, yaml.MappingNode) else None
    if found is None:
        raise ModelFileError(f"{where}: no key {key!r}")
    return found[1]


def updated_model_text(text: str, source: str, model: Model, layout: ParameterLayout,
                       pi: np.ndarray) -> str:
    """``text`` (the YAML file ``model`` was read from) with the parameters ``pi``
    (module docstring)."""
    if text.lstrip().startswith("<"):
        raise ModelFileError(f"{source}: a URDF; identify writes YAML model files only")
    root = compose_yaml(text, source, error=ModelFileError)
    if not isinstance(root, yaml.MappingNode):
        raise ModelFileError(f"{source}: expected a YAML model file (a mapping)")
    units = _get(root, "units")
    unit = "m"
    if units is not None and _get(units[1], "length") is not None:
        unit = _get(units[1], "length")[1].value
    L = LENGTH_UNITS[unit]
    angle = "rad"
    if units is not None and _get(units[1], "angle") is not None:
        angle = _get(units[1], "angle")[1].value
    new = with_parameters(model, pi)
    edits: list[_Edit] = []

    def changed(old: Any, value: Any) -> bool:
        return not np.allclose(value, old, rtol=1e-9, atol=1e-12)
    bodies = _get(root, "bodies")[1]
    for i in layout.bodies:
        b, old = new.bodies[i], model.bodies[i]
        node = _named(bodies, b.name, f"{source}: bodies")
        if changed(old.mass, b.mass):
            _set(node, "mass", _number(b.mass), edits)
        if changed(old.com, b.com):
            _set(node, "com", _vector(b.com / L), edits)
        I = b.inertia / (L * L)
        if changed(old.inertia, b.inertia):
            _set(node, "inertia", _flow({"ixx": I[0, 0], "iyy": I[1, 1], "izz": I[2, 2],
                                         "ixy": I[0, 1], "ixz": I[0, 2], "iyz": I[1, 2]}), edits)
    actuators = {a.name: a for a in new.actuators}
    done: set[str] = set()
    for b, old in zip(new.bodies, model.bodies):
        name = b.coordinate
        if name is None or name in done or name in new.driven_coordinates:
            continue
        done.add(name)
        if not changed([old.friction.viscous, old.friction.coulomb],
                       [b.friction.viscous, b.friction.coulomb]):
            continue
        joint = _get(_named(bodies, b.name, f"{source}: bodies"), "joint")[1]
        per = L if b.joint_type.linear else 1.0
        _set(joint, "friction", _flow({"viscous": b.friction.viscous * per,
                                       "coulomb": b.friction.coulomb}), edits)
    if actuators:
        section = _get(root, "actuators")[1]
        for a, old in zip(actuators.values(), model.actuators):
            if not changed([old.friction.viscous, old.friction.coulomb],
                           [a.friction.viscous, a.friction.coulomb]):
                continue
            _set(_named(section, a.name, f"{source}: actuators"), "friction",
                 _flow({"viscous": a.friction.viscous * L, "coulomb": a.friction.coulomb}),
                 edits)
    # each law with the file's unit of its stiffness per SI unit (N/m, N m/rad)
    def value(node: Any, key: str) -> Any:
        return _get(node, key)[1]
    laws = [(kind.law(item), kind.law(old),
             kind.law_node(_named(value(root, kind.section), item.name,
                                  f"{source}: {kind.section}"), value),
             kind.stiffness_scale(L, ANGLE_UNITS[angle]))
            for kind in MECHANISM_KINDS for item, old in zip(items(new, kind), items(model, kind))]
    for law, old, node, per in laws:
        if changed(old.stiffness, law.stiffness):
            _set(node, "stiffness", _number(law.stiffness * per), edits)
        if changed(old.preload, law.preload):
            _set(node, "preload", _number(law.preload), edits)
    return _apply(text, edits)


def _apply(text: str, edits: list[_Edit], mark: str = MARK) -> str:
    """The edits applied from the end backwards (earlier positions stay valid), each line
    that received one marked once with the comment ``mark``."""
    lines = text.splitlines(keepends=True)
    starts = np.concatenate([[0], np.cumsum([len(x) for x in lines])]).astype(int)
    out = text
    marked: set[int] = set()
    for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        a = starts[e.line] + e.column
        b = starts[e.end_line] + e.end_column
        out = out[:a] + e.text + out[b:]
        if e.text.endswith("\n") or e.line in marked:    # an inserted line carries its mark
            continue
        marked.add(e.line)
        end = out.find("\n", a + len(e.text))
        end = len(out) if end < 0 else end
        line = out[out.rfind("\n", 0, a) + 1:end]
        note = f"; {mark}" if " #" in line or line.lstrip().startswith("#") else f"  # {mark}"
        out = out[:end] + note + out[end:]
    return out
