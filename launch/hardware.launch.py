"""Hardware bring-up: model loader and dynamics node on the robot's topics (no sim nodes).

    ros2 launch charmie_dynamics hardware.launch.py [params:=FILE] [namespace:=NS]
        [use_sim_time:=true] [model_file:=FILE] [model_source:=topic|robot_description|file]
        [overlay_file:=FILE] [frame_prefix:=PREFIX] [publish_tf:=all|not_in_urdf|none]
        [publish_robot_description:=true|false] [log_level:=debug|info|warn|error|fatal]

An argument left empty keeps the params file's value (charmie_dynamics/ros/launch_arguments.py).
Same nodes and parameter file as ``charmie-dynamics bringup --mode hardware``.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch_ros.actions import Node

from charmie_dynamics.ros.launch_arguments import declare_arguments, given_overrides, node_options


def _nodes(context):
    params = [context.launch_configurations["params"],
              {"use_sim_time": context.launch_configurations["use_sim_time"] == "true"},
              given_overrides(context)]
    return [Node(package="charmie_dynamics", executable=name, parameters=params,
                 output="screen", **node_options(context))
            for name in ("model_loader", "dynamics")]


def generate_launch_description():
    share = get_package_share_directory("charmie_dynamics")
    return LaunchDescription([
        DeclareLaunchArgument("params", default_value=os.path.join(share, "config", "hardware.yaml"),
                              description="parameter file of the nodes"),
        DeclareLaunchArgument("use_sim_time", default_value="false", choices=["true", "false"],
                              description="run on /clock (a bag replay)"),
        *declare_arguments(),
        OpaqueFunction(function=_nodes),
    ])
