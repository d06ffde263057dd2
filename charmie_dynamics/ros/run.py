"""Running one node as a process: a start-up error (bad model file, parameter value or type)
ends it with the message on stderr and exit status 1."""
from __future__ import annotations

import sys

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException

from ..model import ModelError


def run_node(node_class, args=None) -> int:
    rclpy.init(args=args)
    try:
        node = node_class()
    except (ModelError, ValueError, ParameterException) as exc:
        print(f"{node_class.__name__}: error: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
