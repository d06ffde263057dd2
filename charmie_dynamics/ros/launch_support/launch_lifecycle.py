"""Launch actions that drive the managed dynamics node (launch/hardware.launch.py): configure
once its lifecycle services answer, activate once it is inactive, then the given actions
(the effort controller's spawner) once it is active; no sleeps.

launch_ros's own configure request, emitted as the process starts, waits for the node's
``change_state`` service with rclpy's ``wait_for_service``; a Ctrl-C during that wait (the
node's first seconds: importing numpy, numba and rclpy) destroys the launch's ROS node under
it, and ``ros2 launch`` then ends with "cannot use Destroyable because destruction was
requested" and exit status 1. Here the request is emitted only once the service is ready,
polled without blocking in rclpy, and a shutdown meanwhile just ends the wait.
"""
from __future__ import annotations

import time
from typing import Sequence

from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.events.lifecycle import ChangeState
from launch_ros.ros_adapters import get_ros_node
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState as ChangeStateService

from launch import LaunchContext
from launch.action import Action
from launch.actions import EmitEvent, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessStart
from launch.events import matches_action

POLL_PERIOD = 0.05      # s between looks at the node's change_state service


def _change(node: LifecycleNode, transition: int) -> ChangeState:
    return ChangeState(lifecycle_node_matcher=matches_action(node), transition_id=transition)


def _configure_when_ready(node: LifecycleNode, context: LaunchContext) -> None:
    """Emit configure once ``node``'s change_state service is ready (a worker thread)."""
    ros_node = get_ros_node(context)
    client = ros_node.create_client(ChangeStateService, f"{node.node_name}/change_state")

    def wait() -> None:
        try:
            # until the launch shuts down or the node's process has ended
            while not context.is_shutdown and node.return_code is None:
                if client.service_is_ready():
                    event = _change(node, Transition.TRANSITION_CONFIGURE)
                    context.asyncio_loop.call_soon_threadsafe(
                        lambda: context.emit_event_sync(event))
                    return
                time.sleep(POLL_PERIOD)
        except Exception:       # noqa: BLE001 - the launch's ROS node destroyed: shutting down
            if not context.is_shutdown:
                raise
        finally:
            try:
                ros_node.destroy_client(client)
            except Exception:   # noqa: BLE001 - already gone with the launch's node
                pass
    context.add_completion_future(context.asyncio_loop.run_in_executor(None, wait))


def drive_lifecycle(node: LifecycleNode, on_active: Sequence[Action]) -> list[Action]:
    """The event handlers that take ``node`` from unconfigured to active and then run
    ``on_active``, once each: an operator's later deactivate and activate, or cleanup and
    configure, are theirs (no second spawner, no activation they did not ask for)."""
    return [
        RegisterEventHandler(OnProcessStart(target_action=node, on_start=[
            OpaqueFunction(function=lambda context: _configure_when_ready(node, context))],
            handle_once=True)),
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=node, start_state="configuring", goal_state="inactive",
            entities=[EmitEvent(event=_change(node, Transition.TRANSITION_ACTIVATE))],
            handle_once=True)),
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=node, start_state="activating", goal_state="active",
            entities=list(on_active), handle_once=True)),
    ]
