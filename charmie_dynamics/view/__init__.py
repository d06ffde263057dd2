"""A view of the robot in a web browser, without RViz (``charmie-dynamics view``).

``drawing`` turns placements into what is drawn (numpy only); ``scene`` draws it with viser,
an optional dependency (``pip install 'charmie_dynamics[view]'``), imported only when the
command runs; the live mode's ROS side is ``charmie_dynamics.ros.tools.view_feed``.
"""
from .cli import add_view_parser

__all__ = ["add_view_parser"]
