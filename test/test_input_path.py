"""The dynamics node's joint_states path as it runs (the steady path's two compiled calls,
ros/dynamics_parts/steady_path.py) and with its compiled checks alone (ros/inputs.CompiledChecks,
the steady path off) against the same node with both switched off, so that every message
takes the reference (JointStateParser.read, InputLimits.check_arrays, StateAssembler, the
evaluator and the feedforward map called one by one): a hostile stream of serialized
messages (partial, reordered, foreign names, duplicates, NaN, beyond the limits and strokes,
older stamps, lengths that disagree, no velocities, two publishers' blocks) gives the same
outcome message by message: the same rejection with the same text, the same events, the same
feedforward and stamped copy to the last bit. The node runs in this process; its callback is
called with the bytes a raw subscription receives."""
from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from domains import domain_id

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from charmie_dynamics.ros.common.inputs import Gathered, InputLimits  # noqa: E402
from charmie_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from charmie_dynamics.trajectories import MOTIONS  # noqa: E402
from conftest import CHARMIE  # noqa: E402


def hostile_stream(model, count: int, seed: int) -> list[bytes]:
    """The validation motion at 1 kHz, most messages changed in one of fourteen ways."""
    motion = MOTIONS["validation"](model, 1e-3)
    rng = np.random.default_rng(seed)
    names, actuator = list(model.input_names), model.actuator_names[0]
    model_limits = InputLimits.of(model)
    limited, speeds = zip(*model_limits.velocity.items())
    bounded = sorted(model_limits.upper)
    out = []
    for k in range(count):
        n = list(names)
        x, v = motion.x[k % len(motion.t)].copy(), motion.xd[k % len(motion.t)].copy()
        stamp = 100.0 + k * 1e-3
        kind = int(rng.integers(0, 20))
        if kind == 0:                                       # partial
            n, x, v = n[:10], x[:10], v[:10]
        elif kind == 1:                                     # foreign names, one NaN
            n, x, v = n + ["wheel_a", "wheel_b"], np.r_[x, 1.0, math.nan], np.r_[v, 0.0, 0.0]
        elif kind == 2:
            x[3] = math.nan
        elif kind == 3:
            x[5] = 50.0                                     # beyond its limits
        elif kind == 4:
            x[n.index(actuator)] = 5.0                      # beyond its stroke
        elif kind == 5:
            stamp -= 0.5                                    # older
        elif kind == 6:
            n, x, v = n[::-1], x[::-1], v[::-1]             # another order
        elif kind == 7:                                     # a name twice
            n, x, v = n[:5] + [n[4]] + n[5:], np.r_[x[:5], x[4], x[5:]], np.r_[v[:5], v[4], v[5:]]
        elif kind == 8:
            v = []                                          # velocities not measured
        elif kind == 9:
            v = v[:3]                                       # lengths disagree
        elif kind == 10:
            v = v * 1000.0                                  # too fast
        elif kind == 11:                                    # near a speed limit
            j = int(rng.integers(0, len(limited)))
            v[n.index(limited[j])] = speeds[j] * rng.uniform(1.0, 1.25) * rng.choice([-1, 1])
        elif kind == 13:                                    # ahead of the node clock
            stamp = 2.0e9 + k * 1e-3
        elif kind == 12:                                    # near a position limit
            j = int(rng.integers(0, len(bounded)))
            x[n.index(bounded[j])] = model_limits.upper[bounded[j]] + rng.uniform(-0.005, 0.03)
        msg = JointState(name=n, position=[float(a) for a in x], velocity=[float(a) for a in v])
        msg.header.stamp = Time(sec=int(stamp), nanosec=int(round((stamp % 1.0) * 1e9)))
        out.append(serialize_message(msg))
    return out


def corrupted(messages: list[bytes], seed: int) -> list[bytes]:
    """Most messages' bytes damaged: bits flipped, cut short, longer, a 32-bit count
    overwritten (a message that is no JointState, or another one)."""
    rng = np.random.default_rng(seed)
    out = []
    for message in messages:
        data = bytearray(message)
        kind = int(rng.integers(0, 6))
        if kind == 0:
            for at in rng.integers(0, len(data), int(rng.integers(1, 4))):
                data[at] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1:
            data = data[:int(rng.integers(0, len(data)))]
        elif kind == 2:
            data += bytes(int(rng.integers(1, 40)))
        elif kind == 3:
            at = int(rng.integers(0, len(data) - 4))
            data[at:at + 4] = int(rng.integers(0, 2**32)).to_bytes(4, "little")
        out.append(bytes(data))
    return out


def outcomes(messages: list[bytes], policy: str, route: str, least_taken: float = 0.8,
             **parameters) -> list:
    """Per message: the counts of rejections and events, the last rejection's text and the
    feedforward and its stamped copy published (their bytes). ``route``: "steady" (the node
    as it runs: it takes more than ``least_taken`` of the evaluated messages), "compiled"
    (the steady path off) or "reference" (the compiled checks off too)."""
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        node = DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(CHARMIE)), Parameter("tf_rate", value=0.0),
            Parameter("stale_timeout", value=3600.0),
            Parameter("joint_state_policy", value=policy),
            Parameter("acceleration_source", value="estimate"),
            *(Parameter(name, value=value) for name, value in parameters.items())])
        node.autostart()
        assert node.slot.steady is not None
        if route != "steady":
            node.slot = replace(node.slot, steady=None)
        if route == "reference":
            node.slot.compiled_checks.check = lambda *args: None
            node.slot.compiled_checks.gather = lambda *args: Gathered(None, None)
        published, texts, taken = [], [], []
        on_taken = node.control._on_taken
        node.control._on_taken = lambda *args: (taken.append(1), on_taken(*args))
        node.control.pub_feedforward.publish = lambda data: published.append(bytes(data))
        node.control.pub_feedforward_state.publish = \
            lambda data: published.append(bytes(data))
        reject = node.control.reject
        node.control.reject = lambda reason, detail: (texts.append(detail), reject(reason, detail))
        record = []
        for message in messages:
            before = len(published)
            node.control.on_joint_state(message)
            record.append((dict(node.rejected), dict(node.events), texts[-1:],
                           published[before:]))
        # the steady path takes nearly every message evaluated, and only it takes any
        evaluated = node.stats["evaluated"]
        assert len(taken) > least_taken * evaluated if route == "steady" else not taken, \
            (len(taken), evaluated)
        node.destroy_node()
        return record
    finally:
        rclpy.try_shutdown(context=context)


#: a joint map's conversions both ways (a flipped, offset joint; two efforts scaled)
JOINT_MAP = """scale: {theta7a: -1.0}
offset: {theta7a: 0.001}
effort_scale: {theta7a: 2.0, act5: 0.0125}
"""


@pytest.mark.parametrize("policy, variant", [("merge", ""), ("strict", ""),
                                             ("merge", "converted"), ("strict", "throttled")])
def test_the_compiled_input_path_equals_the_reference_message_by_message(
        charmie, policy, variant, monkeypatch, tmp_path):
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    messages = hostile_stream(charmie, 2500, seed=3)
    parameters = {}
    if variant == "converted":    # and the feedforward clamped at the limits
        (tmp_path / "map.yaml").write_text(JOINT_MAP)
        parameters = {"joint_map_file": str(tmp_path / "map.yaml"), "clamp_feedforward": True}
    if variant == "throttled":    # a rate limit below the inputs', gravity compensation only
        parameters = {"publish_rate_limit": 400.0, "gravity_only": True}
    steady, compiled, reference = (outcomes(messages, policy, route, **parameters)
                                   for route in ("steady", "compiled", "reference"))
    for k, expected in enumerate(reference):
        assert compiled[k] == expected, f"message {k}, the compiled checks"
        assert steady[k] == expected, f"message {k}, the steady path"
    rejected, _, _, _ = reference[-1]
    published = sum(len(r[3]) for r in reference)
    # the stream reached the rejections it was built for, and evaluations
    expected_reasons = {"beyond_limits", "non_finite", "out_of_range", "duplicate_name",
                        "length_mismatch", "time_backwards", "future_stamp"} \
        | ({"throttled"} if variant == "throttled" else set())
    assert expected_reasons <= set(rejected), rejected
    assert published > 300, published


def test_damaged_bytes_give_the_reference_outcomes(charmie, monkeypatch):
    """Messages whose bytes are damaged (a names block that no longer matches, counts and
    lengths that lie, a message cut short): the steady path leaves them to the reference
    route, whose text does not depend on where the messages before were read (the reader's
    cache of names blocks kept as the reference leaves it)."""
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    messages = corrupted(hostile_stream(charmie, 600, seed=9), seed=1)
    steady, reference = (outcomes(messages, "merge", route, least_taken=0.5)
                         for route in ("steady", "reference"))
    for k, expected in enumerate(reference):
        assert steady[k] == expected, f"message {k}"
    rejected = reference[-1][0]
    assert rejected["invalid_value"] > 50 and rejected["length_mismatch"] > 5, rejected


#: the steady route of a stream in a process of its own (the kernels as plain Python there)
PLAIN_SCRIPT = """
import pickle, sys
sys.path.insert(0, "test")
from charmie_dynamics import jit, load_model
from conftest import CHARMIE
from test_input_path import hostile_stream, outcomes
assert not jit.ENABLED
messages = hostile_stream(load_model(CHARMIE), 300, seed=5)
pickle.dump(outcomes(messages, "merge", "steady", allow_slow_kernels=True), sys.stdout.buffer)
"""


def test_the_steady_path_as_plain_python_equals_the_compiled_reference(charmie, monkeypatch):
    """With numba off (CHARMIE_DYNAMICS_JIT=0, the node started with allow_slow_kernels) the
    steady path's kernels run as plain Python on the bytes: the same outcomes as the compiled
    reference route, message by message."""
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", PLAIN_SCRIPT], capture_output=True,
                          timeout=900, cwd=root, env={**os.environ, "CHARMIE_DYNAMICS_JIT": "0"})
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    plain = pickle.loads(proc.stdout)
    reference = outcomes(hostile_stream(charmie, 300, seed=5), "merge", "reference")
    assert len(plain) == len(reference) == 300
    for k, expected in enumerate(reference):
        assert plain[k] == expected, f"message {k}"
