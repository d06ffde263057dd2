"""Hardware bring-up: model loader and dynamics node on the robot's topics (no sim nodes).

    ros2 launch charmie_dynamics hardware.launch.py [params:=FILE] [namespace:=NS]
        [use_sim_time:=true] [model_file:=FILE] [model_source:=topic|robot_description|file]
        [overlay_file:=FILE] [frame_prefix:=PREFIX] [publish_tf:=all|not_in_urdf|none]
        [publish_robot_description:=true|false] [log_level:=debug|info|warn|error|fatal]
        [controller_command:="ros2 run controller_manager spawner effort_controller"]

An argument left empty keeps the params file's value
(charmie_dynamics/ros/launch_support/launch_arguments.py).
Same nodes and parameter file as ``charmie-dynamics bringup --mode hardware``.

The dynamics node is a managed node (config/hardware.yaml: ``autostart: false``); this launch
drives it, without sleeps: configure once its process runs (the model read, the kernels
compiled or loaded), activate once it is inactive, then ``controller_command`` (if given: the
spawner of the effort controller that takes the feedforward), so that the controller never
runs before the feedforward exists. Ctrl-C deactivates it first: ``deactivate_command`` once.
"""
import os
import shlex

from ament_index_python.packages import get_package_share_directory
from launch_ros.actions import LifecycleNode, Node

from charmie_dynamics.ros.launch_support.launch_arguments import (declare_arguments,
                                                                  given_overrides, node_options)
from charmie_dynamics.ros.launch_support.launch_lifecycle import drive_lifecycle
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, LogInfo, OpaqueFunction


def _nodes(context):
    params = [context.launch_configurations["params"],
              {"use_sim_time": context.launch_configurations["use_sim_time"] == "true"},
              given_overrides(context)]
    options = node_options(context)
    loader = Node(package="charmie_dynamics", executable="model_loader", parameters=params,
                  output="screen", **options)
    dynamics = LifecycleNode(package="charmie_dynamics", executable="dynamics", name="dynamics",
                             parameters=params, output="screen",
                             **dict(options, namespace=options["namespace"] or ""))
    command = shlex.split(context.launch_configurations["controller_command"])
    on_active = [LogInfo(msg="dynamics active: feedforward on")]
    if command:
        on_active.append(ExecuteProcess(cmd=command, name="controller_command", output="screen"))
    return [loader, dynamics, *drive_lifecycle(dynamics, on_active)]


def generate_launch_description():
    share = get_package_share_directory("charmie_dynamics")
    return LaunchDescription([
        DeclareLaunchArgument("params",
                              default_value=os.path.join(share, "config", "hardware.yaml"),
                              description="parameter file of the nodes"),
        DeclareLaunchArgument("use_sim_time", default_value="false", choices=["true", "false"],
                              description="run on /clock (a bag replay)"),
        DeclareLaunchArgument("controller_command", default_value="",
                              description="a command started once the dynamics node is active, "
                                          "e.g. the spawner of the effort controller (empty: "
                                          "none)"),
        *declare_arguments(),
        OpaqueFunction(function=_nodes),
    ])
