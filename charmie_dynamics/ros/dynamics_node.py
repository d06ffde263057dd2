"""The dynamics node: joint and actuator measurements in; TF, joint and actuator loads,
reaction wrenches, feedforward efforts and diagnostics out.

The feedforward is computed and published first and alone on the input's callback; the
monitoring outputs (loads, wrenches, completed joint states, /tf, markers) are handed to
``monitoring.MonitoringPublisher``, whose thread builds and publishes them, so that they
never delay the next feedforward.

Bad input never crashes the node and never becomes a published number: a message that fails
a check (see ``inputs.REASONS``) is counted by reason in /diagnostics and no load is
published for it. The feedforward then follows the safe policy: the last valid value is held
(republished by the watchdog, at most once a watchdog period) for at most ``stale_timeout``;
after that the node publishes, every watchdog period, either gravity compensation at the
last valid positions (``stale_policy: gravity``) or zeros (``stale_policy: zero``), until a
valid input arrives.

With ``feedforward_source: learned`` the feedforward is a network's
(``feedforward_network_file``, from ``charmie-dynamics learn``) wherever it lies within
``learned_feedforward_tolerance`` of the model's inverse dynamics for the same input, else the
model's (``learned_source``); a network for other inputs than the model's is refused.

Joint states as robots send them (``joint_state_policy: merge``): names the model does not
use are ignored and counted, partial messages from several publishers are merged joint by
joint (each joint keeps its value and stamp; the merged state's stamp is the newest, every
joint within ``max_joint_age`` of it); ``strict`` takes only messages holding exactly the
model's inputs. ``joint_name_map``/``joint_map_file`` give the robot's names, units (inputs
and outputs), drive units (efforts out) and links (frames). ``publish_tf``,
``publish_base_transform`` and ``base_frame`` leave robot_state_publisher and the base's
odometry their frames (``outputs.frame_plan``); the model's ``base:`` section turns its base
body into REP 103's base_link (TF, odometry); ``publish_solved_joint_states`` adds the
solved coordinates to ``joint_states`` (the node skips its own message).

A model with loops (``loops:``) is evaluated by ``evaluators.loop_evaluator``: its inputs are
the loops' independent coordinates (names of dependent ones are accepted and ignored: the
evaluator solves them, warm-started from its last solution); an input where the loops do
not close or are singular is rejected as ``loop_singular``, one farther than
``max_loop_jump`` from the last solution as ``loop_jump`` (one input's cost stays bounded).

Stamps are integer nanoseconds. The last stamp advances only when an input is evaluated; a
stamp more than ``max_stamp_lead`` ahead of the node clock is ``future_stamp``; a jump back
of the source clock (the node clock behind the last stamp by more than ``max_stamp_lead``, as
when /clock restarts, or inputs going back in time for longer than ``stale_timeout``) re-arms
the stamp checks with a WARN, counted as ``clock_jumps``.

Lifecycle: the node is an rclpy lifecycle node. Construction reads the parameters; configure
reads the model and compiles (or loads) the kernels, its progress on /diagnostics from a thread
of its own; activate turns the outputs on; deactivate (and shutdown from active, SIGINT and
SIGTERM through run.run_node) publishes ``deactivate_command`` once and turns them off; cleanup
releases what configure made. ``autostart`` configures and activates at start-up. Inputs
before the first model are counted as ``waiting_for_model``, inputs while inactive as
``inputs_while_inactive``: neither is a rejection.

Models come from ``model_file`` at configure, then by ``model_source``: texts on
``model_topic`` (``topic``), URDFs on ``robot_description`` built with ``overlay_file``
(``robot_description``), or nothing more (``file``). Texts are parsed on worker threads
(``model_updates.ModelParser``; a text over 128 KiB is first validated in a child process,
killed after 30 s: ``model.isolated``) and installed on the executor thread. With
``accept_model_updates: once`` only the first model (from ``model_file`` or the topic) is
installed; a later, different one is held as the
pending model until the ``~/accept_model_update`` service (std_srvs/Trigger) installs it.
Every model change is logged at WARN with what changed and counted.
"""
from __future__ import annotations

import functools
import math
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import ROSClock
from rclpy.impl.implementation_singleton import rclpy_implementation
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory

from .. import jit
from ..documents import bounded
from ..evaluators.evaluator import Evaluation, Evaluator, NonFiniteLoads
from ..evaluators.loop_evaluator import LoopJumpError, LoopSingularityError
from ..feedforward_network import LearnedFeedforward, LearnedFeedforwardError
from ..kinematics.indirect import MechanismRangeError
from ..model import ModelError, model_from_text, read_model_file
from ..model.isolated import check_in_child
from ..model.model import Model
from ..model.urdf import is_urdf, read_overlay
from ..resources import bundled_model
from .common import qos
from .common.clock_guard import ClockGuard
from .common.distro import sender_in_message_info
from .common.inputs import (AccelerationEstimator, Gathered, InputRejected, JointStateParser,
                            MessageLayout)
from .common.joint_map import read_joint_map
from .common.log_throttle import LogThrottle
from .common.messages import diagnostics, transform
from .common.model_source import model_from_description, urdf_as_document
from .common.model_updates import (Decision, ModelParser, ModelUpdates, PreparedModel,
                                   UpdateRefused, model_change, prepare_model, senders_problem)
from .common.odometry import base_from_odometry
from .common.outputs import OutputUnits, StampGrid, static_frames
from .common.parameter_types import DynamicsParameters
from .common.parameters import declare_parameters
from .common.stamps import StampGuard, to_nanoseconds
from .dynamics_parts.background import JobThread
from .dynamics_parts.cdr import JointStateArrays, JointStateReader, joint_state_arrays
from .dynamics_parts.dynamics_parameters import PARAMETERS, SAFETY_PARAMETERS, check_parameters
from .dynamics_parts.learned_source import LearnedSource
from .dynamics_parts.model_slot import ModelSlot, build_slot, slot_notes
from .dynamics_parts.monitoring import MonitoringPublisher
from .dynamics_parts.node_status import dynamics_status
from .dynamics_parts.reference import (Reference, check_serialized_reference, input_accelerations,
                                       read_reference)
from .dynamics_parts.stale_policy import Action, StalePolicy

MODEL_POLL_PERIOD = 0.02       # s: how soon a parsed model is installed
PUBLISHER_NAME_WAIT = 10.0     # s a model text waits for its publishers' names (model_publishers)
MAX_IGNORED_NAMES = 256        # distinct ignored joint names remembered (and warned about)


class DynamicsNode(LifecycleNode):
    """A managed node (module docstring, "Lifecycle"): the parameters are read at
    construction; configure reads the model and compiles the kernels, activate turns the
    outputs on, deactivate publishes ``deactivate_command`` once and turns them off."""

    def __init__(self, **kwargs) -> None:
        super().__init__("dynamics", **kwargs)
        self.clock_guard = ClockGuard(self)
        self.parser: Optional[ModelParser[PreparedModel]] = None   # configure starts them
        self.monitoring: Optional[MonitoringPublisher] = None
        self.status_thread: Optional[JobThread] = None
        self.p = declare_parameters(self, PARAMETERS, DynamicsParameters,
                                    self._on_set_parameters)
        problem = check_parameters(self.p)
        if problem:
            raise ValueError(f"parameter {problem}")
        if not jit.ENABLED and not self.p.allow_slow_kernels:
            raise ValueError(jit.slow_kernels_refusal())
        self.slot: Optional[ModelSlot] = None                # the installed model's
        self.configured = self.active = False
        self.configuring_since: Optional[float] = None       # monotonic s, while configuring
        self.configure_error = ""
        self.autostarting = False
        self.finalized = False                                # after the shutdown transition
        # the counts of the process's life, in every state (diagnostics)
        self.events: Counter = Counter()                      # model, clock, lifecycle events
        self.rejected: Counter = Counter()
        self.received: Counter = Counter()                    # messages taken, by topic
        self.reported: Counter = Counter()                    # counts at the last diagnostics
        self.stats = {"evaluated": 0, "latency_sum": 0.0, "latency_max": 0.0}
        self.effort_flags: tuple[str, ...] = ()               # inputs beyond their effort limit
        self.arrivals: deque = deque(maxlen=200)
        self.ignored_names: set[str] = set()                  # warned once each
        # a WARN or ERROR line a flood can trigger: at most one every 2 s, each
        self.log_throttles = {site: LogThrottle(2.0) for site in
                              ("rejected", "monitoring", "diagnostics", "gravity_fallback",
                               "model_replaced", "model_refused")}
        self.model_topic = {"topic": self.p.model_topic,
                            "robot_description": "robot_description",
                            "file": None}[self.p.model_source]
        self.model_publishers = [name for name in self.p.model_publishers if name]
        # the sender of each model text where rclpy names it (run.make_executor then takes
        # the single-threaded executor)
        self.wants_sender = bool(self.model_publishers and self.model_topic) \
            and sender_in_message_info()
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.OUTPUT)
        self.create_timer(self.p.diagnostics_period, self._publish_diagnostics)
        self.configured_entities: set = set()                # what cleanup destroys
        self.configuring_done = threading.Event()

    # ------------------------------------------------------------------ lifecycle
    def _entities(self) -> set:
        return set(self.subscriptions) | set(self.publishers) | set(self.timers) | \
            set(self.services) | set(self.clients)

    def autostart(self, interrupted: Callable[[], bool] = lambda: False) -> None:
        """``autostart``: configure and activate now (run.run_node calls this once the node
        is on its executor), unless ``interrupted()`` (a signal during the configure); a
        failed configure raises its one-line reason."""
        if not self.p.autostart:
            self.get_logger().info("autostart false: unconfigured, waiting for configure and "
                                   "activate (lifecycle)")
            return
        self.autostarting = True        # a failure is the process's one line, not logged too
        try:
            configured = self.trigger_configure() == TransitionCallbackReturn.SUCCESS
        finally:
            self.autostarting = False
        if not configured:
            raise ValueError(self.configure_error)
        if not interrupted() and self.trigger_activate() != TransitionCallbackReturn.SUCCESS:
            raise ValueError("activate failed after configure")

    def stop_safely(self) -> None:
        """SIGINT or SIGTERM (run.run_node): deactivate first, so the last command is safe."""
        if self.active:
            self.trigger_deactivate()

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Read the model and compile (or load) the kernels; /diagnostics says so meanwhile
        from a thread of its own (this runs on the executor's)."""
        self.configuring_since = time.monotonic()
        self.configuring_done.clear()
        reporter = threading.Thread(target=self._report_configuring, daemon=True,
                                    name="configuring")
        reporter.start()
        before = self._entities()
        try:
            self._configure()
            error = None
        except Exception as exc:        # noqa: BLE001 - rclpy would drop it without a word
            error = str(exc) if isinstance(exc, (ModelError, ValueError)) \
                else f"{type(exc).__name__}: {exc}"
        finally:
            # what cleanup releases: configure's own, not rclpy's made at other times (the
            # /clock subscription of a use_sim_time set at run time)
            self.configured_entities = self._entities() - before
            self.configuring_since = None
            self.configuring_done.set()
            reporter.join()
        self.configure_error = error or ""
        if error is not None:
            if not self.autostarting:
                self.get_logger().error(f"configure failed: {error}")
            self._release()
            return TransitionCallbackReturn.FAILURE
        self.configured = True
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        """Feedforward, loads and TF on, from the next valid input; the safe policy keeps
        the last valid input from before (stale by now: its gravity, as for inputs that
        stopped), so a deactivate without a new input still has its positions."""
        self.active = True
        self.stamps.reset()
        if self.model is not None:
            self._publish_static_frames()
        self.events["activations"] += 1
        self.get_logger().info("active: feedforward, loads and TF on")
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._go_inactive()
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        if self.active:
            self._go_inactive()
        self._release()
        self.finalized = True
        return TransitionCallbackReturn.SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self._release()
        return TransitionCallbackReturn.SUCCESS

    def _go_inactive(self) -> None:
        """Outputs off, after ``deactivate_command`` once (a forward effort controller
        applies the last command it got until another comes)."""
        self.active = False
        command = self.p.deactivate_command
        if command != "none" and self.model is not None:
            values = self.slot.feedforward.zeros()
            if command == "gravity" and self.safety.last_x is not None:
                try:
                    values = self._gravity_at_last_input()
                except Exception as exc:    # noqa: BLE001 - the last command goes out anyway
                    self.get_logger().error(f"deactivate: gravity compensation failed "
                                            f"({type(exc).__name__}: {exc}); publishing zeros")
            self._publish_feedforward(values)
            self.events["deactivate_commands"] += 1
        self.get_logger().info(f"inactive: outputs off (deactivate_command {command})")

    def _release(self) -> None:
        """Back to unconfigured: the threads stopped, what configure created destroyed."""
        self.configured = self.active = False
        for worker in (getattr(self, "parser", None), getattr(self, "monitoring", None),
                       getattr(self, "status_thread", None)):
            if worker is not None:
                worker.close()
        self.parser = self.monitoring = self.status_thread = None
        self.network = None
        self.slot = None
        # (a construction that failed made nothing of configure's; rclpy's shutdown still
        # destroys the node)
        made = getattr(self, "configured_entities", set())
        destroy = {**dict.fromkeys(self.subscriptions, self.destroy_subscription),
                   **dict.fromkeys(self.publishers, self.destroy_publisher),
                   **dict.fromkeys(self.timers, self.destroy_timer),
                   **dict.fromkeys(self.services, self.destroy_service),
                   **dict.fromkeys(self.clients, self.destroy_client)}
        for entity in made & set(destroy):
            destroy[entity](entity)
        self.configured_entities = set()

    def _report_configuring(self) -> None:
        while True:
            self._publish_diagnostics()
            if self.configuring_done.wait(min(self.p.diagnostics_period, 1.0)):
                return

    def _configure(self) -> None:
        """What configure builds (raises ModelError or ValueError with one line)."""
        self.overlay = self.p.overlay_file or None
        self.joint_map = read_joint_map(self.p.joint_name_map, self.p.joint_map_file,
                                        self.p.max_model_bytes)
        self.joint_source: dict[str, int] = {}               # joint -> its last message's names
        self.last_source: Optional[int] = None                # the names of the last message
        self.conflicting: set[str] = set()                    # joints of two publishers, warned
        self.updates = ModelUpdates(self.p.accept_model_updates)
        self.last_rejected: Optional[str] = None              # the text last logged as rejected
        # stamps and node times in integer nanoseconds
        self.stamps = StampGuard(int(self.p.max_stamp_lead * 1e9),
                                 int(self.p.stale_timeout * 1e9))
        self.tf_grid = StampGrid()
        self.output_grid = StampGrid()
        self.safety = StalePolicy(int(self.p.stale_timeout * 1e9), self.p.stale_policy)
        self.reference: Optional[Reference] = None
        # outputs: the feedforward here, on the input's callback; the monitoring outputs
        # (loads, wrenches, /tf, markers) on a worker thread, so they never delay it
        self.monitoring = MonitoringPublisher(
            self, self.p.completed_joint_states_topic, self._on_monitoring_error,
            self.p.joint_states_topic if self.p.publish_solved_joint_states else "")
        # /diagnostics built and published on a thread of their own (module background)
        self.status_thread = JobThread("diagnostics", self._on_diagnostics_error,
                                       self.context.ok)
        # the control path's messages as their bytes (module cdr): joint_states in, the
        # feedforward and its stamped copy out
        self.joint_state_reader = JointStateReader()
        self.pub_feedforward = self.create_publisher(Float64MultiArray,
                                                     self.p.feedforward_topic, qos.OUTPUT)
        self.pub_feedforward_state = self.create_publisher(
            JointState, self.p.feedforward_state_topic, qos.OUTPUT)
        self.pub_tf_static = self.create_publisher(TFMessage, "/tf_static", qos.LATCHED)
        # feedforward_source learned: a network file that cannot be read ends start-up; one
        # for other inputs than a model's is refused when that model is installed
        self.network = LearnedFeedforward.load(Path(self.p.feedforward_network_file)) \
            if self.p.feedforward_source == "learned" else None
        # a ModelError ends start-up: a bad model file, or an overlay file that cannot be read
        if self.p.model_file:
            model, text = read_model_file(self.p.model_file, self.p.max_model_bytes,
                                          overlay=self.overlay)
            prepared = self._prepare(model, text, self.p.model_file)
            self._install(prepared)
            if is_urdf(text) and self.p.model_source == "topic":
                # the model loader publishes a URDF model file as its model document: the
                # same model, not an update to hold
                self.updates.installed(prepared, urdf_as_document(
                    text, self.p.model_file, self.overlay, self.p.max_model_bytes))
        else:
            if self.overlay:
                read_overlay(self.overlay, self.p.max_model_bytes)
            # the model comes later, on a topic: its kernels are compiled (or loaded) now
            Evaluator(read_model_file(bundled_model())[0])
        # parsed models are installed by a timer that runs only while a parse is under way or
        # its result waits
        self.model_timer = self.create_timer(MODEL_POLL_PERIOD, self._collect_models)
        self.model_timer.cancel()
        self.model_awaiting: Optional[tuple[str, tuple, float, bool]] = None
        self.names_timer = self.create_timer(0.1, self._check_model_senders)
        self.names_timer.cancel()
        if self.model_topic:
            self.create_subscription(String, self.model_topic,
                                     self._on_model if self.wants_sender  # (msg, MessageInfo)
                                     else lambda msg: self._on_model(msg, None), qos.LATCHED)
        self.create_service(Trigger, "~/accept_model_update", self._on_accept_model_update)
        # inputs; actuator_states first: when both are waiting, the executor serves it first,
        # so an evaluation (triggered by joint_states) uses the newest actuator lengths
        self.create_subscription(JointState, self.p.actuator_states_topic,
                                 self._on_actuator_state, qos.NEWEST_SAMPLE)
        # merged: each message may carry other joints than the last (several publishers):
        # a queue, so that one publisher's message is not replaced by another's unread
        self.create_subscription(JointState, self.p.joint_states_topic, self._on_joint_state,
                                 qos.MERGED_SAMPLES if self.p.joint_state_policy == "merge"
                                 else qos.NEWEST_SAMPLE, raw=True)
        if self.p.odometry_topic:
            self.create_subscription(Odometry, self.p.odometry_topic, self._on_odometry,
                                     qos.NEWEST_SAMPLE)
        # raw: a reference's size is checked before it is deserialized
        self.create_subscription(JointTrajectory, self.p.reference_topic, self._on_reference,
                                 qos.OUTPUT, raw=True)
        self.create_timer(1.0 / self.p.watchdog_rate, self._watchdog)
        # models from a topic are parsed on this worker thread, and the monitoring outputs
        # published on theirs, started last so that a configure error leaves no thread
        self.parser = ModelParser(self._parse_model, self._check_large_model)
        self.monitoring.start()
        self.status_thread.start()

    def destroy_node(self) -> None:
        self._release()
        super().destroy_node()

    def _on_set_parameters(self, params) -> SetParametersResult:
        if self.p.safety_parameters_read_only:
            for param in params:
                if param.name in SAFETY_PARAMETERS and param.value != getattr(self.p, param.name):
                    return SetParametersResult(successful=False, reason=(
                        f"{param.name} is read-only (safety_parameters_read_only: true); "
                        "restart the node with the new value"))
        new = replace(self.p, **{param.name: param.value for param in params
                                 if param.name in PARAMETERS})
        problem = check_parameters(new)
        if problem:
            return SetParametersResult(successful=False, reason=problem)
        cutoff_changed = new.acceleration_filter_cutoff != self.p.acceleration_filter_cutoff
        if new.max_model_bytes != self.p.max_model_bytes and self.parser is not None:
            self.parser.forget()            # a remembered outcome may differ under the new cap
        self.p = new
        if not self.configured:             # configure builds its helpers from self.p
            return SetParametersResult(successful=True)
        if cutoff_changed and self.model is not None:   # takes effect now, with a fresh filter
            self.estimator = AccelerationEstimator(new.acceleration_filter_cutoff)
        self.stamps.max_lead_ns = int(new.max_stamp_lead * 1e9)
        self.stamps.rearm_after_ns = self.safety.timeout_ns = int(new.stale_timeout * 1e9)
        self.safety.policy = new.stale_policy
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ model
    def _prepare(self, model: Model, text: str, source: str) -> PreparedModel:
        return prepare_model(model, text, source, self.p.feedforward_joints,
                             self.p.wrench_joints, self.joint_map, self.p.max_loop_jump,
                             (self.p.world_frame, self.p.base_frame))

    def _parse_model(self, text: str) -> PreparedModel:
        """The worker thread's job: size cap, guarded parse, validation, buffers."""
        source, cap = self.model_topic, self.p.max_model_bytes
        if self.p.model_source == "robot_description":
            model = model_from_description(text, source, cap, self.overlay)
        else:
            model = model_from_text(text, source, cap)
        return self._prepare(model, text, source)

    def _check_large_model(self, text: str) -> None:
        """A large text's validation in a child process (the worker thread waits without the
        GIL; a refused or too slow text never costs this process its parse)."""
        overlay = self.overlay if self.p.model_source == "robot_description" else None
        check_in_child(text, self.model_topic, self.p.max_model_bytes, overlay)

    def _install(self, prepared: PreparedModel) -> None:
        """Use a prepared model from now on (executor thread); a change is logged at WARN."""
        model, old = prepared.model, self.model
        self.updates.installed(prepared)
        for note in slot_notes(model, self.p):
            self.get_logger().warning(note)
        slot = build_slot(prepared, self.p, self.joint_map)
        slot = replace(slot, learned=self._learned_source(slot))
        self.estimator = AccelerationEstimator(self.p.acceleration_filter_cutoff)
        self.last_source = None                  # the joints a message's names give may differ
        self.stamps.reset()
        self.tf_grid.reset()
        self.output_grid.reset()
        self.safety.forget()
        self.reference = None
        self.slot = slot
        hardware = self.joint_map.to_hardware
        self.monitoring.install(
            slot.plan, hardware(model.coordinate_names), hardware(slot.inputs),
            {body: model.body_index(body) for body in prepared.wrench_bodies},
            self.p.world_frame, slot.evaluator.result,
            OutputUnits.of(self.joint_map, model.coordinate_names, slot.inputs, slot.solved))
        if self.active:
            self._publish_static_frames()
        summary = f"model {model.name!r} from {prepared.source}: {model.n_bodies} bodies, " \
                  f"{len(slot.inputs)} inputs, {model.total_mass:.6g} kg"
        if old is None:
            self.get_logger().info(summary)
        else:
            self.events["model_changes"] += 1
            self.get_logger().warning(f"model changed ({model_change(old, model)}): {summary}")

    @property
    def model(self) -> Optional[Model]:
        """The installed model, None before the first and after cleanup."""
        slot = self.slot
        return None if slot is None else slot.model

    def _learned_source(self, slot: ModelSlot) -> Optional[LearnedSource]:
        """The network checked against the slot's model (``learned_source``), None with
        feedforward_source model. A network model_file's model refuses fails configure;
        refused by a model from the topic (after configure), the model's feedforward is
        published, said at ERROR and in /diagnostics."""
        if self.network is None:
            return None
        model = slot.model
        try:
            return LearnedSource.of(self.network, self.p.feedforward_network_file, slot.inputs,
                                    model.name, slot.feedforward.effort_limit,
                                    self.p.learned_feedforward_tolerance)
        except LearnedFeedforwardError as exc:
            if self.configuring_since is not None:
                raise
            self.events["learned_feedforward_refused"] += 1
            self.get_logger().error(f"learned feedforward refused for the model "
                                    f"{model.name!r}: {exc}; publishing the model's")
            return None

    def _on_model(self, msg: String, info: Optional[dict]) -> None:
        self.received["model"] += 1
        if self.model_publishers:
            # the sender where rclpy names it (Kilted's publisher_gid); else every publisher
            # on the topic now, which a sender that has left already escapes (Humble, Jazzy)
            sender = (info or {}).get("publisher_gid")
            senders = (tuple(sender["data"]),) if sender else tuple(self._model_senders())
            if self.model_awaiting is not None:        # replaced by the newest text: said
                self.rejected["model_publisher"] += 1
                if self.log_throttles["model_replaced"]():
                    self.get_logger().warning("a model text waiting for its publishers' names "
                                              "was replaced by a newer one")
            self.model_awaiting = (msg.data, senders, time.monotonic() + PUBLISHER_NAME_WAIT,
                                   bool(sender))
            self._check_model_senders()
            return
        self.parser.submit(msg.data)
        self.model_timer.reset()

    def _model_senders(self) -> dict:
        """The publishers on the model topic now: endpoint gid -> (namespace, node name)."""
        topic = self.resolve_topic_name(self.model_topic)
        return {tuple(info.endpoint_gid): (info.node_namespace, info.node_name)
                for info in self.get_publishers_info_by_topic(topic)}

    def _check_model_senders(self) -> None:
        """Take or refuse the text waiting for its publishers' names (model_publishers); while
        a name is not discovered yet, look again every 0.1 s, for PUBLISHER_NAME_WAIT s."""
        if self.model_awaiting is None:
            self.names_timer.cancel()
            return
        text, gids, deadline, named_by_message = self.model_awaiting
        now = self._model_senders()
        problem = senders_problem({gid: now.get(gid) for gid in gids},
                                  self.model_publishers, self.get_namespace(), named_by_message)
        if problem is None and time.monotonic() < deadline:
            self.names_timer.reset()
            return
        self.names_timer.cancel()
        self.model_awaiting = None
        if problem is None:
            problem = f"its publishers' node names were not discovered in {PUBLISHER_NAME_WAIT:g} s"
        if problem:
            self.rejected["model_publisher"] += 1
            if self.log_throttles["model_refused"]():
                self.get_logger().error(f"model text on {self.resolve_topic_name(self.model_topic)}"
                                        f" refused: {problem} (model_publishers)")
            return
        self.parser.submit(text)
        self.model_timer.reset()

    def _collect_models(self) -> None:
        """Install (or hold, or reject) what the worker finished; stop polling when idle."""
        for outcome in self.parser.results():
            decision = self.updates.decide(outcome)
            if decision is Decision.REJECT:
                self.rejected[decision.value] += 1
                if outcome.text != self.last_rejected:      # a flood of one text: one line
                    self.last_rejected = outcome.text
                    self.get_logger().error(f"model rejected, keeping the previous one: "
                                            f"{outcome.error}")
                continue
            self.events[decision.value] += 1
            if decision is Decision.INSTALL:
                self._install(outcome.value)
            elif decision is Decision.HOLD:
                self.get_logger().warning(
                    f"model update on {self.model_topic} held, not installed "
                    f"(accept_model_updates: once; call ~/accept_model_update to install it): "
                    f"{model_change(self.model, outcome.value.model)}")
        if self.parser.idle():
            self.model_timer.cancel()

    def _on_accept_model_update(self, request: Trigger.Request,
                                response: Trigger.Response) -> Trigger.Response:
        try:
            prepared = self.updates.accept_pending(self.p.accept_model_hash)
        except UpdateRefused as exc:
            response.success, response.message = False, str(exc)
            return response
        change = model_change(self.model, prepared.model)
        self._install(prepared)
        response.success = True
        response.message = f"installed the pending model from {prepared.source}: {change}"
        return response

    def _publish_static_frames(self) -> None:
        """The fixed bodies on /tf_static (``publish_tf: all``; otherwise they are in the
        URDF, robot_state_publisher's)."""
        if not self.slot.plan.static:
            return
        stamp = self.get_clock().now().to_msg()
        transforms = [transform(stamp, parent, child, R, p) for parent, child, R, p
                      in static_frames(self.model, self.slot.plan, self.p.world_frame)]
        self.pub_tf_static.publish(TFMessage(transforms=transforms))

    # ------------------------------------------------------------------ inputs
    def _idle_input(self) -> None:
        """An input before the first model or while inactive: counted apart, not a
        rejection (start-up, a managed stop)."""
        self.events["waiting_for_model" if self.model is None else "inputs_while_inactive"] += 1

    def _reject(self, reason: str, detail: str) -> None:
        self.rejected[reason] += 1
        if self.log_throttles["rejected"]():
            self.get_logger().warning(f"input rejected ({reason}): {detail}")
        self.safety.rejected()

    def _tolerances(self) -> tuple[float, float]:
        """The position tolerance (inf: positions unchecked) and the velocity tolerance."""
        return (self.p.position_limit_tolerance if self.p.check_position_limits
                else math.inf, self.p.velocity_limit_tolerance)

    def _store(self, layout: MessageLayout, p: np.ndarray, v: np.ndarray, now: int,
               stamp: Optional[int] = None, checked: bool = False) -> None:
        """Check measured values (model names and units) against the model's limits and
        keep them (``stamp``: each joint's, merge policy); ``checked``: values the compiled
        checks passed (:meth:`_read`), stored by them."""
        if checked:
            return self.slot.compiled_checks.store(layout, now * 1e-9, stamp)
        self.slot.limits.check_arrays(layout.names, p, v, *self._tolerances(),
                                      self.joint_map.hardware)
        self.slot.assembler.store(layout.names, p, v, now * 1e-9, stamp)

    def _gather(self, now: int) -> Gathered:
        """The stored inputs' merged stamp and values, by the compiled checks (``now``: the
        node clock, ns)."""
        return self.slot.compiled_checks.gather(now * 1e-9, self.p.stale_timeout,
                                                int(self.p.max_joint_age * 1e9))

    def _read(self, msg: JointStateArrays, parser: JointStateParser
              ) -> tuple[MessageLayout, np.ndarray, np.ndarray, bool]:
        """A joint_states or actuator_states message in the model's names and units, and
        whether the compiled checks passed its values (else the parser read them, and
        :meth:`_store` checks them for the rejection's text); names the model does not use
        are counted, and each is named once in a WARN."""
        layout = parser.read_layout(msg.name, msg.position, msg.velocity, msg.effort)
        values = self.slot.compiled_checks.check(layout, msg.position, msg.velocity,
                                                 *self._tolerances())
        if values is None:
            layout, p, v = parser.read(msg.name, msg.position, msg.velocity, msg.effort)
        else:
            p, v = values
        if layout.ignored:
            self.events["messages_with_ignored_names"] += 1
            # as the robot sent them (a solved joint's hardware name, not the model's)
            new = [n for n in self.joint_map.to_hardware(layout.ignored)
                   if n not in self.ignored_names]
            if new and len(self.ignored_names) < MAX_IGNORED_NAMES:
                self.ignored_names.update(new[:MAX_IGNORED_NAMES - len(self.ignored_names)])
                self.get_logger().warning(
                    f"ignoring joint names the model does not use: {', '.join(new[:20])}"
                    f"{' ...' if len(new) > 20 else ''} (joint_state_policy merge; map a name "
                    "with joint_name_map if it is one of the model's)")
        return layout, p, v, values is not None

    def _check_sources(self, names: Sequence[str], taken: Sequence[str]) -> None:
        """Merge: a joint that comes in messages of another set of names than last time is
        given by two publishers (two broadcasters claiming it, a stale driver beside the
        real one): their values alternate in the feedforward. Counted every time
        (``joint_source_conflicts``), each joint named once in a WARN."""
        source = hash(frozenset(names))          # its set: a reordering is no other
        if source == self.last_source:            # every joint it gives is already its own
            return
        self.last_source = source
        switched = [n for n in taken if self.joint_source.setdefault(n, source) != source]
        if not switched:
            return
        self.events["joint_source_conflicts"] += 1
        for name in switched:
            self.joint_source[name] = source
        new = [n for n in switched if n not in self.conflicting]
        if new and len(self.conflicting) < MAX_IGNORED_NAMES:
            self.conflicting.update(new)
            self.get_logger().warning(
                f"joints given by two publishers (messages of different joint sets): "
                f"{', '.join(self.joint_map.to_hardware(new[:20]))}; the newest value is used "
                "each time, so they alternate: give each joint one publisher")

    def _check_stamp(self, stamp: int, now: int) -> None:
        """The stamp checks; after a jump back of the clock, forget the old time base (rate
        limit, /tf grid, estimate) with a WARN."""
        jump = self.stamps.check(stamp, now)
        if jump is None:
            return
        self.events["clock_jumps"] += 1
        self.get_logger().warning(f"clock jumped back by {jump.back_s:.3f} s ({jump.why}): stamp "
                                  f"checks re-armed at {stamp * 1e-9:.9f} s")
        self.tf_grid.reset()
        self.output_grid.reset()
        self.slot.assembler.forget_stamps()      # the joints' stamps of the old time base
        self.estimator = AccelerationEstimator(self.p.acceleration_filter_cutoff)

    def _on_actuator_state(self, msg: JointState) -> None:
        self.received["actuator_states"] += 1
        if self.model is None or not self.active:
            return self._idle_input()
        now = self._now()
        try:
            stamp = to_nanoseconds(msg.header.stamp)
            self.stamps.check_lead(stamp, now)
            layout, p, v, checked = self._read(joint_state_arrays(msg),
                                               self.slot.actuator_state_parser)
            self._store(layout, p, v, now,
                        stamp if self.p.joint_state_policy == "merge" else None, checked)
        except InputRejected as exc:
            self._reject(exc.reason, f"actuator_states: {exc.detail}")

    def _on_odometry(self, msg: Odometry) -> None:
        self.received["odometry"] += 1
        if self.model is None or not self.active:
            return self._idle_input()
        pose, twist = msg.pose.pose, msg.twist.twist
        o = pose.orientation
        now = self._now()
        if not self.slot.assembler.base_coordinates:
            self.events["odometry_unused"] += 1          # the model has no base: section
            return
        try:
            self.stamps.check_lead(to_nanoseconds(msg.header.stamp), now)
            positions, velocities = base_from_odometry(
                self.model.base, pose.position.x, pose.position.y, (o.x, o.y, o.z, o.w),
                (twist.linear.x, twist.linear.y), twist.angular.z)
            self.slot.limits.check(positions, velocities, *self._tolerances(),
                                   self.joint_map.hardware)
            self.slot.assembler.update(positions, velocities, now * 1e-9)
        except InputRejected as exc:
            self._reject(exc.reason, f"odometry: {exc.detail}")

    def _on_reference(self, data: bytes) -> None:
        """A new desired trajectory (serialized: too many points are refused before it is
        deserialized); a stamp of 0 means "starts now" (JointTrajectory's convention): the
        stamp of the newest joint_states. A bad one is rejected and the previous reference
        stays."""
        self.received["reference"] += 1
        if self.model is None or not self.active:
            return self._idle_input()
        names, cap = self.slot.evaluator.input_names, self.p.max_reference_points
        try:
            check_serialized_reference(data, len(names), cap)
            try:
                msg = deserialize_message(data, JointTrajectory)
            except rclpy_implementation.RMWError:        # bytes from a hostile writer
                raise InputRejected("invalid_value", "reference trajectory: not a "
                                                     "JointTrajectory message") from None
            t0 = to_nanoseconds(msg.header.stamp)
            if t0 == 0:
                t0 = self.stamps.last if self.stamps.last is not None else self._now()
            # the robot's names and units, as on joint_states
            self.reference = read_reference(
                self.joint_map.message_to_model(msg.joint_names),
                [(to_nanoseconds(p.time_from_start, "time_from_start"), p.accelerations)
                 for p in msg.points], t0, names, self.slot.limits, cap, self.joint_map.scale)
        except InputRejected as exc:
            self._reject(exc.reason, exc.detail)

    def _on_joint_state(self, message: Union[bytes, JointState]) -> None:
        """A joint_states message: its bytes (the subscription is raw: no message object is
        built) or a message object (a caller in this process)."""
        received = time.perf_counter()
        try:
            msg = self.joint_state_reader(message) if isinstance(message, bytes) \
                else joint_state_arrays(message)
        except InputRejected as exc:              # bytes that are not a JointState
            self.received["joint_states"] += 1
            if self.model is None or not self.active:
                return self._idle_input()
            return self._reject(exc.reason, exc.detail)
        slot = self.slot
        if slot is not None and slot.solved_names and msg.name \
                and slot.solved_names.issuperset(msg.name):
            # the node's own solved joints (publish_solved_joint_states): not an input
            self.events["solved_joint_states_skipped"] += 1
            return
        self.received["joint_states"] += 1
        if slot is None or not self.active:
            return self._idle_input()
        now = self._now()
        try:
            stamp = to_nanoseconds(msg)
            layout, p, v, checked = self._read(msg, slot.joint_state_parser)
            names = layout.names
            if self.p.joint_state_policy == "merge":
                if not names:                    # only joints the model does not use
                    self.events["joint_states_without_model_joints"] += 1
                    return
                # each joint keeps its own stamp; the merged state's is the newest. A message
                # older in every joint is time_backwards, unless the clock jumped back
                self.stamps.check_lead(stamp, now)
                self._check_sources(msg.name, names)
                if not (slot.compiled_checks.anything_new(layout, stamp) if checked
                        else slot.assembler.anything_new(names, stamp)):
                    self._check_stamp(stamp, now)
                self._store(layout, p, v, now, stamp, checked)
                gathered = self._gather(now)
                stamp = slot.assembler.merged_stamp(int(self.p.max_joint_age * 1e9)) \
                    if gathered.stamp is None else gathered.stamp
                self._check_stamp(stamp, now)
            else:
                self._check_stamp(stamp, now)
                self._store(layout, p, v, now, checked=checked)
                gathered = self._gather(now)
            self.arrivals.append(received)
            self.stamps.check_rate(stamp, self.p.publish_rate_limit)
            # actuator lengths (and odometry) may come on their own topics: not older than
            # the stale timeout
            x, xd = slot.assembler.assemble(now * 1e-9, self.p.stale_timeout) \
                if gathered.inputs is None else gathered.inputs
        except InputRejected as exc:
            return self._reject(exc.reason, exc.detail)
        xdd = input_accelerations(self.p.acceleration_source, stamp, xd, self.estimator,
                                  self.reference)
        try:
            result = slot.evaluator(x, xd, xdd, self.p.gravity_only)
        except NonFiniteLoads:
            return self._reject("non_finite", "the loads of this input are not finite "
                                              "(inputs too large)")
        except MechanismRangeError as exc:       # a balancer's lever cannot reach
            return self._reject("out_of_range", str(exc))
        except LoopJumpError as exc:             # followed max_loop_jump toward it, no further
            return self._reject("loop_jump", str(exc))
        except LoopSingularityError as exc:      # loops that do not close, or singular
            return self._reject("loop_singular", str(exc))
        beyond = self._dependent_beyond_limits(result)
        if beyond:
            slot.evaluator.refuse_last()    # the watchdog's gravity starts from the last valid
            return self._reject("dependent_beyond_limits", beyond)
        self.stamps.accept(stamp)                # advances on accepted inputs only
        self._publish(stamp, now, x, xd, xdd, result)
        latency = time.perf_counter() - received
        self.stats["evaluated"] += 1
        self.stats["latency_sum"] += latency
        self.stats["latency_max"] = max(self.stats["latency_max"], latency)

    def _dependent_beyond_limits(self, result: Evaluation) -> str:
        """A model with loops and ``check_position_limits``: the first dependent (solved)
        coordinate beyond its joint limits by more than ``position_limit_tolerance``, in
        words ("" if none, or for a tree)."""
        chain = getattr(self.slot.evaluator, "chain", None)
        if chain is None or not self.p.check_position_limits:
            return ""
        lower, upper = self.model.compiled.coordinate_limits
        tolerance, q = self.p.position_limit_tolerance, result.state.q
        for c in chain.dependent:
            if not lower[c] - tolerance <= q[c] <= upper[c] + tolerance:
                return (f"the dependent coordinate {self.model.coordinate_names[c]} solved at "
                        f"{q[c]:.6g} is beyond its joint limits [{lower[c]:.6g}, "
                        f"{upper[c]:.6g}] by more than {tolerance:g}")
        return ""

    # ------------------------------------------------------------------ outputs
    def _publish_feedforward(self, values: np.ndarray, stamp: Optional[int] = None) -> None:
        """The feedforward, then its stamped, named copy (``stamp``: the evaluated input's,
        ns; the watchdog's values: the node clock's), both published as their bytes."""
        self.pub_feedforward.publish(self.slot.feedforward_values(values))
        self.pub_feedforward_state.publish(self.slot.feedforward_state(
            self._now() if stamp is None else stamp, values))

    def _publish(self, stamp: int, now: int, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray,
                 result: Evaluation) -> None:
        """The feedforward (every evaluation, first and alone: a controller waits for it; the
        network's with feedforward_source learned, where the model's allows it); then an
        evaluation due on the ``output_rate`` grid (loads, wrenches) or the ``tf_rate`` one
        (/tf, completed joint states, markers) is handed to the monitoring thread. ``now``:
        the node clock when the input arrived (ns)."""
        efforts = result.efforts
        if self.slot.learned is not None:
            # gravity_only: the model's efforts are those at rest, and so are the network's
            rates = (np.zeros_like(xd), np.zeros_like(xdd)) if self.p.gravity_only \
                else (xd, xdd)
            efforts, learned = self.slot.learned(x, *rates, efforts)
            if not learned:
                self.events["learned_feedforward_replaced"] += 1
        self.safety.accepted(now, self.slot.feedforward(efforts, self.p.clamp_feedforward), x)
        self._publish_feedforward(self.safety.last_feedforward, stamp)
        beyond = self.slot.feedforward.beyond_limits(efforts)
        if beyond:                            # published, and flagged in /diagnostics
            self.events["efforts_beyond_limits"] += 1
            self.effort_flags = beyond
        loads = self.output_grid.due(stamp, self.p.output_rate)
        tf = self.tf_grid.due(stamp, self.p.tf_rate)
        if loads or tf:
            self.monitoring.submit(stamp, loads, tf, x, xd, result, self.p.marker_scale)

    def _on_monitoring_error(self, exc: BaseException) -> None:
        """The monitoring thread's failure to publish one evaluation (counted as skipped)."""
        if self.log_throttles["monitoring"]():
            self.get_logger().error(f"monitoring outputs not published: {exc!r}")

    def _on_diagnostics_error(self, exc: BaseException) -> None:
        if self.log_throttles["diagnostics"]():
            self.get_logger().error(f"diagnostics not published: {exc!r}")

    # ------------------------------------------------------------------ watchdog, diagnostics
    def _now(self) -> int:
        """The node clock (ROS time: /clock with use_sim_time), integer nanoseconds; while no
        /clock drives it, the system clock it reads, read directly (rclpy's ``now()`` builds
        a Time object: 5-7 us a call, once per input)."""
        clock: ROSClock = self.get_clock()        # a node's clock, on every distro
        return clock.now().nanoseconds if clock.ros_time_is_active else time.time_ns()

    def _watchdog(self) -> None:
        if self.model is None or not self.active:
            return
        action = self.safety.tick(self._now())
        if action is Action.HOLD:
            self._publish_feedforward(self.safety.last_feedforward)
        elif action is Action.GRAVITY:
            self._publish_feedforward(self._gravity_at_last_input())
        elif action is Action.ZERO:
            self._publish_feedforward(self.slot.feedforward.zeros())

    def _gravity_at_last_input(self) -> np.ndarray:
        """The feedforward of gravity compensation at the last valid input's positions."""
        try:
            gravity = self.slot.evaluator.gravity(self.safety.last_x).efforts
        except (LoopSingularityError, NonFiniteLoads, MechanismRangeError) as exc:
            # a loop model solves it from the last valid input's own solution, which
            # should not fail; should it all the same: zeros, not a number not computed
            self.events["gravity_fallback_zero"] += 1
            if self.log_throttles["gravity_fallback"]():
                self.get_logger().warning(f"gravity compensation at the last valid input "
                                          f"failed ({exc}); publishing zeros")
            return self.slot.feedforward.zeros()
        return self.slot.feedforward(gravity, self.p.clamp_feedforward)

    def _publish_diagnostics(self) -> None:
        """The status (node_status) with the lifecycle's state; before configure completes
        (also from the configuring thread, while the executor's is busy compiling) the
        counts so far, the state first in the message. Once configured, this thread only
        copies the counters; the status thread computes the status, builds the message and
        publishes it (module background)."""
        configured, parser, slot = self.configured, self.parser, self.slot
        model, learned = (None, None) if slot is None else (slot.model, slot.learned)
        last = self.safety.last_valid if configured else None
        pending = self.updates.pending if configured else None
        if configured:
            self.events["monitoring_skipped"] = self.monitoring.skipped
        self.events["clock_rejected"] = self.clock_guard.rejected
        counts = dict(
            rejected=Counter(self.rejected), received=Counter(self.received),
            events=Counter(self.events), stats=dict(self.stats),
            model=model.name if model else None,
            pending=pending.model.name if pending else None,
            pending_hash=pending.hash if pending else None,
            parsing=parser is not None and not parser.idle(),
            superseded=parser.superseded if parser else 0,
            repeated=parser.repeated if parser else 0,
            arrivals=tuple(self.arrivals),
            last_valid_age=None if last is None else (self._now() - last) * 1e-9,
            stale=configured and self.safety.stale,
            acceleration_source=self.p.acceleration_source,
            effort_flags=tuple(self.effort_flags), ignored_names=sorted(self.ignored_names),
            feedforward_source=self.p.feedforward_source if learned is not None or
            model is None or self.p.feedforward_source == "model" else "learned (refused)",
            learned_difference=None if learned is None else learned.largest_difference)
        since = self.configuring_since
        if since is not None:
            state = "configuring"
        elif self.finalized:
            state = "finalized"
        elif not configured:
            state = "unconfigured"
        else:
            state = "active" if self.active else "inactive"
        publish = functools.partial(self._publish_status, self.get_clock().now().to_msg(),
                                    state, since, self.configure_error, counts)
        if configured and self.status_thread is not None:
            self.status_thread.submit(publish)
        else:
            publish()

    def _publish_status(self, stamp, state: str, since: Optional[float],
                        configure_error: str, counts: dict) -> None:
        """Publish the status of ``counts`` (``_publish_diagnostics``' copies) in lifecycle
        ``state``; the only writer of ``reported``."""
        status = dynamics_status(reported=self.reported, **counts)
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
        self.pub_diagnostics.publish(diagnostics(stamp, "charmie_dynamics: dynamics", level,
                                                 message, {"lifecycle": state, **status.values}))


def main(args=None) -> int:
    from .common.run import run_node
    return run_node(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
