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
from .distro import events_executor, logger_level, shutdown_keeping_signal_handlers

_RCL_LOCATION = re.compile(r",? at \S+\.c:\d+")      # rcl's ", at /src/rcl/arguments.c:415"


def rcl_message(exc: BaseException) -> str:
    """The first line of an rcl or rclpy error, without rcl's source locations."""
    text = _RCL_LOCATION.sub("", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def init_ros(args: Optional[Sequence[str]]) -> None:
    """``rclpy.init``; a params file or argument rcl cannot parse raises ``ValueError`` with
    one line (rcl's own ERROR lines of that failure are kept off stderr)."""
    previous = logger_level("rcl")
    rclpy.logging.set_logger_level("rcl", rclpy.logging.LoggingSeverity.FATAL)
    try:
        rclpy.init(args=args)
    except rclpy_implementation.RCLError as exc:
        raise ValueError(rcl_message(exc)) from None
    finally:
        # unless --log-level set it during init
        if rclpy.logging.get_logger_effective_level("rcl") == rclpy.logging.LoggingSeverity.FATAL:
            rclpy.logging.set_logger_level("rcl", previous)


def make_executor(context=None, nodes: Sequence = ()) -> Executor:
    """rclpy's events executor (C++, much less overhead per message: Kilted and newer) where
    it exists, unless ``CHARMIE_DYNAMICS_EXECUTOR=single`` or one of ``nodes`` wants the
    senders of its messages (``wants_sender``: the events executor cannot pass them,
    distro.sender_in_message_info); else the single-threaded one."""
    if os.environ.get("CHARMIE_DYNAMICS_EXECUTOR", "events") != "single" and \
            not any(getattr(node, "wants_sender", False) for node in nodes):
        executor = events_executor(context)
        if executor is not None:
            return executor
    return SingleThreadedExecutor(context=context)


class _Interrupted:
    """SIGINT in a node process, noted and never raised. An exception raised where the
    signal lands can be lost or mark the process: inside numba's compiler, called back by
    LLVM through ctypes, it was printed as "Exception ignored on calling ctypes callback
    function" with a traceback, and the compile then failed ("no compiled object yet",
    exit status 1); a KeyboardInterrupt passing through code run from a source string
    (``exec``, as numba does while loading a cached kernel) made CPython 3.11 end the process
    by SIGINT (-2) after a clean shutdown. rclpy's own handler, chained to this one by
    ``rclpy.init``, shuts the context down, which ends start-up's rclpy calls and the spin
    loop; before ``rclpy.init``, the note does (:func:`run_node`)."""

    seen = False


def _interrupt(signum, frame):
    _Interrupted.seen = True


def _shut_down(code: int) -> int:
    """End a node process that did not spin: SIGINT ignored from here on (rclpy's handlers
    are gone and Python's default would end a second Ctrl-C's process by SIGINT, -2, during
    the 30-500 ms of rclpy's and DDS's teardown), then rclpy shut down."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rclpy.try_shutdown()
    return code


def run_node(node_class, args=None) -> int:
    """Start ``node_class`` and spin it until shutdown; the process's exit status.

    SIGINT from the moment this runs (before it, while Python imports the modules, about
    0.6-1.1 s, it ends the process as any Python program's: a KeyboardInterrupt traceback),
    and SIGTERM, are a clean shutdown with status 0, during start-up or while spinning. A
    start-up error (model, parameter) is one line and status 1. SIGINT is never raised
    (:class:`_Interrupted`): what runs when it comes finishes first, the node's construction
    or a callback: a second or two with the kernels cached; where one compiles them (a first
    start without ``charmie-dynamics compile``) about 30 s on a quiet machine, 59-77 s
    measured on 2 shared cores under load, beyond which ``ros2 launch`` may kill it."""
    # rclpy.init chains its own handler (which shuts the context down) to this one
    signal.signal(signal.SIGINT, _interrupt)
    initialised = False
    try:
        init_ros(args)
        initialised = True
        node = node_class()
        executor = make_executor(nodes=[node])
        executor.add_node(node)
    except (ModelError, ValueError, ParameterException) as exc:
        print(f"{node_class.__name__}: error: {exc}", file=sys.stderr)
        return _shut_down(1)
    except Exception:
        # a signal shut the context down during start-up: what the construction then raised
        # is its consequence (rclpy's "context is invalid" from create_publisher, rclpy's
        # NotInitializedException); any other error (or one before rclpy.init) still ends
        # the process with its traceback
        if not initialised or rclpy.ok():
            raise
        return _shut_down(0)
    if _Interrupted.seen:                     # it came before rclpy.init's handler was there
        shutdown_keeping_signal_handlers()        # SIGTERM in the teardown: still clean
    try:
        while rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
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
