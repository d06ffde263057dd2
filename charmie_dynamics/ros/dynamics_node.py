"""The dynamics node: joint and actuator measurements in; TF, joint and actuator loads,
reaction wrenches, feedforward efforts and diagnostics out.

Bad input never crashes the node and never becomes a published number: a message that fails
a check (see ``inputs.REASONS``) is counted by reason in /diagnostics and no load is
published for it. The feedforward then follows the safe policy: the last valid value is held
(republished) for at most ``stale_timeout``; after that the node publishes, every watchdog
period, either gravity compensation at the last valid positions (``stale_policy: gravity``)
or zeros (``stale_policy: zero``), until a valid input arrives.
"""
from __future__ import annotations

import math
import sys
import time
from collections import Counter, deque
from typing import Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point, TransformStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header, String
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

from ..dynamics import Loads, inverse_dynamics
from ..dynamics.inverse import InverseDynamicsData
from ..kinematics import JointSpaceState, inputs_from_dict, resolve_state
from ..mechanisms.auxiliary import auxiliary_segments
from ..mechanisms.indirect import MechanismRangeError
from ..model import ModelError, load_model, model_from_text
from ..model.model import JointType, Model
from . import qos
from .inputs import (
    REASONS,
    AccelerationEstimator,
    InputRejected,
    ReferenceTrajectory,
    StateAssembler,
    read_joint_state,
)
from .messages import (diagnostics, float_array, joint_state, quaternions, set_transform, set_vector3,
                       to_seconds, transform)
from .parameters import declare_parameters

ACCELERATION_SOURCES = ("zero", "estimate", "reference")
STALE_POLICIES = ("gravity", "zero")
BASE_COORDINATES = ("d1", "d2", "theta3")

# name: (default, description, read-only after start-up)
PARAMETERS = {
    "model_file": ("", "Model file to load at start-up; empty: wait for the model on model_topic", True),
    "model_topic": ("charmie/model", "std_msgs/String with the validated model (transient local)", True),
    "joint_states_topic": ("joint_states", "sensor_msgs/JointState input (sensor-data QoS)", True),
    "actuator_states_topic": ("actuator_states", "sensor_msgs/JointState of the actuator lengths, m and m/s", True),
    "odometry_topic": ("", "nav_msgs/Odometry giving d1, d2, theta3; empty: from joint_states", True),
    "reference_topic": ("reference_trajectory", "trajectory_msgs/JointTrajectory for acceleration_source=reference", True),
    "frame_prefix": ("", "Prefix of every published frame name, as robot_state_publisher's", True),
    "world_frame": ("world", "Name of the model's ground frame (before the prefix)", True),
    "publish_rate_limit": (0.0, "Most evaluations per second; faster inputs are counted as throttled (0: every input)", False),
    "tf_rate": (100.0, "Most /tf and wrench_markers messages per second (0: one per evaluation)", False),
    "acceleration_source": ("zero", "zero | estimate (filtered differences of velocities) | reference", False),
    "acceleration_filter_cutoff": (20.0, "Cut-off frequency (Hz) of the estimate filter", False),
    "gravity_only": (False, "Gravity compensation: velocities and accelerations taken as zero", False),
    "feedforward_topic": ("feedforward_efforts", "std_msgs/Float64MultiArray for an effort forward_command_controller", True),
    "feedforward_joints": ([""], "Order of the feedforward efforts: model inputs (coordinates and actuators); empty: all inputs", True),
    "stale_timeout": (0.2, "Seconds the last valid feedforward is held after inputs stop or turn bad", False),
    "stale_policy": ("gravity", "After stale_timeout: gravity (compensation at the last valid positions) | zero", False),
    "watchdog_rate": (20.0, "Hz of the stale-input watchdog", True),
    "wrench_joints": (["body_3"], "Bodies whose joint reaction wrench is published (WrenchStamped and arrows)", True),
    "marker_scale": (0.002, "Arrow length per newton in the wrench markers, m/N", False),
    "diagnostics_period": (1.0, "Seconds between /diagnostics messages", True),
}


class DynamicsNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("dynamics", **kwargs)
        self.p = declare_parameters(self, PARAMETERS)
        problem = self._check_parameters(self.p)
        if problem:
            raise ValueError(f"parameter {problem}")
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.model: Optional[Model] = None
        self.rejected: Counter = Counter()
        self.rejected_reported: Counter = Counter()   # counts at the last diagnostics
        self.stats = {"accepted": 0, "evaluated": 0, "latency_sum": 0.0, "latency_max": 0.0}
        self.arrivals: deque = deque(maxlen=200)
        self.last_stamp: Optional[float] = None
        self.last_eval_stamp: Optional[float] = None
        self.next_tf_stamp: Optional[float] = None
        self.last_valid_time: Optional[float] = None
        self.last_feedforward: Optional[np.ndarray] = None
        self.last_x: Optional[np.ndarray] = None
        self.stale = False
        self.reference: Optional[ReferenceTrajectory] = None
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
        # inputs
        self.create_subscription(String, self.p["model_topic"], self._on_model, qos.LATCHED)
        # actuator_states first: when both are waiting, the executor serves it first, so an
        # evaluation (triggered by joint_states) uses the newest actuator lengths
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
        if self.p["model_file"]:
            self.set_model(load_model(self.p["model_file"]))   # ModelError ends start-up

    # ------------------------------------------------------------------ parameters
    @staticmethod
    def _check_parameters(p: dict) -> Optional[str]:
        if p["acceleration_source"] not in ACCELERATION_SOURCES:
            return f"acceleration_source {p['acceleration_source']!r}: expected one of {', '.join(ACCELERATION_SOURCES)}"
        if p["stale_policy"] not in STALE_POLICIES:
            return f"stale_policy {p['stale_policy']!r}: expected one of {', '.join(STALE_POLICIES)}"
        for key in ("publish_rate_limit", "tf_rate"):
            if not 0.0 <= p[key] <= 10000.0:
                return f"{key} {p[key]!r}: expected 0 to 10000 Hz"
        for key in ("acceleration_filter_cutoff", "stale_timeout", "watchdog_rate",
                    "diagnostics_period", "marker_scale"):
            if not p[key] > 0.0:
                return f"{key} {p[key]!r}: expected a value > 0"
        return None

    def _on_set_parameters(self, params) -> SetParametersResult:
        new = dict(self.p)
        new.update({param.name: param.value for param in params if param.name in PARAMETERS})
        problem = self._check_parameters(new)
        if problem:
            return SetParametersResult(successful=False, reason=problem)
        self.p = new
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ model
    def set_model(self, model: Model) -> None:
        """Use a new model (validated); bad feedforward or wrench names keep the old one."""
        joints = [j for j in self.p["feedforward_joints"] if j] or list(model.input_names)
        unknown = [j for j in joints if j not in model.input_names]
        unknown += [b for b in self.p["wrench_joints"] if b and b not in model.body_names]
        if unknown:
            raise ModelError(f"{model.source}: feedforward_joints/wrench_joints name(s) "
                             f"{', '.join(unknown)} not in the model")
        # buffers reused by every evaluation (single-threaded executor: one at a time); the
        # first evaluation compiles (or loads from numba's disk cache) the kernels now, not at
        # the first input, and proves that the model assembles at its default inputs
        try:
            state_buffer = resolve_state(model, *inputs_from_dict(model))
            loads_buffer = InverseDynamicsData(model)
            segments = auxiliary_segments(model, inverse_dynamics(
                model, state_buffer, data=loads_buffer).placements)
        except MechanismRangeError as exc:
            raise ModelError(f"{model.source}: the model does not assemble at its default "
                             f"inputs: {exc}") from None
        self.model = model
        self.state_buffer, self.loads_buffer = state_buffer, loads_buffer
        self.feedforward_index = [model.input_names.index(j) for j in joints]
        base = tuple(c for c in BASE_COORDINATES if c in model.input_names) \
            if self.p["odometry_topic"] else ()
        self.assembler = StateAssembler(model, base)
        self.estimator = AccelerationEstimator(self.p["acceleration_filter_cutoff"])
        self.actuator_slots = [model.input_names.index(a) for a in model.actuator_names]
        # messages refilled by every evaluation: names and frames are set once
        self.msg_joint_loads = JointState(name=list(model.coordinate_names))
        self.msg_actuator_loads = JointState(name=list(model.input_names))
        self.tf_bodies = [i for i in range(model.n_bodies) if model.joint_type[i] != JointType.FIXED]
        self.tf_segment_bodies = [seg.body for seg in segments]
        frames = [(self._parent_frame(i), self.frame(model.body_names[i])) for i in self.tf_bodies]
        frames += [(self.frame(model.body_names[seg.body]), self.frame(seg.name)) for seg in segments]
        self.msg_tf = TFMessage(transforms=[TransformStamped(header=Header(frame_id=parent),
                                                             child_frame_id=child)
                                            for parent, child in frames])
        self.last_stamp = self.last_x = self.last_feedforward = None
        for body in self.p["wrench_joints"]:
            if body and body not in self.pub_wrenches:
                self.pub_wrenches[body] = self.create_publisher(
                    WrenchStamped, f"joint_wrenches/{body}", qos.OUTPUT)
        self.msg_wrenches = {body: WrenchStamped(header=Header(frame_id=self.frame(body)))
                             for body in self.pub_wrenches}
        self.wrench_bodies = {body: model.body_index(body) for body in self.pub_wrenches}
        self._publish_static_frames()
        self.get_logger().info(f"model {model.name!r}: {model.n_bodies} bodies, "
                               f"{len(model.input_names)} inputs")

    def _on_model(self, msg: String) -> None:
        try:
            self.set_model(model_from_text(msg.data, self.p["model_topic"]))
        except ModelError as exc:
            self.rejected["bad_model"] += 1
            self.get_logger().error(f"model rejected, keeping the previous one: {exc}")

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
        self.get_logger().warn(f"input rejected ({reason}): {detail}", throttle_duration_sec=2.0)
        # hold the last valid feedforward while it is not stale
        if self.last_feedforward is not None and not self.stale:
            self._publish_feedforward(self.last_feedforward)

    def _on_actuator_state(self, msg: JointState) -> None:
        if self.model is None:
            return self._reject("no_model", "no model yet")
        try:
            pos, vel = read_joint_state(msg.name, msg.position, msg.velocity, self.model.actuator_names)
            self.assembler.update(pos, vel, self._now())
        except InputRejected as exc:
            self._reject(exc.reason, f"actuator_states: {exc.detail}")

    def _on_odometry(self, msg: Odometry) -> None:
        if self.model is None:
            return self._reject("no_model", "no model yet")
        o = msg.pose.pose.orientation
        norm = math.sqrt(o.x * o.x + o.y * o.y + o.z * o.z + o.w * o.w)
        if not (math.isfinite(norm) and abs(norm - 1.0) < 1e-3):
            return self._reject("invalid_value", f"odometry orientation norm {norm:g}, expected 1")
        yaw = math.atan2(2.0 * (o.w * o.z + o.x * o.y), 1.0 - 2.0 * (o.y * o.y + o.z * o.z))
        v = msg.twist.twist.linear
        values = [msg.pose.pose.position.x, msg.pose.pose.position.y, yaw, v.x, v.y,
                  msg.twist.twist.angular.z]
        if not all(math.isfinite(x) for x in values):
            return self._reject("non_finite", "odometry")
        c, s = math.cos(yaw), math.sin(yaw)     # the twist is in the robot's frame
        self.assembler.update(dict(zip(BASE_COORDINATES, values[:3])),
                              dict(zip(BASE_COORDINATES, (c * v.x - s * v.y, s * v.x + c * v.y,
                                                          values[5]))), self._now())

    def _on_reference(self, msg: JointTrajectory) -> None:
        """A new desired trajectory; a stamp of 0 means "starts now" (JointTrajectory's
        convention): the stamp of the newest joint_states. A bad one is rejected and the
        previous reference stays."""
        if self.model is None:
            return self._reject("no_model", "no model yet")
        names = list(msg.joint_names)
        if not msg.points:
            return self._reject("invalid_value", "reference trajectory without points")
        if len(set(names)) != len(names):
            return self._reject("duplicate_name", "reference trajectory names")
        unknown = [n for n in names if n not in self.model.input_names]
        if unknown:
            return self._reject("unknown_name", f"reference trajectory: {', '.join(unknown[:5])}")
        if any(len(p.accelerations) not in (0, len(names)) for p in msg.points):
            return self._reject("length_mismatch", "reference trajectory accelerations")
        t0 = to_seconds(msg.header.stamp)
        if t0 == 0.0:
            t0 = self.last_stamp if self.last_stamp is not None else self._now()
        times = np.array([t0 + to_seconds(p.time_from_start) for p in msg.points])
        acc = np.array([list(p.accelerations) or [0.0] * len(names) for p in msg.points])
        if not np.all(np.isfinite(acc)):
            return self._reject("non_finite", "reference trajectory accelerations")
        if np.any(np.diff(times) <= 0):
            return self._reject("invalid_value", "reference trajectory times do not increase")
        self.reference = ReferenceTrajectory(tuple(names), times, acc)
        self.reference_slots = [self.model.input_names.index(n) for n in names]

    def _on_joint_state(self, msg: JointState) -> None:
        received = time.perf_counter()
        if self.model is None:
            return self._reject("no_model", "no model yet")
        stamp = to_seconds(msg.header.stamp)
        try:
            pos, vel = read_joint_state(msg.name, msg.position, msg.velocity,
                                        self.assembler.accepted_names(),
                                        self.assembler.required_names())
            if self.last_stamp is not None and stamp < self.last_stamp:
                raise InputRejected("time_backwards", f"stamp {stamp:.6f} s before {self.last_stamp:.6f} s")
            now = self._now()
            self.assembler.update(pos, vel, now)
            self.last_stamp = stamp
            self.arrivals.append(received)
            limit = self.p["publish_rate_limit"]
            if limit > 0 and self.last_eval_stamp is not None and stamp - self.last_eval_stamp < 1.0 / limit:
                raise InputRejected("throttled", "faster than publish_rate_limit")
            # actuator lengths (and odometry) may come on their own topics: not older than
            # the stale timeout
            x, xd = self.assembler.assemble(now, self.p["stale_timeout"])
        except InputRejected as exc:
            return self._reject(exc.reason, exc.detail)
        xdd = self._accelerations(stamp, x, xd)
        state = resolve_state(self.model, x, xd, xdd, out=self.state_buffer)
        with np.errstate(all="ignore"):          # overflow shows as non-finite, checked below
            loads = inverse_dynamics(self.model, state, gravity_only=self.p["gravity_only"],
                                     data=self.loads_buffer)
        # one sum: non-finite if any term is (or if the loads overflow: rejected alike)
        if not math.isfinite(loads.coordinate_effort.sum() + loads.actuator_force.sum()
                             + loads.joint_wrenches.sum()):
            return self._reject("non_finite", "the loads of this input are not finite "
                                              "(inputs too large)")
        self.last_eval_stamp = stamp
        self._publish(msg.header.stamp, stamp, x, xd, state, loads)
        latency = time.perf_counter() - received
        self.stats["evaluated"] += 1
        self.stats["latency_sum"] += latency
        self.stats["latency_max"] = max(self.stats["latency_max"], latency)

    def _accelerations(self, stamp: float, x: np.ndarray, xd: np.ndarray) -> np.ndarray:
        source = self.p["acceleration_source"]
        if source == "estimate":
            return self.estimator.update(stamp, xd)
        xdd = np.zeros_like(x)
        if source == "reference" and self.reference is not None:
            xdd[self.reference_slots] = self.reference.sample(stamp)
        return xdd

    # ------------------------------------------------------------------ outputs
    def actuator_efforts(self, loads: Loads) -> np.ndarray:
        """Efforts in input order: joint efforts, with the actuators' axial forces in their slots."""
        efforts = np.array(loads.coordinate_effort, dtype=float)
        efforts[self.actuator_slots] = loads.actuator_force
        return efforts

    def _publish_feedforward(self, efforts: np.ndarray) -> None:
        self.msg_feedforward.data = float_array(efforts)
        self.pub_feedforward.publish(self.msg_feedforward)

    def _publish(self, stamp_msg, stamp: float, x: np.ndarray, xd: np.ndarray,
                 state: JointSpaceState, loads: Loads) -> None:
        efforts = self.actuator_efforts(loads)
        self.pub_joint_loads.publish(joint_state(stamp_msg, (), state.q, state.qd,
                                                 loads.coordinate_effort, self.msg_joint_loads))
        self.pub_actuator_loads.publish(joint_state(stamp_msg, (), x, xd, efforts,
                                                    self.msg_actuator_loads))
        self.last_feedforward = efforts[self.feedforward_index]
        self.last_x = x
        self.last_valid_time = self._now()
        self.stale = False
        self._publish_feedforward(self.last_feedforward)
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
            period, due = 1.0 / rate, self.next_tf_stamp
            if not (due is None or stamp >= due or stamp < due - 2.0 * period):
                return
            on_grid = due is not None and due <= stamp < due + period
            self.next_tf_stamp = (due if on_grid else stamp) + period
        self._publish_tf(stamp_msg, loads)
        self._publish_markers(stamp_msg, loads)

    def _publish_markers(self, stamp_msg, loads: Loads) -> None:
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

    def _publish_tf(self, stamp_msg, loads: Loads) -> None:
        """Every moving body in its parent's frame, and every auxiliary body in the frame of
        the body it starts on (one message, refilled)."""
        fk = loads.placements
        bodies = self.tf_bodies
        translations = [fk.origin_parent[bodies]]
        rotations = [fk.rotation_parent[bodies]]
        segments = auxiliary_segments(self.model, fk)
        if segments:
            R_body = fk.rotation_world[self.tf_segment_bodies]          # (n_seg, 3, 3)
            start = np.stack([seg.start for seg in segments])
            rotation = np.stack([seg.rotation for seg in segments])
            O = fk.origin_world[self.tf_segment_bodies]
            translations.append(np.einsum("sji,sj->si", R_body, start - O))
            rotations.append(np.einsum("sji,sjk->sik", R_body, rotation))
        translations = np.concatenate(translations)
        xyzw = quaternions(np.concatenate(rotations))
        for msg, p, q in zip(self.msg_tf.transforms, translations, xyzw):
            set_transform(msg, stamp_msg, p, q)
        self.pub_tf.publish(self.msg_tf)

    # ------------------------------------------------------------------ watchdog, diagnostics
    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _watchdog(self) -> None:
        if self.model is None or self.last_valid_time is None:
            return
        if self._now() - self.last_valid_time <= self.p["stale_timeout"]:
            return
        self.stale = True
        if self.p["stale_policy"] == "zero" or self.last_x is None:
            fallback = np.zeros(len(self.feedforward_index))
        else:
            x = self.last_x
            state = resolve_state(self.model, x, np.zeros_like(x), np.zeros_like(x))
            loads = inverse_dynamics(self.model, state, gravity_only=True)
            fallback = self.actuator_efforts(loads)[self.feedforward_index]
        self._publish_feedforward(fallback)

    def _publish_diagnostics(self) -> None:
        n = self.stats["evaluated"]
        rate = 0.0
        if len(self.arrivals) >= 2 and self.arrivals[-1] > self.arrivals[0]:
            rate = (len(self.arrivals) - 1) / (self.arrivals[-1] - self.arrivals[0])
        age = None if self.last_valid_time is None else self._now() - self.last_valid_time
        values = {
            "model": self.model.name if self.model else "none",
            "input_rate_hz": f"{rate:.1f}",
            "evaluations": str(n),
            "compute_latency_mean_ms": f"{(self.stats['latency_sum'] / n * 1e3) if n else 0.0:.3f}",
            "compute_latency_max_ms": f"{self.stats['latency_max'] * 1e3:.3f}",
            "last_valid_input_age_s": "never" if age is None else f"{age:.3f}",
            "stale": str(self.stale),
            "acceleration_source": self.p["acceleration_source"],
        }
        for reason in REASONS + ("bad_model",):
            values[f"rejected_{reason}"] = str(self.rejected[reason])
        values["actuator_lengths_out_of_range"] = str(self.rejected["out_of_range"])
        if self.model is None:
            level, message = DiagnosticStatus.ERROR, "no model"
        elif self.stale or age is None:
            level, message = DiagnosticStatus.WARN, "inputs stale or missing"
        elif any(self.rejected[r] > self.rejected_reported[r] for r in REASONS if r != "throttled"):
            level, message = DiagnosticStatus.WARN, "inputs rejected in the last period"
        else:
            level, message = DiagnosticStatus.OK, "ok"
        self.rejected_reported = Counter(self.rejected)
        self.pub_diagnostics.publish(diagnostics(self.get_clock().now().to_msg(),
                                                 "charmie_dynamics: dynamics", level, message,
                                                 values))


def main(args=None) -> int:
    from .run import run_node
    return run_node(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
