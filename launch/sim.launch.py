"""Simulation bring-up: model loader, dynamics node, and either the trajectory player
(``mode:=kinematic``, playback of a motion) or the simulator node (``mode:=dynamic``, the
forward dynamics driven by its actuators; it publishes /clock and the other nodes run on it).

    ros2 launch charmie_dynamics sim.launch.py [mode:=kinematic|dynamic] [rviz:=true]
        [use_sim_time:=true] [params:=FILE] [namespace:=NS] [model_file:=FILE]
        [model_source:=topic|robot_description|file] [overlay_file:=FILE] [frame_prefix:=PREFIX]
        [publish_tf:=all|not_in_urdf|none] [publish_robot_description:=true|false]
        [log_level:=debug|info|warn|error|fatal]

An argument left empty keeps the params file's value
(charmie_dynamics/ros/launch_support/launch_arguments.py).
Same nodes and parameter file as ``charmie-dynamics bringup --mode sim [--sim dynamic]``.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch_ros.actions import Node

from charmie_dynamics.ros.launch_support.launch_arguments import (declare_arguments,
                                                                  given_overrides, node_options)
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PythonExpression


def _nodes(context):
    config = context.launch_configurations
    sim_time = config["use_sim_time"] == "true"
    params = [config["params"], {"use_sim_time": sim_time}, given_overrides(context)]
    options = dict(package="charmie_dynamics", output="screen", **node_options(context))
    nodes = [Node(executable="model_loader", parameters=params, **options),
             Node(executable="dynamics", parameters=params, **options)]
    if config["mode"] == "kinematic":
        nodes.append(Node(executable="trajectory_player",
                          parameters=params + [{"publish_clock": sim_time}], **options))
    else:
        # the simulator owns simulated time: it runs on the wall clock and publishes /clock
        nodes.append(Node(executable="simulator", parameters=params + [{"use_sim_time": False}],
                          **options))
    return nodes


def generate_launch_description():
    share = get_package_share_directory("charmie_dynamics")
    mode = LaunchConfiguration("mode")
    return LaunchDescription([
        DeclareLaunchArgument("params", default_value=os.path.join(share, "config", "sim.yaml"),
                              description="parameter file of the nodes"),
        DeclareLaunchArgument("mode", default_value="kinematic", choices=["kinematic", "dynamic"],
                              description="kinematic (trajectory player) or dynamic (simulator)"),
        DeclareLaunchArgument(
            "use_sim_time",
            default_value=PythonExpression(["'true' if '", mode, "' == 'dynamic' else 'false'"]),
            description="run on /clock (default: true in dynamic mode)"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz"),
        *declare_arguments(),
        OpaqueFunction(function=_nodes),
        Node(package="rviz2", executable="rviz2",
             arguments=["-d", os.path.join(share, "config", "charmie.rviz")],
             parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}],
             condition=IfCondition(LaunchConfiguration("rviz"))),
    ])
