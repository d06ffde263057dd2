"""The package through the ros2 command line, as a user takes it: ``ros2 pkg executables``,
``ros2 launch ... --show-args`` (every launch argument the README passes exists),
``ros2 run charmie_dynamics dynamics``, ``ros2 param describe`` of the parameters the README
documents (each printed with its description) and ``ros2 topic echo --once /joint_loads``
(one message), the node stopped by Ctrl-C with exit status 0; and Ctrl-C on ``ros2 launch``
(SIGINT to the whole process group, as a terminal sends it, then launch's own SIGINT to each
node): every node finishes cleanly.

The CLI runs without its daemon (``--no-daemon``), so no process outlives the test.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest
from ament_index_python.packages import get_package_share_directory
from launch_support import ROOT, Listener, readme_launch_arguments
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from charmie_dynamics.kinematics import inputs_from_dict
from charmie_dynamics.model import load_model

pytestmark = [pytest.mark.launch, pytest.mark.ros]
SHARE = get_package_share_directory("charmie_dynamics")
NODES = ("model_loader", "dynamics", "trajectory_player", "simulator")   # the launch files'
CLI_TIMEOUT = 120.0
RCLPY_OWN = {"use_sim_time"}      # declared by rclpy itself, without a description


def ros2(*args: str, timeout: float = CLI_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(["ros2", *args], capture_output=True, text=True, timeout=timeout)


def in_terminal(*args: str) -> subprocess.Popen:
    """A command in a process group of its own, as a shell runs it in a terminal."""
    return subprocess.Popen(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)


def ctrl_c(process: subprocess.Popen) -> str:
    """SIGINT to the process group (a terminal's Ctrl-C); the output once it has ended."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
    try:
        return process.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        return process.communicate()[0]


def readme_dynamics_parameters() -> list[str]:
    """The names in the first column of docs/ros.md's table of the dynamics node's
    parameters."""
    text = (ROOT / "docs" / "ros.md").read_text(encoding="utf-8")
    section = text.split("## Parameters of the dynamics node", 1)[1].split("\n#", 1)[0]
    names = []
    for row in section.splitlines():
        if row.startswith("| `"):
            names += re.findall(r"`(\w+)`", row.split("|")[1])
    return names


def test_executables_listed():
    listed = ros2("pkg", "executables", "charmie_dynamics")
    assert listed.returncode == 0, listed.stderr
    assert {f"charmie_dynamics {n}" for n in NODES} <= set(listed.stdout.splitlines())


@pytest.mark.parametrize("launch_file", sorted(readme_launch_arguments()))
def test_readme_launch_arguments_exist(launch_file):
    shown = ros2("launch", "charmie_dynamics", launch_file, "--show-args")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    declared = set(re.findall(r"^\s+'(\w+)':$", shown.stdout, flags=re.MULTILINE))
    documented = readme_launch_arguments()[launch_file]
    assert documented <= declared, f"{launch_file}: README passes {sorted(documented - declared)}" \
                                   f", declared: {sorted(declared)}"


def test_readme_documents_launch_commands():
    """The parser above reads something: both launch files, with mode and rviz."""
    found = readme_launch_arguments()
    assert {"sim.launch.py", "hardware.launch.py"} <= set(found)
    assert {"mode", "rviz"} <= found["sim.launch.py"]


def test_run_describe_echo():
    model_file = os.path.join(SHARE, "config", "charmie.yaml")
    node = in_terminal("ros2", "run", "charmie_dynamics", "dynamics", "--ros-args",
                       "-p", f"model_file:={model_file}")
    ros = Listener("cli_test_robot")
    try:
        names = readme_dynamics_parameters()
        assert "stale_timeout" in names and "acceleration_source" in names
        described = ros2("param", "describe", "--no-daemon", "--timeout", "60", "/dynamics",
                         *names)
        assert described.returncode == 0 and "Node not found" not in described.stdout, \
            described.stdout + described.stderr
        blocks = {b.split("\n", 1)[0]: b for b in described.stdout.split("Parameter name: ")[1:]}
        assert set(blocks) == set(names), described.stdout
        for name in set(names) - RCLPY_OWN:
            assert re.search(r"^  Description: \S", blocks[name], re.MULTILINE), blocks[name]

        # a robot's joint_states, while `ros2 topic echo --once` waits for one joint_loads
        model = load_model(model_file)
        x, xd, _ = inputs_from_dict(model, {"theta7a": 0.3}, {"theta7a": 0.1})
        pub = ros.node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)

        def tick() -> None:
            msg = JointState(name=list(model.input_names), position=[float(v) for v in x],
                             velocity=[float(v) for v in xd])
            msg.header.stamp = ros.node.get_clock().now().to_msg()
            pub.publish(msg)
        ros.node.create_timer(0.05, tick)
        echo = subprocess.Popen(["ros2", "topic", "echo", "--once", "--no-daemon",
                                 "/joint_loads", "sensor_msgs/msg/JointState"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert ros.spin_until(lambda: echo.poll() is not None, CLI_TIMEOUT), "echo --once waits"
        out, err = echo.communicate()
        assert echo.returncode == 0, out + err
        assert out.count("---") == 1 and "effort:" in out and "- d4" in out, out
    finally:
        ros.close()
        output = ctrl_c(node)
    sys.stdout.write(output[-2000:])
    assert node.returncode == 0, output[-3000:]


@pytest.mark.parametrize("moment", ["spinning", "configuring"])
def test_ctrl_c_on_ros2_launch(moment):
    """Ctrl-C once both nodes answer a service call (past start-up, spinning), or as soon as
    the dynamics node is listed (its configure requested or under way: launch_ros's own
    request, blind to the shutdown, ended ``ros2 launch`` with status 1 there)."""
    launch = in_terminal("ros2", "launch", "charmie_dynamics", "hardware.launch.py")
    ros = Listener(f"cli_test_ctrl_c_{moment}")
    try:
        wanted = {"/model_loader", "/dynamics"} if moment == "spinning" else {"/dynamics"}
        running = ros.wait_for_nodes(wanted, CLI_TIMEOUT)
        assert wanted <= running, running
        if moment == "spinning":
            ros.parameters("/model_loader", ["model_topic"], CLI_TIMEOUT)
            ros.parameters("/dynamics", ["stale_timeout"], CLI_TIMEOUT)
    finally:
        ros.close()
        output = ctrl_c(launch)
    sys.stdout.write(output[-3000:])
    assert launch.returncode == 0, output[-3000:]
    assert "process has died" not in output and "Traceback" not in output, output[-3000:]
    assert output.count("process has finished cleanly") == 2, output[-3000:]
