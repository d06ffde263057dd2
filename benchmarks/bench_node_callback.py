"""What one evaluation of the dynamics node costs, without the input's transport: the node
runs in this process and its joint_states callback is called directly with ready messages,
back to back; its outputs are published over real DDS (loopback) to a subscriber process
that takes every output topic (as RViz and a controller would).

    .venv/bin/python benchmarks/bench_node_callback.py [--calls 5000] [--out FILE.json]

Prints, for tf_rate 100 Hz (the default; the inputs' stamps are 1 ms apart, so one in ten
evaluations also publishes /tf and the wrench markers) and tf_rate 0 (every evaluation): the
time per callback (p50, p99, max and mean, microseconds) and the evaluation rate one core
sustains (1 / mean). This bounds what the node can serve on this machine; bench_node.py
measures the whole path from another process over DDS. The loads, /tf and the markers are
built and published by the node's monitoring thread (ros/dynamics_parts/monitoring.py), beside the calls:
the times are those of the executor thread (its share of the GIL included); the p99 of the
calls right after one that handed its evaluation to that thread, beside the others', shows
what the monitoring thread's work costs the next input.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 50))

import rclpy  # noqa: E402
from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from charmie_dynamics import bundled_model, load_model  # noqa: E402
from charmie_dynamics.ros.dynamics_node import DynamicsNode  # noqa: E402
from charmie_dynamics.trajectories import MOTIONS  # noqa: E402
from common import write_result  # noqa: E402

SUBSCRIBER = """
import sys, time, rclpy
from rclpy.node import Node
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray
from charmie_dynamics.ros.common import qos
rclpy.init()
node = Node("bench_outputs")
count = [0]
def seen(msg):
    count[0] += 1
for kind, topic, profile in ((JointState, "joint_loads", qos.OUTPUT),
                             (JointState, "actuator_loads", qos.OUTPUT),
                             (Float64MultiArray, "feedforward_efforts", qos.OUTPUT),
                             (WrenchStamped, "joint_wrenches/body_3", qos.OUTPUT),
                             (MarkerArray, "wrench_markers", qos.OUTPUT),
                             (TFMessage, "/tf", qos.TF), (DiagnosticArray, "/diagnostics", qos.OUTPUT)):
    node.create_subscription(kind, topic, seen, profile)
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
try:
    while time.time() < end and rclpy.ok():
        rclpy.spin_once(node, timeout_sec=0.1)
except Exception:
    if rclpy.ok():       # else: the SIGTERM that ends this process shut the context down
        raise
print(count[0], flush=True)
"""


def messages(model, count: int) -> list[bytes]:
    """joint_states of the validation motion, 1 ms apart, every input by name, serialized (as
    the node's raw subscription receives them)."""
    motion = MOTIONS["validation"](model, 1e-3)
    out = []
    for k in range(count):
        sample = k % len(motion.t)
        msg = JointState(name=list(model.input_names), position=motion.x[sample].tolist(),
                         velocity=motion.xd[sample].tolist())
        stamp = 1000.0 + k * 1e-3
        msg.header.stamp = Time(sec=int(stamp), nanosec=int(round((stamp % 1.0) * 1e9)))
        out.append(serialize_message(msg))
    return out


def with_nan(data: bytes) -> bytes:
    """The same joint_states with its first position NaN (rejected: non_finite)."""
    msg = deserialize_message(data, JointState)
    msg.position[0] = math.nan
    return serialize_message(msg)


def run(inputs: list[bytes], tf_rate: float) -> dict:
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        node = DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(bundled_model())),
            Parameter("tf_rate", value=tf_rate), Parameter("stale_timeout", value=3600.0),
            Parameter("check_position_limits", value=False)])
        node.autostart()
        for msg in inputs[:200]:                      # warm-up
            node.control.on_joint_state(msg)
        # which calls handed an evaluation to the monitoring thread (its loads and /tf)
        submitted, submit = [], node.monitoring.submit
        node.monitoring.submit = lambda *args: (submitted.append(len(times)), submit(*args))
        times = []
        for msg in inputs[200:]:
            start = time.perf_counter()
            node.control.on_joint_state(msg)
            times.append(time.perf_counter() - start)
        evaluated = node.stats["evaluated"]
        rejected = sum(node.rejected.values())
        # a stream of bad inputs (a NaN each): what one rejection costs, its log line throttled
        bad = [with_nan(msg) for msg in inputs[:1000]]
        reject_times = []
        for msg in bad:
            start = time.perf_counter()
            node.control.on_joint_state(msg)
            reject_times.append(time.perf_counter() - start)
        timers = periodic_costs(node)
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    us = np.array(times) * 1e6
    # the call after each submit runs beside the monitoring thread's work on that evaluation
    after = np.zeros(len(us), dtype=bool)
    after[[k + 1 for k in submitted if k + 1 < len(us)]] = True
    beside = {"after_submit_p99_us": float(np.percentile(us[after], 99)) if after.any() else None,
              "others_p99_us": float(np.percentile(us[~after], 99)) if (~after).any() else None}
    return {"tf_rate": tf_rate, "calls": len(us), "evaluated": evaluated, "rejected": rejected,
            **beside,
            "p50_us": float(np.percentile(us, 50)), "p99_us": float(np.percentile(us, 99)),
            "max_us": float(us.max()), "mean_us": float(us.mean()),
            "sustained_hz": float(1e6 / us.mean()), "timers": timers,
            "rejected_p50_us": float(np.median(reject_times) * 1e6)}


def periodic_costs(node, calls: int = 300) -> dict:
    """What each of the node's timers costs the executor's thread per tick (issue 37's
    "nothing periodic on the control thread above 0.1 ms"): every timer's callback called
    ``calls`` times back to back, after the inputs (the diagnostics then count a running
    node's numbers). The executor thread's own CPU time per call (time.thread_time: what
    the tick costs that thread, without its waits for the GIL while the monitoring thread
    does the work a tick handed it), p50 and max in microseconds, by the callback's name."""
    costs = {}
    for timer in node.timers:
        callback = timer.callback
        times = []
        for _ in range(calls):
            start = time.thread_time()
            callback()
            times.append(time.thread_time() - start)
        us = np.array(times) * 1e6
        costs[callback.__name__] = {"p50_us": float(np.percentile(us, 50)), "max_us": float(us.max()),
                                    "period_s": timer.timer_period_ns * 1e-9}
    return costs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/node_callback.json"))
    args = parser.parse_args()
    model = load_model(bundled_model())
    inputs = messages(model, args.calls + 200)
    sub = subprocess.Popen([sys.executable, "-c", SUBSCRIBER, "600"], stdout=subprocess.PIPE,
                           text=True)
    try:
        assert sub.stdout.readline().strip() == "ready"
        time.sleep(2.0)                                # discovery
        results = [run(inputs, rate) for rate in (100.0, 0.0)]
    finally:
        sub.terminate()
        sub.wait(timeout=10)
    print(f"dynamics node callback, in-process, outputs over DDS to a subscriber process; "
          f"{args.calls} joint_states 1 ms apart; {os.cpu_count()} CPUs")
    print(f"{'tf_rate':>8s} {'p50 us':>8s} {'p99 us':>8s} {'max us':>8s} {'mean us':>8s} "
          f"{'sustained Hz':>13s} {'evaluated':>10s} {'rejected':>9s}")
    for r in results:
        print(f"{r['tf_rate']:8.0f} {r['p50_us']:8.0f} {r['p99_us']:8.0f} {r['max_us']:8.0f} "
              f"{r['mean_us']:8.0f} {r['sustained_hz']:13.0f} {r['evaluated']:10d} "
              f"{r['rejected']:9d}")
    print("p99 us of the calls right after one that handed its evaluation to the monitoring "
          "thread / of the others: " + ", ".join(
              f"{r['after_submit_p99_us']:.0f} / {r['others_p99_us']:.0f} (tf_rate "
              f"{r['tf_rate']:.0f})" for r in results if r["others_p99_us"] is not None
              and r["after_submit_p99_us"] is not None))
    print("a rejected input (NaN position; its WARN throttled to one per 2 s), p50 us: "
          + ", ".join(f"{r['rejected_p50_us']:.0f} (tf_rate {r['tf_rate']:.0f})" for r in results))
    print("the node's timers on the executor's thread, per tick (the thread's CPU time; each called 300 times):")
    for r in results:
        for name, cost in r["timers"].items():
            print(f"  tf_rate {r['tf_rate']:3.0f}  {name:24s} every {cost['period_s']:7.3f} s  "
                  f"p50 {cost['p50_us']:7.1f} us  max {cost['max_us']:7.1f} us")
    write_result(args.out, {"runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
