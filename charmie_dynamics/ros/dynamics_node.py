"""The dynamics node: joint and actuator measurements in; TF, joint and actuator loads,
reaction wrenches, feedforward efforts and diagnostics out.

Bad input never crashes the node and never becomes a published number: a message that fails
a check (see ``inputs.REASONS``) is counted by reason in /diagnostics and no load is
published for it. The feedforward then follows the safe policy: the last valid value is held
(republished by the watchdog, at most once a watchdog period) for at most ``stale_timeout``;
after that the node publishes, every watchdog period, either gravity compensation at the
last valid positions (``stale_policy: gravity``) or zeros (``stale_policy: zero``), until a
valid input arrives.

Stamps are integer nanoseconds. The last stamp advances only when an input is evaluated; a
stamp more than ``max_stamp_lead`` ahead of the node clock is ``future_stamp``; a jump back
of the source clock (the node clock behind the last stamp by more than ``max_stamp_lead``, as
when /clock restarts, or inputs going back in time for longer than ``stale_timeout``) re-arms
the stamp checks with a WARN, counted as ``clock_jumps``.

Models from ``model_topic`` are parsed on a worker thread (``model_updates.ModelParser``) and
installed on the executor thread. With ``accept_model_updates: once`` only the first model
(from ``model_file`` or the topic) is installed; a later, different one is held as the
pending model until the ``~/accept_model_update`` service (std_srvs/Trigger) installs it.
Every model change is logged at WARN with what changed and counted.
"""
from __future__ import annotations

import math
import sys
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point, TransformStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header, String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from ..documents import DEFAULT_MAX_BYTES
from ..dynamics.actuation import actuator_space
from ..dynamics.evaluator import Evaluation, Evaluator, NonFiniteLoads
from ..kinematics.indirect import MechanismRangeError
from ..model import ModelError, model_from_text, read_model_file
from ..model.model import JointType, Model
from . import qos
from .inputs import REASONS, AccelerationEstimator, InputLimits, InputRejected, StateAssembler, read_joint_state
from .messages import diagnostics, float_array, joint_state, set_transform, set_vector3, to_nanoseconds, transform
from .model_updates import ModelParser, model_change
from .odometry import BASE_COORDINATES, base_from_odometry
from .parameters import Param, declare_parameters
from .reference import Reference, read_reference
from .stale_policy import POLICIES as STALE_POLICIES
from .stale_policy import Action, StalePolicy

ACCELERATION_SOURCES = ("zero", "estimate", "reference")
MODEL_UPDATES = ("once", "always")
RATE_PARAMETERS = ("publish_rate_limit", "tf_rate")     # 0 (off) or 1 to 10000 Hz
MODEL_POLL_PERIOD = 0.02       # s: how soon a parsed model is installed

PARAMETERS = {
    "model_file": Param("", "Model file to load at start-up; empty: wait for the model on model_topic"),
    "model_topic": Param("charmie/model", "std_msgs/String with the validated model (transient local)"),
    "max_model_bytes": Param(DEFAULT_MAX_BYTES, "Largest model text (bytes, UTF-8) read from model_file or "
                             "model_topic; larger ones are refused before parsing", False, 1024, 256 * 2**20),
    "accept_model_updates": Param("once", "once: only the first model (model_file or model_topic) is "
                                  "installed, later ones wait for the ~/accept_model_update service | "
                                  "always: every valid model on model_topic is installed"),
    "joint_states_topic": Param("joint_states", "sensor_msgs/JointState input (sensor-data QoS)"),
    "actuator_states_topic": Param("actuator_states", "sensor_msgs/JointState of the actuator lengths, m and m/s"),
    "odometry_topic": Param("", "nav_msgs/Odometry giving d1, d2, theta3; empty: from joint_states"),
    "reference_topic": Param("reference_trajectory", "trajectory_msgs/JointTrajectory for acceleration_source=reference"),
    "frame_prefix": Param("", "Prefix of every published frame name, as robot_state_publisher's"),
    "world_frame": Param("world", "Name of the model's ground frame (before the prefix)"),
    "publish_rate_limit": Param(0.0, "Most evaluations per second, 0 or 1 to 10000; faster inputs are "
                                "counted as throttled (0: every input)", False, 0.0, 10000.0),
    "tf_rate": Param(100.0, "Most /tf and wrench_markers messages per second, 0 or 1 to 10000 (0: one per "
                     "evaluation)", False, 0.0, 10000.0),
    "acceleration_source": Param("zero", "zero | estimate (filtered differences of velocities) | reference", False),
    "acceleration_filter_cutoff": Param(20.0, "Cut-off frequency (Hz) of the estimate filter", False, 0.01, 10000.0),
    "gravity_only": Param(False, "Gravity compensation: velocities and accelerations taken as zero", False),
    "feedforward_topic": Param("feedforward_efforts", "std_msgs/Float64MultiArray for an effort forward_command_controller"),
    "feedforward_joints": Param([""], "Order of the feedforward efforts: model inputs (coordinates and actuators); empty: all inputs"),
    "clamp_feedforward": Param(False, "Clamp the feedforward (only) at the model's effort and force limits; "
                               "efforts beyond them are flagged in /diagnostics either way", False),
    "check_position_limits": Param(True, "Reject inputs beyond the model's joint position limits "
                                   "(beyond_limits); false for motions that leave them on purpose "
                                   "(the papers' validation motion, in sim)", False),
    "position_limit_tolerance": Param(0.01, "rad or m an input position may lie beyond the model's joint "
                                      "limits before it is rejected (beyond_limits)", False, 0.0, 1.0),
    "velocity_limit_tolerance": Param(0.1, "Fraction by which an input velocity may exceed the model's "
                                      "velocity limit before it is rejected (beyond_limits)", False, 0.0, 10.0),
    "max_stamp_lead": Param(1.0, "Seconds an input stamp may lie ahead of the node clock (future_stamp); "
                            "also the jump back of the clock that re-arms the stamp checks", False, 0.001, 3600.0),
    "stale_timeout": Param(0.2, "Seconds the last valid feedforward is held after inputs stop or turn bad",
                           False, 0.001, 3600.0),
    "stale_policy": Param("gravity", "After stale_timeout: gravity (compensation at the last valid positions) | zero", False),
    "watchdog_rate": Param(20.0, "Hz of the stale-input watchdog", True, 1.0, 1000.0),
    "wrench_joints": Param(["body_3"], "Bodies whose joint reaction wrench is published (WrenchStamped and arrows)"),
    "marker_scale": Param(0.002, "Arrow length per newton in the wrench markers, m/N", False, 1e-6, 1.0),
    "diagnostics_period": Param(1.0, "Seconds between /diagnostics messages", True, 0.005, 3600.0),
}


@dataclass(frozen=True)
class PreparedModel:
    """A validated model with what the node needs to use it, built off the executor thread."""

    model: Model
    text: str
    source: str
    joints: list[str]                      # feedforward order
    evaluator: Evaluator


class DynamicsNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("dynamics", **kwargs)
        # models from the topic are parsed on this worker thread (first: destroy_node, which
        # rclpy also calls after a start-up error, stops it)
        self.parser: ModelParser[PreparedModel] = ModelParser(self._parse_model)
        self.p = declare_parameters(self, PARAMETERS)
        problem = self._check_parameters(self.p)
        if problem:
            raise ValueError(f"parameter {problem}")
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.model: Optional[Model] = None
        self.model_text: Optional[str] = None
        self.pending: Optional[PreparedModel] = None          # a model update held (once)
        self.rejected: Counter = Counter()
        self.received: Counter = Counter()                    # messages taken, by topic
        self.events: Counter = Counter()                      # model and clock events
        self.reported: Counter = Counter()                    # counts at the last diagnostics
        self.effort_flags: tuple[str, ...] = ()               # inputs beyond their effort limit
        self.stats = {"evaluated": 0, "latency_sum": 0.0, "latency_max": 0.0}
        self.arrivals: deque = deque(maxlen=200)
        # stamps and node times in integer nanoseconds
        self.last_stamp: Optional[int] = None
        self.last_eval_stamp: Optional[int] = None
        self.next_tf_stamp: Optional[int] = None
        self.backwards_since: Optional[int] = None           # first of a run of time_backwards
        self.safety = StalePolicy(int(self.p["stale_timeout"] * 1e9), self.p["stale_policy"])
        self.reference: Optional[Reference] = None
        prefix = self.p["frame_prefix"]
        self.frame = lambda name: prefix + name
        # outputs
        self.pub_joint_loads = self.create_publisher(JointState, "joint_loads", qos.OUTPUT)
        self.pub_actuator_loads = self.create_publisher(JointState, "actuator_loads", qos.OUTPUT)
        self.pub_feedforward = self.create_publisher(Float64MultiArray, self.p["feedforward_topic"], qos.OUTPUT)
        self.msg_feedforward = Float64MultiArray()
        self.pub_markers = self.create_publisher(MarkerArray, "wrench_markers", qos.OUTPUT)
        self.pub_tf = self.create_publisher(TFMessage, "/tf", qos.TF)
        self.pub_tf_static = self.create_publisher(TFMessage, "/tf_static", qos.LATCHED)
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.OUTPUT)
        self.pub_wrenches = {}
        if self.p["model_file"]:                              # ModelError ends start-up
            model, text = read_model_file(self.p["model_file"], self.p["max_model_bytes"])
            self._install(self._prepare(model, text, self.p["model_file"]))
        # parsed models are installed by a timer that runs only while a parse is under way or
        # its result waits
        self.model_timer = self.create_timer(MODEL_POLL_PERIOD, self._collect_models)
        self.model_timer.cancel()
        self.create_subscription(String, self.p["model_topic"], self._on_model, qos.LATCHED)
        self.create_service(Trigger, "~/accept_model_update", self._on_accept_model_update)
        # inputs; actuator_states first: when both are waiting, the executor serves it first,
        # so an evaluation (triggered by joint_states) uses the newest actuator lengths
        self.create_subscription(JointState, self.p["actuator_states_topic"],
                                 self._on_actuator_state, qos.NEWEST_SAMPLE)
        self.create_subscription(JointState, self.p["joint_states_topic"], self._on_joint_state,
                                 qos.NEWEST_SAMPLE)
        if self.p["odometry_topic"]:
            self.create_subscription(Odometry, self.p["odometry_topic"], self._on_odometry,
                                     qos.NEWEST_SAMPLE)
        self.create_subscription(JointTrajectory, self.p["reference_topic"], self._on_reference, qos.OUTPUT)
        self.create_timer(1.0 / self.p["watchdog_rate"], self._watchdog)
        self.create_timer(self.p["diagnostics_period"], self._publish_diagnostics)

    def destroy_node(self) -> None:
        self.parser.close()
        super().destroy_node()

    # ------------------------------------------------------------------ parameters
    @staticmethod
    def _check_parameters(p: dict) -> Optional[str]:
        """What the declared ranges cannot say (ranges and finiteness are rclpy's check)."""
        for key, allowed in (("acceleration_source", ACCELERATION_SOURCES),
                             ("stale_policy", STALE_POLICIES),
                             ("accept_model_updates", MODEL_UPDATES)):
            if p[key] not in allowed:
                return f"{key} {p[key]!r}: expected one of {', '.join(allowed)}"
        for key in RATE_PARAMETERS:
            if 0.0 < p[key] < 1.0:
                return f"{key} {p[key]!r}: expected 0 (off) or 1 to 10000 Hz"
        return None

    def _on_set_parameters(self, params) -> SetParametersResult:
        new = dict(self.p)
        new.update({param.name: param.value for param in params if param.name in PARAMETERS})
        problem = self._check_parameters(new)
        if problem:
            return SetParametersResult(successful=False, reason=problem)
        self.p = new
        self.safety.timeout_ns = int(new["stale_timeout"] * 1e9)
        self.safety.policy = new["stale_policy"]
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ model
    def _prepare(self, model: Model, text: str, source: str) -> PreparedModel:
        """Check that the node can use ``model`` (names of its parameters, assembly at the
        default inputs) and build its buffers; nothing of the node changes (thread-safe)."""
        joints = [j for j in self.p["feedforward_joints"] if j] or list(model.input_names)
        unknown = [j for j in joints if j not in model.input_names]
        unknown += [b for b in self.p["wrench_joints"] if b and b not in model.body_names]
        if unknown:
            raise ModelError(f"{source}: feedforward_joints/wrench_joints name(s) "
                             f"{', '.join(unknown)} not in the model")
        # the evaluator's first evaluation compiles (or loads from numba's disk cache) the
        # kernels now, not at the first input, and proves that the model assembles at its
        # default inputs
        try:
            evaluator = Evaluator(model)
        except (MechanismRangeError, NonFiniteLoads) as exc:
            raise ModelError(f"{source}: the model does not assemble at its default "
                             f"inputs: {exc}") from None
        return PreparedModel(model, text, source, joints, evaluator)

    def _parse_model(self, text: str) -> PreparedModel:
        """The worker thread's job: size cap, guarded parse, validation, buffers."""
        source = self.p["model_topic"]
        return self._prepare(model_from_text(text, source, self.p["max_model_bytes"]), text, source)

    def _install(self, prepared: PreparedModel) -> None:
        """Use a prepared model from now on (executor thread); a change is logged at WARN."""
        model, old = prepared.model, self.model
        self.model, self.model_text = model, prepared.text
        self.evaluator = prepared.evaluator
        self.feedforward_index = [model.input_names.index(j) for j in prepared.joints]
        base = tuple(c for c in BASE_COORDINATES if c in model.input_names) \
            if self.p["odometry_topic"] else ()
        self.assembler = StateAssembler(model, base)
        self.limits = InputLimits.of(model)
        self.effort_limit = actuator_space(model).effort_limit
        self.estimator = AccelerationEstimator(self.p["acceleration_filter_cutoff"])
        # messages refilled by every evaluation: names and frames are set once
        self.msg_joint_loads = JointState(name=list(model.coordinate_names))
        self.msg_actuator_loads = JointState(name=list(model.input_names))
        frames = self.evaluator.frames
        self.msg_tf = TFMessage(transforms=[
            TransformStamped(header=Header(frame_id=self.frame(parent or self.p["world_frame"])),
                             child_frame_id=self.frame(child))
            for parent, child in zip(frames.parents, frames.children)])
        self.last_stamp = self.last_eval_stamp = self.next_tf_stamp = None
        self.safety.forget()
        self.reference = None
        for body in self.p["wrench_joints"]:
            if body and body not in self.pub_wrenches:
                self.pub_wrenches[body] = self.create_publisher(
                    WrenchStamped, f"joint_wrenches/{body}", qos.OUTPUT)
        self.msg_wrenches = {body: WrenchStamped(header=Header(frame_id=self.frame(body)))
                             for body in self.pub_wrenches}
        self.wrench_bodies = {body: model.body_index(body) for body in self.pub_wrenches}
        self._publish_static_frames()
        summary = f"model {model.name!r} from {prepared.source}: {model.n_bodies} bodies, " \
                  f"{len(model.input_names)} inputs, {model.total_mass:.6g} kg"
        if old is None:
            self.get_logger().info(summary)
        else:
            self.events["model_changes"] += 1
            self.get_logger().warning(f"model changed ({model_change(old, model)}): {summary}")

    def _on_model(self, msg: String) -> None:
        self.received["model"] += 1
        self.parser.submit(msg.data)
        self.model_timer.reset()

    def _collect_models(self) -> None:
        """Install (or hold, or reject) what the worker finished; stop polling when idle."""
        for outcome in self.parser.results():
            if outcome.error is not None:
                self.rejected["bad_model"] += 1
                self.get_logger().error(f"model rejected, keeping the previous one: {outcome.error}")
            elif self.model is not None and outcome.text == self.model_text:
                self.events["models_unchanged"] += 1
            elif self.model is None or self.p["accept_model_updates"] == "always":
                self.events["models_taken"] += 1
                self._install(outcome.value)
            else:
                self.events["models_held"] += 1
                self.pending = outcome.value
                self.get_logger().warning(
                    f"model update on {self.p['model_topic']} held, not installed "
                    f"(accept_model_updates: once; call ~/accept_model_update to install it): "
                    f"{model_change(self.model, outcome.value.model)}")
        if self.parser.idle():
            self.model_timer.cancel()

    def _on_accept_model_update(self, request: Trigger.Request,
                                response: Trigger.Response) -> Trigger.Response:
        if self.pending is None:
            response.success = False
            response.message = "no model update is pending"
            return response
        prepared, self.pending = self.pending, None
        change = model_change(self.model, prepared.model)
        self._install(prepared)
        response.success = True
        response.message = f"installed the pending model from {prepared.source}: {change}"
        return response

    def _publish_static_frames(self) -> None:
        m = self.model
        stamp = self.get_clock().now().to_msg()
        transforms = [transform(stamp, self._parent_frame(i), self.frame(m.body_names[i]),
                                m.rotation[i], m.origin[i])
                      for i in range(m.n_bodies) if m.joint_type[i] == JointType.FIXED]
        self.pub_tf_static.publish(TFMessage(transforms=transforms))

    def _parent_frame(self, i: int) -> str:
        p = self.model.parent[i]
        return self.frame(self.p["world_frame"] if p < 0 else self.model.body_names[p])

    # ------------------------------------------------------------------ inputs
    def _reject(self, reason: str, detail: str) -> None:
        self.rejected[reason] += 1
        self.get_logger().warning(f"input rejected ({reason}): {detail}", throttle_duration_sec=2.0)
        self.safety.rejected()

    def _store(self, positions: dict, velocities: dict, now: int) -> None:
        """Check measured values against the model's limits and keep them."""
        tolerance = self.p["position_limit_tolerance"] if self.p["check_position_limits"] else math.inf
        self.limits.check(positions, velocities, tolerance, self.p["velocity_limit_tolerance"])
        self.assembler.update(positions, velocities, now * 1e-9)

    def _check_stamp(self, stamp: int, now: int) -> None:
        """Raise ``future_stamp`` or ``time_backwards``, or re-arm after a clock jump.

        ``now`` is 0 while simulated time has not started (no /clock yet): no comparison
        with the node clock then."""
        lead = int(self.p["max_stamp_lead"] * 1e9)
        if now > 0 and stamp - now > lead:
            raise InputRejected("future_stamp", f"stamp {stamp * 1e-9:.9f} s is {(stamp - now) * 1e-9:.3g} s "
                                                f"ahead of the node clock (max_stamp_lead "
                                                f"{self.p['max_stamp_lead']:g} s)")
        last = self.last_stamp
        if last is None or stamp >= last:
            self.backwards_since = None
            return
        if now > 0 and last - now > lead:
            # the node clock itself is behind the last stamp: /clock restarted
            return self._rearm(stamp, f"the node clock is {(last - now) * 1e-9:.3f} s behind "
                                      "the last input stamp")
        if self.backwards_since is None:
            self.backwards_since = now
        elif not 0 <= now - self.backwards_since <= int(self.p["stale_timeout"] * 1e9):
            # every input for longer than stale_timeout went back: the source's clock did
            return self._rearm(stamp, f"input stamps went back for more than stale_timeout "
                                      f"({self.p['stale_timeout']:g} s)")
        raise InputRejected("time_backwards", f"stamp {stamp * 1e-9:.9f} s before "
                                              f"{last * 1e-9:.9f} s")

    def _rearm(self, stamp: int, why: str) -> None:
        """Forget the old time base (stamps, rate limit, /tf grid, estimate) after a jump back."""
        back = (self.last_stamp - stamp) * 1e-9
        self.events["clock_jumps"] += 1
        self.get_logger().warning(f"clock jumped back by {back:.3f} s ({why}): stamp checks "
                                  f"re-armed at {stamp * 1e-9:.9f} s")
        self.last_stamp = self.last_eval_stamp = self.next_tf_stamp = self.backwards_since = None
        self.estimator = AccelerationEstimator(self.p["acceleration_filter_cutoff"])

    def _on_actuator_state(self, msg: JointState) -> None:
        self.received["actuator_states"] += 1
        if self.model is None:
            return self._reject("no_model", "no model yet")
        try:
            pos, vel = read_joint_state(msg.name, msg.position, msg.velocity,
                                        self.model.actuator_names, effort=msg.effort)
            self._store(pos, vel, self._now())
        except InputRejected as exc:
            self._reject(exc.reason, f"actuator_states: {exc.detail}")

    def _on_odometry(self, msg: Odometry) -> None:
        self.received["odometry"] += 1
        if self.model is None:
            return self._reject("no_model", "no model yet")
        pose, twist = msg.pose.pose, msg.twist.twist
        o = pose.orientation
        try:
            positions, velocities = base_from_odometry(
                pose.position.x, pose.position.y, (o.x, o.y, o.z, o.w),
                (twist.linear.x, twist.linear.y), twist.angular.z)
        except InputRejected as exc:
            return self._reject(exc.reason, exc.detail)
        try:
            self._store(positions, velocities, self._now())
        except InputRejected as exc:
            self._reject(exc.reason, f"odometry: {exc.detail}")

    def _on_reference(self, msg: JointTrajectory) -> None:
        """A new desired trajectory; a stamp of 0 means "starts now" (JointTrajectory's
        convention): the stamp of the newest joint_states. A bad one is rejected and the
        previous reference stays."""
        self.received["reference"] += 1
        if self.model is None:
            return self._reject("no_model", "no model yet")
        t0 = to_nanoseconds(msg.header.stamp)
        if t0 == 0:
            t0 = self.last_stamp if self.last_stamp is not None else self._now()
        try:
            self.reference = read_reference(
                msg.joint_names, [(to_nanoseconds(p.time_from_start), p.accelerations)
                                  for p in msg.points], t0, self.model.input_names)
        except InputRejected as exc:
            self._reject(exc.reason, exc.detail)

    def _on_joint_state(self, msg: JointState) -> None:
        received = time.perf_counter()
        self.received["joint_states"] += 1
        if self.model is None:
            return self._reject("no_model", "no model yet")
        stamp = to_nanoseconds(msg.header.stamp)
        now = self._now()
        try:
            pos, vel = read_joint_state(msg.name, msg.position, msg.velocity,
                                        self.assembler.accepted_names(),
                                        self.assembler.required_names(), effort=msg.effort)
            self._check_stamp(stamp, now)
            self._store(pos, vel, now)
            self.arrivals.append(received)
            limit = self.p["publish_rate_limit"]
            if limit > 0 and self.last_eval_stamp is not None \
                    and (stamp - self.last_eval_stamp) * limit < 1e9:
                raise InputRejected("throttled", "faster than publish_rate_limit")
            # actuator lengths (and odometry) may come on their own topics: not older than
            # the stale timeout
            x, xd = self.assembler.assemble(now * 1e-9, self.p["stale_timeout"])
        except InputRejected as exc:
            return self._reject(exc.reason, exc.detail)
        try:
            result = self.evaluator(x, xd, self._accelerations(stamp, x, xd),
                                    self.p["gravity_only"])
        except NonFiniteLoads:
            return self._reject("non_finite", "the loads of this input are not finite "
                                              "(inputs too large)")
        except MechanismRangeError as exc:       # a balancer's lever cannot reach
            return self._reject("out_of_range", str(exc))
        self.last_stamp = self.last_eval_stamp = stamp       # advances on accepted inputs only
        self._publish(msg.header.stamp, stamp, x, xd, result)
        latency = time.perf_counter() - received
        self.stats["evaluated"] += 1
        self.stats["latency_sum"] += latency
        self.stats["latency_max"] = max(self.stats["latency_max"], latency)

    def _accelerations(self, stamp: int, x: np.ndarray, xd: np.ndarray) -> np.ndarray:
        source = self.p["acceleration_source"]
        if source == "estimate":
            return self.estimator.update(stamp, xd)
        if source == "reference" and self.reference is not None:
            return self.reference.input_accelerations(stamp * 1e-9, len(x))
        return np.zeros_like(x)

    # ------------------------------------------------------------------ outputs
    def _feedforward(self, efforts: np.ndarray) -> np.ndarray:
        """The feedforward of efforts in input order: in feedforward_joints order, clamped at
        the model's limits with clamp_feedforward."""
        if self.p["clamp_feedforward"]:
            efforts = np.clip(efforts, -self.effort_limit, self.effort_limit)
        return efforts[self.feedforward_index]

    def _publish_feedforward(self, values: np.ndarray) -> None:
        self.msg_feedforward.data = float_array(values)
        self.pub_feedforward.publish(self.msg_feedforward)

    def _publish(self, stamp_msg, stamp: int, x: np.ndarray, xd: np.ndarray,
                 result: Evaluation) -> None:
        efforts, state, loads = result.efforts, result.state, result.loads
        beyond = np.abs(efforts) > self.effort_limit
        if beyond.any():                      # published, and flagged in /diagnostics
            self.events["efforts_beyond_limits"] += 1
            self.effort_flags = tuple(n for n, b in zip(self.model.input_names, beyond) if b)
        self.pub_joint_loads.publish(joint_state(stamp_msg, (), state.q, state.qd,
                                                 loads.coordinate_effort, self.msg_joint_loads))
        self.pub_actuator_loads.publish(joint_state(stamp_msg, (), x, xd, efforts,
                                                    self.msg_actuator_loads))
        self.safety.accepted(self._now(), self._feedforward(efforts), x)
        self._publish_feedforward(self.safety.last_feedforward)
        for body, w in self.msg_wrenches.items():
            i = self.wrench_bodies[body]
            w.header.stamp = stamp_msg
            set_vector3(w.wrench.force, loads.joint_force[i])
            set_vector3(w.wrench.torque, loads.joint_torque[i])
            self.pub_wrenches[body].publish(w)
        # /tf and the RViz arrows on a grid of stamps 1/tf_rate apart, so that jitter in the
        # input stamps does not lower the average rate; a gap of more than a period, or time
        # going back, restarts it
        rate = self.p["tf_rate"]
        if rate > 0:
            period, due = int(1e9 / rate), self.next_tf_stamp
            if not (due is None or stamp >= due or stamp < due - 2 * period):
                return
            on_grid = due is not None and due <= stamp < due + period
            self.next_tf_stamp = (due if on_grid else stamp) + period
        for msg, p, q in zip(self.msg_tf.transforms, result.translations, result.quaternions):
            set_transform(msg, stamp_msg, p, q)
        self.pub_tf.publish(self.msg_tf)
        self._publish_markers(stamp_msg, loads)

    def _publish_markers(self, stamp_msg, loads) -> None:
        markers = MarkerArray()
        for k, i in enumerate(self.wrench_bodies.values()):
            markers.markers.append(self._arrow(stamp_msg, k, loads.placements.origin_world[i],
                                               loads.joint_force_world[i]))
        if markers.markers:
            self.pub_markers.publish(markers)

    def _arrow(self, stamp_msg, k: int, origin: np.ndarray, force: np.ndarray) -> Marker:
        marker = Marker()
        marker.header.stamp = stamp_msg
        marker.header.frame_id = self.frame(self.p["world_frame"])
        marker.ns = "joint_forces"
        marker.id = k
        marker.type = Marker.ARROW
        marker.action = Marker.ADD
        tip = origin + self.p["marker_scale"] * force
        marker.points = [Point(x=float(origin[0]), y=float(origin[1]), z=float(origin[2])),
                         Point(x=float(tip[0]), y=float(tip[1]), z=float(tip[2]))]
        marker.scale.x, marker.scale.y, marker.scale.z = 0.01, 0.02, 0.03
        marker.color.r, marker.color.g, marker.color.b, marker.color.a = 1.0, 0.3, 0.0, 1.0
        return marker

    # ------------------------------------------------------------------ watchdog, diagnostics
    def _now(self) -> int:
        """The node clock (ROS time: /clock with use_sim_time), integer nanoseconds."""
        return self.get_clock().now().nanoseconds

    def _watchdog(self) -> None:
        if self.model is None:
            return
        action = self.safety.tick(self._now())
        if action is Action.HOLD:
            self._publish_feedforward(self.safety.last_feedforward)
        elif action is Action.GRAVITY:
            self._publish_feedforward(self._feedforward(
                self.evaluator.gravity(self.safety.last_x).efforts))
        elif action is Action.ZERO:
            self._publish_feedforward(np.zeros(len(self.feedforward_index)))

    def _publish_diagnostics(self) -> None:
        n = self.stats["evaluated"]
        rate = 0.0
        if len(self.arrivals) >= 2 and self.arrivals[-1] > self.arrivals[0]:
            rate = (len(self.arrivals) - 1) / (self.arrivals[-1] - self.arrivals[0])
        last = self.safety.last_valid
        age = None if last is None else (self._now() - last) * 1e-9
        values = {
            "model": self.model.name if self.model else "none",
            "model_pending": self.pending.model.name if self.pending else "none",
            "model_parsing": str(not self.parser.idle()),
            "input_rate_hz": f"{rate:.1f}",
            "evaluations": str(n),
            "compute_latency_mean_ms": f"{(self.stats['latency_sum'] / n * 1e3) if n else 0.0:.3f}",
            "compute_latency_max_ms": f"{self.stats['latency_max'] * 1e3:.3f}",
            "last_valid_input_age_s": "never" if age is None else f"{age:.3f}",
            "stale": str(self.safety.stale),
            "acceleration_source": self.p["acceleration_source"],
            "efforts_beyond_limits_inputs": ", ".join(self.effort_flags) or "none",
        }
        for topic in ("joint_states", "actuator_states", "odometry", "reference", "model"):
            values[f"received_{topic}"] = str(self.received[topic])
        for reason in REASONS + ("bad_model",):
            values[f"rejected_{reason}"] = str(self.rejected[reason])
        values["actuator_lengths_out_of_range"] = str(self.rejected["out_of_range"])
        values["models_superseded"] = str(self.parser.superseded)
        for event in ("models_taken", "models_held", "models_unchanged", "model_changes",
                      "clock_jumps", "efforts_beyond_limits"):
            values[event] = str(self.events[event])
        new = {key: self.events[key] > self.reported[key] for key in self.events}
        warnings = []
        if new.get("clock_jumps"):
            warnings.append("clock jumped back: stamp checks re-armed")
        if new.get("model_changes"):
            warnings.append("model changed")
        if new.get("models_held"):
            warnings.append("model update held: ~/accept_model_update installs it")
        if new.get("efforts_beyond_limits"):
            warnings.append(f"efforts beyond the model's limits: {', '.join(self.effort_flags)}")
        if self.safety.stale or age is None:
            warnings.append("inputs stale or missing")
        if any(self.rejected[r] > self.reported[r] for r in REASONS + ("bad_model",)
               if r != "throttled"):
            warnings.append("inputs rejected in the last period")
        if self.model is None:
            level, message = DiagnosticStatus.ERROR, "no model"
        elif warnings:
            level, message = DiagnosticStatus.WARN, "; ".join(warnings)
        else:
            level, message = DiagnosticStatus.OK, "ok"
        self.reported = Counter(self.events) + Counter(self.rejected)
        self.pub_diagnostics.publish(diagnostics(self.get_clock().now().to_msg(),
                                                 "charmie_dynamics: dynamics", level, message,
                                                 values))


def main(args=None) -> int:
    from .run import run_node
    return run_node(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
