"""The configurations of the stand-ins of a ros2_control CHARMIE (robot_standins.py) from a
model and a joint map: shared by test/test_robot_graph.py (over DDS) and
test_launch/test_hardware_launch.py (hardware.launch.py under launch_testing).

Two joint_state_broadcasters split the robot: ``FAST`` (500 Hz) the arms' joints and the four
wheels, ``SLOW`` (100 Hz) the claws, the neck, both linear actuators and the claws' finger
joints; the base's coordinates come from the odometry.
"""
from __future__ import annotations

import math

from charmie_dynamics.kinematics.limits import InputLimits
from charmie_dynamics.model.model import JointType, Model
from charmie_dynamics.ros.joint_map import JointMap

BASE = ("d1", "d2", "theta3")
WHEELS = [f"wheel_{w}_joint" for w in ("front_left", "front_right", "rear_left", "rear_right")]
FINGERS = ["left_finger_joint", "right_finger_joint"]


def split(model: Model) -> tuple[list[str], list[str]]:
    """The model inputs of the fast (the arms' six joints each) and the slow broadcaster."""
    fast = [n for n in model.input_names if n.startswith("theta") and n[-1] in "ab"
            and not n.startswith("theta13")]
    slow = [n for n in model.input_names if n not in BASE and n not in fast]
    return fast, slow


def joint_motion(model: Model, joint_map: JointMap, name: str, k: int, frequency: float) -> list:
    """[hardware name, center, amplitude, frequency, phase] of one input, in the hardware's
    units (the inverse of the map's scale and offset), inside the model's limits: positions
    within the joint range and the stroke, velocities below the limits (frequency 0: still)."""
    limits = InputLimits.of(model)
    scale, offset = joint_map.scale.get(name, 1.0), joint_map.offset.get(name, 0.0)
    if name in model.actuator_names:
        center, amplitude = 0.40, 0.03                  # m, inside both actuators' strokes
    else:
        lo, hi = max(limits.lower.get(name, -1.0), -1.0), min(limits.upper.get(name, 1.0), 1.0)
        center, amplitude = 0.5 * (lo + hi), 0.2 * (hi - lo)
    speed = limits.velocity.get(name, math.inf)
    if frequency > 0:
        amplitude = min(amplitude, 0.8 * speed / (2 * math.pi * frequency))
    hardware = joint_map.to_hardware([name])[0]
    return [hardware, (center - offset) / scale, amplitude / scale, frequency, 0.7 * k]


def broadcasters(model: Model, joint_map: JointMap, frequency: float) -> tuple[dict, dict]:
    """The fast and slow broadcasters' configurations."""
    fast, slow = split(model)
    return (dict(name="jsb_arms", rate=500.0,
                 joints=[joint_motion(model, joint_map, n, k, frequency) for k, n in enumerate(fast)]
                 + [[w, 0.0, 3.0, 0.2, 0.0] for w in WHEELS]),
            dict(name="jsb_body", rate=100.0,
                 joints=[joint_motion(model, joint_map, n, k, frequency) for k, n in enumerate(slow)]
                 + [[f, 0.01, 0.005, 0.5, 0.0] for f in FINGERS]))


def state_publisher_joints(model: Model, joint_map: JointMap, base_frame: str = "base_link",
                           odom: str = "odom") -> list:
    """The URDF's joints as robot_state_publisher sees them: each body's joint under its
    coordinate's hardware name (fixed ones ``<body>_joint``), the base body's link named
    ``base_frame``; the planar base's joints left out (the odometry's)."""
    base_body = max(i for i, b in enumerate(model.bodies) if b.coordinate in BASE)
    link = {name: name for name in model.body_names} | {"world": odom}
    link[model.body_names[base_body]] = base_frame
    return [dict(name=joint_map.to_hardware([b.coordinate])[0] if b.coordinate else f"{b.name}_joint",
                 parent=link[b.parent], child=link[b.name],
                 fixed=bool(model.joint_type[i] == JointType.FIXED),
                 origin=[float(v) for v in b.origin])
            for i, b in enumerate(model.bodies) if b.coordinate not in BASE]


def copies_in_order(sent: list[list[float]], copies: list[list[float]], window: int = 20) -> int:
    """How many of the dynamics node's stamped feedforward copies match the feedforward sent,
    in order: the node's writers keep the last 10 samples, so a loaded reader can miss a
    message of either topic; each copy is looked for among the next ``window`` sent."""
    at, matched = 0, 0
    for copy in copies:
        ahead = sent[at:at + window]
        if copy in ahead:
            at += ahead.index(copy) + 1
            matched += 1
    return matched
