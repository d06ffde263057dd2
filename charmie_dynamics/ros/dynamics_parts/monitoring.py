"""The dynamics node's monitoring outputs (joint and actuator loads, reaction wrenches,
completed joint states, /tf and the wrench markers), built and published on a thread of
their own, so that they never delay the next feedforward.

The executor thread publishes the feedforward first and alone; when an evaluation is due for
monitoring (the ``output_rate`` and ``tf_rate`` grids) it copies that evaluation's numbers
out of the evaluator's buffers, which the next evaluation overwrites, into a free
:class:`Snapshot` (a few microseconds of ``np.copyto``) and queues it. The worker thread
takes snapshots in order and turns each into messages: the joint states and /tf written as
their serialized bytes into buffers laid out once per model (module cdr), the wrenches
too, the markers (published only while subscribed) as message objects. Every message of a
snapshot describes one evaluation (one stamp, one input), and snapshots are published in
the order of their evaluations. When every snapshot is queued or in
flight (the worker more than ``SNAPSHOTS`` evaluations behind), the new evaluation's
monitoring is skipped and counted (``monitoring_skipped`` in /diagnostics), never the
feedforward.

Python's GIL: while the worker runs Python, a message arriving on the executor thread waits
for the GIL until the worker is asked to release it, after the interpreter's switch interval
(5 ms by default). The worker lowers the process's switch interval to
``SWITCH_INTERVAL_S`` so that the feedforward waits at most about that long.
"""
from __future__ import annotations

import functools
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from ...evaluators.evaluator import Evaluation
from ..common import qos
from ..common.messages import stamp_from_nanoseconds
from ..common.outputs import (FramePlan, OutputUnits, hardware_efforts, hardware_positions,
                              wrench_topic)
from .background import JobThread
from .cdr import JointStateWriter, TFWriter, WrenchWriter

#: Snapshots per model: the worker may fall this many monitoring evaluations behind (80 ms
#: at the default 100 Hz) before one is skipped
SNAPSHOTS = 8
#: The process's GIL switch interval (s) once the worker runs: how long the executor thread
#: waits at most for a worker that holds the GIL
SWITCH_INTERVAL_S = 1e-4


@dataclass(eq=False)
class Layout:
    """One model's monitoring messages, refilled by every snapshot: names and frames are set
    once (hardware names, the frame plan's frames), and the wrench bodies' indices with their
    messages and publishers. Only the worker thread writes into the messages."""

    plan: FramePlan
    joint_loads: JointStateWriter
    actuator_loads: JointStateWriter
    completed: JointStateWriter
    tf: TFWriter
    units: OutputUnits
    solved: Optional[JointStateWriter]    # the solved coordinates (publish_solved_joint_states)
    # (body index, its message's writer, publisher, the base_link turn of the base body's
    # or None)
    wrenches: list[tuple[int, WrenchWriter, object, Optional[np.ndarray]]]
    world_frame: str
    free: list["Snapshot"] = field(default_factory=list)

    @property
    def wrench_index(self) -> np.ndarray:
        return np.array([w[0] for w in self.wrenches], dtype=np.int64)


@dataclass(eq=False)
class Snapshot:
    """One evaluation's numbers for the monitoring outputs, copied out of the evaluator's
    buffers, with its stamp and which outputs it is due for."""

    layout: Layout
    index: np.ndarray             # the wrench bodies' indices
    x: np.ndarray
    xd: np.ndarray
    efforts: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    coordinate_effort: np.ndarray
    joint_force: np.ndarray       # (n_wrench, 3), the body frames
    joint_torque: np.ndarray
    origin_world: np.ndarray      # (n_wrench, 3), the world frame (markers)
    force_world: np.ndarray
    translations: np.ndarray
    quaternions: np.ndarray
    stamp: int = 0                # ns
    loads: bool = False           # due on the output_rate grid
    tf: bool = False              # due on the tf_rate grid
    marker_scale: float = 0.0

    @classmethod
    def like(cls, layout: Layout, n_inputs: int, result: Evaluation) -> "Snapshot":
        """A snapshot with buffers shaped as ``result``'s (the evaluator of ``layout``'s model)."""
        index = layout.wrench_index
        wrench = (len(index), 3)
        return cls(layout, index, np.empty(n_inputs), np.empty(n_inputs),
                   np.empty_like(result.efforts), np.empty_like(result.state.q),
                   np.empty_like(result.state.qd), np.empty_like(result.loads.coordinate_effort),
                   np.empty(wrench), np.empty(wrench), np.empty(wrench), np.empty(wrench),
                   np.empty_like(result.translations), np.empty_like(result.quaternions))

    def fill(self, stamp: int, loads: bool, tf: bool, x: np.ndarray, xd: np.ndarray,
             result: Evaluation, marker_scale: float) -> None:
        self.stamp, self.loads, self.tf, self.marker_scale = stamp, loads, tf, marker_scale
        state, r = result.state, result.loads
        for out, value in ((self.x, x), (self.xd, xd), (self.efforts, result.efforts),
                           (self.q, state.q), (self.qd, state.qd),
                           (self.coordinate_effort, r.coordinate_effort),
                           (self.translations, result.translations),
                           (self.quaternions, result.quaternions)):
            np.copyto(out, value)
        for out, value in ((self.joint_force, r.joint_force), (self.joint_torque, r.joint_torque),
                           (self.origin_world, r.placements.origin_world),
                           (self.force_world, r.joint_force_world)):
            np.take(value, self.index, axis=0, out=out)


class MonitoringPublisher:
    """The monitoring outputs' publishers and the worker thread that fills and publishes them
    (module docstring). ``install`` on each model, ``submit`` after each evaluation due for
    monitoring, ``close`` when the node is destroyed; ``skipped`` counts the evaluations whose
    monitoring was skipped. ``start`` starts the worker."""

    def __init__(self, node: Node, completed_topic: str,
                 on_error: Callable[[BaseException], None], solved_topic: str = "") -> None:
        """``completed_topic``: where completed joint states go; ``solved_topic``: where the
        solved coordinates go ("" none); ``on_error``: told of an exception the worker met
        while publishing (that snapshot is skipped and counted; the worker goes on)."""
        self.node = node
        self.pub_joint_loads = node.create_publisher(JointState, "joint_loads", qos.OUTPUT)
        self.pub_actuator_loads = node.create_publisher(JointState, "actuator_loads", qos.OUTPUT)
        self.pub_completed = node.create_publisher(
            JointState, completed_topic, qos.OUTPUT)
        # as a joint_state_broadcaster publishes (reliable, depth 10)
        self.pub_solved = node.create_publisher(JointState, solved_topic, qos.OUTPUT) \
            if solved_topic else None
        self.pub_markers = node.create_publisher(MarkerArray, "wrench_markers", qos.OUTPUT)
        self.pub_tf = node.create_publisher(TFMessage, "/tf", qos.TF)
        self.pub_wrenches: dict[str, object] = {}     # publishers outlive a model change
        self.layout: Optional[Layout] = None
        self.skipped = 0
        self._lock = threading.Lock()                # the free snapshots and ``skipped``
        self._worker = JobThread("monitoring", on_error, node.context.ok)

    def start(self) -> None:
        """Start the worker (once the node is built: a start-up error leaves no thread)."""
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        self._worker.start()

    def install(self, plan: FramePlan, coordinates: list[str], inputs: list[str],
                wrench_bodies: dict[str, int], world_frame: str, result: Evaluation,
                units: OutputUnits = OutputUnits()) -> None:
        """A new model's messages (``coordinates`` and ``inputs``: hardware names; ``units``:
        the joint map's conversions and the solved coordinates) and snapshots shaped as its
        evaluator's ``result``; snapshots of the previous model still queued are published
        with its own messages."""
        for body in wrench_bodies:
            if body not in self.pub_wrenches:
                self.pub_wrenches[body] = self.node.create_publisher(
                    WrenchStamped, wrench_topic(body), qos.OUTPUT)
        every = ("position", "velocity", "effort")
        self.layout = Layout(
            plan, JointStateWriter(coordinates, every, plan.root),
            JointStateWriter(inputs, every, plan.root),
            JointStateWriter(coordinates, every[:2], plan.root),
            TFWriter(plan.parents, plan.children),
            units,
            JointStateWriter([coordinates[c] for c in units.solved], every[:2])
            if self.pub_solved is not None and units.solved else None,
            [(i, WrenchWriter(plan.frame[body]), self.pub_wrenches[body],
              plan.turn if body == plan.base_body else None)
             for body, i in wrench_bodies.items()],
            world_frame)
        layout = self.layout
        layout.free = [Snapshot.like(layout, len(inputs), result) for _ in range(SNAPSHOTS)]

    def submit(self, stamp: int, loads: bool, tf: bool, x: np.ndarray, xd: np.ndarray,
               result: Evaluation, marker_scale: float) -> None:
        """Queue one evaluation's monitoring outputs (executor thread; ``result`` is copied;
        ``stamp``: its input's, ns), or count it skipped when no snapshot is free."""
        layout = self.layout
        with self._lock:
            if not layout.free:
                self.skipped += 1
                return
            snapshot = layout.free.pop()
        snapshot.fill(stamp, loads, tf, x, xd, result, marker_scale)
        self._worker.submit(functools.partial(self._publish_and_free, snapshot))

    def close(self) -> None:
        """Stop the worker (what is still queued is not published)."""
        self._worker.close()

    def _publish_and_free(self, snapshot: Snapshot) -> None:
        """The worker's job: a snapshot published, or lost and counted skipped (its exception
        goes on to ``on_error``); free again either way."""
        try:
            self._publish(snapshot)
        except Exception:
            with self._lock:
                self.skipped += 1
            raise
        finally:
            with self._lock:
                snapshot.layout.free.append(snapshot)

    def _publish(self, s: Snapshot) -> None:
        """One snapshot's messages: loads and wrenches, then completed joint states, /tf and
        the markers."""
        layout, units = s.layout, s.layout.units
        q, qd = hardware_positions(units.coordinates, s.q, s.qd)
        if s.loads:
            self.pub_joint_loads.publish(layout.joint_loads(
                s.stamp, q, qd, hardware_efforts(units.coordinate_efforts, s.coordinate_effort)))
            self.pub_actuator_loads.publish(layout.actuator_loads(
                s.stamp, *hardware_positions(units.inputs, s.x, s.xd),
                hardware_efforts(units.input_efforts, s.efforts)))
            for k, (_, wrench, pub, turn) in enumerate(layout.wrenches):
                force, torque = s.joint_force[k], s.joint_torque[k]
                if turn is not None:                 # in base_link, REP 103
                    force, torque = turn @ force, turn @ torque
                pub.publish(wrench(s.stamp, force, torque))
        if not s.tf:
            return
        self.pub_completed.publish(layout.completed(s.stamp, q, qd))
        if layout.solved is not None:
            solved = list(units.solved)
            self.pub_solved.publish(layout.solved(s.stamp, q[solved], qd[solved]))
        plan = layout.plan
        if plan.poses:
            poses = list(plan.poses)
            translations, quaternions = s.translations[poses], s.quaternions[poses]
            plan.turn_poses(translations, quaternions)              # REP 103's base_link
            self.pub_tf.publish(layout.tf(s.stamp, translations, quaternions))
        if layout.wrenches and self.pub_markers.get_subscription_count() > 0:
            stamp = stamp_from_nanoseconds(s.stamp)
            self.pub_markers.publish(MarkerArray(markers=[
                self._arrow(layout, stamp, k, s.origin_world[k], s.origin_world[k]
                            + s.marker_scale * s.force_world[k])
                for k in range(len(layout.wrenches))]))

    @staticmethod
    def _arrow(layout: Layout, stamp: Time, k: int, origin: np.ndarray, tip: np.ndarray) -> Marker:
        """One wrench arrow, in world coordinates: with publish_base_transform false,
        world_frame names the odometry's frame (odom), whose origin the base coordinates are
        measured from."""
        marker = Marker()
        marker.header.stamp = stamp
        marker.header.frame_id = layout.plan.frame[layout.world_frame]
        marker.ns = "joint_forces"
        marker.id = k
        marker.type = Marker.ARROW
        marker.action = Marker.ADD
        marker.points = [Point(x=float(origin[0]), y=float(origin[1]), z=float(origin[2])),
                         Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2]))]
        marker.scale.x, marker.scale.y, marker.scale.z = 0.01, 0.02, 0.03
        marker.color.r, marker.color.g, marker.color.b, marker.color.a = 1.0, 0.3, 0.0, 1.0
        return marker
