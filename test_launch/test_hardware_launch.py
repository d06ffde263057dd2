"""launch/hardware.launch.py under launch_testing, fed by this test standing in for the robot
(joint_states with the joint coordinates and actuator_states with the actuator lengths, at
50 Hz, constant positions and velocities): the nodes start, joint_loads and /tf arrive, every
feedforward equals the core's inverse dynamics at that state (constant velocities: zero
accelerations for every acceleration source), the safe policy's feedforward after the robot
falls silent equals the core's gravity compensation (or zeros, per ``stale_policy``), and
every process exits with status 0 when the launch shuts down.
"""
from __future__ import annotations

import unittest

import launch_testing
import launch_testing.asserts
import numpy as np
import pytest
from launch_support import LATCHED, TOL, Listener, core_efforts, launch_under_test
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from tf2_msgs.msg import TFMessage

from charmie_dynamics.kinematics import inputs_from_dict
from charmie_dynamics.model import model_from_text

START_TIMEOUT = 90.0          # s: two nodes importing numpy, numba and rclpy on 2 cores
EVALUATIONS = 20
# a state of the robot (SI units): arms and neck turned, base moving, actuators at rest length
POSITIONS = {"d1": 0.4, "d2": -0.2, "theta3": 0.3, "theta7a": 0.5, "theta8a": -0.6,
             "theta10a": 0.8, "theta9b": -0.4, "theta12b": 0.7, "theta7c": 0.2, "theta8c": -0.3}
VELOCITIES = {"d1": 0.3, "theta3": -0.2, "theta7a": 0.6, "theta8a": -0.5, "theta11b": 0.9,
              "theta8c": 0.4}


@pytest.mark.launch_test
def generate_test_description():
    return launch_under_test("hardware.launch.py")



class TestHardwareLaunch(unittest.TestCase):

    def setUp(self):
        self.ros = Listener()
        self.model_msgs = self.ros.record(String, "charmie/model", LATCHED)
        self.joint_loads = self.ros.record(JointState, "joint_loads")
        self.feedforward = self.ros.record(Float64MultiArray, "feedforward_efforts")
        self.tf = self.ros.record(TFMessage, "/tf")
        self.pub_joints = self.ros.node.create_publisher(JointState, "joint_states",
                                                         qos_profile_sensor_data)
        self.pub_actuators = self.ros.node.create_publisher(JointState, "actuator_states",
                                                            qos_profile_sensor_data)
        self.robot = None

    def tearDown(self):
        self.ros.close()

    def _start_robot(self, model) -> tuple[np.ndarray, np.ndarray]:
        """Publish one state at 50 Hz, as the robot's drivers would; returns (x, xd)."""
        x, xd, _ = inputs_from_dict(model, POSITIONS, VELOCITIES)
        names = list(model.input_names)
        actuators = [k for k, n in enumerate(names) if n in model.actuator_names]
        joints = [k for k in range(len(names)) if k not in actuators]

        def message(slots: list[int]) -> JointState:
            msg = JointState(name=[names[k] for k in slots], position=[float(x[k]) for k in slots],
                             velocity=[float(xd[k]) for k in slots])
            msg.header.stamp = self.ros.node.get_clock().now().to_msg()
            return msg

        def tick() -> None:
            self.pub_actuators.publish(message(actuators))     # the lengths first, as a robot
            self.pub_joints.publish(message(joints))           # whose evaluation uses them
        self.robot = self.ros.node.create_timer(0.02, tick)
        return x, xd

    def test_nodes_topics_and_feedforward(self, proc_info):
        self.ros.watch(proc_info)
        running = self.ros.wait_for_nodes({"/model_loader", "/dynamics"}, START_TIMEOUT)
        self.assertLessEqual({"/model_loader", "/dynamics"}, running)
        self.assertTrue(self.ros.spin_until(lambda: bool(self.model_msgs.messages), START_TIMEOUT),
                        "no model on charmie/model")
        model = model_from_text(self.model_msgs.messages[-1].data, "charmie/model")
        p = self.ros.parameters("/dynamics", ["gravity_only", "stale_policy"])
        x, xd = self._start_robot(model)
        self.assertTrue(self.ros.spin_until(
            lambda: len(self.joint_loads.messages) >= EVALUATIONS and self.tf.messages,
            START_TIMEOUT), f"{len(self.joint_loads.messages)} joint_loads, "
                            f"{len(self.tf.messages)} /tf in {START_TIMEOUT} s")
        self.ros.node.destroy_timer(self.robot)                # the robot falls silent

        loads = self.joint_loads.messages[-1]
        self.assertEqual(list(loads.name), list(model.coordinate_names))
        # while the robot publishes: the core's efforts at its state; once the last input is
        # older than stale_timeout: the safe policy's. Nothing else, in that order (the
        # order, not the test's clock: the nodes may lag on a loaded machine)
        expected = core_efforts(model, x, xd, gravity_only=p["gravity_only"])
        fallback = core_efforts(model, x, np.zeros_like(x), gravity_only=True) \
            if p["stale_policy"] == "gravity" else np.zeros(len(x))
        self.assertTrue(self.ros.spin_until(
            lambda: np.allclose(self.feedforward.messages[-1].data, fallback, **TOL), 10.0),
            "the feedforward did not turn to the safe policy's after the robot fell silent")
        kinds = ["core" if np.allclose(m.data, expected, **TOL)
                 else "fallback" if np.allclose(m.data, fallback, **TOL) else repr(m.data)
                 for m in self.feedforward.messages]
        n_core = kinds.count("core")
        self.assertGreaterEqual(n_core, EVALUATIONS // 2)
        self.assertEqual(kinds, ["core"] * n_core + ["fallback"] * (len(kinds) - n_core))


@launch_testing.post_shutdown_test()
class TestHardwareShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
