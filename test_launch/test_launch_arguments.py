"""Both launch files declare the arguments a robot integrator needs (issue 21 item 6), each
with a description, and an argument left at its empty default leaves the parameter to the
params file while one given overrides it."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from charmie_dynamics.ros.launch_support.launch_arguments import given_overrides, node_options
from launch.actions import DeclareLaunchArgument
from launch.launch_context import LaunchContext

pytestmark = pytest.mark.launch
ROOT = Path(__file__).resolve().parent.parent
COMMON = {"namespace", "use_sim_time", "model_file", "model_source", "overlay_file",
          "frame_prefix", "publish_tf", "publish_robot_description", "log_level", "params",
          "joint_map_file"}


def _declared(launch_file: str) -> dict[str, DeclareLaunchArgument]:
    spec = importlib.util.spec_from_file_location(launch_file.split(".")[0],
                                                  ROOT / "launch" / launch_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entities = module.generate_launch_description().entities
    return {e.name: e for e in entities if isinstance(e, DeclareLaunchArgument)}


@pytest.mark.parametrize("launch_file", ["sim.launch.py", "hardware.launch.py"])
def test_every_argument_declared_and_described(launch_file):
    declared = _declared(launch_file)
    assert COMMON <= set(declared), f"{launch_file}: missing {sorted(COMMON - set(declared))}"
    undescribed = [name for name, arg in declared.items() if not arg.description.strip()
                   or arg.description.startswith("no description")]
    assert not undescribed, f"{launch_file}: no description for {undescribed}"


def _context(**given: str) -> LaunchContext:
    context = LaunchContext()
    context.launch_configurations.update({"namespace": "", "log_level": "info", **given})
    return context


def test_empty_arguments_leave_the_params_file_alone():
    assert given_overrides(_context(model_file="", publish_tf="")) == {}
    assert node_options(_context()) == {"namespace": None,
                                        "ros_arguments": ["--log-level", "info"]}


def test_given_arguments_override_typed():
    context = _context(namespace="robot", log_level="debug", publish_tf="not_in_urdf",
                       publish_robot_description="False", frame_prefix="left/")
    assert given_overrides(context) == {"publish_tf": "not_in_urdf", "frame_prefix": "left/",
                                        "publish_robot_description": False}
    assert node_options(context) == {"namespace": "robot",
                                     "ros_arguments": ["--log-level", "debug"]}
    with pytest.raises(ValueError, match="publish_robot_description:=yes: expected true or false"):
        given_overrides(_context(publish_robot_description="yes"))
