"""The launch arguments both launch files take (launch/sim.launch.py, launch/hardware.launch.py),
and what they make of them at launch time.

An argument left at its empty default leaves the parameter to the params file (or the node's
default); one given overrides the params file for every node of the package (a node that does
not declare the parameter ignores it).
"""
from __future__ import annotations

from typing import Any

from launch.actions import DeclareLaunchArgument
from launch.launch_context import LaunchContext

#: parameter overrides: name -> description; empty (the default) means "from the params file"
OVERRIDES = {
    "model_file": "model file (YAML or URDF) of every node",
    "model_source": "where the dynamics node takes its model: topic | robot_description | file",
    "overlay_file": "mechanism overlay (YAML) of a URDF model",
    "frame_prefix": "prefix of the frame names, as robot_state_publisher's",
    "publish_tf": "frames the dynamics node publishes on /tf: all | not_in_urdf | auxiliary | none",
    "joint_map_file": "the robot's joint names and units (YAML, config/joint_map_example.yaml)",
    "publish_robot_description": "true | false: the model loader publishes the URDF on "
                                 "robot_description (false beside robot_state_publisher)",
}
BOOLEANS = {"publish_robot_description"}
LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")


def declare_arguments() -> list[DeclareLaunchArgument]:
    """namespace, log_level and the parameter overrides (use_sim_time: each launch file's)."""
    return [
        DeclareLaunchArgument("namespace", default_value="",
                              description="ROS namespace of the nodes (empty: none)"),
        DeclareLaunchArgument("log_level", default_value="info", choices=list(LOG_LEVELS),
                              description="log level of the nodes (--log-level)"),
    ] + [DeclareLaunchArgument(name, default_value="",
                               description=f"{text}; empty: from the params file")
         for name, text in OVERRIDES.items()]


def given_overrides(context: LaunchContext) -> dict[str, Any]:
    """The parameter overrides given on the command line (non-empty), typed."""
    given = {}
    for name in OVERRIDES:
        value = context.launch_configurations.get(name, "")
        if not value:
            continue
        if name in BOOLEANS:
            if value.lower() not in ("true", "false"):
                raise ValueError(f"launch argument {name}:={value}: expected true or false")
            given[name] = value.lower() == "true"
        else:
            given[name] = value
    return given


def node_options(context: LaunchContext) -> dict[str, Any]:
    """namespace and ros_arguments of every node of the package."""
    namespace = context.launch_configurations.get("namespace", "")
    return {"namespace": namespace or None,
            "ros_arguments": ["--log-level", context.launch_configurations["log_level"]]}
