"""The robot's input topics, names and units as a command line gives them (``identify`` reading
a recording, ``view --ros`` reading the live robot), in the dynamics node's terms: its
``joint_states`` topics (several publishers may share one, or each have its own), its
``actuator_states_topic``, ``odometry_topic``, ``joint_map_file`` and ``max_joint_age``."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from ...model.model import Model
from ...recordings import JOINT_STATE, ODOMETRY
from ..common.joint_map import JointMap, JointMapError, read_joint_map

#: The longest --max-joint-age, s
MAX_JOINT_AGE = 10.0


@dataclass(frozen=True)
class RobotTopics:
    """Where the inputs come from: joint_states topics (several publishers may share one),
    the actuator lengths' topic and the base's odometry ("": none)."""

    joint_states: tuple[str, ...] = ("/joint_states",)
    actuator_states: str = "/actuator_states"
    odometry: str = ""

    def types(self) -> dict[str, str]:
        """Each topic's message type."""
        types = dict.fromkeys(self.joint_states, JOINT_STATE)
        if self.actuator_states:
            types[self.actuator_states] = JOINT_STATE
        if self.odometry:
            types[self.odometry] = ODOMETRY
        return types


def _max_joint_age(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= MAX_JOINT_AGE:
        raise argparse.ArgumentTypeError(f"--max-joint-age: got {text!r}, expected seconds in "
                                         f"(0, {MAX_JOINT_AGE:g}]")
    return value


def add_joint_map_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--joint-map", type=Path, default=None,
                        help="the robot's names and units (the dynamics node's joint_map_file)")


#: The defaults of :func:`add_robot_input_arguments`' options (None: not given).
ROBOT_INPUT_DEFAULTS = {"joint_map": None, "joint_states": None,
                        "actuator_states": "/actuator_states", "odometry": "",
                        "max_joint_age": 0.1}


def add_robot_input_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the robot's input topics, names and units (module docstring)."""
    add_joint_map_argument(parser)
    parser.add_argument("--joint-states", action="append", metavar="TOPIC",
                        help="a joint_states topic; repeat for several (default /joint_states)")
    parser.add_argument("--actuator-states", default=ROBOT_INPUT_DEFAULTS["actuator_states"],
                        metavar="TOPIC",
                        help="the actuator lengths' topic, where there is one (default "
                             "/actuator_states; the lengths may come on joint_states)")
    parser.add_argument("--odometry", default=ROBOT_INPUT_DEFAULTS["odometry"], metavar="TOPIC",
                        help="the base's nav_msgs/Odometry topic (e.g. /odom), for a model "
                             "with a base: section")
    parser.add_argument("--max-joint-age", type=_max_joint_age,
                        default=ROBOT_INPUT_DEFAULTS["max_joint_age"], metavar="S",
                        help="how far apart in time the joints' samples merged into one "
                             "state may lie (the node's max_joint_age; default 0.1)")


def robot_input_options_given(args: argparse.Namespace) -> list[str]:
    """The robot input options given other values than their defaults, as typed."""
    return ["--" + name.replace("_", "-") for name, default in ROBOT_INPUT_DEFAULTS.items()
            if getattr(args, name) != default]


def joint_map_of(args: argparse.Namespace, model: Model) -> JointMap:
    """``--joint-map``'s map, checked against ``model``; :class:`InputError` in one line."""
    try:
        joint_map = read_joint_map([], str(args.joint_map) if args.joint_map else "")
        joint_map.check(tuple(dict.fromkeys(model.input_names + model.coordinate_names)),
                        model.source)
    except JointMapError as exc:
        raise InputError(f"--joint-map {exc}") from None
    return joint_map


def robot_inputs(args: argparse.Namespace, model: Model) -> tuple[RobotTopics, JointMap]:
    """The topics and the joint map of :func:`add_robot_input_arguments`' options."""
    if args.odometry and model.base is None:
        raise InputError(f"--odometry {args.odometry}: the model {model.source} has no base: "
                         "section (no planar base coordinates to take from odometry)")
    topics = RobotTopics(tuple(dict.fromkeys(args.joint_states or ["/joint_states"])),
                         args.actuator_states, args.odometry)
    roles = [("--joint-states", t) for t in topics.joint_states] + \
        [("--actuator-states", topics.actuator_states), ("--odometry", topics.odometry)]
    seen: dict[str, str] = {}
    for option, topic in roles:
        if topic and seen.setdefault(topic, option) != option:
            raise InputError(f"{option} {topic}: also given as {seen[topic]}, expected each "
                             "topic in one role (the actuator lengths may come on joint_states: "
                             "give --actuator-states '' then)")
    return topics, joint_map_of(args, model)
