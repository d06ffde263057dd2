"""A FollowJointTrajectory proxy that fills each point's effort with the model's inverse
dynamics, in front of a joint_trajectory_controller's action (optional; needs control_msgs).

A client (MoveIt, a script) sends its goal to this node's action (``action_name``, default
``~/follow_joint_trajectory``) instead of the controller's. For every point of the goal's
trajectory the node evaluates the model's inverse dynamics (the evaluator the trajectory
player uses: evaluators.loop_evaluator.efforts_along) at the point's positions, velocities
and accelerations of the trajectory's joints, converted from the robot's names and units by
the joint map (``joint_name_map``/``joint_map_file``, as the dynamics node's: model value =
scale * value + offset, rates scale * value), writes the efforts of the trajectory's joints
into ``points[].effort`` in the drive's unit (the map's ``effort_scale``), and sends the goal
so filled to the controller's action (``controller_action``). The controller's feedback,
result and status are relayed to the client, and a client's cancel to the controller.

The model's inputs the trajectory does not carry are held still at their latest values on
``joint_states`` (velocity and acceleration zero), read as the dynamics node reads them under
its merge policy (partial messages from several publishers, joint by joint, names the model
does not use ignored; inputs.read_robot_joint_state and StateAssembler). A planar base's
coordinates, which a robot gives on odometry rather than joint_states, are taken as 0 where
joint_states does not carry them: the base standing still (its pose does not change the
efforts under vertical gravity; its motion would, and the proxy does not know it). Missing
velocities or accelerations of a point are taken as 0.

A goal that cannot be filled never reaches the controller: it is accepted and at once
aborted with ``error_code`` INVALID_JOINTS (a joint the model does not have under the joint
map, a dependent coordinate of a closed loop, a joint named twice) or INVALID_GOAL (no
points, more than ``max_points``, a point without positions, arrays of the wrong length,
values that are not finite, a multi-DOF trajectory, no joint_states yet, a point whose
inverse dynamics fails) and the reason in ``error_string``, also logged: a ROS 2 action's
rejection carries no text, an aborted goal's result does. The node keeps serving. The
controller's action must be discovered when a goal comes: one sent before (in the first
second or so after both start) is aborted "not available". The proxy waits on the
controller's result without a timeout of its own: a controller that dies mid-goal leaves the
client's goal waiting (cancel it), as a client talking to that controller directly would.

A model with closed loops: its inputs are its independent coordinates (the dynamics node's
``motion_inputs``); the trajectory's joints must be among them, a dependent coordinate is
refused, and the efforts are the closed-chain inverse dynamics' at the independent
coordinates (each point solved from the last), as the trajectory player's.
"""
from __future__ import annotations

import sys

import numpy as np
from action_msgs.msg import GoalStatus
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.expand_topic_name import expand_topic_name
from rclpy.node import Node
from sensor_msgs.msg import JointState

from ..evaluators.loop_evaluator import EffortsUnavailable, efforts_along, evaluator_for
from ..model import load_model
from ..resources import bundled_model
from .common import qos
from .common.inputs import InputRejected, StateAssembler, read_robot_joint_state
from .common.joint_map import read_joint_map
from .common.log_throttle import LogThrottle
from .common.messages import float_array
from .common.model_updates import check_node_model
from .common.param_spec import Param
from .common.parameter_types import TrajectoryEffortProxyParameters
from .common.parameters import declare_parameters
from .common.stamps import to_nanoseconds

Result = FollowJointTrajectory.Result

PARAMETERS = {
    "model_file": Param(str(bundled_model()), "Model whose inverse dynamics fills the efforts"),
    "action_name": Param("~/follow_joint_trajectory", "The FollowJointTrajectory action this "
                         "node serves (point a client here instead of at the controller)",
                         topic=True),
    "controller_action": Param("/joint_trajectory_controller/follow_joint_trajectory",
                               "The joint_trajectory_controller's FollowJointTrajectory action "
                               "that receives the goals with their efforts filled", topic=True),
    "joint_states_topic": Param("joint_states", "sensor_msgs/JointState: the inputs a "
                                "trajectory does not carry are held at their latest values "
                                "(partial messages merged joint by joint)", topic=True),
    "joint_name_map": Param([""], "MODEL=HARDWARE entries, as the dynamics node's: the "
                            "robot's names of the model's inputs (trajectory and joint_states)"),
    "joint_map_file": Param("", "The robot's names and units (names, scale, offset, "
                            "effort_scale), as the dynamics node's; empty: none"),
    "max_points": Param(100000, "Most points a goal's trajectory may have (more: refused)",
                        True, 1, 10000000),
}


class GoalRefused(ValueError):
    """A goal that is not sent to the controller: its result's code and text."""

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code


def _finite(values) -> bool:
    return bool(np.isfinite(np.asarray(values, dtype=float)).all())


class TrajectoryEffortProxy(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("trajectory_effort_proxy", **kwargs)
        self.log_throttle = LogThrottle(5.0)
        self.p = p = declare_parameters(self, PARAMETERS, TrajectoryEffortProxyParameters)
        served, controller = (expand_topic_name(name, self.get_name(), self.get_namespace())
                              for name in (p.action_name, p.controller_action))
        if served == controller:          # the goals would come back to this node forever
            raise ValueError(f"parameters action_name and controller_action both name "
                             f"{served}: expected the controller's action apart from the one "
                             "served")
        self.model = model = load_model(p.model_file)
        check_node_model(model, p.model_file, "the effort proxy evaluates")
        self.joint_map = read_joint_map(p.joint_name_map, p.joint_map_file)
        self.joint_map.check(tuple(dict.fromkeys(model.input_names + model.coordinate_names)),
                             p.model_file)
        self.evaluator = evaluator_for(model)
        inputs = tuple(self.evaluator.input_names)
        self.assembler = StateAssembler(model, (), inputs, tuple(
            n for n in model.input_names if n not in inputs), shown=self.joint_map.hardware)
        self.base = frozenset(model.base.coordinates if model.base is not None else ())
        self.forwarded: dict[bytes, object] = {}      # our goal's id -> the controller's goal
        self.create_subscription(JointState, p.joint_states_topic, self._on_joint_state,
                                 qos.MERGED_SAMPLES)
        self.controller = ActionClient(self, FollowJointTrajectory, p.controller_action)
        self.server = ActionServer(self, FollowJointTrajectory, p.action_name, self._execute,
                                   cancel_callback=self._on_cancel)
        self.get_logger().info(f"filling the efforts ({model.name}) of the goals on "
                               f"{p.action_name} for {p.controller_action}")

    # ------------------------------------------------------------------ joint_states
    def _on_joint_state(self, msg: JointState) -> None:
        try:
            values = read_robot_joint_state(self.joint_map, msg.name, msg.position,
                                            msg.velocity, msg.effort,
                                            self.assembler.accepted_names())
            self.assembler.update(values.positions, values.velocities,
                                  stamp=to_nanoseconds(msg.header.stamp))
        except InputRejected as exc:
            if self.log_throttle():
                self.get_logger().warning(f"joint_states not used: {exc}")

    # ------------------------------------------------------------------ goals
    def filled(self, goal: FollowJointTrajectory.Goal) -> FollowJointTrajectory.Goal:
        """``goal`` with every point's effort the inverse dynamics (the module docstring);
        raises :class:`GoalRefused`."""
        traj = goal.trajectory
        names, points = list(traj.joint_names), traj.points
        if goal.multi_dof_trajectory.joint_names or goal.multi_dof_trajectory.points:
            raise GoalRefused(Result.INVALID_GOAL, "multi_dof_trajectory: not supported (the "
                                                   "proxy fills the joint trajectory's efforts)")
        if not points:
            raise GoalRefused(Result.INVALID_GOAL, "the trajectory has no points")
        if len(points) > self.p.max_points:
            raise GoalRefused(Result.INVALID_GOAL, f"{len(points)} points, more than max_points "
                                                   f"{self.p.max_points}")
        inputs = self.assembler.names
        model_names = self.joint_map.message_to_model(names)
        if not names or len(set(names)) != len(names):
            raise GoalRefused(Result.INVALID_JOINTS, f"joint_names {names}: expected each "
                                                     "joint once")
        unknown = [h for h, n in zip(names, model_names) if n not in inputs]
        if unknown:
            dependent = [h for h, n in zip(names, model_names) if n in self.assembler.ignored]
            why = (f"{', '.join(dependent)}: dependent coordinates of the model's closed "
                   "loops (send the independent ones); " if dependent else "")
            raise GoalRefused(Result.INVALID_JOINTS, f"{why}unknown joints "
                              f"{', '.join(unknown)}: not inputs of the model {self.model.name} "
                              f"(as the robot names them: "
                              f"{', '.join(self.joint_map.to_hardware(inputs))})")
        n = len(names)
        arrays = []
        for k, point in enumerate(points):
            if len(point.positions) != n:
                raise GoalRefused(Result.INVALID_GOAL, f"point {k}: {len(point.positions)} "
                                                       f"positions, expected {n}")
            row = [np.asarray(point.positions, dtype=float)]
            for field in ("velocities", "accelerations"):
                values = getattr(point, field)
                if len(values) not in (0, n):
                    raise GoalRefused(Result.INVALID_GOAL, f"point {k}: {len(values)} {field}, "
                                                           f"expected {n} or none")
                row.append(np.asarray(values, dtype=float) if len(values) else np.zeros(n))
            if len(point.effort) not in (0, n):
                raise GoalRefused(Result.INVALID_GOAL, f"point {k}: {len(point.effort)} "
                                                       f"efforts, expected {n} or none")
            if not all(_finite(a) for a in row):
                raise GoalRefused(Result.INVALID_GOAL, f"point {k}: a position, velocity or "
                                                       "acceleration is not finite")
            arrays.append(row)
        x, xd, xdd = self._inputs(model_names, np.array(arrays))
        try:
            efforts = efforts_along(self.evaluator, x, xd, xdd)
        except EffortsUnavailable as exc:
            raise GoalRefused(Result.INVALID_GOAL, f"point {exc.index}: its inverse dynamics "
                                                   f"failed ({exc})") from None
        columns = [inputs.index(m) for m in model_names]
        factor = self.joint_map.effort_out(model_names)
        efforts = efforts[:, columns] * (1.0 if factor is None else factor)
        for point, row in zip(points, efforts):
            point.effort = float_array(row)
        return goal

    def _inputs(self, model_names: list[str], values: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The evaluator's inputs at every point: ``values`` (n_points, 3, n_joints) of the
        trajectory's joints in the robot's units, the others held at joint_states."""
        a, inputs = self.assembler, self.assembler.names
        if not a.positions:
            raise GoalRefused(Result.INVALID_GOAL, "no joint_states yet: the inputs the "
                                                   "trajectory does not carry are unknown")
        held = [n for n in inputs if n not in model_names]
        missing = [n for n in held if n not in a.positions and n not in self.base]
        if missing:
            raise GoalRefused(Result.INVALID_GOAL, f"no joint_states yet of "
                              f"{', '.join(self.joint_map.to_hardware(missing))}")
        scale = np.array([self.joint_map.scale.get(m, 1.0) for m in model_names])
        offset = np.array([self.joint_map.offset.get(m, 0.0) for m in model_names])
        x = np.tile([a.positions.get(n, 0.0) for n in inputs], (len(values), 1))
        xd, xdd = np.zeros_like(x), np.zeros_like(x)
        columns = [inputs.index(m) for m in model_names]
        x[:, columns] = scale * values[:, 0] + offset
        xd[:, columns] = scale * values[:, 1]
        xdd[:, columns] = scale * values[:, 2]
        if not (_finite(x) and _finite(xd) and _finite(xdd)):
            raise GoalRefused(Result.INVALID_GOAL, "a value is not finite after the joint "
                                                   "map's scale and offset")
        return x, xd, xdd

    async def _execute(self, goal_handle):
        key = bytes(goal_handle.goal_id.uuid)
        try:
            goal = self.filled(goal_handle.request)
            if not self.controller.server_is_ready():
                raise GoalRefused(Result.INVALID_GOAL, f"the controller's action "
                                                       f"{self.p.controller_action} is not "
                                                       "available")
        except GoalRefused as exc:
            self.get_logger().warning(f"goal refused: {exc}")
            goal_handle.abort()
            return Result(error_code=exc.code, error_string=str(exc))
        if goal_handle.is_cancel_requested:
            goal_handle.canceled()
            return Result(error_code=Result.SUCCESSFUL, error_string="canceled before it was sent")
        sent = await self.controller.send_goal_async(
            goal, feedback_callback=lambda msg: goal_handle.publish_feedback(msg.feedback))
        if not sent.accepted:
            goal_handle.abort()
            return Result(error_code=Result.INVALID_GOAL,
                          error_string=f"{self.p.controller_action} rejected the goal")
        self.forwarded[key] = sent
        try:
            if goal_handle.is_cancel_requested:
                sent.cancel_goal_async()
            response = await sent.get_result_async()
        finally:
            self.forwarded.pop(key, None)
        if response.status == GoalStatus.STATUS_SUCCEEDED:
            goal_handle.succeed()
        elif response.status == GoalStatus.STATUS_CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        else:
            goal_handle.abort()
        return response.result

    def _on_cancel(self, goal_handle) -> CancelResponse:
        sent = self.forwarded.get(bytes(goal_handle.goal_id.uuid))
        if sent is not None:
            sent.cancel_goal_async()
        return CancelResponse.ACCEPT


def main(args=None) -> int:
    from .common.run import run_node
    return run_node(TrajectoryEffortProxy, args)


if __name__ == "__main__":
    sys.exit(main())
