"""ROS 2 interface: nodes, launch helpers and message conversions.

Only the modules named ``*_node.py``, ``messages.py``, ``qos.py`` and ``bringup.py`` import
rclpy; ``inputs.py`` is the pure input handling the dynamics node calls.
"""
