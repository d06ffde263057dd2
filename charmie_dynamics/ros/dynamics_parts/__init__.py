"""The dynamics node's own parts (the node is ros/dynamics_node.py): its control path, model
intake, model slot, monitoring outputs, /diagnostics, parameters and messages."""
