"""The command line's ROS side: bringup, view --ros, reading the robot's recordings."""
