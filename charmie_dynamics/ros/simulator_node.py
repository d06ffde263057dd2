"""The simulator node (sim mode ``dynamic``): CHARMIE moved by its actuators through the
forward dynamics, in actuator space.

Every period (1 / ``rate``) the node integrates ``round(1 / (rate dt))`` steps of ``dt``
(``integrator`` rk4 or euler, ``fd_method`` aba or cholesky; joint stops of integrate.py).
With ``fd_method: aba`` the steps of a period run in one call of the compiled step
(simulation/actuated_step.py, equal to integrate.step); the rare step it hands back (an impact
at a joint stop, an actuator leaving its stroke, a non-finite state) and every step of
``fd_method: cholesky`` run in Python through integrate.step. Control:

* ``control: effort``: the latest std_msgs/Float64MultiArray on ``command_topic`` in
  ``command_joints`` order (the order of the dynamics node's feedforward), held over the
  period (zero-order hold); inputs not in the command get 0. With ``wait_for_command`` the
  simulation does not advance before the first command (the robot is held still), so a
  controller can start in time; a command older than ``command_timeout`` (simulated time)
  is dropped: zero efforts, as with the motors switched off. A non-finite state stops the
  simulation (reported in /diagnostics).
* ``control: pd``: follows ``motion`` by computed torque, the package's own inverse
  dynamics (in actuator space, friction included) at the current state for the reference
  acceleration plus a PD correction: u = H_x (x''_ref + kp e + kd e') + b_x + f(x'),
  e = x_ref - x; the gains are accelerations (1/s^2, 1/s), the same for every input. This
  controller runs at every integration step: the model's light wrist joints (no motor
  inertia is modelled) have modes too fast for a 100 Hz zero-order hold.

Efforts beyond an actuator's limit are clamped and counted (saturation events, in
/diagnostics); the joint efforts are tau = (u - friction) / J (dynamics/actuation.py). The
Coulomb term is smoothed below the velocity 2 dt coulomb (H_x^-1)_ii (1 / (H_x^-1)_ii the
effective inertia of input i), the steepest slope the explicit step damps stably: a
stand-in for the static friction the model does not have (the pd controller compensates the
same friction law).
Publishes joint_states (every input, the actuator lengths included), actuator_states
(lengths, rates and applied forces), and /clock from the simulated time when
``publish_clock`` (run the other nodes with use_sim_time). A malformed command (wrong size,
NaN, a magnitude above 1e6 N or N m) is rejected and counted; the previous command stays.

A model with loops (``loops:`` section) is simulated on its independent coordinates
(simulation/loop_step.py: RK4 of the embedded equations whatever ``integrator`` and
``fd_method`` say, the dependent coordinates solved from the constraints at every stage to
the Newton tolerance, the independent coordinates' stops; a model with limits on a dependent
coordinate is refused at start-up). The commands and efforts are at the independent
coordinates; ``control: pd`` is computed torque on the embedded equations,
tau = M (x''_ref + kp e + kd e') + G^T (b + H g), held over a step; friction is not applied.
``motion`` ("": the model's default) is one of trajectories.LOOP_REFERENCES: by default
``seed002-free-fall``, eq. 36's start at rest (unactuated with ``control: effort`` and no
command: the free fall). joint_states carries every coordinate, dependent ones included,
with the efforts at the independent ones (0 at the others); no actuator_states. A state where
the loops do not close or are singular (the free fall reaches one) stops the simulation at
the last valid state (an ERROR in /diagnostics), as an actuator past its stroke does.

``~/reset`` (std_srvs/Trigger) restarts the simulation from the motion's start at rest, the
assembled state the node started from, at simulated time 0 (/clock goes back; the
dynamics node re-arms its stamp checks): the way out of a stop, without a restart of the
node. The last command is forgotten (``wait_for_command`` holds the robot still again).
"""
from __future__ import annotations

import sys
import time
from typing import Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger

from ..dynamics.actuation import actuator_space, friction, input_jacobians, input_space_dynamics
from ..dynamics.forward import METHODS
from ..kinematics import resolve_state
from ..kinematics.indirect import MechanismRangeError
from ..kinematics.limits import PLAUSIBLE
from ..mechanisms.closed_chains import LoopAssemblyError, LoopSingularityError
from ..model import load_model
from ..resources import bundled_model
from ..simulation.actuated_step import (HeldStepData, compiled_step_reason, held_efforts,
                                        held_input_steps)
from ..simulation.integrate import INTEGRATORS, check_within_limits, step
from ..simulation.loop_step import LoopStepData, loop_step
from ..trajectories import LOOP_REFERENCES, MOTIONS, node_motion
from .common import qos
from .common.clock_guard import ClockGuard
from .common.log_throttle import LogThrottle
from .common.messages import diagnostics, joint_state, stamp_from_seconds
from .common.model_updates import check_node_model
from .common.param_spec import Param
from .common.parameter_types import SimulatorParameters
from .common.parameters import declare_parameters

CONTROLS = ("effort", "pd")
PARAMETERS = {
    "model_file": Param(str(bundled_model()), "Model to simulate"),
    "rate": Param(100.0, "Hz: publishing rate and period of the effort commands' zero-order hold",
                  True, 1.0, 1000.0),
    "dt": Param(0.001, "Integration step, s (at most 1/rate)", True, 1e-6, 0.1),
    "integrator": Param("euler", f"{' | '.join(INTEGRATORS)} (euler: semi-implicit, 4x cheaper "
                        "than rk4)"),
    "fd_method": Param("aba", f"Forward dynamics: {' | '.join(METHODS)}"),
    "control": Param("effort", "effort (commands on command_topic) | pd (follow motion)"),
    "command_topic": Param(
        "effort_commands", "std_msgs/Float64MultiArray of actuator efforts", topic=True),
    "command_joints": Param([""], "Order of the commands (model inputs); empty: all inputs"),
    "wait_for_command": Param(True, "control=effort: hold the robot still until the first command"),
    "command_timeout": Param(
        0.1, "control=effort: simulated seconds a command is applied without a newer one; after "
        "that the efforts are zero (motors off)", True, 0.001, 60.0),
    "motion": Param("", f"Start state, and the reference of control=pd: {', '.join(MOTIONS)}; "
                        f"a model with loops: {', '.join(LOOP_REFERENCES)}; \"\": validation, "
                        "seed002-free-fall with loops"),
    "kp": Param(100.0, "control=pd: proportional gain, 1/s^2", True, 0.0, 1e6),
    "kd": Param(20.0, "control=pd: derivative gain, 1/s", True, 0.0, 1e4),
    "publish_clock": Param(True, "Publish /clock from the simulated time"),
}


class SimulatorNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("simulator", **kwargs)
        self.log_throttle = LogThrottle(2.0)
        self.clock_guard = ClockGuard(self)
        p = declare_parameters(self, PARAMETERS, SimulatorParameters)
        problems = [      # the ranges of each number are declared (and checked by rclpy)
            (p.dt > 1.0 / p.rate, f"dt {p.dt!r}: expected at most 1/rate"),
            (p.integrator not in INTEGRATORS,
             f"integrator {p.integrator!r}: expected {INTEGRATORS}"),
            (p.fd_method not in METHODS, f"fd_method {p.fd_method!r}: expected {METHODS}"),
            (p.control not in CONTROLS, f"control {p.control!r}: expected {CONTROLS}"),
            (p.motion not in ("",) + tuple(MOTIONS) + tuple(LOOP_REFERENCES),
             f"motion {p.motion!r}: expected {tuple(MOTIONS) + tuple(LOOP_REFERENCES)}"),
        ]
        for bad, message in problems:
            if bad:
                raise ValueError(f"parameter {message}")
        self.p = p
        self.model = load_model(p.model_file)
        m = self.model
        check_node_model(m, p.model_file, "the simulator publishes")
        self.loop: Optional[LoopStepData] = None
        if m.loops is not None:
            try:
                self.loop = LoopStepData(m)
            except LoopAssemblyError as exc:
                raise ValueError(f"{p.model_file}: {exc}") from None
        inputs = list(m.input_names) if self.loop is None else list(self.loop.names)
        self.inputs = inputs
        names = [j for j in p.command_joints if j] or inputs
        unknown = [j for j in names if j not in inputs]
        if unknown:
            raise ValueError(f"parameter command_joints: {', '.join(unknown)} not in the model's "
                             f"inputs ({', '.join(inputs)})")
        self.command_index = [inputs.index(j) for j in names]
        self.space = actuator_space(m)
        default = "validation" if self.loop is None else "seed002-free-fall"
        self.reference = node_motion(m, p.motion or default, 0.001)
        x0 = self.reference.x[0]
        self.t = 0.0
        self.command: Optional[np.ndarray] = None
        self.command_time = 0.0
        self.command_timeouts = 0                # periods run with zero effort (no command)
        self.failed = ""                         # why the simulation stopped, if it did
        self.effort = np.zeros(len(inputs))
        self.saturation_events = 0
        self.saturated_now: list[str] = []
        self.rejected_commands = 0
        self.substeps = max(1, int(round(1.0 / (p.rate * p.dt))))
        if self.loop is not None:
            self._start_loops(x0)
        else:
            self._start_tree(x0)
        self.wall_start = time.monotonic()
        self.pub_joints = self.create_publisher(JointState, "joint_states", qos.SENSOR)
        self.pub_actuators = self.create_publisher(JointState, "actuator_states", qos.SENSOR)
        self.pub_clock = self.create_publisher(Clock, "/clock", 10) if p.publish_clock else None
        self.pub_diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", qos.OUTPUT)
        if p.control == "effort":
            self.create_subscription(Float64MultiArray, p.command_topic, self._on_command,
                                     qos.OUTPUT)
        self.create_timer(1.0 / p.rate, self._tick)
        self.create_timer(1.0, self._publish_diagnostics)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.x0 = x0
        self._publish_state()

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        """Back to the motion's start at rest, at simulated time 0 (module docstring)."""
        was = self.failed
        if self.loop is not None:
            self._start_loops(self.x0)       # it assembled at start-up: it assembles again
        else:
            self._start_tree(self.x0)
        self.t, self.failed, self.command, self.command_time = 0.0, "", None, 0.0
        self.wall_start = time.monotonic()       # the real-time factor from here
        self.effort = np.zeros(len(self.inputs))
        self.saturated_now = []
        self._publish_state()
        response.success = True
        response.message = "simulation reset to the motion's start at rest" + \
            (f" (it had stopped: {was})" if was else "")
        self.get_logger().info(response.message)
        return response

    def _start_loops(self, x0: np.ndarray) -> None:
        """The loops' state at the motion's start, solved from the assembled configuration
        (the model's branch); the effort limits of the independent coordinates."""
        m, loop = self.model, self.loop
        try:
            loop.reset(x0, np.zeros_like(x0))
        except LoopSingularityError as exc:
            raise ValueError(f"{self.p.model_file}: the loops do not close at the motion's "
                             f"start: {exc}") from None
        self.q, self.qd = loop.q, loop.qd
        slots = [m.input_names.index(n) for n in loop.names]
        self.loop_limit = self.space.effort_limit[slots]

    def _start_tree(self, x0: np.ndarray) -> None:
        m, p = self.model, self.p
        state0 = resolve_state(m, x0, np.zeros_like(x0), np.zeros_like(x0))
        check_within_limits(m, state0.q)
        self.q, self.qd = state0.q, state0.qd
        # the compiled step, where it can run the model and fd_method (else the Python step)
        reason = compiled_step_reason(m, p.fd_method)
        self.held_step = HeldStepData(m) if reason is None else None
        if reason is not None:
            self.get_logger().info(f"integrating in Python, not compiled: {reason}")

    def _on_command(self, msg: Float64MultiArray) -> None:
        data = list(msg.data)
        # 1e300 was taken where the model gives no effort limit, and stopped the simulation
        # as "a singular configuration"
        bad = next((k for k, v in enumerate(data) if not abs(v) <= PLAUSIBLE), None)
        if len(data) != len(self.command_index) or bad is not None:
            self.rejected_commands += 1
            why = (f"{len(data)} values, expected {len(self.command_index)}"
                   if len(data) != len(self.command_index) else
                   f"{self.inputs[self.command_index[bad]]} = {data[bad]:g}, expected a finite "
                   f"magnitude of at most {PLAUSIBLE:g} (N or N m)")
            if self.log_throttle():
                self.get_logger().warning(f"command rejected: {why}")
            return
        command = np.zeros(len(self.inputs))
        command[self.command_index] = data
        self.command = command
        self.command_time = self.t

    def _pd_effort(self, Hx: np.ndarray, b: np.ndarray, xd: np.ndarray,
                   smoothing: np.ndarray) -> np.ndarray:
        """Computed torque: the package's inverse dynamics at the current state for the
        reference acceleration plus the PD correction, u = H_x a + b_x + f(x')."""
        ref = self.reference
        k = min(int(round(self.t / 0.001)), len(ref.t) - 1)
        x, _, _ = input_jacobians(self.model, self.q)
        a = ref.xdd[k] + self.p.kp * (ref.x[k] - x) + self.p.kd * (ref.xd[k] - xd)
        return Hx @ a + b + friction(self.space, xd, smoothing)

    def _efforts(self) -> tuple[Optional[np.ndarray], np.ndarray]:
        """The effort to apply now (None: hold still) and the friction smoothing velocities."""
        Hx, b, xd = input_space_dynamics(self.model, self.q, self.qd)
        # the effective inertia of each input with the others free: 1 / (H_x^-1)_ii
        smoothing = np.maximum(2.0 * self.p.dt * self.space.coulomb
                               * np.diag(np.linalg.inv(Hx)), 1e-9)
        if self.p.control == "pd":
            return self._pd_effort(Hx, b, xd, smoothing), smoothing
        if self.command is None:
            return (None if self.p.wait_for_command else np.zeros_like(xd)), smoothing
        if self.t - self.command_time > self.p.command_timeout:
            self.command_timeouts += 1
            return np.zeros_like(xd), smoothing
        return self.command, smoothing

    def _loop_effort(self) -> Optional[np.ndarray]:
        """The efforts at the independent coordinates now (None: hold still): the command,
        or computed torque on the embedded equations (module docstring)."""
        loop, p = self.loop, self.p
        if p.control == "pd":
            ref = self.reference
            k = min(int(round(self.t / 0.001)), len(ref.t) - 1)
            a = ref.xdd[k] + p.kp * (ref.x[k] - loop.x) + p.kd * (ref.xd[k] - loop.v)
            return loop.M @ a + loop.bias
        if self.command is None:
            return None if p.wait_for_command else np.zeros(len(self.inputs))
        if self.t - self.command_time > p.command_timeout:
            self.command_timeouts += 1
            return np.zeros(len(self.inputs))
        return self.command

    def _loop_tick(self) -> None:
        """One period of a model with loops: ``substeps`` RK4 steps of loop_step.py."""
        limit = self.loop_limit
        for _ in range(self.substeps):
            wanted = self._loop_effort()
            if wanted is None:                 # held still until commanded
                break
            over = np.abs(wanted) > limit
            self.saturated_now = [n for n, o in zip(self.inputs, over) if o]
            self.saturation_events += int(over.any())
            self.effort = np.clip(wanted, -limit, limit)
            try:
                loop_step(self.loop, self.effort, self.p.dt)
            except (LoopSingularityError, np.linalg.LinAlgError) as exc:
                self.failed = f"{exc} at t = {self.t:.3f} s"
            if not self.failed and not (np.all(np.isfinite(self.loop.q))
                                        and np.all(np.isfinite(self.loop.qd))):
                self.failed = f"the state became non-finite at t = {self.t:.3f} s"
            if self.failed:
                self.get_logger().error(f"simulation stopped: {self.failed}")
                break
            self.q, self.qd = self.loop.q, self.loop.qd
            self.t += self.p.dt
        self._publish_state()

    def _tick(self) -> None:
        if self.failed:
            return
        if self.loop is not None:
            self._loop_tick()
            return
        wanted, smoothing = self._efforts()
        k = 0
        while k < self.substeps and wanted is not None:   # None: held still until commanded
            if k > 0 and self.p.control == "pd":
                wanted, smoothing = self._efforts()   # the pd controller runs every step
            limit = self.space.effort_limit
            clamped = np.clip(wanted, -limit, limit)
            over = np.abs(wanted) > limit
            self.saturated_now = [n for n, o in zip(self.model.input_names, over) if o]
            self.effort = clamped
            # effort control holds the command over the period; pd changes it every step
            run = self.substeps - k if self.p.control == "effort" else 1
            done = self._compiled_steps(clamped, smoothing, run)
            self.saturation_events += int(over.any()) * done
            k += done
            if done == run:
                continue
            # the step the compiled path hands back (an impact at a stop, an error): in Python
            self.saturation_events += int(over.any())
            try:
                q, qd = step(self.model, self.t, self.q, self.qd,
                             held_efforts(self.model, clamped, smoothing), self.p.dt,
                             self.p.integrator, dynamics=self.p.fd_method)
                input_jacobians(self.model, q)     # raises if an actuator left its stroke
            except (MechanismRangeError, np.linalg.LinAlgError) as exc:
                # e.g. an actuator driven past its stroke: the last valid state stays
                q = qd = None
                self.failed = f"{exc} at t = {self.t:.3f} s"
            if q is not None and not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
                self.failed = f"the state became non-finite at t = {self.t:.3f} s"
            if self.failed:
                self.get_logger().error(f"simulation stopped: {self.failed}")
                break
            self.q, self.qd = q, qd
            self.t += self.p.dt
            k += 1
        self._publish_state()

    def _compiled_steps(self, effort: np.ndarray, smoothing: np.ndarray, steps: int) -> int:
        """Up to ``steps`` steps by the compiled step (simulation/actuated_step.py) from the
        current state, which they advance; how many were taken (0 where it cannot run)."""
        if self.held_step is None:
            return 0
        done = held_input_steps(self.model, self.q, self.qd, effort, smoothing, steps,
                                self.p.dt, self.p.integrator, data=self.held_step)
        if done:
            self.q, self.qd = (a.copy() for a in self.held_step.state)
            for _ in range(done):                  # the same sum as one step at a time
                self.t += self.p.dt
        return done

    def _publish_state(self) -> None:
        m = self.model
        stamp = stamp_from_seconds(self.t) if self.pub_clock is not None else \
            self.get_clock().now().to_msg()
        if self.pub_clock is not None:
            self.pub_clock.publish(Clock(clock=stamp))
        if self.loop is not None:      # every coordinate; the efforts at the independent ones
            effort = np.zeros(m.n_coordinates)
            effort[self.loop.chain.independent] = self.effort
            self.pub_joints.publish(joint_state(stamp, m.coordinate_names, self.q, self.qd,
                                                effort))
            return
        x, J, _ = input_jacobians(m, self.q)
        xd = self.qd / J
        slots = [m.input_names.index(a) for a in m.actuator_names]
        self.pub_actuators.publish(joint_state(stamp, m.actuator_names, x[slots], xd[slots],
                                               self.effort[slots]))
        self.pub_joints.publish(joint_state(stamp, m.input_names, x, xd, self.effort))

    def _publish_diagnostics(self) -> None:
        wall = time.monotonic() - self.wall_start
        values = {"simulated_time_s": f"{self.t:.3f}",
                  "real_time_factor": f"{self.t / wall:.3f}" if wall > 0 else "0",
                  # integration steps in which an actuator was saturated
                  "saturation_events": str(self.saturation_events),
                  "command_timeouts": str(self.command_timeouts),
                  "saturated_now": ", ".join(self.saturated_now) or "none",
                  "rejected_commands": str(self.rejected_commands),
                  "control": self.p.control}
        level = DiagnosticStatus.WARN if self.saturated_now else DiagnosticStatus.OK
        message = ("saturated: " + ", ".join(self.saturated_now)) if self.saturated_now else "ok"
        if self.failed:
            level, message = DiagnosticStatus.ERROR, f"stopped: {self.failed}"
        self.pub_diagnostics.publish(diagnostics(self.get_clock().now().to_msg(),
                                                 "charmie_dynamics: simulator", level, message,
                                                 values))


def main(args=None) -> int:
    from .common.run import run_node
    return run_node(SimulatorNode, args)


if __name__ == "__main__":
    sys.exit(main())
