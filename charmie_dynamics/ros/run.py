"""Running one node as a process: a start-up error (bad model file, parameter value or type)
ends it with the message on stderr and exit status 1."""
from __future__ import annotations

import os
import signal
import sys

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor

from ..model import ModelError


def make_executor(context=None) -> Executor:
    """rclpy's events executor (C++, much less overhead per message: Kilted and newer) where
    it exists, unless ``CHARMIE_DYNAMICS_EXECUTOR=single``; else the single-threaded one."""
    if os.environ.get("CHARMIE_DYNAMICS_EXECUTOR", "events") != "single":
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:
            pass
        else:
            return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


def run_node(node_class, args=None) -> int:
    rclpy.init(args=args)
    try:
        node = node_class()
    except (ModelError, ValueError, ParameterException) as exc:
        print(f"{node_class.__name__}: error: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    executor = make_executor()
    executor.add_node(node)
    try:
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        # Ctrl-C in a terminal reaches every process of the group and `ros2 launch` then sends
        # its own SIGINT: a second one during teardown raises inside rclpy's C++ code (abort)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        executor.remove_node(node)
        node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()
    return 0
