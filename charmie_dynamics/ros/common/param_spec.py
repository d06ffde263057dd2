"""One ROS parameter's specification (pure Python: no rclpy here, so that a node's table and
its checks can be tested without ROS); ``parameters.declare_parameters`` declares a table."""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class Param:
    """One parameter: its default (which sets its type), description, whether it may change
    after start-up, for a number its inclusive range ``low`` to ``high``, and whether it names
    a topic (checked at start-up; empty allowed, meaning none, only where the default is)."""

    default: Any
    description: str
    read_only: bool = True
    low: Optional[float] = None
    high: Optional[float] = None
    topic: bool = False

    def range_text(self) -> str:
        return f"{self.low:g} to {self.high:g}"

    def type_name(self) -> str:
        """The Python type of the parameter's values, as a typed class declares it."""
        value = self.default
        if isinstance(value, list):
            return f"list[{type(value[0]).__name__}]"
        return type(value).__name__


def default_text(value: Any) -> str:
    """A default as the docs' tables write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value or '""'
    if isinstance(value, list):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    return str(value) if isinstance(value, int) else f"{value:g}"


def docs_table_source(table: Mapping[str, Param],
                      standard: Optional[Mapping[str, tuple[str, str]]] = None,
                      shown: Optional[Mapping[str, str]] = None) -> str:
    """The markdown table of ``table`` (parameter, default, range, whether it may change at
    run time, meaning) that docs/ros.md holds for a node, then the rows of ``standard``
    (rclpy's own parameters: name -> (default, meaning), fixed after start-up); ``shown``:
    a default's text -> what the table shows instead (a path of this install)."""
    lines = ["| parameter | default | range | at run time | meaning |",
             "| --- | --- | --- | --- | --- |"]
    for name, spec in table.items():
        limits = spec.range_text() if spec.low is not None else ""
        change = "fixed" if spec.read_only else "changeable"
        meaning = spec.description.replace("|", "\\|")
        default = default_text(spec.default)
        default = (shown or {}).get(default, default)
        lines.append(f"| `{name}` | {default} | {limits} | {change} | {meaning} |")
    for name, (default, meaning) in (standard or {}).items():
        lines.append(f"| `{name}` | {default} | | fixed | {meaning} |")
    return "\n".join(lines) + "\n"


def typed_class_source(class_name: str, table: Mapping[str, Param], origin: str) -> str:
    """A frozen dataclass with one typed field per parameter of ``table`` (its description
    as the field's comment), whose source :mod:`charmie_dynamics.ros.common.parameter_types` holds
    (``origin``: where the table is). A node holds one as ``self.p`` and replaces it whole on
    a run-time change."""
    lines = ["@dataclass(frozen=True)", f"class {class_name}:",
             f'    """The parameters of {origin}."""', ""]
    for name, spec in table.items():
        lines += textwrap.wrap(spec.description, 96, initial_indent="    #: ",
                               subsequent_indent="    #: ")
        lines.append(f"    {name}: {spec.type_name()}")
    return "\n".join(lines) + "\n"
