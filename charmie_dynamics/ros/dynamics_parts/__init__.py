"""The dynamics node's own parts (the node is ros/dynamics_node.py)."""
