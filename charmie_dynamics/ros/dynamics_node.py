"""The dynamics node: joint and actuator measurements in; TF, joint and actuator loads,
reaction wrenches, feedforward efforts and diagnostics out. Its parts, in ros/dynamics_parts/:

- ``control_path``: the inputs checked and evaluated, the feedforward published first and
  alone on the input's callback, the safe policy's watchdog (bad input counted by reason in
  /diagnostics, never published);
- ``monitoring``: the monitoring outputs (loads, wrenches, completed joint states, /tf,
  markers), built and published on a thread of their own, so that they never delay the next
  feedforward;
- ``model_intake``: the models after ``model_file`` (topic, robot_description), parsed on a
  worker thread and installed here; ``model_slot``: what one installed model is evaluated with;
- ``diagnostics_report``: /diagnostics, in every lifecycle state.

With ``feedforward_source: learned`` the feedforward is a network's
(``feedforward_network_file``, from ``charmie-dynamics learn``) wherever it lies within
``learned_feedforward_tolerance`` of the model's inverse dynamics for the same input, else the
model's (``learned_source``); a network for other inputs than the model's is refused.

``joint_name_map``/``joint_map_file`` give the robot's names, units (inputs and outputs),
drive units (efforts out) and links (frames). ``publish_tf``, ``publish_base_transform`` and
``base_frame`` leave robot_state_publisher and the base's odometry their frames
(``outputs.frame_plan``); the model's ``base:`` section turns its base body into REP 103's
base_link (TF, odometry); ``publish_solved_joint_states`` adds the solved coordinates to
``joint_states`` (the node skips its own message). A model with loops (``loops:``) is
evaluated by ``evaluators.loop_evaluator`` on the loops' independent coordinates (names of
dependent ones are accepted and ignored: the evaluator solves them).

Lifecycle: the node is an rclpy lifecycle node. Construction reads the parameters; configure
reads the model and compiles (or loads) the kernels, its progress on /diagnostics from a thread
of its own; activate turns the outputs on; deactivate (and shutdown from active, SIGINT and
SIGTERM through run.run_node) publishes ``deactivate_command`` once and turns them off; cleanup
releases what configure made. ``autostart`` configures and activates at start-up. Inputs
before the first model are counted as ``waiting_for_model``, inputs while inactive as
``inputs_while_inactive``: neither is a rejection. Every model change is logged at WARN with
what changed and counted.
"""
from __future__ import annotations

import sys
import threading
import time
from collections import Counter, deque
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional

from rcl_interfaces.msg import SetParametersResult
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from tf2_msgs.msg import TFMessage

from .. import jit
from ..evaluators.evaluator import Evaluator
from ..feedforward_network import LearnedFeedforward, LearnedFeedforwardError
from ..model import ModelError, read_model_file
from ..model.model import Model
from ..model.urdf import is_urdf, read_overlay
from ..resources import bundled_model
from .common import qos
from .common.clock_guard import ClockGuard
from .common.joint_map import read_joint_map
from .common.log_throttle import LogThrottle
from .common.messages import transform
from .common.model_source import urdf_as_document
from .common.model_updates import PreparedModel, model_change
from .common.outputs import OutputUnits, static_frames
from .common.parameter_types import DynamicsParameters
from .common.parameters import declare_parameters
from .dynamics_parts.control_path import ControlPath
from .dynamics_parts.diagnostics_report import DiagnosticsReport
from .dynamics_parts.dynamics_parameters import PARAMETERS, SAFETY_PARAMETERS, check_parameters
from .dynamics_parts.learned_source import LearnedSource
from .dynamics_parts.model_intake import ModelIntake, wants_sender
from .dynamics_parts.model_slot import ModelSlot, build_slot, slot_notes
from .dynamics_parts.monitoring import MonitoringPublisher


class DynamicsNode(LifecycleNode):
    """A managed node (module docstring, "Lifecycle"): the parameters are read at
    construction; configure reads the model and compiles the kernels, activate turns the
    outputs on, deactivate publishes ``deactivate_command`` once and turns them off."""

    def __init__(self, **kwargs) -> None:
        super().__init__("dynamics", **kwargs)
        self.clock_guard = ClockGuard(self)
        self.p = declare_parameters(self, PARAMETERS, DynamicsParameters,
                                    self._on_set_parameters)
        problem = check_parameters(self.p)
        if problem:
            raise ValueError(f"parameter {problem}")
        if not jit.ENABLED and not self.p.allow_slow_kernels:
            raise ValueError(jit.slow_kernels_refusal())
        # what configure makes, cleanup drops
        self.slot: Optional[ModelSlot] = None                # the installed model's
        self.control: Optional[ControlPath] = None
        self.intake: Optional[ModelIntake] = None
        self.monitoring: Optional[MonitoringPublisher] = None
        self.network: Optional[LearnedFeedforward] = None
        self.configured = self.active = False
        self.configuring_since: Optional[float] = None       # monotonic s, while configuring
        self.configure_error = ""
        self.autostarting = False
        self.finalized = False                                # after the shutdown transition
        # the counts of the process's life, in every state (diagnostics)
        self.events: Counter = Counter()                      # model, clock, lifecycle events
        self.rejected: Counter = Counter()
        self.received: Counter = Counter()                    # messages taken, by topic
        self.stats = {"evaluated": 0, "latency_sum": 0.0, "latency_max": 0.0}
        self.effort_flags: tuple[str, ...] = ()               # inputs beyond their effort limit
        self.arrivals: deque = deque(maxlen=200)
        self.ignored_names: set[str] = set()                  # warned once each
        # a WARN or ERROR line a flood can trigger: at most one every 2 s, each
        self.log_throttles = {site: LogThrottle(2.0) for site in
                              ("rejected", "monitoring", "diagnostics", "gravity_fallback",
                               "model_replaced", "model_refused")}
        # run.make_executor reads it before configure
        self.wants_sender = wants_sender(self.p.model_source, self.p.model_topic,
                                         self.p.model_publishers)
        self.diagnostics = DiagnosticsReport(self)
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
        reporter = threading.Thread(target=self.diagnostics.report_configuring,
                                    args=(self.configuring_done,), daemon=True,
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
        self.control.stamps.reset()
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
            self.control.publish_feedforward(self.control.last_command(command))
            self.events["deactivate_commands"] += 1
        self.get_logger().info(f"inactive: outputs off (deactivate_command {command})")

    def _release(self) -> None:
        """Back to unconfigured: the threads stopped, what configure created destroyed."""
        self.configured = self.active = False
        for worker in (getattr(self, "intake", None), getattr(self, "monitoring", None)):
            if worker is not None:
                worker.close()
        if getattr(self, "diagnostics", None) is not None:
            self.diagnostics.stop_thread()
        self.intake = self.monitoring = self.control = self.network = self.slot = None
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

    def _configure(self) -> None:
        """What configure builds (raises ModelError or ValueError with one line)."""
        p = self.p
        self.joint_map = read_joint_map(p.joint_name_map, p.joint_map_file, p.max_model_bytes)
        self.intake = ModelIntake(self, self._install)
        self.control = ControlPath(self)
        # the monitoring outputs (loads, wrenches, /tf, markers) on a worker thread, so they
        # never delay the feedforward
        self.monitoring = MonitoringPublisher(
            self, p.completed_joint_states_topic, self._on_monitoring_error,
            p.joint_states_topic if p.publish_solved_joint_states else "")
        self.pub_tf_static = self.create_publisher(TFMessage, "/tf_static", qos.LATCHED)
        # feedforward_source learned: a network file that cannot be read ends start-up; one
        # for other inputs than a model's is refused when that model is installed
        self.network = LearnedFeedforward.load(Path(p.feedforward_network_file)) \
            if p.feedforward_source == "learned" else None
        # a ModelError ends start-up: a bad model file, or an overlay file that cannot be read
        overlay = self.intake.overlay
        if p.model_file:
            model, text = read_model_file(p.model_file, p.max_model_bytes, overlay=overlay)
            prepared = self.intake.prepare(model, text, p.model_file)
            self._install(prepared)
            if is_urdf(text) and p.model_source == "topic":
                # the model loader publishes a URDF model file as its model document: the
                # same model, not an update to hold
                self.intake.updates.installed(prepared, urdf_as_document(
                    text, p.model_file, overlay, p.max_model_bytes))
        else:
            if overlay:
                read_overlay(overlay, p.max_model_bytes)
            # the model comes later, on a topic: its kernels are compiled (or loaded) now
            Evaluator(read_model_file(bundled_model())[0])
        self.intake.subscribe()
        self.control.subscribe()
        # the threads (model parses, monitoring outputs, /diagnostics) started last, so that
        # a configure error leaves no thread
        self.intake.start()
        self.monitoring.start()
        self.diagnostics.start_thread()

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
        if new.max_model_bytes != self.p.max_model_bytes and self.intake is not None \
                and self.intake.parser is not None:
            self.intake.parser.forget()     # a remembered outcome may differ under the new cap
        old, self.p = self.p, new
        if self.control is not None:        # configure builds its parts from self.p
            self.control.parameters_changed(old, new)
        return SetParametersResult(successful=True)

    # ------------------------------------------------------------------ model
    def _install(self, prepared: PreparedModel) -> None:
        """Use a prepared model from now on (executor thread); a change is logged at WARN."""
        model, old = prepared.model, self.model
        self.intake.updates.installed(prepared)
        for note in slot_notes(model, self.p):
            self.get_logger().warning(note)
        slot = build_slot(prepared, self.p, self.joint_map)
        slot = replace(slot, learned=self._learned_source(slot))
        self.control.reset()
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

    def _publish_static_frames(self) -> None:
        """The fixed bodies on /tf_static (``publish_tf: all``; otherwise they are in the
        URDF, robot_state_publisher's)."""
        if not self.slot.plan.static:
            return
        stamp = self.get_clock().now().to_msg()
        transforms = [transform(stamp, parent, child, R, p) for parent, child, R, p
                      in static_frames(self.model, self.slot.plan, self.p.world_frame)]
        self.pub_tf_static.publish(TFMessage(transforms=transforms))

    def _on_monitoring_error(self, exc: BaseException) -> None:
        """The monitoring thread's failure to publish one evaluation (counted as skipped)."""
        if self.log_throttles["monitoring"]():
            self.get_logger().error(f"monitoring outputs not published: {exc!r}")


def main(args=None) -> int:
    from .common.run import run_node
    return run_node(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())
