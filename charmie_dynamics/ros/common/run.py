"""Running one node as a process: a start-up error (bad model file, parameter value or type,
a params file rcl cannot parse) ends it with one line on stderr and exit status 1."""
from __future__ import annotations

import faulthandler
import os
import re
import signal
import sys
import threading
from typing import Optional, Sequence

import rclpy
import rclpy.logging
from rclpy.exceptions import ParameterException
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.timer import Timer

from ...model import ModelError
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


#: Seconds a node process may take from the end of its spin to its exit once SIGINT or SIGTERM
#: came (its last command and teardown take well under one; a loaded machine a few), unless
#: ``CHARMIE_DYNAMICS_STOP_LIMIT`` says otherwise: under ``ros2 launch``'s defaults (SIGTERM
#: 5 s after SIGINT, SIGKILL 5 s later) the limit comes first. See :class:`_SignalWatch`.
STOP_LIMIT_S = 8.0
#: Seconds after a signal that came during start-up at which a start-up still running
#: prints every thread's traceback once (a first compile takes 30-77 s).
START_REPORT_S = 45.0


class _SignalWatch:
    """What answers SIGINT and SIGTERM besides the Python handler (:func:`_interrupt`).

    A Python handler runs only between the main thread's bytecodes: a main thread waiting in
    rcl (``spin_once``'s rcl_wait, measured: the handler ran when an 8 s wait ended, not at
    the signal) or stuck in a C call never gets there, and launch then kills the process
    with nothing said. rclpy's own handlers wake the wait with a guard condition. Here a
    thread woken by ``signal.set_wakeup_fd`` (CPython's C-level handler writes to it, whatever
    the main thread does) notes the signal, waits until the node spins (a start-up, a first
    compile included, finishes first) and resets a cancelled 1 ms timer of the node (whose
    callback cancels it again): the executor's wait ends.

    With faulthandler's timer (a C thread: no GIL needed) it also says where a stop hangs.
    A main thread not back from its callback :func:`stop_limit` seconds after the signal (a
    lifecycle configure compiling, or a hang) prints every thread's traceback once and goes
    on; so does a start-up still running :data:`START_REPORT_S` after it. Once the spin has
    ended (:func:`stopping`), a stop not over :func:`stop_limit` seconds later (the last
    command, the teardown, the interpreter's end until faulthandler's own, after the modules
    are freed) prints them ("Timeout (0:00:08)!") and ends the process with status 1.

    Measured (test_signal_watch.py), a timer's reset ends a wait on rclpy's single-threaded
    and events executors alike; ``Executor.wake`` ended neither (the wait goes on after it),
    and Kilted's events executor refuses guard conditions ("Guard conditions not
    supported")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._timer: Optional[Timer] = None
        self._stopped = False                       # the exiting limit armed: no report after
        self._spinning = threading.Event()
        self._read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)            # set_wakeup_fd's condition
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name="signal_watch", daemon=True).start()

    def _watch(self) -> None:
        # blocks, without the GIL, until a signal with a Python handler comes
        while os.read(self._read_fd, 1)[0] not in (signal.SIGINT, signal.SIGTERM):
            pass
        _Interrupted.seen = True
        if not self._spinning.is_set():
            _report_later(START_REPORT_S)
            self._spinning.wait()
        with self._lock:
            if not self._stopped:                   # one faulthandler timer: keep the exit's
                _report_later(stop_limit())
            if self._timer is not None:
                self._timer.reset()

    def spinning(self, node: Node) -> None:
        timer = node.create_timer(0.001, lambda: timer.cancel())
        timer.cancel()
        with self._lock:
            self._timer = timer
        self._spinning.set()

    def stopping(self, arm: bool) -> None:
        with self._lock:                            # no reset once the node is destroyed
            self._timer = None
            if arm:
                self._stopped = True
                arm_stop_limit()
        self._spinning.set()


_watch: Optional[_SignalWatch] = None


def stop_limit() -> float:
    """:data:`STOP_LIMIT_S`, or ``CHARMIE_DYNAMICS_STOP_LIMIT`` seconds where it is set to a
    positive number (a ValueError names it otherwise)."""
    text = os.environ.get("CHARMIE_DYNAMICS_STOP_LIMIT")
    if text is None:
        return STOP_LIMIT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < float("inf"):
        raise ValueError(f"CHARMIE_DYNAMICS_STOP_LIMIT={text!r}: expected seconds > 0")
    return value


def arm_stop_limit() -> None:
    """The process ends with every thread's traceback and status 1 unless it has ended
    :func:`stop_limit` seconds from now (faulthandler's timer, which needs no GIL)."""
    faulthandler.dump_traceback_later(stop_limit(), exit=True, file=sys.__stderr__)


def _report_later(seconds: float) -> None:
    """Every thread's traceback once, ``seconds`` from now, unless the process has ended
    or the timer is set again before."""
    faulthandler.dump_traceback_later(seconds, file=sys.__stderr__)


def note_signals() -> None:
    """SIGINT and SIGTERM noted from now on (:class:`_Interrupted`), never raised
    (:func:`init_ros` keeps rclpy's handlers out); the process's :class:`_SignalWatch` is
    started (once). Raises ValueError for a bad ``CHARMIE_DYNAMICS_STOP_LIMIT``."""
    global _watch
    stop_limit()
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    if _watch is None:
        _watch = _SignalWatch()


def spinning(node: Node) -> None:
    """``node`` has started and its executor spins it: a signal from now on wakes the
    executor's wait."""
    if _watch is not None:
        _watch.spinning(node)


def stopping(ending: bool = False) -> None:
    """The spin has ended (after a signal, an external shutdown or the end of a bringup's
    duration), or never began (``ending``: a start-up error ends the process): no more
    wakes; after a signal, or ``ending``, :func:`arm_stop_limit`."""
    if _watch is None:                  # note_signals has not run, or refused the limit
        return
    _watch.stopping(interrupted() or ending)


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
    stopping(ending=True)
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
    teardown, which must end within :func:`stop_limit` (else status 1 with the tracebacks:
    :class:`_SignalWatch`). A start-up error (model, parameter) is one line and status 1. A
    node's ``autostart`` (if it has one) runs after it joins the executor."""
    node = executor = None
    try:
        note_signals()
        init_ros(args)
        node = node_class()
        executor = make_executor(nodes=[node])
        executor.add_node(node)
        autostart(node)
        spinning(node)
    except (ModelError, ValueError, ParameterException) as exc:
        print(f"{node_class.__name__}: error: {exc}", file=sys.stderr)
        return _shut_down(1, node, executor)
    try:
        while rclpy.ok() and not interrupted():
            executor.spin_once(timeout_sec=0.1)
    except ExternalShutdownException:
        pass
    finally:
        stopping()
        stop_safely(node)
        # the executor let go of the node's entities before they are destroyed: destroyed
        # first, the events executor released them at its shutdown, where CI saw one stop
        # hang in an event handler's __exit__ (8 s, not reproduced here)
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
        ignore_signals()
    return 0


def ignore_signals() -> None:
    """From here on SIGINT and SIGTERM are ignored: CPython resets the handlers it installed
    as the interpreter ends, and a second Ctrl-C then (``ros2 launch`` forwards its own
    after the terminal's) would end the process by the signal (-2, -15) after a clean stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
