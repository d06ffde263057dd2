"""The dynamics node's control path: its inputs (joint_states, actuator_states, odometry, the
reference trajectory) checked, evaluated and turned into the feedforward, published first and
alone on the input's callback; the safe policy's watchdog.

Bad input never crashes the node and never becomes a published number: a message that fails
a check (see ``inputs.REASONS``) is counted by reason in /diagnostics and no load is
published for it. The feedforward then follows the safe policy: the last valid value is held
(republished by the watchdog, at most once a watchdog period) for at most ``stale_timeout``;
after that the node publishes, every watchdog period, either gravity compensation at the
last valid positions (``stale_policy: gravity``) or zeros (``stale_policy: zero``), until a
valid input arrives.

Joint states as robots send them (``joint_state_policy: merge``): names the model does not
use are ignored and counted, partial messages from several publishers are merged joint by
joint (each joint keeps its value and stamp; the merged state's stamp is the newest, every
joint within ``max_joint_age`` of it); ``strict`` takes only messages holding exactly the
model's inputs.

A model with loops is evaluated by ``evaluators.loop_evaluator``: an input where the loops do
not close or are singular is rejected as ``loop_singular``, one farther than
``max_loop_jump`` from the last solution as ``loop_jump`` (one input's cost stays bounded).

Stamps are integer nanoseconds. The last stamp advances only when an input is evaluated; a
stamp more than ``max_stamp_lead`` ahead of the node clock is ``future_stamp``; a jump back
of the source clock (the node clock behind the last stamp by more than ``max_stamp_lead``, as
when /clock restarts, or inputs going back in time for longer than ``stale_timeout``) re-arms
the stamp checks with a WARN, counted as ``clock_jumps``.

The path reads the node's current parameters (``node.p``), model slot (``node.slot``) and
state (``node.active``) on every message; what it derives from parameters (the stamp and
stale limits, the acceleration filter) is renewed by :meth:`ControlPath.parameters_changed`.
"""
from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.lifecycle import LifecycleNode
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from ...documents import bounded
from ...evaluators.evaluator import Evaluation, NonFiniteLoads
from ...evaluators.loop_evaluator import LoopJumpError, LoopSingularityError
from ...kinematics.indirect import MechanismRangeError
from ..common import qos
from ..common.inputs import (AccelerationEstimator, Gathered, InputRejected, JointStateParser,
                             MessageLayout)
from ..common.odometry import base_from_odometry
from ..common.outputs import StampGrid
from ..common.stamps import StampGuard, clock_now_ns, to_nanoseconds
from .cdr import JointStateArrays, JointStateReader, joint_state_arrays
from .reference import Reference, check_serialized_reference, input_accelerations, read_reference
from .stale_policy import Action, StalePolicy
from .steady_path import Taken, names_source

if TYPE_CHECKING:
    from ..common.parameter_types import DynamicsParameters
    from .model_slot import ModelSlot

MAX_IGNORED_NAMES = 256        # distinct ignored (or conflicting) joint names warned about
MAX_LOGGED_NAME = 80           # characters of a name a log line shows (a hostile one is long)


def shown(names: Sequence[str]) -> str:
    """Names for a log line, each clipped to MAX_LOGGED_NAME characters."""
    return ", ".join(bounded(name, MAX_LOGGED_NAME) for name in names)


class ControlPath:
    """Inputs to feedforward for one configured node (module docstring); made by configure,
    dropped by cleanup. Its publishers are the feedforward and its stamped copy."""

    def __init__(self, node: LifecycleNode) -> None:
        self.node = node
        self.clock = node.get_clock()
        p = node.p
        self.stamps = StampGuard(int(p.max_stamp_lead * 1e9), int(p.stale_timeout * 1e9))
        self.tf_grid = StampGrid()
        self.output_grid = StampGrid()
        self.safety = StalePolicy(int(p.stale_timeout * 1e9), p.stale_policy)
        self.estimator = AccelerationEstimator(p.acceleration_filter_cutoff)
        self.reference: Optional[Reference] = None
        self.joint_source: dict[str, int] = {}        # joint -> its last message's names
        self.last_source: Optional[int] = None         # the names of the last message
        self.conflicting: set[str] = set()             # joints of two publishers, warned
        # the control path's messages as their bytes (module cdr): joint_states in, the
        # feedforward and its stamped copy out
        self.joint_state_reader = JointStateReader()
        self.pub_feedforward = node.create_publisher(Float64MultiArray, p.feedforward_topic,
                                                     qos.OUTPUT)
        self.pub_feedforward_state = node.create_publisher(
            JointState, p.feedforward_state_topic, qos.OUTPUT)

    def subscribe(self) -> None:
        """The inputs' subscriptions and the watchdog's timer. actuator_states first: when
        both are waiting, the executor serves it first, so an evaluation (triggered by
        joint_states) uses the newest actuator lengths."""
        node, p = self.node, self.node.p
        node.create_subscription(JointState, p.actuator_states_topic, self.on_actuator_state,
                                 qos.NEWEST_SAMPLE)
        # merged: each message may carry other joints than the last (several publishers):
        # a queue, so that one publisher's message is not replaced by another's unread
        node.create_subscription(JointState, p.joint_states_topic, self.on_joint_state,
                                 qos.joint_states_input(p.joint_state_policy), raw=True)
        if p.odometry_topic:
            node.create_subscription(Odometry, p.odometry_topic, self.on_odometry,
                                     qos.NEWEST_SAMPLE)
        # raw: a reference's size is checked before it is deserialized
        node.create_subscription(JointTrajectory, p.reference_topic, self.on_reference,
                                 qos.OUTPUT, raw=True)
        node.create_timer(1.0 / p.watchdog_rate, self.watchdog)

    def reset(self) -> None:
        """A new model: forget the time base, the estimate, the last valid input and the
        reference (the joints a message's names give may differ too)."""
        self.estimator = AccelerationEstimator(self.node.p.acceleration_filter_cutoff)
        self.last_source = None
        self.stamps.reset()
        self.tf_grid.reset()
        self.output_grid.reset()
        self.safety.forget()
        self.reference = None

    def parameters_changed(self, old: DynamicsParameters, new: DynamicsParameters) -> None:
        """Renew what the path derived from the parameters (the node's ``p`` is ``new`` by
        now); a new filter cut-off takes effect now, with a fresh filter."""
        if new.acceleration_filter_cutoff != old.acceleration_filter_cutoff:
            self.estimator = AccelerationEstimator(new.acceleration_filter_cutoff)
        self.stamps.max_lead_ns = int(new.max_stamp_lead * 1e9)
        self.stamps.rearm_after_ns = self.safety.timeout_ns = int(new.stale_timeout * 1e9)
        self.safety.policy = new.stale_policy

    def now(self) -> int:
        """The node clock in integer nanoseconds (``stamps.clock_now_ns``)."""
        return clock_now_ns(self.clock)

    # ------------------------------------------------------------------ checks
    def idle_input(self) -> None:
        """An input before the first model or while inactive: counted apart, not a
        rejection (start-up, a managed stop)."""
        self.node.events["waiting_for_model" if self.node.model is None
                         else "inputs_while_inactive"] += 1

    def _taken(self, topic: str) -> Optional[ModelSlot]:
        """Count a message of ``topic``; the slot to evaluate it with, or None (counted as
        an idle input) before the first model or while inactive."""
        node = self.node
        node.received[topic] += 1
        slot = node.slot
        if slot is None or not node.active:
            self.idle_input()
            return None
        return slot

    def reject(self, reason: str, detail: str) -> None:
        node = self.node
        node.rejected[reason] += 1
        if node.log_throttles["rejected"]():
            node.get_logger().warning(f"input rejected ({reason}): {detail}")
        self.safety.rejected()

    def _tolerances(self) -> tuple[float, float]:
        """The position tolerance (inf: positions unchecked) and the velocity tolerance."""
        p = self.node.p
        return (p.position_limit_tolerance if p.check_position_limits else math.inf,
                p.velocity_limit_tolerance)

    def _store(self, layout: MessageLayout, p: np.ndarray, v: np.ndarray, now: int,
               stamp: Optional[int] = None, checked: bool = False) -> None:
        """Check measured values (model names and units) against the model's limits and
        keep them (``stamp``: each joint's, merge policy); ``checked``: values the compiled
        checks passed (:meth:`_read`), stored by them."""
        slot = self.node.slot
        if checked:
            return slot.compiled_checks.store(layout, now * 1e-9, stamp)
        slot.limits.check_arrays(layout.names, p, v, *self._tolerances(),
                                 self.node.joint_map.hardware)
        slot.assembler.store(layout.names, p, v, now * 1e-9, stamp)

    def _gather(self, now: int) -> Gathered:
        """The stored inputs' merged stamp and values, by the compiled checks (``now``: the
        node clock, ns)."""
        p = self.node.p
        return self.node.slot.compiled_checks.gather(now * 1e-9, p.stale_timeout,
                                                     int(p.max_joint_age * 1e9))

    def _read(self, msg: JointStateArrays, parser: JointStateParser
              ) -> tuple[MessageLayout, np.ndarray, np.ndarray, bool]:
        """A joint_states or actuator_states message in the model's names and units, and
        whether the compiled checks passed its values (else the parser read them, and
        :meth:`_store` checks them for the rejection's text); names the model does not use
        are counted, and each is named once in a WARN."""
        node = self.node
        layout = parser.read_layout(msg.name, msg.position, msg.velocity, msg.effort)
        values = node.slot.compiled_checks.check(layout, msg.position, msg.velocity,
                                                 *self._tolerances())
        if values is None:
            layout, p, v = parser.read(msg.name, msg.position, msg.velocity, msg.effort)
        else:
            p, v = values
        if layout.ignored:
            self._ignored(layout.ignored)
        return layout, p, v, values is not None

    def _ignored(self, ignored: Sequence[str]) -> None:
        """A message with names the model does not use: counted, each named once in a WARN
        (as the robot sent them: a solved joint's hardware name, not the model's)."""
        node = self.node
        node.events["messages_with_ignored_names"] += 1
        new = [n for n in node.joint_map.to_hardware(ignored) if n not in node.ignored_names]
        if new and len(node.ignored_names) < MAX_IGNORED_NAMES:
            node.ignored_names.update(new[:MAX_IGNORED_NAMES - len(node.ignored_names)])
            node.get_logger().warning(
                f"ignoring joint names the model does not use: {shown(new[:20])}"
                f"{' ...' if len(new) > 20 else ''} (joint_state_policy merge; map a name "
                "with joint_name_map if it is one of the model's)")

    def _check_sources(self, source: int, taken: Sequence[str]) -> None:
        """Merge: a joint that comes in messages of another set of names than last time is
        given by two publishers (two broadcasters claiming it, a stale driver beside the
        real one): their values alternate in the feedforward. Counted every time
        (``joint_source_conflicts``), each joint named once in a WARN. ``source``: the
        message's set of names (``steady_path.names_source``)."""
        if source == self.last_source:            # every joint it gives is already its own
            return
        self.last_source = source
        switched = [n for n in taken if self.joint_source.setdefault(n, source) != source]
        if not switched:
            return
        node = self.node
        node.events["joint_source_conflicts"] += 1
        for name in switched:
            self.joint_source[name] = source
        new = [n for n in switched if n not in self.conflicting]
        if new and len(self.conflicting) < MAX_IGNORED_NAMES:
            self.conflicting.update(new)
            node.get_logger().warning(
                f"joints given by two publishers (messages of different joint sets): "
                f"{shown(node.joint_map.to_hardware(new[:20]))}; the newest value is used "
                "each time, so they alternate: give each joint one publisher")

    def _check_stamp(self, stamp: int, now: int) -> None:
        """The stamp checks; after a jump back of the clock, forget the old time base (rate
        limit, /tf grid, estimate) with a WARN."""
        jump = self.stamps.check(stamp, now)
        if jump is None:
            return
        node = self.node
        node.events["clock_jumps"] += 1
        node.get_logger().warning(f"clock jumped back by {jump.back_s:.3f} s ({jump.why}): stamp "
                                  f"checks re-armed at {stamp * 1e-9:.9f} s")
        self.tf_grid.reset()
        self.output_grid.reset()
        node.slot.assembler.forget_stamps()      # the joints' stamps of the old time base
        self.estimator = AccelerationEstimator(node.p.acceleration_filter_cutoff)

    # ------------------------------------------------------------------ inputs
    def on_actuator_state(self, msg: JointState) -> None:
        node, slot = self.node, self._taken("actuator_states")
        if slot is None:
            return
        now = self.now()
        try:
            stamp = to_nanoseconds(msg.header.stamp)
            self.stamps.check_lead(stamp, now)
            layout, p, v, checked = self._read(joint_state_arrays(msg),
                                               slot.actuator_state_parser)
            self._store(layout, p, v, now,
                        stamp if node.p.joint_state_policy == "merge" else None, checked)
        except InputRejected as exc:
            self.reject(exc.reason, f"actuator_states: {exc.detail}")

    def on_odometry(self, msg: Odometry) -> None:
        node, slot = self.node, self._taken("odometry")
        if slot is None:
            return
        pose, twist = msg.pose.pose, msg.twist.twist
        o = pose.orientation
        now = self.now()
        if not slot.assembler.base_coordinates:
            node.events["odometry_unused"] += 1          # the model has no base: section
            return
        try:
            self.stamps.check_lead(to_nanoseconds(msg.header.stamp), now)
            positions, velocities = base_from_odometry(
                slot.model.base, pose.position.x, pose.position.y, (o.x, o.y, o.z, o.w),
                (twist.linear.x, twist.linear.y), twist.angular.z)
            slot.limits.check(positions, velocities, *self._tolerances(),
                              node.joint_map.hardware)
            slot.assembler.update(positions, velocities, now * 1e-9)
        except InputRejected as exc:
            self.reject(exc.reason, f"odometry: {exc.detail}")

    def on_reference(self, data: bytes) -> None:
        """A new desired trajectory (serialized: too many points are refused before it is
        deserialized); a stamp of 0 means "starts now" (JointTrajectory's convention): the
        stamp of the newest joint_states. A bad one is rejected and the previous reference
        stays."""
        node, slot = self.node, self._taken("reference")
        if slot is None:
            return
        names, cap = slot.evaluator.input_names, node.p.max_reference_points
        try:
            check_serialized_reference(data, len(names), cap)
            try:
                msg = deserialize_message(data, JointTrajectory)
            except rclpy_implementation.RMWError:        # bytes from a hostile writer
                raise InputRejected("invalid_value", "reference trajectory: not a "
                                                     "JointTrajectory message") from None
            t0 = to_nanoseconds(msg.header.stamp)
            if t0 == 0:
                t0 = self.stamps.last if self.stamps.last is not None else self.now()
            # the robot's names and units, as on joint_states
            self.reference = read_reference(
                node.joint_map.message_to_model(msg.joint_names),
                [(to_nanoseconds(p.time_from_start, "time_from_start"), p.accelerations)
                 for p in msg.points], t0, names, slot.limits, cap, node.joint_map.scale)
        except InputRejected as exc:
            self.reject(exc.reason, exc.detail)

    def on_joint_state(self, message: Union[bytes, JointState]) -> None:
        """A joint_states message: its bytes (the subscription is raw: no message object is
        built) or a message object (a caller in this process). The bytes of a names block
        seen before take the steady path (module steady_path), anything else the reference
        route below, on the same bytes at the same node time."""
        received = time.perf_counter()
        node = self.node
        slot, now = node.slot, None
        if slot is not None and slot.steady is not None and node.active \
                and type(message) is bytes:
            now = self.now()
            p = node.p
            taken = slot.steady.take(message, now, p.joint_state_policy == "strict",
                                     self.stamps.last, self.stamps.max_lead_ns,
                                     self._tolerances(), p.stale_timeout,
                                     int(p.max_joint_age * 1e9))
            if taken is not None:
                return self._on_taken(slot, taken, now, received)
        read = self._read_joint_state(message, now, received)
        if read is not None:
            self._evaluate(slot, *read, received)

    def _on_taken(self, slot: ModelSlot, taken: Taken, now: int, received: float) -> None:
        """A message the steady path took (checked, stored, gathered): the rest of the
        reference route's steps, in its order of effects, then the evaluation."""
        node, p = self.node, self.node.p
        self.joint_state_reader.touch(taken.block.block, taken.block.names)
        node.received["joint_states"] += 1
        layout = taken.block.layout
        if layout.ignored:
            self._ignored(layout.ignored)
        try:
            if p.joint_state_policy == "merge":
                self._check_sources(taken.block.source, layout.names)
                stamp = taken.merged
            else:
                stamp = taken.stamp
            self._check_stamp(stamp, now)
            self._arrived(stamp, received)
        except InputRejected as exc:
            return self.reject(exc.reason, exc.detail)
        self._evaluate(slot, stamp, now, taken.x, taken.xd, received)

    def _arrived(self, stamp: int, received: float) -> None:
        """An input past its stamp checks: its arrival counted (the input rate), then the
        rate limit (``throttled``)."""
        self.node.arrivals.append(received)
        self.stamps.check_rate(stamp, self.node.p.publish_rate_limit)

    def _read_joint_state(self, message: Union[bytes, JointState], now: Optional[int],
                          received: float) -> Optional[tuple[int, int, np.ndarray, np.ndarray]]:
        """The reference route of a joint_states message up to its inputs: (the evaluated
        stamp, the node time, positions, velocities), or None where it ends here (counted,
        rejected, or not an input). ``now``: the node time the steady path read it at."""
        node = self.node
        try:
            msg = self.joint_state_reader(message) if isinstance(message, bytes) \
                else joint_state_arrays(message)
        except InputRejected as exc:              # bytes that are not a JointState
            node.received["joint_states"] += 1
            if node.slot is None or not node.active:
                self.idle_input()
            else:
                self.reject(exc.reason, exc.detail)
            return None
        slot = node.slot
        if slot is not None and slot.solved_names and msg.name \
                and slot.solved_names.issuperset(msg.name):
            # the node's own solved joints (publish_solved_joint_states): not an input
            node.events["solved_joint_states_skipped"] += 1
            return None
        node.received["joint_states"] += 1
        if slot is None or not node.active:
            self.idle_input()
            return None
        p = node.p
        if now is None:
            now = self.now()
        try:
            stamp = to_nanoseconds(msg)
            layout, q, v, checked = self._read(msg, slot.joint_state_parser)
            names = layout.names
            block = self.joint_state_reader.last_block if isinstance(message, bytes) else None
            if block is not None and names and slot.steady is not None:
                slot.steady.remember(block, msg.name, layout)    # names the route accepted
            if p.joint_state_policy == "merge":
                if not names:                    # only joints the model does not use
                    node.events["joint_states_without_model_joints"] += 1
                    return None
                # each joint keeps its own stamp; the merged state's is the newest. A message
                # older in every joint is time_backwards, unless the clock jumped back
                self.stamps.check_lead(stamp, now)
                self._check_sources(names_source(msg.name), names)
                if not (slot.compiled_checks.anything_new(layout, stamp) if checked
                        else slot.assembler.anything_new(names, stamp)):
                    self._check_stamp(stamp, now)
                self._store(layout, q, v, now, stamp, checked)
                gathered = self._gather(now)
                stamp = slot.assembler.merged_stamp(int(p.max_joint_age * 1e9)) \
                    if gathered.stamp is None else gathered.stamp
                self._check_stamp(stamp, now)
            else:
                self._check_stamp(stamp, now)
                self._store(layout, q, v, now, checked=checked)
                gathered = self._gather(now)
            self._arrived(stamp, received)
            # actuator lengths (and odometry) may come on their own topics: not older than
            # the stale timeout
            x, xd = slot.assembler.assemble(now * 1e-9, p.stale_timeout) \
                if gathered.inputs is None else gathered.inputs
        except InputRejected as exc:
            self.reject(exc.reason, exc.detail)
            return None
        return stamp, now, x, xd

    def _evaluate(self, slot: ModelSlot, stamp: int, now: int, x: np.ndarray, xd: np.ndarray,
                  received: float) -> None:
        """Evaluate an input's positions and velocities and publish (``_publish``); the
        model's feedforward by the steady path's second call, where it applies."""
        node, p = self.node, self.node.p
        xdd = input_accelerations(p.acceleration_source, stamp, xd, self.estimator,
                                  self.reference)
        steady = slot.steady if slot.learned is None else None
        try:
            if steady is None:
                result, beyond = slot.evaluator(x, xd, xdd, p.gravity_only), None
            else:
                beyond = steady.evaluate(x, xd, xdd, p.gravity_only, p.clamp_feedforward)
                result = slot.evaluator.result
        except NonFiniteLoads:
            return self.reject("non_finite", "the loads of this input are not finite "
                                             "(inputs too large)")
        except MechanismRangeError as exc:       # a balancer's lever cannot reach
            return self.reject("out_of_range", str(exc))
        except LoopJumpError as exc:             # followed max_loop_jump toward it, no further
            return self.reject("loop_jump", str(exc))
        except LoopSingularityError as exc:      # loops that do not close, or singular
            return self.reject("loop_singular", str(exc))
        beyond_joints = self._dependent_beyond_limits(result)
        if beyond_joints:
            slot.evaluator.refuse_last()    # the watchdog's gravity starts from the last valid
            return self.reject("dependent_beyond_limits", beyond_joints)
        self.stamps.accept(stamp)                # advances on accepted inputs only
        self._publish(stamp, now, x, xd, xdd, result, beyond)
        latency = time.perf_counter() - received
        stats = node.stats
        stats["evaluated"] += 1
        stats["latency_sum"] += latency
        stats["latency_max"] = max(stats["latency_max"], latency)

    def _dependent_beyond_limits(self, result: Evaluation) -> str:
        """A model with loops and ``check_position_limits``: the first dependent (solved)
        coordinate beyond its joint limits by more than ``position_limit_tolerance``, in
        words ("" if none, or for a tree)."""
        p, slot = self.node.p, self.node.slot
        chain = getattr(slot.evaluator, "chain", None)
        if chain is None or not p.check_position_limits:
            return ""
        model = slot.model
        lower, upper = model.compiled.coordinate_limits
        tolerance, q = p.position_limit_tolerance, result.state.q
        for c in chain.dependent:
            if not lower[c] - tolerance <= q[c] <= upper[c] + tolerance:
                return (f"the dependent coordinate {model.coordinate_names[c]} solved at "
                        f"{q[c]:.6g} is beyond its joint limits [{lower[c]:.6g}, "
                        f"{upper[c]:.6g}] by more than {tolerance:g}")
        return ""

    # ------------------------------------------------------------------ outputs
    def publish_feedforward(self, values: np.ndarray, stamp: Optional[int] = None) -> None:
        """The feedforward, then its stamped, named copy (``stamp``: the evaluated input's,
        ns; the watchdog's values: the node clock's), both published as their bytes."""
        slot = self.node.slot
        self.pub_feedforward.publish(slot.feedforward_values(values))
        self.pub_feedforward_state.publish(slot.feedforward_state(
            self.now() if stamp is None else stamp, values))

    def _publish(self, stamp: int, now: int, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                 result: Evaluation, beyond_count: Optional[int]) -> None:
        """The feedforward (every evaluation, first and alone: a controller waits for it; the
        network's with feedforward_source learned, where the model's allows it); then an
        evaluation due on the ``output_rate`` grid (loads, wrenches) or the ``tf_rate`` one
        (/tf, completed joint states, markers) is handed to the monitoring thread. ``now``:
        the node clock when the input arrived (ns); ``beyond_count``: the steady path's
        count of efforts beyond their limits, its feedforward made (None: not made)."""
        node, p, slot = self.node, self.node.p, self.node.slot
        efforts = result.efforts
        if beyond_count is not None:
            feedforward = slot.steady.mapped.values.copy()
        else:
            if slot.learned is not None:
                # gravity_only: the model's efforts are those at rest, and so are the network's
                rates = (np.zeros_like(xd), np.zeros_like(xdd)) if p.gravity_only else (xd, xdd)
                efforts, learned = slot.learned(x, *rates, efforts)
                if not learned:
                    node.events["learned_feedforward_replaced"] += 1
            feedforward = slot.feedforward(efforts, p.clamp_feedforward)
        self.safety.accepted(now, feedforward, x)
        self.publish_feedforward(feedforward, stamp)
        beyond = slot.feedforward.beyond_limits(efforts) if beyond_count != 0 else ()
        if beyond:                            # published, and flagged in /diagnostics
            node.events["efforts_beyond_limits"] += 1
            node.effort_flags = beyond
        loads = self.output_grid.due(stamp, p.output_rate)
        tf = self.tf_grid.due(stamp, p.tf_rate)
        if loads or tf:
            node.monitoring.submit(stamp, loads, tf, x, xd, result, p.marker_scale)

    # ------------------------------------------------------------------ safe policy
    def watchdog(self) -> None:
        slot = self.node.slot
        if slot is None or not self.node.active:
            return
        action = self.safety.tick(self.now())
        if action is Action.HOLD:
            self.publish_feedforward(self.safety.last_feedforward)
        elif action is Action.GRAVITY:
            self.publish_feedforward(self.gravity_at_last_input())
        elif action is Action.ZERO:
            self.publish_feedforward(slot.feedforward.zeros())

    def gravity_at_last_input(self) -> np.ndarray:
        """The feedforward of gravity compensation at the last valid input's positions."""
        node, slot = self.node, self.node.slot
        try:
            gravity = slot.evaluator.gravity(self.safety.last_x).efforts
        except (LoopSingularityError, NonFiniteLoads, MechanismRangeError) as exc:
            # a loop model solves it from the last valid input's own solution, which
            # should not fail; should it all the same: zeros, not a number not computed
            node.events["gravity_fallback_zero"] += 1
            if node.log_throttles["gravity_fallback"]():
                node.get_logger().warning(f"gravity compensation at the last valid input "
                                          f"failed ({exc}); publishing zeros")
            return slot.feedforward.zeros()
        return slot.feedforward(gravity, node.p.clamp_feedforward)

    def last_command(self, command: str) -> np.ndarray:
        """``deactivate_command``'s values (``gravity`` or ``zero``): gravity compensation at
        the last valid input, zeros before any (or where it fails)."""
        values = self.node.slot.feedforward.zeros()
        if command == "gravity" and self.safety.last_x is not None:
            try:
                values = self.gravity_at_last_input()
            except Exception as exc:    # noqa: BLE001 - the last command goes out anyway
                self.node.get_logger().error(f"deactivate: gravity compensation failed "
                                             f"({type(exc).__name__}: {exc}); publishing zeros")
        return values
