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
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from ..model import ModelError
from .distro import events_executor, logger_level

_RCL_LOCATION = re.compile(r",? at \S+\.c:\d+")      # rcl's ", at /src/rcl/arguments.c:415"


def rcl_message(exc: BaseException) -> str:
    """The first line of an rcl or rclpy error, without rcl's source locations."""
    text = _RCL_LOCATION.sub("", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def init_ros(args: Optional[Sequence[str]]) -> None:
    """``rclpy.init``; a params file or argument rcl cannot parse raises ``ValueError`` with
    one line (rcl's own ERROR lines of that failure are kept off stderr). rclpy installs no
    signal handlers: its own shut the context down at once, before a node could publish its
    last command (:func:`note_signals` handles SIGINT and SIGTERM)."""
    previous = logger_level("rcl")
    rclpy.logging.set_logger_level("rcl", rclpy.logging.LoggingSeverity.FATAL)
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
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
    """SIGINT or SIGTERM in a node process, noted and never raised; the spin loop then ends
    and the node stops as it would on a lifecycle shutdown (the dynamics node publishes its
    last, safe command) before the context is shut down. rclpy's own handlers are not
    installed (:func:`init_ros`): they shut the context down inside the signal, before any
    node could publish again. An exception raised where the signal lands can be lost or mark
    the process: inside numba's compiler, called back by LLVM through ctypes, it was printed
    as "Exception ignored on calling ctypes callback function" with a traceback, and the
    compile then failed; a KeyboardInterrupt passing through code run from a source string
    (``exec``, as numba does while loading a cached kernel) made CPython 3.11 end the process
    by SIGINT (-2) after a clean shutdown."""

    seen = False


def _interrupt(signum, frame):
    _Interrupted.seen = True


def note_signals() -> None:
    """SIGINT and SIGTERM noted from now on (:class:`_Interrupted`), never raised
    (:func:`init_ros` keeps rclpy's handlers out)."""
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)


def interrupted() -> bool:
    """Whether SIGINT or SIGTERM came since :func:`note_signals`."""
    return _Interrupted.seen


def autostart(node: Node) -> None:
    """A node's ``autostart`` (the dynamics node's configure and activate), if it has one and
    no signal came: run once the node has joined its executor."""
    if hasattr(node, "autostart") and not interrupted():
        node.autostart(interrupted)


def stop_safely(node: Node) -> None:
    """A node's ``stop_safely`` (the dynamics node's last, safe command), if it has one and
    the context still runs: before the node is destroyed."""
    if hasattr(node, "stop_safely") and rclpy.ok():
        node.stop_safely()


def _shut_down(code: int, node: Optional[Node] = None, executor=None) -> int:
    """End a node process that did not spin: what was built before the error (the node, its
    executor) destroyed as after a spin, then rclpy shut down. (Left to the context's
    shutdown, one such exit hung once in CI, not reproduced.)"""
    if executor is not None:
        executor.shutdown()
    if node is not None:
        node.destroy_node()
    rclpy.try_shutdown()
    ignore_signals()
    return code


def run_node(node_class, args=None) -> int:
    """Start ``node_class`` and spin it until SIGINT or SIGTERM; the process's exit status.

    SIGINT from the moment this runs (before it, while Python imports the modules, about
    0.6-1.1 s, it ends the process as any Python program's: a KeyboardInterrupt traceback),
    and SIGTERM, are a clean shutdown with status 0, during start-up or while spinning: what
    runs when one comes finishes first (the node's construction, its ``autostart``, a callback: a
    second or two with the kernels cached; where the dynamics node compiles them, a first
    start without ``charmie-dynamics compile``, about 30 s on a quiet machine, 59-77 s
    measured on 2 shared cores under load, beyond which ``ros2 launch`` may kill it); then
    the node's ``stop_safely`` (if it has one: the dynamics node's last command) and the
    teardown. A start-up error (model, parameter) is one line and status 1. A node's
    ``autostart`` (if it has one) runs after it joins the executor."""
    note_signals()
    node = executor = None
    try:
        init_ros(args)
        node = node_class()
        executor = make_executor(nodes=[node])
        executor.add_node(node)
        autostart(node)
    except (ModelError, ValueError, ParameterException) as exc:
        print(f"{node_class.__name__}: error: {exc}", file=sys.stderr)
        return _shut_down(1, node, executor)
    try:
        while rclpy.ok() and not interrupted():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    finally:
        stop_safely(node)
        executor.remove_node(node)
        node.destroy_node()
        executor.shutdown()
        rclpy.try_shutdown()
        ignore_signals()
    return 0


def ignore_signals() -> None:
    """From here on SIGINT and SIGTERM are ignored: CPython resets the handlers it installed
    as the interpreter ends, and a second Ctrl-C then (``ros2 launch`` forwards its own
    after the terminal's) would end the process by the signal (-2, -15) after a clean stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
