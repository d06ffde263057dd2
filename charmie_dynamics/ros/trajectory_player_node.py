"""The trajectory player (sim mode): publishes joint_states and actuator_states, and the whole
motion as a reference trajectory, from a motion of the papers or a CSV file.

With ``publish_clock`` the player owns simulated time: it publishes /clock (starting at 0 and
advancing with the motion) and stamps its messages with it; the other nodes then run with
``use_sim_time: true``.
"""
from __future__ import annotations

import sys

import numpy as np
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..evaluators.evaluator import Evaluator
from ..model import load_model
from ..resources import bundled_model
from ..trajectories import MOTIONS, from_csv
from . import qos
from .messages import duration_from_seconds, joint_state, stamp_from_seconds
from .model_updates import check_node_model
from .param_spec import Param
from .parameters import declare_parameters

PARAMETERS = {
    "model_file": Param(str(bundled_model()), "Model whose inputs are played"),
    "motion": Param("validation", f"Motion of the papers: {', '.join(sorted(MOTIONS))}"),
    "trajectory_file": Param("", "Trajectory CSV (README format); overrides motion"),
    "rate": Param(100.0, "Publishing rate, Hz", True, 1.0, 10000.0),
    "loop": Param(False, "Start again at the end"),
    "publish_reference": Param(True, "Publish the motion on reference_trajectory (with accelerations)"),
    "publish_clock": Param(False, "Publish /clock from the motion's time (simulated time)"),
    "reference_efforts": Param(True, "Fill each reference point's effort with the inverse dynamics "
                               "along the motion (N m, N: the actuators' axial forces), as a "
                               "joint_trajectory_controller takes an effort feed-forward"),
}


class TrajectoryPlayerNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("trajectory_player", **kwargs)
        p = declare_parameters(self, PARAMETERS)
        if p["motion"] not in MOTIONS and not p["trajectory_file"]:
            raise ValueError(f"parameter motion {p['motion']!r}: expected one of {', '.join(MOTIONS)}")
        self.p = p
        self.model = load_model(p["model_file"])
        check_node_model(self.model, p["model_file"], "the trajectory player publishes")
        self.traj = from_csv(self.model, p["trajectory_file"]) if p["trajectory_file"] \
            else MOTIONS[p["motion"]](self.model, 0.001)
        names = self.model.input_names
        actuators = set(self.model.actuator_names)
        self.actuator_slots = [k for k, n in enumerate(names) if n in actuators]
        self.pub_joints = self.create_publisher(JointState, "joint_states", qos.SENSOR)
        self.pub_actuators = self.create_publisher(JointState, "actuator_states", qos.SENSOR)
        self.pub_reference = self.create_publisher(JointTrajectory, "reference_trajectory", qos.OUTPUT)
        self.pub_clock = self.create_publisher(Clock, "/clock", 10) if p["publish_clock"] else None
        self.duration = float(self.traj.t[-1] - self.traj.t[0])
        self.start = None
        self.sim_time = 0.0
        self.cycles = 0
        self.finished = False
        self.create_timer(1.0 / p["rate"], self._tick)

    def _publish_reference(self, t0: float) -> None:
        msg = JointTrajectory()
        msg.header.stamp = stamp_from_seconds(t0)
        msg.joint_names = list(self.model.input_names)
        step = max(1, len(self.traj.t) // 500)        # about 500 points per motion
        evaluate = Evaluator(self.model) if self.p["reference_efforts"] else None
        for k in range(0, len(self.traj.t), step):
            point = JointTrajectoryPoint()
            point.positions = [float(v) for v in self.traj.x[k]]
            point.velocities = [float(v) for v in self.traj.xd[k]]
            point.accelerations = [float(v) for v in self.traj.xdd[k]]
            if evaluate is not None:   # the motion's own inverse dynamics, input order
                point.effort = [float(v) for v in evaluate(self.traj.x[k], self.traj.xd[k],
                                                           self.traj.xdd[k]).efforts]
            dt = float(self.traj.t[k] - self.traj.t[0])
            point.time_from_start = duration_from_seconds(dt)
            msg.points.append(point)
        self.pub_reference.publish(msg)

    def _tick(self) -> None:
        if self.finished:
            return
        if self.pub_clock is not None:      # simulated time advances one period per tick
            self.sim_time += 1.0 / self.p["rate"]
            now = self.sim_time
            self.pub_clock.publish(Clock(clock=stamp_from_seconds(now)))
        else:
            now = self.get_clock().now().nanoseconds * 1e-9
        if self.start is None:
            self.start = now
            if self.p["publish_reference"]:
                self._publish_reference(now)
        elapsed = now - self.start
        if elapsed > self.duration:
            if not self.p["loop"]:
                self.finished = True
                self.get_logger().info(f"motion finished after {self.duration:.2f} s")
                return
            self.cycles += 1
            self.start = now
            elapsed = 0.0
            if self.p["publish_reference"]:
                self._publish_reference(now)
        t = self.traj.t[0] + elapsed
        x = np.array([np.interp(t, self.traj.t, col) for col in self.traj.x.T])
        xd = np.array([np.interp(t, self.traj.t, col) for col in self.traj.xd.T])
        stamp = stamp_from_seconds(now)
        names = self.model.input_names
        # joint_states carries every input, the actuator lengths included, so that each
        # evaluation of the dynamics node uses the lengths of the same sample; actuator_states
        # carries them too, for consumers of the robot's actuator topic
        self.pub_actuators.publish(joint_state(stamp, [names[k] for k in self.actuator_slots],
                                               x[self.actuator_slots], xd[self.actuator_slots], []))
        self.pub_joints.publish(joint_state(stamp, names, x, xd, []))


def main(args=None) -> int:
    from .run import run_node
    return run_node(TrajectoryPlayerNode, args)


if __name__ == "__main__":
    sys.exit(main())
