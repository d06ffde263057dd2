"""The dynamics node's parameters: the declared table (descriptions, read-only flags and
ranges, ``ros2 param describe`` shows them) and the checks a declared range cannot express
(pure Python: no rclpy here)."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from ...documents import DEFAULT_MAX_BYTES
from ...kinematics.limits import POSITION_TOLERANCE, VELOCITY_TOLERANCE
from ..common.inputs import JOINT_STATE_POLICIES
from ..common.model_source import MODEL_SOURCES
from ..common.outputs import TF_POLICIES
from ..common.param_spec import Param
from ..common.parameter_types import DynamicsParameters
from .learned_source import FEEDFORWARD_SOURCES
from .stale_policy import POLICIES as STALE_POLICIES

ACCELERATION_SOURCES = ("zero", "estimate", "reference")
MODEL_UPDATES = ("once", "always")
DEACTIVATE_COMMANDS = ("gravity", "zero", "none")
RATE_PARAMETERS = ("publish_rate_limit", "tf_rate", "output_rate")     # 0 (off) or 1 to 10000 Hz
#: Default most points of a reference trajectory: 100 s at 100 Hz; 100,000 points took the
#: node's executor 3.5 s (deserializing and checking them)
MAX_REFERENCE_POINTS = 10_000
#: What keeps a wrong input from becoming a command: read-only at run time with
#: ``safety_parameters_read_only`` (anyone on the DDS domain can set parameters)
SAFETY_PARAMETERS = ("stale_timeout", "stale_policy", "clamp_feedforward", "check_position_limits",
                     "position_limit_tolerance", "velocity_limit_tolerance", "acceleration_source",
                     "acceleration_filter_cutoff", "gravity_only", "max_stamp_lead",
                     "publish_rate_limit", "tf_rate", "output_rate", "max_reference_points",
                     "max_model_bytes", "accept_model_hash")

PARAMETERS = {
    "model_source": Param("topic", "Where models come from after model_file: topic (model texts on "
                          "model_topic) | robot_description (URDFs on the robot_description topic, "
                          "transient local, with overlay_file) | file (model_file only)"),
    "model_file": Param("", "Model file (YAML, or a URDF with overlay_file) to load at start-up; "
                        "empty: wait for the model from model_source"),
    "overlay_file": Param(
        "", "Mechanism overlay (YAML) of a URDF model: applied to a URDF model_file and to every "
        "robot_description; empty: none"),
    "model_topic": Param(
        "charmie/model", "std_msgs/String with the validated model (transient local)", topic=True),
    "max_model_bytes": Param(
        DEFAULT_MAX_BYTES, "Largest model text (bytes, UTF-8) read from model_file, model_topic or "
        "robot_description; larger ones are refused before parsing", False, 1024, 256 * 2**20),
    "safety_parameters_read_only": Param(
        False, "true: " + ", ".join(SAFETY_PARAMETERS) + " cannot change after start-up (true in "
        "config/hardware.yaml)"),
    "accept_model_hash": Param(
        "", "The hash of the pending model (model_pending_hash in /diagnostics) that "
        "~/accept_model_update may install; any other pending model is not installed (with "
        "safety_parameters_read_only: set at start-up only)", False),
    "model_publishers": Param(
        [""], "Nodes (NAME in this namespace, or /NAMESPACE/NAME) that may publish models on "
        "model_topic or robot_description: a model text from another node is refused "
        "(rejected_model_publisher; its sender where rclpy names it, Kilted, else while another "
        "node publishes there); empty: any node (DDS does not authenticate a node's name: SROS2 "
        "does)"),
    "accept_model_updates": Param(
        "once", "once: only the first model (model_file or model_source) is installed, later ones "
        "wait for the ~/accept_model_update service | always: every valid model from model_source "
        "is installed"),
    "joint_states_topic": Param(
        "joint_states", "sensor_msgs/JointState input (sensor-data QoS)", topic=True),
    "joint_state_policy": Param(
        "merge", "merge: names the model does not use are ignored (counted in /diagnostics) and "
        "partial messages (several publishers) are merged joint by joint | strict: every message "
        "holds exactly the model's inputs; joint_states and actuator_states alike"),
    "max_joint_age": Param(
        0.1, "merge: seconds a joint's value may be stamped before the newest joint's for the "
        "merged state to be evaluated (joint_too_old)", True, 0.0001, 3600.0),
    "joint_name_map": Param(
        [""], "MODEL=HARDWARE entries (theta7a=left_shoulder_joint): the robot's name of a model "
        "input or coordinate, read on joint_states/actuator_states (a mapped input under its "
        "hardware name only) and written on every output; unmapped names are the model's"),
    "joint_map_file": Param(
        "", "YAML file with the sections names (model: hardware), scale and offset (model value = "
        "scale * measured + offset; inverted on every published position), effort_scale (published "
        "effort = effort_scale * N or N m) and links (model body: URDF link, every published "
        "frame); empty: none"),
    "actuator_states_topic": Param(
        "actuator_states", "sensor_msgs/JointState of the actuator lengths, m and m/s", topic=True),
    "odometry_topic": Param(
        "", "nav_msgs/Odometry of REP 103's base_link giving the model's planar base coordinates "
        "(its base: section; CHARMIE's d1, d2, theta3); empty: from joint_states", topic=True),
    "reference_topic": Param(
        "reference_trajectory", "trajectory_msgs/JointTrajectory for acceleration_source=reference",
        topic=True),
    "max_reference_points": Param(
        MAX_REFERENCE_POINTS, "Most points of a reference trajectory; longer ones are refused "
        "(invalid_value) before they are read", False, 1, 1_000_000),
    "publish_tf": Param(
        "all", "Frames published on /tf and /tf_static: all | not_in_urdf (only those "
        "robot_state_publisher cannot publish from the hardware's joint_states: bodies moved by "
        "solved coordinates, actuators, springs, balancer bars) | auxiliary (actuators, springs, "
        "balancer bars: robot_state_publisher fed with completed_joint_states places every body) | "
        "none"),
    "publish_base_transform": Param(
        True, "Publish the planar base's transforms (world -> base body); false when the base "
        "driver's odometry owns odom -> base_link"),
    "base_frame": Param("", "Published name of the base body's frame (the body the model's base: "
                        "section turns; published as REP 103's base_link, x forward), e.g. "
                        "base_link; empty: its links: name, else base_link where the base: section "
                        "turns it (CHARMIE), else the body's own"),
    "publish_solved_joint_states": Param(
        False, "Publish the coordinates the node solves (indirectly actuated joints, loops' "
        "dependent joints), in hardware names and units, stamped with the evaluated input's stamp, "
        "on joint_states_topic at tf_rate: one more partial publisher for robot_state_publisher "
        "and MoveIt (the node skips its own message); with publish_tf not_in_urdf the bodies they "
        "move are then robot_state_publisher's"),
    "completed_joint_states_topic": Param(
        "completed_joint_states", "sensor_msgs/JointState of every coordinate, solved ones "
        "included, in hardware names, at tf_rate (for robot_state_publisher)", topic=True),
    "feedforward_state_topic": Param(
        "feedforward_states", "sensor_msgs/JointState: a stamped, named copy (effort field) of "
        "every feedforward sent", topic=True),
    "max_loop_jump": Param(
        0.5, "A model with loops: the farthest (rad or m, largest independent coordinate) an input "
        "may lie from the last solution; a farther one is rejected (loop_jump) after the solution "
        "moved this far toward it, so one input's cost stays bounded (about max_loop_jump / 0.05 "
        "Newton solves)", True, 0.05, 100.0),
    "frame_prefix": Param("", "Prefix of every published frame name, as robot_state_publisher's"),
    "world_frame": Param("world", "Name of the model's ground frame (before the prefix)"),
    "publish_rate_limit": Param(
        0.0, "Most evaluations per second, 0 or 1 to 10000; faster inputs are counted as throttled "
        "(0: every input)", False, 0.0, 10000.0),
    "tf_rate": Param(
        100.0, "Most /tf and wrench_markers messages per second, 0 or 1 to 10000 (0: one per "
        "evaluation)", False, 0.0, 10000.0),
    "output_rate": Param(
        100.0, "Most joint_loads, actuator_loads and joint_wrenches messages per second, 0 or 1 to "
        "10000 (0: one per evaluation); the feedforward follows every evaluation",
        False, 0.0, 10000.0),
    "acceleration_source": Param(
        "zero", "zero | estimate (filtered differences of velocities) | reference", False),
    "acceleration_filter_cutoff": Param(
        20.0, "Cut-off frequency (Hz) of the estimate filter", False, 0.01, 10000.0),
    "allow_slow_kernels": Param(False, "true: start even where the numerical kernels run as plain "
                                "Python (numba missing or older than 0.57, e.g. ROS 2 Humble's apt "
                                "numba 0.55), about a thousand times slower than compiled; false: "
                                "such a start is refused with one line naming the cause"),
    "gravity_only": Param(
        False, "Gravity compensation: velocities and accelerations taken as zero", False),
    "feedforward_topic": Param(
        "feedforward_efforts", "std_msgs/Float64MultiArray for an effort "
        "forward_command_controller", topic=True),
    "feedforward_joints": Param(
        [""], "Order of the feedforward efforts: model inputs (coordinates and actuators); empty: "
        "all inputs"),
    "feedforward_source": Param("model", "model: the feedforward is the model's inverse dynamics | "
                                "learned: a network's (feedforward_network_file), published only "
                                "where every input lies within learned_feedforward_tolerance of "
                                "the model's, else the model's (counted); the safe policy's "
                                "gravity and zeros stay the model's"),
    "feedforward_network_file": Param("", "feedforward_source learned: the network file "
                                      "(charmie-dynamics learn's feedforward.npz) for the model's "
                                      "inputs; another model's or other inputs' is refused"),
    "learned_feedforward_tolerance": Param(
        0.05, "feedforward_source learned: the largest distance, as a fraction of each input's "
        "effort limit, of the network's effort from the model's for it to be published",
        True, 0.0, 1.0),
    "clamp_feedforward": Param(
        False, "Clamp the feedforward (only) at the model's effort and force limits; efforts "
        "beyond them are flagged in /diagnostics either way", False),
    "check_position_limits": Param(True, "Reject inputs beyond the model's joint position limits "
                                   "(beyond_limits); false for motions that leave them on purpose "
                                   "(the papers' validation motion, in sim)", False),
    "position_limit_tolerance": Param(
        POSITION_TOLERANCE, "rad or m an input position may lie beyond the model's joint limits "
        "before it is rejected (beyond_limits)", False, 0.0, 1.0),
    "velocity_limit_tolerance": Param(
        VELOCITY_TOLERANCE, "Fraction by which an input velocity may exceed the model's velocity "
        "limit before it is rejected (beyond_limits)", False, 0.0, 10.0),
    "max_stamp_lead": Param(
        1.0, "Seconds an input stamp may lie ahead of the node clock (future_stamp); also the jump "
        "back of the clock that re-arms the stamp checks", False, 0.001, 3600.0),
    "stale_timeout": Param(
        0.2, "Seconds the last valid feedforward is held after inputs stop or turn bad",
        False, 0.001, 3600.0),
    "stale_policy": Param(
        "gravity", "After stale_timeout: gravity (compensation at the last valid positions) | zero",
        False),
    "watchdog_rate": Param(20.0, "Hz of the stale-input watchdog", True, 1.0, 1000.0),
    "wrench_joints": Param(
        [""], "Bodies whose joint reaction wrench is published (WrenchStamped on "
        "joint_wrenches/<body>, and arrows); empty: the model's base body, the first with mass "
        "(the floor load; CHARMIE's body_3)"),
    "marker_scale": Param(
        0.002, "Arrow length per newton in the wrench markers, m/N", False, 1e-6, 1.0),
    "autostart": Param(True, "true: configure and activate at start-up (one-command use); false: "
                       "wait in the lifecycle's unconfigured state for configure and activate "
                       "(a launch file or `ros2 lifecycle set`), as the hardware launch does"),
    "deactivate_command": Param("gravity", "The command published once on deactivate, shutdown, "
                                "SIGINT or SIGTERM (a forward effort controller holds the last "
                                "command it received): gravity (compensation at the last valid "
                                "positions; zeros before any) | zero | none (publish nothing)"),
    "diagnostics_period": Param(1.0, "Seconds between /diagnostics messages", True, 0.005, 3600.0),
}


def check_frames(p: DynamicsParameters) -> Optional[str]:
    """Frame names tf2 takes: ``world_frame`` and a given ``base_frame`` non-empty, distinct,
    without whitespace or '/' at either end; ``frame_prefix`` without a leading '/' or '//'
    (tf2 refuses frame ids starting with '/')."""
    for key in ("world_frame", "base_frame"):
        name = getattr(p, key)
        if key == "base_frame" and not name:
            continue
        if not name or name != name.strip() or any(c.isspace() for c in name) \
                or name.startswith("/") or name.endswith("/") or "//" in name:
            return (f"{key} {name!r}: expected a frame name (not empty, no whitespace, no "
                    "'/' at either end or twice)")
    if p.base_frame == p.world_frame:
        return f"base_frame {p.base_frame!r}: the same as world_frame, expected another name"
    prefix = p.frame_prefix
    if prefix.startswith("/") or "//" in prefix or any(c.isspace() for c in prefix):
        return f"frame_prefix {prefix!r}: expected no leading '/', no '//' and no whitespace"
    return None


def check_parameters(p: DynamicsParameters) -> Optional[str]:
    """What the declared ranges cannot say (ranges and finiteness are rclpy's check): the
    problem, or None."""
    for key, allowed in (("acceleration_source", ACCELERATION_SOURCES),
                         ("feedforward_source", FEEDFORWARD_SOURCES),
                         ("stale_policy", STALE_POLICIES),
                         ("deactivate_command", DEACTIVATE_COMMANDS),
                         ("accept_model_updates", MODEL_UPDATES),
                         ("model_source", MODEL_SOURCES),
                         ("joint_state_policy", JOINT_STATE_POLICIES),
                         ("publish_tf", TF_POLICIES)):
        value = getattr(p, key)
        if value not in allowed:
            return f"{key} {value!r}: expected one of {', '.join(allowed)}"
    problem = check_frames(p)
    if problem:
        return problem
    for key in RATE_PARAMETERS:
        value = getattr(p, key)
        if 0.0 < value < 1.0:
            return f"{key} {value!r}: expected 0 (off) or 1 to 10000 Hz"
    if (p.feedforward_source == "learned") != bool(p.feedforward_network_file):
        return (f"feedforward_source {p.feedforward_source!r} with feedforward_network_file "
                f"{p.feedforward_network_file!r}: expected a network file with learned "
                "and none with model")
    if p.model_source == "file" and not p.model_file:
        return "model_source 'file' with model_file '': expected a model_file"
    if p.overlay_file and p.model_source != "robot_description" and not p.model_file:
        # an overlay silently unused would hide a configuration mistake
        return (f"overlay_file {p.overlay_file!r} with model_source {p.model_source!r} "
                "and no model_file: expected a URDF model_file or model_source robot_description "
                "(texts on model_topic are complete models)")
    return None


def with_defaults(values: Mapping[str, Any] = {}) -> DynamicsParameters:
    """The table's defaults, where ``values`` gives none, as the node holds them."""
    return DynamicsParameters(**({name: spec.default for name, spec in PARAMETERS.items()}
                                 | dict(values)))
