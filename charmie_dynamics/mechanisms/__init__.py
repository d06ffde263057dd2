"""Mechanisms on top of the tree: indirectly actuated joints, auxiliary bodies, loops."""
