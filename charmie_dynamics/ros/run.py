"""Running one node as a process: a start-up error (bad model file, parameter value or type,
a params file rcl cannot parse) ends it with one line on stderr and exit status 1."""
from __future__ import annotations

import os
import re
import signal
import sys
from typing import Optional, Sequence

import rclpy
import rclpy.logging
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation

from ..model import ModelError

_RCL_LOCATION = re.compile(r",? at \S+\.c:\d+")      # rcl's ", at /src/rcl/arguments.c:415"


def rcl_message(exc: BaseException) -> str:
    """The first line of an rcl or rclpy error, without rcl's source locations."""
    text = _RCL_LOCATION.sub("", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def init_ros(args: Optional[Sequence[str]]) -> None:
    """``rclpy.init``; a params file or argument rcl cannot parse raises ``ValueError`` with
    one line (rcl's own ERROR lines of that failure are kept off stderr)."""
    previous = rclpy.logging.get_logger_level("rcl")
    rclpy.logging.set_logger_level("rcl", rclpy.logging.LoggingSeverity.FATAL)
    try:
        rclpy.init(args=args)
    except rclpy_implementation.RCLError as exc:
        raise ValueError(rcl_message(exc)) from None
    finally:
        # unless --log-level set it during init
        if rclpy.logging.get_logger_level("rcl") == rclpy.logging.LoggingSeverity.FATAL:
            rclpy.logging.set_logger_level("rcl", previous)


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


class NodeInterrupted(KeyboardInterrupt):
    """SIGINT in a node process. A subclass because CPython 3.11 (pythonrun.c,
    ``run_eval_code_obj``) marks the process as interrupted when KeyboardInterrupt itself
    passes through code run from a source string (``exec("...")``, as numba does while loading
    a cached kernel at start-up), even when caught, and ``python -m`` then ends by SIGINT (-2)
    after a clean shutdown (5 of 30 SIGINTs 0.1-0.3 s after ``rclpy.init``); a subclass is
    not marked."""


def _interrupt(signum, frame):
    raise NodeInterrupted()


def run_node(node_class, args=None) -> int:
    # rclpy.init chains its own handler (which shuts the context down) to this one
    signal.signal(signal.SIGINT, _interrupt)
    try:
        init_ros(args)
        node = node_class()
    except (ModelError, ValueError, ParameterException) as exc:
        print(f"{node_class.__name__}: error: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    except rclpy_implementation.RCLError:
        if rclpy.ok():
            raise
        return 0                    # SIGINT/SIGTERM during start-up (the context is gone)
    except KeyboardInterrupt:
        rclpy.try_shutdown()        # SIGINT during start-up, before rclpy.init or after
        return 0
    executor = make_executor()
    executor.add_node(node)
    try:
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except rclpy_implementation.RCLError:
        # SIGINT/SIGTERM shut the context down while a callback was publishing ("publisher's
        # context is invalid": the simulator's timer, once in CI's launch test): a shutdown,
        # not a failure; any other rcl error still ends the process with its traceback
        if rclpy.ok():
            raise
    finally:
        # Ctrl-C in a terminal reaches every process of the group and `ros2 launch` then sends
        # its own SIGINT: a second one during teardown raises inside rclpy's C++ code (abort)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        executor.remove_node(node)
        node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()
    return 0
