"""Declared, described ROS parameters from one table per node.

Every number has a declared range (rcl_interfaces FloatingPointRange / IntegerRange, shown by
``ros2 param describe`` and enforced by rclpy before any node callback, at start-up and at
run time): a range also keeps out inf and NaN, which no range contains. Topic names are
checked at start-up; ``use_sim_time`` cannot change after it.
"""
from __future__ import annotations

from typing import Callable, Optional, TypeVar

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import InvalidParameterValueException, NameValidationException
from rclpy.expand_topic_name import expand_topic_name
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.validate_full_topic_name import validate_full_topic_name

from .param_spec import Param
from .run import rcl_message

#: Standard parameters no node of the package lets change after start-up: use_sim_time
#: switches the node clock (without /clock it reads 0: timers stop, stamp checks are off)
FIXED_AT_START_UP = ("use_sim_time",)

OnSet = Callable[[list[Parameter]], SetParametersResult]
Typed = TypeVar("Typed")


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


def declare_parameters(node: Node, table: dict[str, Param], typed: Callable[..., Typed],
                       on_set: Optional[OnSet] = None,
                       renamed: Optional[dict[str, str]] = None) -> Typed:
    """Declare every parameter of ``table`` on ``node`` and return the values as ``typed``
    (the node's class in :mod:`.parameter_types`, generated from the table); a value out of
    its range (from the command line or a params file) or a topic parameter that is not a
    valid topic name raises ``ValueError`` naming the parameter, the value and what is
    expected (the node's start-up error).

    Run-time changes go through :func:`refusal` first, then ``on_set`` (the node's own
    checks), so that a refused change leaves the node's state alone. ``renamed``: old name ->
    new name; an old name given raises ``ValueError`` naming the new one (rclpy would ignore
    it without a word)."""
    for old, new in (renamed or {}).items():
        if old in node._parameter_overrides:
            raise ValueError(f"parameter {old}: renamed {new}; set {new} instead")
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
        if spec.topic:
            check_topic(node, name, node.get_parameter(name).value, spec)

    def on_set_parameters(params: list[Parameter]) -> SetParametersResult:
        refused = refusal(node, params)
        if refused is not None:
            return SetParametersResult(successful=False, reason=refused)
        return on_set(params) if on_set is not None else SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(on_set_parameters)
    return typed(**{name: node.get_parameter(name).value for name in table})


def check_topic(node: Node, name: str, value: str, spec: Param) -> None:
    """Raise ``ValueError`` for a topic parameter whose value rcl would refuse as a topic name
    (as the node's namespace expands it); empty means none where the default is empty."""
    if not value and not spec.default:
        return
    check_topic_name(f"parameter {name}", value, node.get_name(), node.get_namespace())


def check_topic_name(what: str, value: str, node_name: str, namespace: str = "/") -> None:
    """Raise ``ValueError`` naming ``what`` for a topic name rcl would refuse (as a node
    ``node_name`` in ``namespace`` expands it)."""
    try:
        validate_full_topic_name(expand_topic_name(value, node_name, namespace))
    except (ValueError, NameValidationException) as exc:
        raise ValueError(f"{what} {value!r}: expected a topic name "
                         f"({rcl_message(exc)})") from None


def refusal(node: Node, params: list[Parameter]) -> Optional[str]:
    """Why a run-time change is refused on every node of the package, or None."""
    for param in params:
        if not node.has_parameter(param.name):
            # rclpy lets an empty name through (its undeclared check tests the names' truth)
            return f"parameter {param.name!r} is not declared"
        if param.name in FIXED_AT_START_UP and param.value != node.get_parameter(param.name).value:
            return (f"{param.name} cannot change after start-up (it switches the node clock); "
                    "restart the node with the new value")
    return None
