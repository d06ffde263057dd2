"""What the launch tests share: a listener node in this (the test) process, the efforts the
core computes for a state, and the launch commands of the README and docs/ros.md.

The listener owns one rclpy context, a node and an executor advanced with ``spin_once`` until
a condition holds or a timeout passes (never a blind sleep for discovery). DDS stays on
loopback in the domain that scripts/ros_path.sh sets (ROS_AUTOMATIC_DISCOVERY_RANGE,
ROS_DOMAIN_ID), for this process and for the launched nodes alike.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import launch_testing.actions
import numpy as np
import rclpy
from ament_index_python.packages import get_package_share_directory
from rcl_interfaces.srv import GetParameters
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import parameter_value_to_python
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.kinematics import resolve_state
from charmie_dynamics.model.model import Model
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription, SetLaunchConfiguration
from launch.launch_description_sources import PythonLaunchDescriptionSource

ROOT = Path(__file__).resolve().parent.parent
TOL = dict(rtol=1e-9, atol=1e-9)
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
# launch sends SIGTERM to a process still running this long after its SIGINT (default 5 s):
# a clean exit is what is tested, not how fast it comes on a loaded machine
SIGTERM_TIMEOUT = "60"
#: Where launch commands are written for users.
DOCUMENTS = ("README.md", "docs/ros.md")
LAUNCH_COMMAND = re.compile(r"ros2 launch charmie_dynamics (\S+\.launch\.py)((?:\s+[\w.]+:=\S+)*)")


def readme_launch_arguments() -> dict[str, set[str]]:
    """Launch file -> the argument names the README and docs/ros.md pass to it (``ros2
    launch charmie_dynamics FILE name:=value ...``)."""
    found: dict[str, set[str]] = {}
    text = "".join((ROOT / name).read_text(encoding="utf-8") for name in DOCUMENTS)
    for match in LAUNCH_COMMAND.finditer(text):
        names = {token.split(":=")[0] for token in match.group(2).split()}
        found.setdefault(match.group(1), set()).update(names)
    return found


def launch_under_test(launch_file: str, **arguments: str) -> LaunchDescription:
    """The package's installed launch file with ``arguments``, ready to test at once."""
    path = Path(get_package_share_directory("charmie_dynamics")) / "launch" / launch_file
    return LaunchDescription([
        SetLaunchConfiguration("sigterm_timeout", SIGTERM_TIMEOUT),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(str(path)),
                                 launch_arguments=arguments.items()),
        launch_testing.actions.ReadyToTest(),
    ])


def core_efforts(model: Model, x: np.ndarray, xd: np.ndarray, *,
                 gravity_only: bool = False) -> np.ndarray:
    """Efforts in ``model.input_names`` order at zero input accelerations, from the core:
    the actuators' axial forces for the actuators, the coordinates' efforts for the others."""
    loads = inverse_dynamics(model, resolve_state(model, x, xd, np.zeros_like(x)),
                             gravity_only=gravity_only)
    return np.array([loads.actuator_force[model.actuator_names.index(name)]
                     if name in model.actuator_names
                     else loads.coordinate_effort[model.coordinate_names.index(name)]
                     for name in model.input_names])


@dataclass
class Recorded:
    """Messages of one topic, with the time each arrived."""

    messages: list = field(default_factory=list)
    arrivals: list = field(default_factory=list)

    def add(self, msg: Any) -> None:
        self.messages.append(msg)
        self.arrivals.append(time.monotonic())

    def between(self, start: float, end: float) -> list:
        """The messages that arrived in [start, end] (time.monotonic)."""
        return [m for m, a in zip(self.messages, self.arrivals) if start <= a <= end]


class Listener:
    """This process's rclpy context, listener node and executor."""

    def __init__(self, name: str = "launch_test_listener") -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.proc_info = None

    def watch(self, proc_info) -> None:
        """Make spin_until fail at once when a launched process exits (launch_testing's
        proc_info), instead of waiting for its timeout."""
        self.proc_info = proc_info

    def _assert_processes_running(self) -> None:
        for action in self.proc_info.processes():
            info = self.proc_info[action]
            code = getattr(info, "returncode", None)       # set once the process exited
            assert code is None, f"{info.process_name} exited with status {code}"

    def close(self) -> None:
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.try_shutdown(context=self.context)

    def record(self, msg_type, topic: str, qos: QoSProfile = RELIABLE) -> Recorded:
        recorded = Recorded()
        self.node.create_subscription(msg_type, topic, recorded.add, qos)
        return recorded

    def spin_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            if self.proc_info is not None:
                self._assert_processes_running()
            if time.monotonic() >= deadline:
                return predicate()
            self.executor.spin_once(timeout_sec=0.01)
        return True

    def wait_for_nodes(self, names: set[str], timeout: float) -> set[str]:
        """The absolute names of the running nodes once ``names`` are among them."""
        running: set[str] = set()

        def found() -> bool:
            running.clear()
            running.update(ns.rstrip("/") + "/" + n
                           for n, ns in self.node.get_node_names_and_namespaces())
            return names <= running
        self.spin_until(found, timeout)
        return running

    def parameters(self, node_name: str, names: list[str], timeout: float = 10.0) -> dict:
        """Parameter values of a running node, through its get_parameters service."""
        client = self.node.create_client(GetParameters, f"{node_name}/get_parameters")
        try:
            assert self.spin_until(client.service_is_ready, timeout), \
                f"{node_name}/get_parameters not available in {timeout} s"
            future = client.call_async(GetParameters.Request(names=names))
            assert self.spin_until(future.done, timeout), f"no answer from {node_name}"
            values = future.result().values
        finally:
            self.node.destroy_client(client)
        return {n: parameter_value_to_python(v) for n, v in zip(names, values)}
