"""The dynamics node's /diagnostics: its status (``node_status.dynamics_status``) with the
lifecycle's state, every ``diagnostics_period``.

Before configure completes (also from the configuring thread, while the executor's is busy
compiling) the counts so far are published at once, the state first in the message. Once
configured, the executor's timer only copies the counters; the status thread (module
background) computes the status, builds the message and publishes it.
"""
from __future__ import annotations

import functools
import threading
import time
from collections import Counter
from typing import Optional

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.lifecycle import LifecycleNode

from ...documents import bounded
from ..common import qos
from ..common.messages import diagnostics
from .background import JobThread
from .node_status import StatusCounts, dynamics_status


class DiagnosticsReport:
    """The node's /diagnostics publisher and timer (made at construction: the node reports
    in every lifecycle state) and, while configured, its status thread. ``node``: the dynamics
    node (ros/dynamics_node.py), whose state and counters it copies."""

    def __init__(self, node: LifecycleNode) -> None:
        self.node = node
        self.reported: Counter = Counter()       # counts at the last diagnostics
        self.status_thread: Optional[JobThread] = None
        self.publisher = node.create_publisher(DiagnosticArray, "/diagnostics", qos.OUTPUT)
        node.create_timer(node.p.diagnostics_period, self.publish)

    def start_thread(self) -> None:
        """The status thread, from configure on."""
        self.status_thread = JobThread("diagnostics", self._on_error, self.node.context.ok)
        self.status_thread.start()

    def stop_thread(self) -> None:
        if self.status_thread is not None:
            self.status_thread.close()
        self.status_thread = None

    def report_configuring(self, done: threading.Event) -> None:
        """While configure runs on the executor's thread: the status every period (at most
        1 s) until ``done``."""
        while True:
            self.publish()
            if done.wait(min(self.node.p.diagnostics_period, 1.0)):
                return

    def _on_error(self, exc: BaseException) -> None:
        node = self.node
        if node.log_throttles["diagnostics"]():
            node.get_logger().error(f"diagnostics not published: {exc!r}")

    def publish(self) -> None:
        """Copy the node's counters and have them published (module docstring)."""
        node = self.node
        configured, slot, control, intake = node.configured, node.slot, node.control, node.intake
        parser = intake.parser if intake is not None else None
        model, learned = (None, None) if slot is None else (slot.model, slot.learned)
        last = control.safety.last_valid if configured else None
        pending = intake.updates.pending if configured else None
        if configured:
            node.events["monitoring_skipped"] = node.monitoring.skipped
        node.events["clock_rejected"] = node.clock_guard.rejected
        p = node.p
        counts = StatusCounts(
            rejected=Counter(node.rejected), received=Counter(node.received),
            events=Counter(node.events),
            stats=dict(node.stats),
            model=model.name if model else None,
            pending=pending.model.name if pending else None,
            pending_hash=pending.hash if pending else None,
            parsing=parser is not None and not parser.idle(),
            superseded=parser.superseded if parser else 0,
            repeated=parser.repeated if parser else 0,
            arrivals=tuple(node.arrivals),
            last_valid_age=None if last is None else (control.now() - last) * 1e-9,
            stale=configured and control.safety.stale,
            acceleration_source=p.acceleration_source,
            effort_flags=tuple(node.effort_flags), ignored_names=sorted(node.ignored_names),
            feedforward_source=p.feedforward_source if learned is not None or
            model is None or p.feedforward_source == "model" else "learned (refused)",
            learned_difference=None if learned is None else learned.largest_difference)
        since = node.configuring_since
        if since is not None:
            state = "configuring"
        elif node.finalized:
            state = "finalized"
        elif not configured:
            state = "unconfigured"
        else:
            state = "active" if node.active else "inactive"
        publish = functools.partial(self._publish_status, node.get_clock().now().to_msg(),
                                    state, since, node.configure_error, counts)
        if configured and self.status_thread is not None:
            self.status_thread.submit(publish)
        else:
            publish()

    def _publish_status(self, stamp, state: str, since: Optional[float],
                        configure_error: str, counts: StatusCounts) -> None:
        """Publish the status of ``counts`` (:meth:`publish`'s copies) in lifecycle ``state``;
        the only writer of ``reported``."""
        status = dynamics_status(counts, self.reported)
        self.reported = status.reported
        level, message = getattr(DiagnosticStatus, status.level.name), status.message
        if state == "configuring":
            level, message = DiagnosticStatus.WARN, (
                f"configuring: reading the model and compiling the kernels "
                f"({time.monotonic() - since:.0f} s)")
        elif state == "finalized":
            level, message = DiagnosticStatus.WARN, \
                "finalized: shut down, no outputs (restart the node)"
        elif state == "unconfigured":
            level, message = (DiagnosticStatus.ERROR, bounded(
                f"unconfigured: configure failed: {configure_error}", 500)) \
                if configure_error else \
                (DiagnosticStatus.WARN, "unconfigured: waiting for configure")
        elif state == "inactive":       # configured, outputs off: said first
            level, message = max(level, DiagnosticStatus.WARN), f"inactive: {message}"
        self.publisher.publish(diagnostics(stamp, "charmie_dynamics: dynamics", level,
                                           message, {"lifecycle": state, **status.values}))
