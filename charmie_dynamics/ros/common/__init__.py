"""What the nodes share: running a node, parameters, QoS, messages, the measurements' checks,
joint maps, model sources and model updates."""
