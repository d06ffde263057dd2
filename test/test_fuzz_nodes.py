"""Fuzz of the dynamics node over real DDS (node in its own process, ros_harness helpers):
a few thousand random JointStates (some of them sent as corrupted CDR bytes: truncated, or
bytes changed, the encapsulation header included; the node reads joint_states raw) and a few
hundred random model texts from a seeded numpy generator, bounded in time.

Checked: the node is alive at the end; nothing non-finite, and nothing beyond ten times the
model's limits (positions, velocities, efforts where the model gives them), is published on
joint_loads, actuator_loads, feedforward_efforts or /tf; every message the node took is
accounted for: evaluations + rejections by reason (+ messages carrying no joint the model uses,
counted apart under the default merge policy) = joint_states received, and models
received = bad + taken + held + unchanged + superseded.

joint_states is best effort with depth 10 (merge) at the node, so a message sent while the node is
busy can be replaced before it is taken. The test paces itself: it sends the next message
only once the node's /diagnostics (every 5 ms here) count the previous one as received, so
the node takes every message it is sent; one that still never arrives within 1 s is counted
as lost and reported (the node's own identity holds either way).
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from charmie_dynamics.dynamics.actuation import actuator_space  # noqa: E402
from charmie_dynamics.ros.common.inputs import REASONS  # noqa: E402
from conftest import CHARMIE  # noqa: E402
from ros_harness import (LATE, LIMITS, MODEL, RELIABLE, Dynamics,  # noqa: E402,F401
                         dump_on_failure, log_dir, namespaced_dynamics, random_state, ros, ros_env)

SEED = 20261122
N_JOINT_STATES = 2500
N_MODELS = 250
BUDGET_S = 55.0
TEXT = CHARMIE.read_text(encoding="utf-8")
NAMES = MODEL.input_names
ODD_VALUES = (math.nan, math.inf, -math.inf, 1e308, -1e308, 1e20, -1e20, -5.0, 0.0, 5e-324)
MODEL_EVENTS = ("rejected_bad_model", "models_taken", "models_held", "models_unchanged",
                "models_superseded")


def random_joint_state(rng: np.random.Generator, sane: Time) -> JointState:
    pos, vel = random_state(rng)
    names = list(NAMES)
    kind = rng.integers(8)
    if kind == 1:
        names = list(rng.permutation(names)[: rng.integers(0, len(names))])
    elif kind == 2:
        names.append(str(rng.choice(["x", "theta8a", "", "ü" * 50, "act4"])))
    elif kind == 3:
        names = ["".join(chr(c) for c in rng.integers(32, 0x2FF, rng.integers(1, 12)))
                 for _ in range(rng.integers(0, 30))]
    msg = JointState(name=names)
    position = [pos.get(n, 0.0) for n in names]
    velocity = [vel.get(n, 0.0) for n in names]
    for values in (position, velocity):
        if values and rng.random() < 0.4:
            for _ in range(rng.integers(1, 4)):
                k = rng.integers(len(values))
                values[k] = float(rng.choice(ODD_VALUES)) if rng.random() < 0.6 \
                    else float(values[k] * 10 ** rng.uniform(0, 3))
    if rng.random() < 0.1:
        position = position[: rng.integers(0, len(position) + 1)] + [0.0] * rng.integers(0, 2)
    if rng.random() < 0.3:
        velocity = []
    effort = [] if rng.random() < 0.8 else [0.0] * rng.integers(0, len(names) + 2)
    msg.position, msg.velocity, msg.effort = position, velocity, effort
    r = rng.random()
    if r < 0.75:
        msg.header.stamp = sane
    elif r < 0.8:
        msg.header.stamp = Time(sec=2**31 - 1, nanosec=999_999_999)      # far future
    elif r < 0.85:
        msg.header.stamp = Time(sec=0, nanosec=0)
    elif r < 0.9:
        msg.header.stamp = Time(sec=1, nanosec=int(rng.integers(10**9)))   # far past
    else:
        t = sane.sec * 10**9 + sane.nanosec + int(rng.integers(-10**9, 2 * 10**9))
        msg.header.stamp = Time(sec=t // 10**9, nanosec=t % 10**9)
    return msg


def corrupted(rng: np.random.Generator, msg: JointState) -> bytes:
    """``msg``'s CDR bytes cut short, or with one to four bytes changed."""
    data = bytearray(serialize_message(msg))
    if rng.random() < 0.4:
        return bytes(data[: rng.integers(0, len(data))])
    for _ in range(rng.integers(1, 5)):
        data[rng.integers(0 if rng.random() < 0.1 else 2, len(data))] ^= int(rng.integers(1, 256))
    return bytes(data)


def random_model_text(rng: np.random.Generator) -> str:
    kind = rng.integers(9)
    if kind == 0:
        return bytes(rng.integers(0, 256, rng.integers(0, 2000), dtype=np.uint8)).decode("latin-1")
    if kind == 1:
        depth = int(rng.integers(10, 5000))
        return rng.choice(["[", "{a: ", "- "]) * depth
    if kind == 2:
        return f"name: x\ngravity: [0, 0, {'7' * int(rng.integers(100, 20000))}]\n"
    if kind == 3:
        return f"name: {int(rng.integers(1, 9999)):04d}-{int(rng.integers(1, 99)):02d}-" \
               f"{int(rng.integers(1, 99)):02d}\nbodies: []\n"
    if kind == 4:                                         # random plain YAML
        return "\n".join(f"{rng.choice(['name', 'bodies', 'units', 'gravity', 'x'])}: "
                         f"{rng.choice(['[]', '{}', '1e999', '-', 'null', '[1, 2]', '~', '!!binary AAAA'])}"
                         for _ in range(rng.integers(1, 6)))
    lines = TEXT.splitlines()
    if kind == 5:                                         # a line dropped
        del lines[rng.integers(len(lines))]
    elif kind == 6:                                       # a number changed
        k = rng.integers(len(lines))
        lines[k] = lines[k].replace("0", str(rng.choice(["-1", "1e300", "nan", ".inf", "x"])), 1)
    elif kind == 7:                                       # a valid model that differs
        return TEXT.replace("    mass: 30.0\n", f"    mass: {rng.uniform(1, 60):.3f}\n", 1)
    else:
        return TEXT                                       # the installed text itself
    return "\n".join(lines) + "\n"


def check_finite_and_within_limits(name: str, msgs: list, problems: list) -> None:
    limit = actuator_space(MODEL).effort_limit
    coord_limits = {c: (LIMITS.lower.get(c), LIMITS.upper.get(c), LIMITS.velocity.get(c))
                    for c in MODEL.coordinate_names}
    for msg in msgs:
        if isinstance(msg, TFMessage):
            values = [v for t in msg.transforms for v in (t.transform.translation.x,
                                                          t.transform.translation.y,
                                                          t.transform.translation.z)]
            if not all(math.isfinite(v) and abs(v) < 1e4 for v in values):
                problems.append(f"{name}: {values[:6]}")
            continue
        data = getattr(msg, "data", None)
        if data is not None:                              # feedforward: input order
            arrays = [("effort", list(zip(NAMES, data)))]
        else:
            arrays = [(field, list(zip(msg.name, getattr(msg, field))))
                      for field in ("position", "velocity", "effort")]
        for field, pairs in arrays:
            for n, v in pairs:
                bad = not math.isfinite(v)
                if field == "effort" and n in NAMES:
                    bad |= abs(v) > 10 * limit[NAMES.index(n)]
                lo, hi, vmax = coord_limits.get(n, (None, None, None))
                if field == "position" and lo is not None:
                    bad |= not 10 * min(lo, -hi) <= v <= 10 * max(hi, -lo)
                if field == "velocity" and vmax is not None:
                    bad |= abs(v) > 10 * vmax
                if bad:
                    problems.append(f"{name}.{field} {n} = {v!r}")


@dump_on_failure
def test_fuzz_joint_states_and_models(ros, ros_env, log_dir):
    child = namespaced_dynamics("fz", ros_env, log_dir, diagnostics_period=0.005, tf_rate=100.0)
    try:
        ros.watched = [child]
        d = Dynamics(ros, child, "/fz", with_tf=False)
        outputs = {"joint_loads": [], "actuator_loads": [], "feedforward_efforts": [], "tf": []}
        for topic, msg_type in (("joint_loads", JointState), ("actuator_loads", JointState),
                                ("feedforward_efforts", Float64MultiArray), ("tf", TFMessage)):
            ros.node.create_subscription(msg_type, f"/fz/{topic}", outputs[topic].append, RELIABLE)
        model_pub = ros.node.create_publisher(String, "/fz/charmie/model", LATE)
        assert ros.spin_until(lambda: d.ready() and model_pub.get_subscription_count() >= 1, 60.0)

        def received(key: str) -> int:
            return int(d.diagnostics[-1][key]) if d.diagnostics else 0

        def models_accounted() -> int:
            return sum(received(k) for k in MODEL_EVENTS)

        rng = np.random.default_rng(SEED)
        sent_js = sent_models = lost_js = lost_models = 0
        start = time.monotonic()
        while sent_js < N_JOINT_STATES and time.monotonic() - start < BUDGET_S:
            if sent_models < N_MODELS and sent_js % 10 == 0:
                model_pub.publish(String(data=random_model_text(rng)))
                sent_models += 1
                if not ros.spin_until(lambda: models_accounted() >= sent_models - lost_models, 20.0):
                    lost_models += 1
            msg = random_joint_state(rng, ros.next_stamp())
            d.pub_joints.publish(corrupted(rng, msg) if rng.random() < 0.15 else msg)
            sent_js += 1
            if not ros.spin_until(lambda: received("received_joint_states") >= sent_js - lost_js, 1.0):
                lost_js += 1
        elapsed = time.monotonic() - start
        ros.spin_for(0.2)
        assert child.alive(), "the dynamics node died"
        last = d.diagnostics[-1]
        rejections = {r: int(last[f"rejected_{r}"]) for r in REASONS if int(last[f"rejected_{r}"])}
        evaluations = int(last["evaluations"])
        problems: list[str] = []
        for topic, msgs in outputs.items():
            check_finite_and_within_limits(topic, msgs, problems)
        print(f"\nfuzz (seed {SEED}, {elapsed:.1f} s): joint_states sent {sent_js}, received "
              f"{last['received_joint_states']}, lost {lost_js}; evaluations {evaluations}; "
              f"rejections {sum(rejections.values())} {rejections}; models sent {sent_models}, "
              f"received {last['received_model']}: "
              + ", ".join(f"{k} {last[k]}" for k in MODEL_EVENTS)
              + f"; published joint_loads {len(outputs['joint_loads'])}, feedforward "
                f"{len(outputs['feedforward_efforts'])}, tf {len(outputs['tf'])}; "
                f"problems {len(problems)}; crashes 0")
        assert not problems, problems[:10]
        # merge policy: a message with no joint the model uses is counted apart
        assert evaluations + sum(rejections.values()) + \
            int(last["joint_states_without_model_joints"]) == int(last["received_joint_states"])
        assert int(last["received_model"]) == sum(int(last[k]) for k in MODEL_EVENTS)
        assert sent_js >= 1000 and sent_models >= 100, (sent_js, sent_models)
        assert evaluations > 0 and len(rejections) >= 5
    finally:
        ros.watched = []
        child.stop()
