"""The configurations of the stand-ins of a ros2_control CHARMIE (robot_standins.py) from a
model and a joint map: shared by test/test_robot_graph.py (over DDS) and
test_launch/test_hardware_launch.py (hardware.launch.py under launch_testing).

Two joint_state_broadcasters split the robot: ``FAST`` (500 Hz) the arms' joints and the four
wheels, ``SLOW`` (100 Hz) the claws, the neck, both linear actuators and the claws' finger
joints; the base's coordinates come from the odometry.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from pathlib import Path
from typing import Sequence

from charmie_dynamics.kinematics.limits import InputLimits
from charmie_dynamics.model.model import Model
from charmie_dynamics.ros.common.joint_map import JointMap, read_joint_map

BASE = ("d1", "d2", "theta3")
DATA = Path(__file__).resolve().parent / "data" / "charmie_robot"
ROBOT_URDF = DATA / "charmie.urdf"          # CHARMIE as its designers' URDF: links, REP 103
ROBOT_MAP = DATA / "joint_map.yaml"         # its names, the actuators' units, its links
WHEELS = [f"wheel_{w}_joint" for w in ("front_left", "front_right", "rear_left", "rear_right")]
FINGERS = ["left_finger_joint", "right_finger_joint"]


def split(model: Model) -> tuple[list[str], list[str]]:
    """The model inputs of the fast (the arms' six joints each) and the slow broadcaster."""
    fast = [n for n in model.input_names if n.startswith("theta") and n[-1] in "ab"
            and not n.startswith("theta13")]
    slow = [n for n in model.input_names if n not in BASE and n not in fast]
    return fast, slow


def joint_motion(model: Model, joint_map: JointMap, name: str, k: int, frequency: float,
                 harmonics: int = 1) -> list:
    """[hardware name, center, amplitude, frequency, phase, ...] of one input, in the
    hardware's units (the inverse of the map's scale and offset), inside the model's limits:
    positions within the joint range and the stroke, velocities below the limits (frequency
    0: still). ``harmonics`` > 1: the sum of that many sinusoids at 1, 2, ... times
    ``frequency``, equal amplitudes, phases per joint and harmonic (a motion that excites
    more than one frequency, as identification's excitation does)."""
    limits = InputLimits.of(model)
    scale, offset = joint_map.scale.get(name, 1.0), joint_map.offset.get(name, 0.0)
    if name in model.actuator_names:
        center, amplitude = 0.40, 0.03                  # m, inside both actuators' strokes
    else:
        lo, hi = max(limits.lower.get(name, -1.0), -1.0), min(limits.upper.get(name, 1.0), 1.0)
        center, amplitude = 0.5 * (lo + hi), 0.2 * (hi - lo)
    speed = limits.velocity.get(name, math.inf)
    if frequency > 0:        # the terms' speeds add up to amplitude 2 pi f (H + 1) / 2
        amplitude = min(amplitude, 0.8 * speed / (math.pi * frequency * (harmonics + 1)))
    hardware = joint_map.to_hardware([name])[0]
    terms = []
    for h in range(1, harmonics + 1):
        terms += [amplitude / harmonics / scale, h * frequency, 0.7 * k * h]
    return [hardware, (center - offset) / scale] + terms


def broadcasters(model: Model, joint_map: JointMap, frequency: float, harmonics: int = 1
                 ) -> tuple[dict, dict]:
    """The fast and slow broadcasters' configurations (:func:`joint_motion`)."""
    fast, slow = split(model)

    def motion(names: list[str]) -> list[list]:
        return [joint_motion(model, joint_map, n, k, frequency, harmonics)
                for k, n in enumerate(names)]
    return (dict(name="jsb_arms", rate=500.0,
                 joints=motion(fast) + [[w, 0.0, 3.0, 0.2, 0.0] for w in WHEELS]),
            dict(name="jsb_body", rate=100.0,
                 joints=motion(slow) + [[f, 0.01, 0.005, 0.5, 0.0] for f in FINGERS]))


def sinusoid_state(joints: Sequence[Sequence], joint_map: JointMap, input_names: Sequence[str],
                   t: float) -> tuple[list[float], list[float], list[float]]:
    """The model's inputs (``input_names`` order, model units) at time ``t`` s of the
    broadcasters' motion ``joints`` ([hardware name, center, amplitude, frequency, phase],
    in the hardware's units): position ``c + a sin(w t + p)``, its exact velocity and
    acceleration, through the map's scale and offset (``model = scale * hardware + offset``);
    an input no joint moves (the base, held still by odometry scale 0) is 0."""
    x, xd, xdd = ([0.0] * len(input_names) for _ in range(3))
    index = {name: k for k, name in enumerate(input_names)}
    for hardware, center, *terms in joints:
        name = joint_map.model.get(hardware, hardware)
        if name not in index:                          # wheels, fingers
            continue
        k = index[name]
        scale, offset = joint_map.scale.get(name, 1.0), joint_map.offset.get(name, 0.0)
        p, v, a = sinusoids(center, terms, t)
        x[k], xd[k], xdd[k] = scale * p + offset, scale * v, scale * a
    return x, xd, xdd


def sinusoids(center: float, terms: Sequence[float], t: float) -> tuple[float, float, float]:
    """Position, velocity and acceleration at ``t`` of ``center + sum a sin(2 pi f t + p)``
    over ``terms`` = [a, f, p, a2, f2, p2, ...]."""
    p, v, a = center, 0.0, 0.0
    for amplitude, frequency, phase in zip(terms[0::3], terms[1::3], terms[2::3]):
        w = 2 * math.pi * frequency
        s, c = math.sin(w * t + phase), math.cos(w * t + phase)
        p, v, a = p + amplitude * s, v + amplitude * w * c, a - amplitude * w * w * s
    return p, v, a


def robot_map() -> JointMap:
    """The joint map of the designers' URDF (``ROBOT_MAP``): names, units, links."""
    return read_joint_map([], str(ROBOT_MAP))


def movable_joints(urdf: str) -> set[str]:
    """The URDF's joints that take a value on /joint_states: every movable one but mimics."""
    return {j.get("name") for j in ET.fromstring(urdf).iter("joint")
            if j.get("type") != "fixed" and j.find("mimic") is None}


def frame_chains(parents: dict[str, set[str]], root: str = "odom") -> dict[str, str]:
    """Why each frame of a /tf listener's ``parents`` (child -> the parents it was published
    with) does not reach ``root`` through one parent each ({} when all do)."""
    problems = {}
    for frame in parents:
        seen, at = [frame], frame
        while at != root:
            above = parents.get(at, set())
            if len(above) != 1:
                problems[frame] = f"{at} has parents {sorted(above)} (path {seen})"
                break
            at = next(iter(above))
            if at in seen:
                problems[frame] = f"a cycle {seen + [at]}"
                break
            seen.append(at)
    return problems


def copies_out_of_order(sent: list[list[float]], copies: list[list[float]]) -> tuple[int, int]:
    """(copies whose values were among the sent but not in order, copies found in order) of
    the dynamics node's stamped feedforward copies against the feedforward sent: the node's
    writers keep the last 10 samples, so a loaded reader misses runs of messages of either
    topic (beside two busy loops, a third of one); a copy whose original this reader missed
    is neither. Each copy is looked for in what was sent after the last match."""
    sent_counts, copy_counts = Counter(map(tuple, sent)), Counter(map(tuple, copies))
    present = sum(min(n, sent_counts[value]) for value, n in copy_counts.items())
    in_order = copies_in_order(sent, copies)
    return present - in_order, in_order


def copies_in_order(sent: list[list[float]], copies: list[list[float]]) -> int:
    """How many of ``copies`` are found among ``sent`` in order (copies_out_of_order)."""
    at, matched = 0, 0
    where: dict[tuple, list[int]] = defaultdict(list)      # each value's places in sent
    for k, value in enumerate(sent):
        where[tuple(value)].append(k)
    for copy in copies:
        later = [k for k in where.get(tuple(copy), ()) if k >= at]
        if later:
            at = later[0] + 1
            matched += 1
    return matched
