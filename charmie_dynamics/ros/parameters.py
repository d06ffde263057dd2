"""Declared, described ROS parameters from one table per node."""
from __future__ import annotations

from typing import Any

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node


def declare_parameters(node: Node, table: dict[str, tuple], read_only: bool = True
                       ) -> dict[str, Any]:
    """Declare every ``name: (default, description[, read_only])`` of ``table`` on ``node``
    (the third field, where given, overrides ``read_only``) and return the values."""
    for name, (default, description, *rest) in table.items():
        node.declare_parameter(name, default, ParameterDescriptor(
            description=description, read_only=rest[0] if rest else read_only))
    return {name: node.get_parameter(name).value for name in table}
