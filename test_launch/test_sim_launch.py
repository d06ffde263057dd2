"""launch/sim.launch.py under launch_testing, in both modes: the nodes start, joint_loads and
/tf arrive, the feedforward equals the core's, and every process exits with status 0 when
the launch shuts down.

* ``mode:=kinematic``: the trajectory player plays the validation motion once; while it
  plays, every feedforward is the efforts of the evaluation (actuator_loads) with its stamp
  or the safe policy's after one; once it has stopped, the feedforward equals the core's gravity
  compensation at the last positions (or zeros, per ``stale_policy``).
* ``mode:=dynamic``: the simulator drives the dynamics node on /clock; nobody publishes a
  reference trajectory, so every evaluation is the core's inverse dynamics at the measured
  positions and velocities with zero accelerations.
"""
from __future__ import annotations

import tempfile
import time
import unittest
from pathlib import Path

import launch_testing
import launch_testing.asserts
import numpy as np
import pytest
import yaml
from ament_index_python.packages import get_package_share_directory
from launch_support import LATCHED, TOL, Listener, core_efforts, launch_under_test
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from tf2_msgs.msg import TFMessage

from charmie_dynamics.model import model_from_text
from charmie_dynamics.model.model import JointType
from charmie_dynamics.ros.common.stamps import to_nanoseconds

pytestmark = [pytest.mark.launch, pytest.mark.ros]
START_TIMEOUT = 90.0          # s: several nodes importing numpy, numba and rclpy on 2 cores
EVALUATIONS = 20              # evaluations compared with the core


@pytest.mark.launch_test
@launch_testing.parametrize("mode", ["kinematic", "dynamic"])
def generate_test_description(mode):
    return launch_under_test("sim.launch.py", mode=mode, params=every_evaluation_params())


def every_evaluation_params() -> str:
    """The installed config/sim.yaml with the dynamics node's ``output_rate`` 0: actuator_loads
    at every evaluation, so that every feedforward (published at every evaluation) can be
    matched with the evaluation that made it; at the default 100 Hz grid an evaluation may
    publish its feedforward alone."""
    share = Path(get_package_share_directory("charmie_dynamics"))
    params = yaml.safe_load((share / "config" / "sim.yaml").read_text(encoding="utf-8"))
    params["/**/dynamics"]["ros__parameters"]["output_rate"] = 0.0
    path = Path(tempfile.mkdtemp(prefix="charmie_sim_launch_")) / "sim.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return str(path)



class TestSimLaunch(unittest.TestCase):

    def setUp(self):
        self.ros = Listener()
        node = self.ros.node
        self.model_msgs = self.ros.record(String, "charmie/model", LATCHED)
        self.joint_loads = self.ros.record(JointState, "joint_loads")
        self.actuator_loads = self.ros.record(JointState, "actuator_loads")
        self.feedforward = self.ros.record(Float64MultiArray, "feedforward_efforts")
        self.feedforward_states = self.ros.record(JointState, "feedforward_states")
        self.tf = self.ros.record(TFMessage, "/tf")
        self.node = node

    def tearDown(self):
        self.ros.close()

    def test_nodes_topics_and_feedforward(self, mode, proc_info):
        self.ros.watch(proc_info)
        driver = "/trajectory_player" if mode == "kinematic" else "/simulator"
        running = self.ros.wait_for_nodes({"/model_loader", "/dynamics", driver}, START_TIMEOUT)
        self.assertLessEqual({"/model_loader", "/dynamics", driver}, running)
        self.assertTrue(self.ros.spin_until(
            lambda: self.model_msgs.messages and len(self.actuator_loads.messages) >= EVALUATIONS
            and self.joint_loads.messages and self.tf.messages, START_TIMEOUT),
            f"{mode}: {len(self.actuator_loads.messages)} actuator_loads, "
            f"{len(self.joint_loads.messages)} joint_loads, {len(self.tf.messages)} /tf")
        model = model_from_text(self.model_msgs.messages[-1].data, "charmie/model")
        p = self.ros.parameters("/dynamics", ["acceleration_source", "gravity_only",
                                              "stale_policy", "stale_timeout", "frame_prefix"])

        # joint_loads: every coordinate; /tf: every moving body, with the prefix (the base
        # body, turned into REP 103's axes, as base_link: the model's base: section)
        self.assertEqual(list(self.joint_loads.messages[-1].name), list(model.coordinate_names))
        frame = {model.base.body: "base_link"} if model.base is not None else {}
        moving = {p["frame_prefix"] + frame.get(model.body_names[i], model.body_names[i])
                  for i in range(model.n_bodies) if model.joint_type[i] != JointType.FIXED}
        children = {t.child_frame_id for t in self.tf.messages[-1].transforms}
        self.assertLessEqual(moving, children)

        if mode == "dynamic":
            self._check_dynamic(model, p)
        else:
            self._check_kinematic(model, p)

    def _evaluations(self, model) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(x, xd, efforts) of every actuator_loads received, in model.input_names order, by
        the evaluated input's stamp (ns)."""
        out = {}
        for msg in self.actuator_loads.messages:
            self.assertEqual(list(msg.name), list(model.input_names))
            out[to_nanoseconds(msg.header.stamp)] = (
                np.array(msg.position), np.array(msg.velocity), np.array(msg.effort))
        return out

    @staticmethod
    def _safe_policy(model, x: np.ndarray, p: dict) -> np.ndarray:
        """The feedforward of the safe policy with the last valid positions ``x``."""
        if p["stale_policy"] != "gravity":
            return np.zeros(len(x))
        return core_efforts(model, x, np.zeros_like(x), gravity_only=True)

    def _assert_feedforward_from_evaluations(self, model, evaluations: dict, p: dict) -> None:
        """Every stamped feedforward (feedforward_states, the evaluated input's stamp) with an
        evaluation's stamp holds that evaluation's efforts, or the safe policy's at its
        positions (the watchdog's, should the node clock stand at that stamp). Those of
        another stamp are not compared: the watchdog's, or an evaluation whose actuator_loads
        did not come (the node skips monitoring, never the feedforward, when its monitoring
        thread falls behind on a loaded machine: CI's two lanes), so nothing here holds its
        numbers. At least half of the evaluations received are matched by stamp; every plain
        feedforward (feedforward_efforts) that arrived between the first and the last
        evaluation received, but a tenth (a reader can miss one), is one of the stamped
        copies' values. feedforward_joints: all inputs, as in config/sim.yaml."""
        stamped = {to_nanoseconds(msg.header.stamp): np.array(msg.effort)
                   for msg in self.feedforward_states.messages}
        matched = 0
        for stamp, efforts in stamped.items():
            if stamp in evaluations:
                matched += 1
                x, _, evaluated = evaluations[stamp]
                self.assertTrue(np.allclose(efforts, evaluated, **TOL)
                                or np.allclose(efforts, self._safe_policy(model, x, p), **TOL),
                                f"the feedforward stamped {stamp} ns is neither the efforts of "
                                f"the evaluation with that stamp nor the safe policy's: "
                                f"{efforts} against {evaluated}")
        self.assertGreaterEqual(matched, len(evaluations) / 2,
                                f"{matched} stamped feedforwards of {len(evaluations)} "
                                "evaluations received")
        window = (self.actuator_loads.arrivals[0], self.actuator_loads.arrivals[-1])
        feedforward = self.feedforward.between(*window)
        self.assertTrue(feedforward)
        copies = list(stamped.values())
        unmatched = [np.array(msg.data) for msg in feedforward
                     if not any(np.allclose(msg.data, v, **TOL) for v in copies)]
        self.assertLessEqual(len(unmatched), 0.1 * len(feedforward),
                             f"feedforward {unmatched[:1]} and {len(unmatched) - 1} more of "
                             f"{len(feedforward)} are none of the {len(copies)} stamped copies")

    def _check_dynamic(self, model, p) -> None:
        # no reference in dynamic mode: the accelerations are zero for these sources
        self.assertIn(p["acceleration_source"], ("zero", "reference"))
        self.assertEqual(self.node.count_publishers("/reference_trajectory"), 0)
        evaluations = self._evaluations(model)
        for x, xd, efforts in evaluations.values():
            np.testing.assert_allclose(
                efforts, core_efforts(model, x, xd, gravity_only=p["gravity_only"]), **TOL)
        self._assert_feedforward_from_evaluations(model, evaluations, p)

    def _check_kinematic(self, model, p) -> None:
        # the player stops after the motion: once no evaluation came for longer than the
        # stale timeout, the watchdog publishes the safe policy's feedforward at the last
        # evaluated positions (the order of events, not the test's clock, decides)
        def stopped_and_safe() -> bool:
            if time.monotonic() - self.actuator_loads.arrivals[-1] <= p["stale_timeout"]:
                return False
            x_last = np.array(self.actuator_loads.messages[-1].position)
            return np.allclose(self.feedforward.messages[-1].data,
                               self._safe_policy(model, x_last, p), **TOL)
        self.assertTrue(self.ros.spin_until(stopped_and_safe, 60.0),
                        "no safe-policy feedforward at the last positions after the motion")
        self._assert_feedforward_from_evaluations(model, self._evaluations(model), p)

@launch_testing.post_shutdown_test()
class TestSimShutdown(unittest.TestCase):

    def test_exit_codes(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
