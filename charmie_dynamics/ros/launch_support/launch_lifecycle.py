"""Launch actions that drive the managed dynamics node (launch/hardware.launch.py): configure
once its lifecycle services answer, activate once it is inactive, then the given actions
(the effort controller's spawner) once it is active; no sleeps.

The transitions are requested here, with a client of the launch's own ROS node, not through
launch_ros's ``ChangeState`` event: that event's handler waits for the node's
``change_state`` service in rclpy's ``wait_for_service`` (0.25 s sleeps, blind to the
launch's shutdown), and a Ctrl-C during that wait destroys the launch's ROS node under it:
``ros2 launch`` then ends with "cannot use Destroyable because destruction was requested"
and exit status 1 (seen in CI on Jazzy: a Ctrl-C just after the node's services answered,
before its configure had been sent). Here the service is polled without blocking in rclpy,
the response is awaited in short steps, and a shutdown or the node's end meanwhile just ends
the request. launch_ros's transition events still drive the handlers below.
"""
from __future__ import annotations

import time
from typing import Sequence

from launch_ros.actions import LifecycleNode
from launch_ros.event_handlers import OnStateTransition
from launch_ros.ros_adapters import get_ros_node
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState as ChangeStateService

import launch.logging
from launch import LaunchContext
from launch.action import Action
from launch.actions import OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessStart

POLL_PERIOD = 0.05      # s between looks at the node's change_state service and response
TRANSITIONS = {Transition.TRANSITION_CONFIGURE: "configure",
               Transition.TRANSITION_ACTIVATE: "activate"}


def _request(node: LifecycleNode, transition: int, context: LaunchContext) -> None:
    """Request ``transition`` of ``node`` once its change_state service is ready (a worker
    thread of the launch); a launch shutting down, or the node's process ending, ends the
    wait at any point, and a refused transition is logged. Nothing is requested once the
    launch is shutting down: its ROS node may be destroyed already (a configure that ends
    after Ctrl-C emits the activation then)."""
    if context.is_shutdown:
        return
    try:
        ros_node = get_ros_node(context)
        client = ros_node.create_client(ChangeStateService, f"{node.node_name}/change_state")
    except Exception:           # noqa: BLE001 - the launch's ROS node destroyed: shutting down
        if context.is_shutdown:
            return
        raise

    def waiting() -> bool:
        return not context.is_shutdown and node.return_code is None

    def request() -> None:
        try:
            while waiting() and not client.service_is_ready():
                time.sleep(POLL_PERIOD)
            if not waiting():
                return
            future = client.call_async(
                ChangeStateService.Request(transition=Transition(id=transition)))
            while waiting() and not future.done():
                time.sleep(POLL_PERIOD)
            if not future.done():
                future.cancel()
            elif not future.result().success:
                launch.logging.get_logger(__name__).error(
                    f"{node.node_name}: transition {TRANSITIONS.get(transition, transition)} "
                    "refused")
        except Exception:       # noqa: BLE001 - the launch's ROS node destroyed: shutting down
            if not context.is_shutdown:
                raise
        finally:
            try:
                ros_node.destroy_client(client)
            except Exception:   # noqa: BLE001 - already gone with the launch's node
                pass
    context.add_completion_future(context.asyncio_loop.run_in_executor(None, request))


def _requesting(node: LifecycleNode, transition: int) -> OpaqueFunction:
    return OpaqueFunction(function=lambda context: _request(node, transition, context))


def drive_lifecycle(node: LifecycleNode, on_active: Sequence[Action]) -> list[Action]:
    """The event handlers that take ``node`` from unconfigured to active and then run
    ``on_active``, once each: an operator's later deactivate and activate, or cleanup and
    configure, are theirs (no second spawner, no activation they did not ask for)."""
    return [
        RegisterEventHandler(OnProcessStart(
            target_action=node, on_start=[_requesting(node, Transition.TRANSITION_CONFIGURE)],
            handle_once=True)),
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=node, start_state="configuring", goal_state="inactive",
            entities=[_requesting(node, Transition.TRANSITION_ACTIVATE)],
            handle_once=True)),
        RegisterEventHandler(OnStateTransition(
            target_lifecycle_node=node, start_state="activating", goal_state="active",
            entities=list(on_active), handle_once=True)),
    ]
