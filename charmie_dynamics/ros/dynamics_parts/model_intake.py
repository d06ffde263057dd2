"""Where the dynamics node's models come from after ``model_file``: texts on ``model_topic``
(``model_source: topic``), URDFs on ``robot_description`` built with ``overlay_file``
(``robot_description``), or nothing more (``file``).

Texts are parsed on a worker thread (``model_updates.ModelParser``; a text over 128 KiB is
first validated in a child process, killed after 30 s: ``model.isolated``) and handed back to
the executor's thread, where the node installs them. With ``accept_model_updates: once`` only
the first model (from ``model_file`` or the topic) is installed; a later, different one is
held as the pending model until the ``~/accept_model_update`` service (std_srvs/Trigger)
installs it. With ``model_publishers`` a text is taken only from the nodes named there.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

from rclpy.lifecycle import LifecycleNode
from std_msgs.msg import String
from std_srvs.srv import Trigger

from ...model import model_from_text
from ...model.isolated import check_in_child
from ...model.model import Model
from ..common import qos
from ..common.distro import sender_in_message_info
from ..common.model_source import model_from_description
from ..common.model_updates import (Decision, ModelParser, ModelUpdates, PreparedModel,
                                    UpdateRefused, model_change, prepare_model, senders_problem)

MODEL_POLL_PERIOD = 0.02       # s: how soon a parsed model is installed
PUBLISHER_NAME_WAIT = 10.0     # s a model text waits for its publishers' names (model_publishers)


def model_topic_of(model_source: str, model_topic: str) -> Optional[str]:
    """The topic models come on after model_file (None: ``model_source: file``)."""
    return {"topic": model_topic, "robot_description": "robot_description",
            "file": None}[model_source]


def wants_sender(model_source: str, model_topic: str, model_publishers: list[str]) -> bool:
    """Whether the model subscription asks rclpy for each text's sender (``model_publishers``
    given, where rclpy names it; run.make_executor then takes the single-threaded executor)."""
    return bool([n for n in model_publishers if n] and model_topic_of(model_source, model_topic)) \
        and sender_in_message_info()


class ModelIntake:
    """The models of one configured node after ``model_file`` (module docstring): made by
    configure, closed by cleanup. ``node``: the dynamics node (ros/dynamics_node.py), whose
    parameters and joint map it reads; ``install`` is the node's: it uses a prepared model
    from then on (executor thread)."""

    def __init__(self, node: LifecycleNode, install: Callable[[PreparedModel], None]) -> None:
        self.node = node
        self.install = install
        p = node.p
        self.overlay = p.overlay_file or None
        self.topic = model_topic_of(p.model_source, p.model_topic)
        self.publishers = [name for name in p.model_publishers if name]
        self.updates = ModelUpdates(p.accept_model_updates)
        self.last_rejected: Optional[str] = None          # the text last logged as rejected
        self.awaiting: Optional[tuple[str, tuple, float, bool]] = None
        self.parser: Optional[ModelParser[PreparedModel]] = None    # started by start()

    def subscribe(self) -> None:
        """The model topic, the service and the timers, which run only while a parse is under
        way or its result waits (or a text waits for its publishers' names)."""
        node = self.node
        self.model_timer = node.create_timer(MODEL_POLL_PERIOD, self.collect)
        self.model_timer.cancel()
        self.names_timer = node.create_timer(0.1, self.check_senders)
        self.names_timer.cancel()
        if self.topic:
            # the node's choice at construction, which its executor was chosen by
            node.create_subscription(
                String, self.topic,
                self.on_model if node.wants_sender
                else lambda msg: self.on_model(msg, None), qos.LATCHED)    # (msg, MessageInfo)
        node.create_service(Trigger, "~/accept_model_update", self.on_accept_model_update)

    def start(self) -> None:
        """The parse worker, started last in configure so that an error leaves no thread."""
        self.parser = ModelParser(self.parse, self.check_large)

    def close(self) -> None:
        if self.parser is not None:
            self.parser.close()
        self.parser = None

    def prepare(self, model: Model, text: str, source: str) -> PreparedModel:
        node = self.node
        p = node.p
        return prepare_model(model, text, source, p.feedforward_joints, p.wrench_joints,
                             node.joint_map, p.max_loop_jump, (p.world_frame, p.base_frame))

    def parse(self, text: str) -> PreparedModel:
        """The worker thread's job: size cap, guarded parse, validation, buffers."""
        p = self.node.p
        if p.model_source == "robot_description":
            model = model_from_description(text, self.topic, p.max_model_bytes, self.overlay)
        else:
            model = model_from_text(text, self.topic, p.max_model_bytes)
        return self.prepare(model, text, self.topic)

    def check_large(self, text: str) -> None:
        """A large text's validation in a child process (the worker thread waits without the
        GIL; a refused or too slow text never costs this process its parse)."""
        p = self.node.p
        overlay = self.overlay if p.model_source == "robot_description" else None
        check_in_child(text, self.topic, p.max_model_bytes, overlay)

    def on_model(self, msg: String, info: Optional[dict]) -> None:
        node = self.node
        node.received["model"] += 1
        if self.publishers:
            # the sender where rclpy names it (Kilted's publisher_gid); else every publisher
            # on the topic now, which a sender that has left already escapes (Humble, Jazzy)
            sender = (info or {}).get("publisher_gid")
            senders = (tuple(sender["data"]),) if sender else tuple(self.senders())
            if self.awaiting is not None:        # replaced by the newest text: said
                node.rejected["model_publisher"] += 1
                if node.log_throttles["model_replaced"]():
                    node.get_logger().warning("a model text waiting for its publishers' names "
                                              "was replaced by a newer one")
            self.awaiting = (msg.data, senders, time.monotonic() + PUBLISHER_NAME_WAIT,
                             bool(sender))
            self.check_senders()
            return
        self.parser.submit(msg.data)
        self.model_timer.reset()

    def senders(self) -> dict:
        """The publishers on the model topic now: endpoint gid -> (namespace, node name)."""
        node = self.node
        topic = node.resolve_topic_name(self.topic)
        return {tuple(info.endpoint_gid): (info.node_namespace, info.node_name)
                for info in node.get_publishers_info_by_topic(topic)}

    def check_senders(self) -> None:
        """Take or refuse the text waiting for its publishers' names (model_publishers); while
        a name is not discovered yet, look again every 0.1 s, for PUBLISHER_NAME_WAIT s."""
        if self.awaiting is None:
            self.names_timer.cancel()
            return
        node = self.node
        text, gids, deadline, named_by_message = self.awaiting
        now = self.senders()
        problem = senders_problem({gid: now.get(gid) for gid in gids},
                                  self.publishers, node.get_namespace(), named_by_message)
        if problem is None and time.monotonic() < deadline:
            self.names_timer.reset()
            return
        self.names_timer.cancel()
        self.awaiting = None
        if problem is None:
            problem = f"its publishers' node names were not discovered in {PUBLISHER_NAME_WAIT:g} s"
        if problem:
            node.rejected["model_publisher"] += 1
            if node.log_throttles["model_refused"]():
                node.get_logger().error(f"model text on {node.resolve_topic_name(self.topic)}"
                                        f" refused: {problem} (model_publishers)")
            return
        self.parser.submit(text)
        self.model_timer.reset()

    def collect(self) -> None:
        """Install (or hold, or reject) what the worker finished; stop polling when idle."""
        node = self.node
        for outcome in self.parser.results():
            decision = self.updates.decide(outcome)
            if decision is Decision.REJECT:
                node.rejected[decision.value] += 1
                if outcome.text != self.last_rejected:      # a flood of one text: one line
                    self.last_rejected = outcome.text
                    node.get_logger().error(f"model rejected, keeping the previous one: "
                                            f"{outcome.error}")
                continue
            node.events[decision.value] += 1
            if decision is Decision.INSTALL:
                self.install(outcome.value)
            elif decision is Decision.HOLD:
                node.get_logger().warning(
                    f"model update on {self.topic} held, not installed "
                    f"(accept_model_updates: once; call ~/accept_model_update to install it): "
                    f"{model_change(node.model, outcome.value.model)}")
        if self.parser.idle():
            self.model_timer.cancel()

    def on_accept_model_update(self, request: Trigger.Request,
                               response: Trigger.Response) -> Trigger.Response:
        try:
            prepared = self.updates.accept_pending(self.node.p.accept_model_hash)
        except UpdateRefused as exc:
            response.success, response.message = False, str(exc)
            return response
        change = model_change(self.node.model, prepared.model)
        self.install(prepared)
        response.success = True
        response.message = f"installed the pending model from {prepared.source}: {change}"
        return response
