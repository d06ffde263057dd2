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
