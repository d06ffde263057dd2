"""The trajectory player (sim mode): publishes joint_states and actuator_states, and the whole
motion as a reference trajectory, from a motion of the papers or a CSV file.

With ``publish_clock`` the player owns simulated time: it publishes /clock (starting at 0 and
advancing with the motion) and stamps its messages with it; the other nodes then run with
``use_sim_time: true``.

A model with loops is played on its independent coordinates (trajectories.motion_inputs):
``motion`` is one of trajectories.LOOP_REFERENCES ("": ``seed002-eq35``, the five-bar's
bundled motion), a ``trajectory_file`` gives those columns only. joint_states carries every
coordinate: the dependent ones solved from the constraints by the compiled embedding
(mechanisms/closed_chains/compiled.py), warm-started from the last sample (the independent
ones alone, with a throttled warning, where the loops do not close); the reference
trajectory and its efforts (closed-chain inverse dynamics) are over the independent ones,
and its points carry no efforts, with a warning, where one of them cannot be evaluated.
"""
from __future__ import annotations

import sys

import numpy as np
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..evaluators.loop_evaluator import EffortsUnavailable, efforts_along, evaluator_for
from ..mechanisms.closed_chains import ClosedChain, LoopSingularityError
from ..mechanisms.closed_chains.compiled import Embedding, embedding_of
from ..model import load_model
from ..resources import bundled_model
from ..trajectories import LOOP_REFERENCES, MOTIONS, from_csv, motion_inputs, node_motion
from .common import qos
from .common.clock_guard import ClockGuard
from .common.joint_map import read_joint_map
from .common.log_throttle import LogThrottle
from .common.messages import duration_from_seconds, float_array, joint_state, stamp_from_seconds
from .common.model_updates import check_node_model
from .common.param_spec import Param
from .common.parameter_types import TrajectoryPlayerParameters
from .common.parameters import declare_parameters

#: old name -> new name ("loop" is the closed chains' word alone)
RENAMED = {"loop": "repeat"}

PARAMETERS = {
    "model_file": Param(str(bundled_model()), "Model whose inputs are played"),
    "motion": Param("", f"Motion of the papers: {', '.join(sorted(MOTIONS))}; a model with loops: "
                        f"{', '.join(LOOP_REFERENCES)}; \"\": validation, seed002-eq35 with loops"),
    "trajectory_file": Param("", "Trajectory CSV (README format); overrides motion"),
    "rate": Param(100.0, "Publishing rate, Hz", True, 1.0, 10000.0),
    "repeat": Param(False, "Start again at the end"),
    "publish_reference": Param(
        True, "Publish the motion on reference_trajectory (with accelerations)"),
    "publish_clock": Param(False, "Publish /clock from the motion's time (simulated time)"),
    "reference_efforts": Param(True, "Fill each reference point's effort with the inverse dynamics "
                               "along the motion (N m, N: the actuators' axial forces), as a "
                               "joint_trajectory_controller takes an effort feed-forward"),
    "controller_topic": Param("", "Also publish the reference as a joint_trajectory_controller "
                              "takes it, on this topic (e.g. /arm_controller/joint_trajectory): "
                              "controller_joints only, hardware names and units, each point's "
                              "effort the inverse dynamics (drive units); \"\": not published"),
    "controller_joints": Param([""], "The controller's joints (hardware names, as in its "
                               "parameters), each one the motion plays; empty: every input"),
    "controller_efforts": Param(True, "Fill controller_topic's points' efforts (a "
                                "joint_trajectory_controller with an effort command interface "
                                "takes them; one with only position or velocity interfaces "
                                "refuses a trajectory that has them: set false)"),
    "joint_map_file": Param("", "The robot's names and units (config/joint_map_example.yaml) "
                            "for controller_topic"),
}


class TrajectoryPlayerNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("trajectory_player", **kwargs)
        self.log_throttle = LogThrottle(2.0)
        self.clock_guard = ClockGuard(self)
        p = declare_parameters(self, PARAMETERS, TrajectoryPlayerParameters, renamed=RENAMED)
        known = ("",) + tuple(MOTIONS) + tuple(LOOP_REFERENCES)
        if p.motion not in known and not p.trajectory_file:
            raise ValueError(f"parameter motion {p.motion!r}: expected one of "
                             f"{', '.join(known[1:])}")
        self.p = p
        self.model = m = load_model(p.model_file)
        check_node_model(m, p.model_file, "the trajectory player publishes")
        self.names = names = list(motion_inputs(m))
        if p.trajectory_file:
            traj = from_csv(m, p.trajectory_file, columns=names)
            cols = [m.input_names.index(n) for n in names]
            self.traj = type(traj)(traj.t, traj.x[:, cols], traj.xd[:, cols], traj.xdd[:, cols])
        else:
            default = "validation" if m.loops is None else "seed002-eq35"
            self.traj = node_motion(m, p.motion or default, 0.001)
        self.embedding: Embedding | None = None
        if m.loops is not None:
            self.embedding = embedding_of(ClosedChain.build(m))
            self.last: np.ndarray | None = None       # the last solution: the warm start
        actuators = set(m.actuator_names)
        self.actuator_slots = [k for k, n in enumerate(names) if n in actuators]
        self.pub_joints = self.create_publisher(JointState, "joint_states", qos.SENSOR)
        self.pub_actuators = self.create_publisher(JointState, "actuator_states", qos.SENSOR)
        self.pub_reference = self.create_publisher(JointTrajectory, "reference_trajectory",
                                                   qos.OUTPUT)
        self.pub_clock = self.create_publisher(Clock, "/clock", 10) if p.publish_clock else None
        self.controller = self._controller_columns(p) if p.controller_topic else None
        self.pub_controller = self.create_publisher(
            JointTrajectory, p.controller_topic, qos.OUTPUT) if self.controller else None
        self.reference_points: list[JointTrajectoryPoint] | None = None   # built once
        self.controller_points: list[JointTrajectoryPoint] | None = None
        self.duration = float(self.traj.t[-1] - self.traj.t[0])
        self.start = None
        self.sim_time = 0.0
        self.cycles = 0
        self.finished = False
        self.create_timer(1.0 / p.rate, self._tick)

    def _controller_columns(self, p: dict) -> tuple[list[str], list[int], np.ndarray,
                                                     np.ndarray, np.ndarray]:
        """The controller's joint names (hardware) and, per joint, its column among the
        played inputs, scale, offset and effort factor (``controller_topic``); a joint the
        motion does not play raises ValueError (start-up: one line)."""
        joint_map = read_joint_map([], p.joint_map_file)
        joints = [j for j in p.controller_joints if j] or joint_map.to_hardware(self.names)
        model_names = joint_map.to_model(joints)
        missing = [j for j, n in zip(joints, model_names) if n not in self.names]
        if missing:
            raise ValueError(f"parameter controller_joints: {', '.join(missing)}: not inputs the "
                             f"motion plays (as the robot names them: "
                             f"{', '.join(joint_map.to_hardware(self.names))})")
        scale, offset = joint_map.position_factors(model_names) or (np.ones(len(joints)),
                                                                np.zeros(len(joints)))
        factor = joint_map.effort_out(model_names)
        return (joints, [self.names.index(n) for n in model_names], scale, offset,
                np.ones(len(joints)) if factor is None else factor)

    def _publish_reference(self, t0: float) -> None:
        if self.reference_points is None:
            self.reference_points, self.controller_points = self._reference_points()
        stamp = stamp_from_seconds(t0)
        self.pub_reference.publish(JointTrajectory(header=Header(stamp=stamp),
                                                   joint_names=list(self.names),
                                                   points=self.reference_points))
        if self.controller is not None:
            self.pub_controller.publish(JointTrajectory(header=Header(stamp=stamp),
                                                        joint_names=self.controller[0],
                                                        points=self.controller_points))

    def _reference_points(self) -> tuple[list[JointTrajectoryPoint],
                                         list[JointTrajectoryPoint]]:
        """About 500 points of the motion, with the motion's own inverse dynamics as their
        efforts (input order; ``reference_efforts``), and the same points as the controller
        takes them (``controller_topic``: its joints, in hardware units). Where one point's
        efforts cannot be evaluated (loops that do not close there, a balancer out of reach,
        loads not finite) no point carries an effort, with a warning: a controller takes a
        trajectory's efforts for every point or for none."""
        samples = range(0, len(self.traj.t), max(1, len(self.traj.t) // 500))
        efforts: np.ndarray | list = []
        if self.p.reference_efforts:
            rows = list(samples)
            try:
                efforts = efforts_along(evaluator_for(self.model), self.traj.x[rows],
                                        self.traj.xd[rows], self.traj.xdd[rows])
            except EffortsUnavailable as exc:
                self.get_logger().warning(
                    f"reference trajectory published without efforts: the motion's inverse "
                    f"dynamics at t = {self.traj.t[rows[exc.index]]:.6g} s failed ({exc})")

        def point(k: int, row: int, columns: slice | list[int], scale=1.0, offset=0.0,
                  factor=1.0) -> JointTrajectoryPoint:
            traj = self.traj
            out = JointTrajectoryPoint(
                positions=float_array((traj.x[k, columns] - offset) / scale),
                velocities=float_array(traj.xd[k, columns] / scale),
                accelerations=float_array(traj.xdd[k, columns] / scale),
                time_from_start=duration_from_seconds(float(traj.t[k] - traj.t[0])))
            if len(efforts):
                out.effort = float_array(factor * efforts[row][columns])
            return out
        reference = [point(k, row, slice(None)) for row, k in enumerate(samples)]
        controller = []
        if self.controller is not None:
            _, columns, scale, offset, factor = self.controller
            controller = [point(k, row, columns, scale, offset, factor)
                          for row, k in enumerate(samples)]
            if not self.p.controller_efforts:
                for out in controller:
                    out.effort = []
        return reference, controller

    def _tick(self) -> None:
        if self.finished:
            return
        if self.pub_clock is not None:      # simulated time advances one period per tick
            self.sim_time += 1.0 / self.p.rate
            now = self.sim_time
            self.pub_clock.publish(Clock(clock=stamp_from_seconds(now)))
        else:
            now = self.get_clock().now().nanoseconds * 1e-9
        if self.start is None:
            self.start = now
            if self.p.publish_reference:
                self._publish_reference(now)
        elapsed = now - self.start
        if elapsed > self.duration:
            if not self.p.repeat:
                self.finished = True
                self.get_logger().info(f"motion finished after {self.duration:.2f} s")
                return
            self.cycles += 1
            self.start = now
            elapsed = 0.0
            if self.embedding is not None:
                self.last = None            # the motion's start: solved from the assembly again
            if self.p.publish_reference:
                self._publish_reference(now)
        t = self.traj.t[0] + elapsed
        x = np.array([np.interp(t, self.traj.t, col) for col in self.traj.x.T])
        xd = np.array([np.interp(t, self.traj.t, col) for col in self.traj.xd.T])
        stamp = stamp_from_seconds(now)
        names = self.names
        # joint_states carries every input, the actuator lengths included, so that each
        # evaluation of the dynamics node uses the lengths of the same sample; actuator_states
        # carries them too, for consumers of the robot's actuator topic
        self.pub_actuators.publish(joint_state(stamp, [names[k] for k in self.actuator_slots],
                                               x[self.actuator_slots], xd[self.actuator_slots], []))
        if self.embedding is not None:
            names, x, xd = self._coordinates(x, xd)
        self.pub_joints.publish(joint_state(stamp, names, x, xd, []))

    def _coordinates(self, x: np.ndarray, xd: np.ndarray
                     ) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Every coordinate of a model with loops at the independent ones (module docstring)."""
        try:
            b = self.embedding.state(x, xd, np.zeros_like(x), self.last)
        except LoopSingularityError as exc:
            if self.log_throttle():
                self.get_logger().warning(f"the loops do not close at the motion's sample: "
                                          f"{exc}; publishing the independent coordinates only")
            return self.names, x, xd
        self.last = b.q.copy()
        return list(self.model.coordinate_names), b.q.copy(), b.qd.copy()


def main(args=None) -> int:
    from .common.run import run_node
    return run_node(TrajectoryPlayerNode, args)


if __name__ == "__main__":
    sys.exit(main())
