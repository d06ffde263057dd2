"""Declared, described ROS parameters from one table per node.

Every number has a declared range (rcl_interfaces FloatingPointRange / IntegerRange, shown by
``ros2 param describe`` and enforced by rclpy before any node callback, at start-up and at
run time): a range also keeps out inf and NaN, which no range contains.
"""
from __future__ import annotations

from typing import Any

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.exceptions import InvalidParameterValueException
from rclpy.node import Node

from .param_spec import Param


def descriptor(spec: Param) -> ParameterDescriptor:
    """The descriptor ``ros2 param describe`` shows: description, read-only, range."""
    d = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.low is not None:
        if isinstance(spec.default, int) and not isinstance(spec.default, bool):
            d.integer_range = [IntegerRange(from_value=int(spec.low), to_value=int(spec.high),
                                            step=0)]
        else:
            d.floating_point_range = [FloatingPointRange(from_value=float(spec.low),
                                                         to_value=float(spec.high), step=0.0)]
    return d


def declare_parameters(node: Node, table: dict[str, Param]) -> dict[str, Any]:
    """Declare every parameter of ``table`` on ``node`` and return the values; a value out of
    its range (from the command line or a params file) raises ``ValueError`` naming the
    parameter, the value and the range (the node's start-up error)."""
    for name, spec in table.items():
        if spec.low is not None and not spec.low <= spec.high:
            raise ValueError(f"parameter table: {name}: empty range {spec.range_text()}")
        try:
            node.declare_parameter(name, spec.default, descriptor(spec))
        except InvalidParameterValueException:
            # rclpy's exception keeps the refused value only inside its message
            refused = node._parameter_overrides.get(name)
            shown = f" {refused.value!r}" if refused is not None else ""
            raise ValueError(f"parameter {name}{shown}: expected {spec.range_text()}") from None
    return {name: node.get_parameter(name).value for name in table}
