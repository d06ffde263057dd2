"""Where rclpy differs between the ROS 2 distros the package runs on: Humble (rclpy 3.3),
Jazzy (7.1) and Kilted (9.x, and the PyPI wheels CI runs).

Each difference is detected by the feature itself (an attribute, a keyword), never by a
version string, and this module is the only place that does it: test/test_ros_api.py checks
every other rclpy, launch and message call of the package against Humble's, Jazzy's and
Kilted's API lists (test/data/ros_api/).
"""
from __future__ import annotations

from typing import Optional

import rclpy
import rclpy.logging
import rclpy.subscription
from rclpy.context import Context
from rclpy.executors import Executor
from rclpy.impl.logging_severity import LoggingSeverity
from rclpy.subscription import Subscription


def logger_level(name: str) -> LoggingSeverity:
    """The level to restore on logger ``name`` after changing it for a while: the one set on
    it (UNSET where it inherits its parent's) where rclpy can read it, its effective level
    where it cannot.

    ``rclpy.logging.get_logger_level`` came with rclpy 4.1 (Iron, Jazzy, Kilted). Humble's
    reads only the effective level; restoring that pins the logger at it (INFO unless
    configured), which a later change of the root level then no longer moves."""
    getter = getattr(rclpy.logging, "get_logger_level", None)
    if getter is None:
        return rclpy.logging.get_logger_effective_level(name)
    return getter(name)


def events_executor(context: Optional[Context] = None) -> Optional[Executor]:
    """rclpy's events executor (C++, much less overhead per message) where the distro has it
    (``rclpy.experimental``: Kilted and newer), else None."""
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return None
    return EventsExecutor(context=context)


def sender_in_message_info() -> bool:
    """Whether rclpy names a message's sender to its subscription callback: a callback of
    two parameters gets ``MessageInfo`` (Jazzy and Kilted), whose ``publisher_gid`` only
    Kilted's has; Humble passes no info. Such a callback needs the single-threaded executor:
    Kilted's events executor ends the process on it ("SystemError: null argument to internal
    routine"), so :func:`~charmie_dynamics.ros.common.run.make_executor` takes that one for a node
    whose ``wants_sender`` is true."""
    info = getattr(rclpy.subscription, "MessageInfo", None)
    return hasattr(Subscription, "CallbackType") and \
        "publisher_gid" in getattr(info, "__annotations__", {})

