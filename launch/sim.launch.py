"""Simulation bring-up: model loader, dynamics node and trajectory player (optional RViz).

    ros2 launch charmie_dynamics sim.launch.py [rviz:=true] [use_sim_time:=true] [params:=FILE]

Same nodes and parameter file as ``charmie-dynamics bringup --mode sim``.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("charmie_dynamics")
    params = LaunchConfiguration("params")
    sim_time = {"use_sim_time": LaunchConfiguration("use_sim_time")}
    return LaunchDescription([
        DeclareLaunchArgument("params", default_value=os.path.join(share, "config", "sim.yaml"),
                              description="parameter file of the nodes"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="run on /clock, published by the trajectory player"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz"),
        Node(package="charmie_dynamics", executable="model_loader", parameters=[params, sim_time],
             output="screen"),
        Node(package="charmie_dynamics", executable="dynamics", parameters=[params, sim_time],
             output="screen"),
        Node(package="charmie_dynamics", executable="trajectory_player",
             parameters=[params, sim_time, {"publish_clock": LaunchConfiguration("use_sim_time")}],
             output="screen"),
        Node(package="rviz2", executable="rviz2",
             arguments=["-d", os.path.join(share, "config", "charmie.rviz")],
             parameters=[sim_time], condition=IfCondition(LaunchConfiguration("rviz"))),
    ])
