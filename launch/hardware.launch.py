"""Hardware bring-up: model loader and dynamics node on the robot's topics (no sim nodes).

    ros2 launch charmie_dynamics hardware.launch.py [params:=FILE]

Same nodes and parameter file as ``charmie-dynamics bringup --mode hardware``.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("charmie_dynamics")
    params = LaunchConfiguration("params")
    return LaunchDescription([
        DeclareLaunchArgument("params", default_value=os.path.join(share, "config", "hardware.yaml"),
                              description="parameter file of the nodes"),
        Node(package="charmie_dynamics", executable="model_loader", parameters=[params],
             output="screen"),
        Node(package="charmie_dynamics", executable="dynamics", parameters=[params],
             output="screen"),
    ])
