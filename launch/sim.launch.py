"""Simulation bring-up: model loader, dynamics node, and either the trajectory player
(``mode:=kinematic``, playback of a motion) or the simulator node (``mode:=dynamic``, the
forward dynamics driven by its actuators; it publishes /clock and the other nodes run on it).

    ros2 launch charmie_dynamics sim.launch.py [mode:=kinematic|dynamic] [rviz:=true]
        [use_sim_time:=true] [params:=FILE]

Same nodes and parameter file as ``charmie-dynamics bringup --mode sim [--sim dynamic]``.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, LaunchConfigurationEquals
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("charmie_dynamics")
    params = LaunchConfiguration("params")
    mode = LaunchConfiguration("mode")
    sim_time = {"use_sim_time": LaunchConfiguration("use_sim_time")}
    return LaunchDescription([
        DeclareLaunchArgument("params", default_value=os.path.join(share, "config", "sim.yaml"),
                              description="parameter file of the nodes"),
        DeclareLaunchArgument("mode", default_value="kinematic",
                              description="kinematic (trajectory player) or dynamic (simulator)"),
        DeclareLaunchArgument(
            "use_sim_time",
            default_value=PythonExpression(["'true' if '", mode, "' == 'dynamic' else 'false'"]),
            description="run on /clock (default: true in dynamic mode)"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz"),
        Node(package="charmie_dynamics", executable="model_loader", parameters=[params, sim_time],
             output="screen"),
        Node(package="charmie_dynamics", executable="dynamics", parameters=[params, sim_time],
             output="screen"),
        Node(package="charmie_dynamics", executable="trajectory_player",
             parameters=[params, sim_time, {"publish_clock": LaunchConfiguration("use_sim_time")}],
             condition=LaunchConfigurationEquals("mode", "kinematic"), output="screen"),
        # the simulator owns simulated time: it runs on the wall clock and publishes /clock
        Node(package="charmie_dynamics", executable="simulator",
             parameters=[params, {"use_sim_time": False}],
             condition=LaunchConfigurationEquals("mode", "dynamic"), output="screen"),
        Node(package="rviz2", executable="rviz2",
             arguments=["-d", os.path.join(share, "config", "charmie.rviz")],
             parameters=[sim_time], condition=IfCondition(LaunchConfiguration("rviz"))),
    ])
