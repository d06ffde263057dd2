"""One ROS parameter's specification (pure Python: no rclpy here, so that a node's table and
its checks can be tested without ROS); ``parameters.declare_parameters`` declares a table."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


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
