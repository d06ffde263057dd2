"""ROS 2 interface, grouped by whom each piece serves.

- here: the nodes, one module each (``dynamics_node``, ``model_loader_node``,
  ``simulator_node``, ``trajectory_player_node``, ``trajectory_effort_proxy``);
- ``dynamics_parts/``: the dynamics node's own parts (parameters, model slot, control path,
  model intake, monitoring, diagnostics, safe policy, CDR messages);
- ``common/``: what several nodes share (running a node, parameters, QoS, messages, the
  measurements' checks, joint maps, model sources and updates);
- ``tools/``: the command line's ROS side (``bringup``, ``view --ros``, the robot's recordings);
- ``launch_support/``: what the launch files import.

rclpy is imported by the nodes and by the pieces that make ROS objects; the pure pieces
(test/test_layering.py's ``ROS_FREE``) run without it.
"""
