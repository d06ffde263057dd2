"""Benchmark of the dynamics node as CHARMIE runs it: model_loader and dynamics as separate
processes over real DDS (loopback only), fed joint_states from this process.

    .venv/bin/python benchmarks/bench_node.py [--rate 1000] [--duration 30] [--window 2]
                                              [--runs echo,busy300,a,b]
                                              [--out benchmarks/results/node_latest.json]

Runs, each with node processes of its own in a DDS domain of its own, all started before
the measurement and fed by the same publisher, which takes turns between them (below):

* (echo) the floor: benchmarks/echo_node.py, the least an rclpy node does with each input
  (subscribe JointState with the dynamics node's input QoS under its default policy, merge:
  best effort with a queue of 10, so a late input waits rather than being dropped; publish
  one Float64MultiArray carrying the input's stamp, on the executor the dynamics node
  spins);
* (strict) the echo with the input QoS of ``joint_state_policy: strict``, depth 1: an input
  that arrives while the callback runs replaces the older one, so a stall shows as drops
  rather than latency (the plain echo's QoS until 2026-11-29, when the dynamics node's
  default had been merge's queue since round 3: its p99 was then not the floor of the
  node's);
* (busy300, busy600) the floor for a node of the dynamics node's cost: the echo node holding
  the GIL in a Python busy loop for 300 (600) us per input and publishing twice (its
  ``busy_us`` and ``publishes``), as the dynamics node publishes the feedforward and its
  stamped copy;
* (raw) the echo node reading its input raw (``raw=True``: the stamp from the CDR bytes, no
  deserialization) and echoing the stamp alone: what a node saves by not converting it;
* (a) the dynamics node with ``tf_rate: 100``: /tf at most 100 Hz (its default);
* (b) the dynamics node with ``tf_rate: 0``: one /tf per evaluation.

The dynamics runs with ``acceleration_source: zero``, ``check_position_limits: false`` (the
validation motion leaves the joint limits on purpose), ``stale_timeout: 600`` (below) and every
other parameter at its default. Every run's latencies, drops and CPU per evaluation are also given as ratios to
the plain echo run's. The default runs are echo, strict, busy300, a and b; busy600 and raw on
request (``--runs echo,strict,busy300,busy600,raw,a,b`` for all).

Inputs: sensor_msgs/JointState on ``joint_states`` with every ``model.input_names`` entry
(act4 and act5 included), positions and velocities of the ``validation`` motion (seed 000
section 6) sampled at the publish time on the run's own clock (the time its windows have
played: every run is fed the same stretch of it, to within a sample of its 1 ms grid),
played forward then backward (10 s period; the velocity is zero at both ends, so the loop is
smooth), each message with a unique, increasing stamp (wall clock, ns). The publisher uses
the node's own sensor-data QoS (best effort).

Pacing: a plain thread (no rclpy timer) with absolute deadlines from ``time.perf_counter``
and ``time.sleep`` until each deadline (the sleep releases the GIL, so this process's
executors, spinning in threads of their own, keep receiving; sleep overshoot is some tens of us
and does not accumulate). If the thread falls more than 50 periods behind, the schedule
is reset (counted as ``schedule_resets``). The achieved rate is measured and printed.

Interleaved windows: the runs are measured in turns of at most ``--window`` seconds (2 by
default; shorter where whole designs take more windows: 1.5 s for the five default runs of
30 s; printed) until each has had ``--duration`` seconds, every run's processes alive throughout;
the order of each turn is a row of a Williams design (no run always comes right after the
same one: in a fixed order the dynamics run always came after the heavy busy300 or b). The
machine (a shared VM) drifts: measured one after the other, 20 s each, the echo's own p99
moved by 2x from run to run and the node's p99 over the echo's spanned 0.56x to 2.17x for
the same code (0.95x-2.17x before the garbage collector's change below); taking turns puts
both under the same conditions. The cost: a run's idle processes stay on the
machine during the others' windows (printed as its node's idle CPU), and its first inputs
after a pause find the caches colder, as they would any node's. So that an idle dynamics
node is as quiet as an idle echo, the benchmark gives it ``stale_timeout: 600``: with the
default 0.2 s its watchdog published gravity compensation at 20 Hz while the others were
measured (1.2 % of a core, a load on their windows and none on its own). That parameter
acts only on inputs that stop or turn bad, which the measured windows do not have.

This process does no garbage collection while it measures (as ``timeit``): a full
collection of its lists (the motion, every input and output kept for the analysis) held the
publishing thread up by 40-70 ms once or twice a run, a burst of late inputs that landed on
whichever run was being measured.

Measured, over the run's windows (after a 1 s warm-up at 20 Hz per run that is not counted):

* latency from ``perf_counter`` just before ``publish`` of an input to the receipt, in this
  process, of the output of that input: the echo's (its stamp is in it); the
  ``joint_loads`` with the same ``header.stamp``; and the ``feedforward_efforts`` of that
  evaluation: Float64MultiArray has no stamp, so each feedforward is paired with the
  earliest input not yet paired whose feedforward it is, computed here after the run by the
  same evaluator (``evaluators.evaluator``) on the same inputs (equal to the last bit: the
  same kernels); feedforwards that are no input's (the safe policy's hold or watchdog
  values, e.g. after the warm-up) are counted apart;
* inputs published, inputs evaluated (echoes received; for the dynamics node its own
  /diagnostics ``evaluations`` and ``rejected_*`` counts, differences between a report after
  the warm-up and one after the end), dropped = published - evaluated;
* CPU of the node process (``/proc/<pid>/stat`` utime + stime, every thread, including
  DDS's) over the run's windows, in % of one core and per evaluation; likewise this
  process. (Until 2026-11-29 the rest of the machine too, /proc/stat's busy time less the
  benchmark's processes: this VM's /proc/stat undercounts, 3.1 s busy over a measurement in
  which the benchmark's processes alone counted 5.5 s, so the figure, clamped at 0, flagged
  nothing; the load average before and after is printed instead.)

Latencies include this process's receive path (an rclpy executor per run in Python, each
on a thread of its own, sharing the GIL with the publishing thread; joint_loads, /tf and
/diagnostics are taken as their bytes, ``raw=True`` (a report is read when one is wanted), the
loads' stamp read from them: built as message objects, 100 /tf messages a second of every
frame, they delayed the feedforward's receipt on this executor, p99 3.1-7.8 ms against
1.7-2.3 ms in alternating runs, a cost the echo run's receiver does not have) and DDS on
loopback; with the node's default input queue (merge: best effort, 10 deep), inputs that
arrive while it computes wait their turn, and one that finds the queue full is lost (those
are the drops; under strict's depth 1 an input overwrites the older one). The node spins rclpy's events
executor where rclpy has it (ros/common/run.py). Every child process is stopped at the end
(SIGINT, then kill), also on Ctrl-C or an error.
"""
from __future__ import annotations

import argparse
import atexit
import bisect
import gc
import math
import os
import platform
import signal
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
from common import write_result  # noqa: E402
from node_process import CHILDREN, Child  # noqa: E402  (shared with the node tests)

STATUS_NAME = "charmie_dynamics: dynamics"
WARMUP_RATE, WARMUP_SECONDS = 20.0, 1.0
RUNS = {"echo": ("echo node (the floor)", None),
        "busy300": ("echo, 300 us work, 2 publishes", None),
        "busy600": ("echo, 600 us work, 2 publishes", None),
        "raw": ("echo, raw input", None),
        "strict": ("echo, input depth 1 (strict's QoS)", None),
        "a": ("tf_rate 100 Hz", 100.0), "b": ("tf every evaluation", 0.0)}
# the echo runs' parameters (echo_node.py's module docstring)
ECHO_PARAMS = {"echo": {}, "busy300": {"busy_us": 300, "publishes": 2},
               "busy600": {"busy_us": 600, "publishes": 2}, "raw": {"raw": "true"},
               "strict": {"joint_state_policy": "strict"}}
DEFAULT_RUNS = "echo,strict,busy300,a,b"
# the dynamics node's stale_timeout here: a run waiting for its turn holds its last
# feedforward rather than publishing gravity compensation at 20 Hz (module docstring)
IDLE_HOLD_S = 600.0
MAX_DOMAIN = 232                      # the largest ROS_DOMAIN_ID whose DDS ports fit
ECHO = Path(__file__).resolve().parent / "echo_node.py"
CLK_TCK = os.sysconf("SC_CLK_TCK")

INTERRUPTED = threading.Event()       # set by SIGINT/SIGTERM; checked where it is safe to stop


# ---------------------------------------------------------------------------- processes
def stop_all() -> None:
    for child in list(CHILDREN):
        try:
            child.stop()
        except Exception as exc:               # keep stopping the others
            print(f"could not stop {child.label} (pid {child.pid}): {exc}", file=sys.stderr)


def param_args(params: dict) -> list[str]:
    """``-p name:=value`` for each parameter, after a ``--ros-args``."""
    return [arg for name, value in params.items() for arg in ("-p", f"{name}:={value}")]


def node_argv(module: str, **params) -> list[str]:
    return [sys.executable, "-m", f"charmie_dynamics.ros.{module}", "--ros-args",
            *param_args(params)]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK     # fields 14 and 15 of stat


# ---------------------------------------------------------------------------- inputs
class Motion:
    """The validation motion at 1 ms resolution, played forward then backward."""

    def __init__(self, model):
        from charmie_dynamics.trajectories import validation
        traj = validation(model, dt=0.001)
        self.n = len(traj.t) - 1                       # 5000 steps of 1 ms
        self.T = float(traj.t[-1])
        self.pos = traj.x.tolist()
        self.vel = traj.xd.tolist()
        self.vel_back = (-traj.xd).tolist()

    def sample(self, t: float) -> tuple[list, list]:
        phase = t % (2.0 * self.T)
        if phase <= self.T:
            k = min(int(round(phase / self.T * self.n)), self.n)
            return self.pos[k], self.vel[k]
        k = min(int(round((2.0 * self.T - phase) / self.T * self.n)), self.n)
        return self.pos[k], self.vel_back[k]


class Publisher(threading.Thread):
    """Publishes joint_states at ``rate`` through a schedule of windows, each (run, seconds):
    every input of a window goes to that run's node (perf_counter deadlines, sleeps; one
    schedule of deadlines across the windows). Each run's inputs follow the motion on its own
    clock (the time its windows have played, ``Run.played``), so every run is fed the same
    stretch of it (to within a sample of its 1 ms grid). ``stamp_state``: the last stamp
    given, so that stamps are unique and increasing across runs."""

    def __init__(self, names, motion: Motion, rate: float, schedule: list[tuple["Run", float]],
                 stamp_state: list, stop: threading.Event,
                 timed: bool = True):
        """``timed``: the windows' inputs are the runs' measured ones (``Run.times``, the
        CPU of each window counted), not the warm-up's."""
        super().__init__(daemon=True)
        from builtin_interfaces.msg import Time
        from sensor_msgs.msg import JointState
        self.Time = Time
        self.motion, self.rate, self.schedule = motion, rate, schedule
        self.stamp_state, self.stop, self.timed = stamp_state, stop, timed
        self.msg = JointState()
        self.msg.name = list(names)
        self.count = 0
        self.first = self.last = None
        self.schedule_resets = 0
        self.late_max = 0.0
        self.error = None

    def run(self) -> None:
        try:
            self._run()
        except BaseException as exc:             # reported by the main thread
            self.error = exc

    def _run(self) -> None:
        period = 1.0 / self.rate
        msg, Time = self.msg, self.Time
        deadline = time.perf_counter()
        for target, seconds in self.schedule:
            pub = target.pub
            times, sent = (target.times, target.sent) if self.timed else (target.warm_times, [])
            if self.timed:
                target.window_begin()
            start = time.perf_counter()
            end, motion0 = start + seconds, start - target.played   # the run's own motion clock
            while not (self.stop.is_set() or INTERRUPTED.is_set()):
                now = time.perf_counter()
                if now >= end:
                    break
                if now < deadline:
                    time.sleep(min(deadline, end) - now)
                    continue
                late = now - deadline
                self.late_max = max(self.late_max, late)
                if late > 50 * period:
                    self.schedule_resets += 1
                    deadline = now
                pos, vel = self.motion.sample(now - motion0)
                stamp_ns = max(time.time_ns(), self.stamp_state[0] + 1)   # unique, increasing
                self.stamp_state[0] = stamp_ns
                msg.header.stamp = Time(sec=stamp_ns // 1_000_000_000,
                                        nanosec=stamp_ns % 1_000_000_000)
                msg.position = pos
                msg.velocity = vel
                t_pub = time.perf_counter()
                times[stamp_ns] = t_pub
                sent.append((pos, vel))
                pub.publish(msg)
                if self.first is None:
                    self.first = t_pub
                self.last = t_pub
                self.count += 1
                deadline += period
            target.played = time.perf_counter() - motion0
            if self.timed:
                target.window_end()
            if self.stop.is_set() or INTERRUPTED.is_set():
                return

    def achieved_rate(self) -> float:
        if self.count < 2:
            return 0.0
        return (self.count - 1) / (self.last - self.first)


def williams_rows(n: int) -> list[list[int]]:
    """The rows of a Williams design for ``n`` runs: orders of 0..n-1 in which every run
    comes right after every other run equally often within the rows (over the n rows for an
    even n, over 2n rows, the n and their reverses, for an odd one; one row for one run)."""
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [[(k + r) % n for k in first] for r in range(n)]
    return rows + [row[::-1] for row in rows] if n % 2 and n > 1 else rows


def interleaved(runs: list["Run"], duration: float, window: float) -> list[tuple["Run", float]]:
    """Each run's ``duration`` in windows of at most ``window`` seconds (as many as whole
    designs take), the runs taking turns: each cycle's order a row of a Williams design in
    turn (:func:`williams_rows`: no run always comes after the same one, a heavy one for
    instance), turned by one where it would start with the run the last cycle ended with.
    The pairs across cycles are not balanced: over a whole schedule of five runs each ordered
    pair comes 4 to 6 times."""
    rows, schedule = williams_rows(len(runs)), []
    # whole designs: the windows per run a multiple of the rows
    n = math.ceil(max(1, math.ceil(duration / window - 1e-9)) / len(rows)) * len(rows)
    for cycle in range(n):
        order = [runs[k] for k in rows[cycle % len(rows)]]
        if schedule and len(runs) > 1 and order[0] is schedule[-1][0]:
            order = order[1:] + order[:1]
        schedule += [(run, duration / n) for run in order]
    return schedule


# ---------------------------------------------------------------------------- one run
def stamp_ns_of(stamp) -> int:
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def percentiles_ms(values: list[float]) -> dict:
    if not values:
        return {"p50": None, "p99": None, "max": None, "n": 0}
    a = np.asarray(values) * 1e3
    return {"p50": float(np.percentile(a, 50)), "p99": float(np.percentile(a, 99)),
            "max": float(a.max()), "n": len(values)}


def expected_feedforwards(model, sent: list) -> list[tuple]:
    """The dynamics node's feedforward for each input (positions, velocities), by the node's
    own pieces (its evaluator, acceleration zero; feedforward_joints: every input)."""
    from charmie_dynamics.evaluators.evaluator import Evaluator
    from charmie_dynamics.ros.common.outputs import FeedforwardMap
    evaluator = Evaluator(model)
    ff = FeedforwardMap(model, model.input_names, model.input_names)
    zeros, cache = np.zeros(len(model.input_names)), {}
    out = []
    for pos, vel in sent:
        key = (id(pos), id(vel))              # the motion's samples repeat
        if key not in cache:
            cache[key] = tuple(ff(evaluator(pos, vel, zeros).efforts, False).tolist())
        out.append(cache[key])
    return out


def pair_feedforwards(ffs: list, expected: list[tuple]) -> tuple[list[tuple[float, int]], int]:
    """For each feedforward (t_recv, data) in arrival order, the earliest input after the
    last one paired whose expected feedforward equals it: (t_recv, input index) pairs, and
    the count of feedforwards that are no input's."""
    where: dict = {}
    for k, e in enumerate(expected):
        where.setdefault(e, []).append(k)
    paired, other, next_k = [], 0, 0
    for t_recv, data in ffs:
        ks = where.get(data, ())
        i = bisect.bisect_left(ks, next_k)
        if i == len(ks):
            other += 1
            continue
        paired.append((t_recv, ks[i]))
        next_k = ks[i] + 1
    return paired, other


class Run:
    """One run (module docstring): its node processes (the echo node with
    ``ECHO_PARAMS[key]``, or the model loader and the dynamics node with ``tf_rate``), in a
    DDS domain of its own, and its ROS context in this process, spun by a thread of its
    own; what its windows measured."""

    def __init__(self, key: str, domain: int, log_dir: Path) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from tf2_msgs.msg import TFMessage

        from charmie_dynamics.ros.common import qos

        self.key, self.domain = key, domain
        self.label, self.tf_rate = RUNS[key]
        self.echo_run = self.tf_rate is None
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain),
                   ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
        if self.echo_run:
            self.node_proc = Child(f"{key}_echo", [sys.executable, str(ECHO), "--ros-args",
                                                   *param_args(ECHO_PARAMS[key])], env, log_dir)
            self.loader = None
            self.children: tuple[Child, ...] = (self.node_proc,)
        else:
            self.loader = Child(f"{key}_model_loader", node_argv("model_loader_node"), env,
                                log_dir)
            self.node_proc = Child(f"{key}_dynamics", node_argv(
                "dynamics_node", acceleration_source="zero", check_position_limits="false",
                stale_timeout=f"{IDLE_HOLD_S:.1f}", tf_rate=f"{self.tf_rate:.1f}"), env,
                log_dir)
            self.children = (self.loader, self.node_proc)

        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain,
                   signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node(f"bench_node_{key}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        # deep reliable queues here, so this process never loses outputs by falling behind
        deep = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
        self.loads: list = []     # (stamp_ns, t_recv), arrival order: joint_loads or echoes
        self.ffs: list = []       # (t_recv, data tuple), arrival order
        self.diagnostics: list[bytes] = []    # /diagnostics as their bytes, arrival order
        self._reports: list[tuple[int, dict]] = []    # those read (reports())
        self._diagnostics_read = 0
        self.tf_count = 0
        self.times: dict = {}     # measured inputs: stamp_ns -> perf_counter at publish
        self.warm_times: dict = {}
        self.sent: list = []      # (positions, velocities) of each measured input, in order
        # summed over its windows: CPU s of its node, its loader and this process, wall s,
        # /tf messages received
        self.in_windows = dict.fromkeys(("node", "loader", "own", "wall", "tf"), 0.0)
        self._window_start: dict = {}
        self.played = 0.0         # seconds of the motion its windows have played
        self.ff_start = 0         # the feedforwards before the measured windows: not timed
        if self.echo_run:
            self.subs = [self.node.create_subscription(Float64MultiArray, "echo",
                                                       self._on_echo, deep)]
        else:
            # joint_loads, /tf and /diagnostics taken as their bytes: building their messages
            # (100 /tf a second of every frame) on this process's executors delayed the
            # feedforward's receipt, a cost the echo run's receiver does not have (module
            # docstring); the diagnostics are read when a report is wanted
            self.subs = [
                self.node.create_subscription(JointState, "joint_loads", self._on_loads, deep,
                                              raw=True),
                self.node.create_subscription(Float64MultiArray, "feedforward_efforts",
                                              self._on_ff, deep),
                self.node.create_subscription(DiagnosticArray, "/diagnostics",
                                              self.diagnostics.append, deep, raw=True),
                self.node.create_subscription(TFMessage, "/tf", self._on_tf, qos.TF, raw=True)]
        # best effort, as the node's subscription
        self.pub = self.node.create_publisher(JointState, "joint_states", qos.SENSOR)
        self._spinning = threading.Event()
        self._spinning.set()
        self._thread = threading.Thread(target=self._spin, name=f"spin_{key}", daemon=True)
        self._thread.start()

    # -- this process's receipts (the run's executor thread)
    def _spin(self) -> None:
        while self._spinning.is_set():
            self.executor.spin_once(timeout_sec=0.1)

    def _on_loads(self, data: bytes) -> None:
        # the header's stamp, after the 4-byte CDR encapsulation (little-endian: the node's)
        sec, nanosec = struct.unpack_from("<iI", data, 4)
        self.loads.append((sec * 1_000_000_000 + nanosec, time.perf_counter()))

    def _on_echo(self, m) -> None:
        self.loads.append((int(m.data[0]) * 1_000_000_000 + int(m.data[1]), time.perf_counter()))

    def _on_ff(self, m) -> None:
        self.ffs.append((time.perf_counter(), tuple(m.data)))

    def _on_tf(self, data: bytes) -> None:
        self.tf_count += 1

    # -- waiting (the main thread)
    def wait(self, predicate, timeout: float, what: str, required: bool = True) -> bool:
        return wait_for([self], predicate, timeout, f"run {self.key}: {what}", required)

    def reports(self) -> list[tuple[int, dict]]:
        """The dynamics node's /diagnostics reports so far: (stamp_ns, key-values); the
        messages not read before are read now."""
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.serialization import deserialize_message
        arrived = len(self.diagnostics)
        for data in self.diagnostics[self._diagnostics_read:arrived]:
            m = deserialize_message(data, DiagnosticArray)
            self._reports += [(stamp_ns_of(m.header.stamp), {kv.key: kv.value for kv in s.values})
                              for s in m.status if s.name == STATUS_NAME]
        self._diagnostics_read = arrived
        return self._reports

    def diagnostics_after(self, t_ns: int) -> dict:
        """The first report stamped after ``t_ns`` (waits for it; {} for the echo)."""
        if self.echo_run:
            return {}
        later: list = []

        def arrived() -> bool:
            later[:] = [v for s, v in self.reports()[-3:] if s > t_ns]
            return bool(later)
        self.wait(arrived, 5.0, "a diagnostics report")
        return later[0]

    def ready(self) -> None:
        """Until its node's topics match this process's (and, for the dynamics node, it
        reports a model)."""
        self.wait(lambda: self.pub.get_subscription_count() >= 1
                  and all(s.get_publisher_count() >= 1 for s in self.subs[:3]),
                  60.0, "the node's topics to match")
        if not self.echo_run:
            self.wait(lambda: any(v.get("model", "none") != "none" for _, v in self.reports()),
                      60.0, "the dynamics node to report a model")

    # -- what its windows cost (the publishing thread, at each window's ends)
    def _counters(self) -> dict:
        return {"node": cpu_seconds(self.node_proc.pid),
                "loader": cpu_seconds(self.loader.pid) if self.loader else 0.0,
                "own": time.process_time(), "wall": time.perf_counter(), "tf": self.tf_count}

    def window_begin(self) -> None:
        self._window_start = self._counters()

    def window_end(self) -> None:
        now = self._counters()
        for k in self.in_windows:
            self.in_windows[k] += now[k] - self._window_start[k]

    # -- its node's CPU over the whole measurement (the main thread): outside its own
    # windows, its idle cost, borne by the other runs' windows
    def totals_begin(self) -> None:
        self._node_cpu0 = cpu_seconds(self.node_proc.pid)

    def totals_end(self) -> None:
        self.node_cpu_total = cpu_seconds(self.node_proc.pid) - self._node_cpu0

    def close(self) -> None:
        import rclpy
        self._spinning.clear()
        self._thread.join(timeout=5)
        for c in reversed(self.children):
            c.stop()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    # -- after the windows
    def result(self, model, base: dict, final: dict, publisher: Publisher,
               measured_wall: float) -> dict:
        """The run's figures (module docstring)."""
        times, cpu = self.times, self.in_windows
        published = len(times)
        lat_loads = [t - times[s] for s, t in self.loads if s in times]
        window = cpu["wall"]
        idle_wall = measured_wall - window
        result = {
            "run": self.key, "label": self.label, "tf_rate": self.tf_rate,
            "echo_params": ECHO_PARAMS.get(self.key), "domain": self.domain,
            "rate_target_hz": publisher.rate, "duration_s": window,
            "rate_achieved_hz": publisher.achieved_rate(),
            "schedule_resets": publisher.schedule_resets,
            "publish_late_max_ms": publisher.late_max * 1e3,
            "published": published,
            "cpu_node_pct_of_core": 100.0 * cpu["node"] / window,
            "cpu_benchmark_pct_of_core": 100.0 * cpu["own"] / window,
            # its node's CPU outside its windows: idle, while the other runs were measured
            "cpu_node_idle_pct_of_core": 100.0 * (self.node_cpu_total - cpu["node"]) / idle_wall
            if idle_wall > 0 else None,
        }
        if self.echo_run:
            evaluated = len(lat_loads)
            result.update({"evaluated": evaluated, "latency_ms": percentiles_ms(lat_loads),
                           "latency_joint_loads_ms": percentiles_ms([])})
        else:
            paired, ff_other = pair_feedforwards(self.ffs[self.ff_start:],
                                                 expected_feedforwards(model, self.sent))
            t_sent = list(times.values())                  # publish order
            ff_lat = [t_ff - t_sent[k] for t_ff, k in paired]

            def delta(k: str) -> int:
                return int(final.get(k, 0)) - int(base.get(k, 0))
            evaluated = delta("evaluations")
            # the node reports its mean compute latency over its life: the runs' mean from
            # the sums
            n0, n1 = int(base.get("evaluations", 0)), int(final.get("evaluations", 0))
            m0 = float(base.get("compute_latency_mean_ms", 0.0))
            m1 = float(final.get("compute_latency_mean_ms", 0.0))
            result.update({
                "evaluated": evaluated,
                "evaluated_joint_loads": len(lat_loads),
                "rejected": {k[len("rejected_"):]: delta(k) for k in final
                             if k.startswith("rejected_") and delta(k)},
                "latency_ms": percentiles_ms(ff_lat),
                "latency_joint_loads_ms": percentiles_ms(lat_loads),
                "feedforward_not_inputs": ff_other,
                "tf_messages": int(cpu["tf"]),
                "tf_rate_received_hz": cpu["tf"] / window,
                "node_compute_latency_ms": {
                    "mean": (m1 * n1 - m0 * n0) / (n1 - n0) if n1 > n0 else None,
                    "max_whole_life": float(final.get("compute_latency_max_ms", "nan"))},
                "diagnostics_final": final})
        result.update({"dropped": published - evaluated,
                       "dropped_pct": 100.0 * (published - evaluated) / published
                       if published else None,
                       "evaluation_rate_hz": evaluated / window,
                       "cpu_ms_per_evaluation": 1e3 * cpu["node"] / evaluated
                       if evaluated else None})
        return result


def wait_for(runs: list[Run], predicate, timeout: float, what: str, required: bool = True
             ) -> bool:
    """Until ``predicate()``, a RuntimeError if a process of ``runs`` ends meanwhile (or,
    ``required``, at the timeout; else False)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if INTERRUPTED.is_set():
            raise KeyboardInterrupt
        for c in (c for run in runs for c in run.children):
            if not c.alive():
                raise RuntimeError(f"{c.label} exited with {c.proc.returncode}:\n{c.tail()}")
        if time.monotonic() > deadline:
            if required:
                raise RuntimeError(f"timed out after {timeout} s waiting for {what}")
            return False
        time.sleep(0.01)
    return True


def measure(keys: list[str], rate: float, duration: float, window: float, domain0: int,
            log_dir: Path, model) -> list[dict]:
    """Every run's processes started, warmed up one after the other, then measured in
    interleaved windows (module docstring)."""
    runs: list[Run] = []
    stop = threading.Event()
    publisher = None
    try:
        for n, key in enumerate(keys):
            runs.append(Run(key, domain0 + n, log_dir))
        for run in runs:
            run.ready()
        motion = Motion(model)
        stamp_state = [0]
        # warm-up (not counted): first evaluations, caches
        for run in runs:
            publisher = Publisher(model.input_names, motion, WARMUP_RATE,
                                  [(run, WARMUP_SECONDS)], stamp_state, stop,
                                  timed=False)
            publisher.start()
            wait_for(runs, lambda: not publisher.is_alive(), WARMUP_SECONDS + 10.0,
                     f"run {run.key}'s warm-up")
            if publisher.error:
                raise publisher.error
            run.wait(lambda: sum(s in run.warm_times for s, _ in run.loads)
                     >= len(run.warm_times), 3.0, "the warm-up's outputs", required=False)
        bases = {run.key: run.diagnostics_after(time.time_ns()) for run in runs}
        for run in runs:
            run.ff_start = len(run.ffs)
            run.totals_begin()

        # the measured windows
        schedule = interleaved(runs, duration, window)
        publisher = Publisher(model.input_names, motion, rate, schedule, stamp_state, stop)
        load0 = os.getloadavg()[0]
        # no garbage collection in this process while it measures (as timeit): a full
        # collection of its lists held up the publishing thread by tens of milliseconds
        gc.collect()
        try:
            gc.disable()
            wall0 = time.perf_counter()
            publisher.start()
            wait_for(runs, lambda: not publisher.is_alive(), len(runs) * duration + 60.0,
                     "the publishing thread")
        finally:
            gc.enable()
        wall = time.perf_counter() - wall0
        for run in runs:
            run.totals_end()
        load1 = os.getloadavg()[0]
        if publisher.error:
            raise publisher.error
        # drain: until no joint_loads (echoes) for 1 s in any run (the watchdog's
        # feedforwards go on), then a diagnostics report after that
        counts, last_change = [len(r.loads) for r in runs], [time.monotonic()]

        def drained() -> bool:
            now = [len(r.loads) for r in runs]
            if now != counts:
                counts[:], last_change[0] = now, time.monotonic()
            return time.monotonic() - last_change[0] > 1.0
        wait_for(runs, drained, 30.0, "the outputs to drain")
        finals = {run.key: run.diagnostics_after(time.time_ns()) for run in runs}
    finally:
        stop.set()
        if publisher is not None and publisher.is_alive():
            publisher.join(timeout=5)
        for run in runs:
            try:
                run.close()
            except Exception as exc:           # keep closing the others
                print(f"could not close run {run.key}: {exc}", file=sys.stderr)
    results = []
    for run in runs:
        r = run.result(model, bases[run.key], finals[run.key], publisher, wall)
        r["loadavg_1min_before_after"] = [load0, load1]
        r["windows"] = sum(1 for target, _ in schedule if target is run)
        r["window_s"] = next(seconds for target, seconds in schedule if target is run)
        results.append(r)
    return results


def ratios(run: dict, floor: dict) -> dict:
    """A run's figures over the plain echo run's."""
    def over(a, b):
        return None if a is None or not b else a / b
    L, F = run["latency_ms"], floor["latency_ms"]
    return {"p50": over(L["p50"], F["p50"]), "p99": over(L["p99"], F["p99"]),
            "dropped": over(run["dropped"], floor["dropped"]),
            "dropped_extra_pct": run["dropped_pct"] - floor["dropped_pct"],
            "cpu_per_evaluation": over(run["cpu_ms_per_evaluation"],
                                       floor["cpu_ms_per_evaluation"])}


# ---------------------------------------------------------------------------- report
def table(results: list[dict]) -> str:
    def f(v, fmt="{:.1f}"):
        return "-" if v is None else fmt.format(v)
    names = [f"({r['run']}) {r['label']}" for r in results]
    w = max([26, *map(len, names)])
    head = (f"{'run':{w}s} {'in Hz':>7s} {'pub':>6s} {'eval':>6s} {'rej':>4s} {'drop':>6s} "
            f"{'drop%':>5s} {'out p50':>7s} {'p99':>6s} {'max':>6s} {'loads p50':>9s} {'p99':>6s} "
            f"{'CPU%':>5s} {'CPU ms':>6s} {'tf/s':>5s}")
    sub = (f"{'':{w}s} {'(ach.)':>7s} {'':>6s} {'':>6s} {'':>4s} {'':>6s} {'':>5s} {'ms':>7s} "
           f"{'':>6s} {'':>6s} {'ms':>9s} {'':>6s} {'node':>5s} {'/eval':>6s} {'':>5s}")
    lines = [head, sub]
    for name, r in zip(names, results):
        L, J = r["latency_ms"], r["latency_joint_loads_ms"]
        lines.append(
            f"{name:{w}s} {r['rate_achieved_hz']:7.1f} {r['published']:6d} "
            f"{r['evaluated']:6d} {sum(r.get('rejected', {}).values()):4d} {r['dropped']:6d} "
            f"{f(r['dropped_pct']):>5s} {f(L['p50'], '{:.2f}'):>7s} {f(L['p99'], '{:.2f}'):>6s} "
            f"{f(L['max'], '{:.1f}'):>6s} {f(J['p50'], '{:.2f}'):>9s} {f(J['p99'], '{:.2f}'):>6s} "
            f"{r['cpu_node_pct_of_core']:5.1f} {f(r['cpu_ms_per_evaluation'], '{:.3f}'):>6s} "
            f"{f(r.get('tf_rate_received_hz')):>5s}")
    return "\n".join(lines)


def _on_signal(signum, frame):
    # not raised here: an exception raised inside rclpy's take would come out as a
    # RuntimeError; the spin loop raises KeyboardInterrupt at its next turn
    INTERRUPTED.set()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="joint_states rate, Hz")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--window", type=float, default=2.0,
                        help="seconds the runs measure at a time, taking turns (default 2)")
    parser.add_argument("--runs", default=DEFAULT_RUNS,
                        help="which runs: echo (the floor), strict (the echo with input depth "
                        "1), busy300 and busy600 (the echo with 300 or 600 us of work and 2 "
                        "publishes), raw (the echo reading raw input), a (tf_rate 100), b "
                        f"(tf_rate 0); default {DEFAULT_RUNS}")
    parser.add_argument("--domain", type=int, default=None,
                        help="first ROS_DOMAIN_ID (default: from the process id); each further "
                        "run uses the next")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/node_latest.json"))
    args = parser.parse_args()
    keys = [k.strip() for k in args.runs.split(",") if k.strip()]
    if not keys or any(k not in RUNS for k in keys) or len(set(keys)) < len(keys):
        parser.error(f"--runs: expected a comma list of {', '.join(RUNS)}, each once")
    if not (args.rate > 0 and args.duration > 0 and args.window > 0):
        parser.error("--rate, --duration and --window must be > 0")
    if args.domain is not None and not 0 <= args.domain <= MAX_DOMAIN - len(keys) + 1:
        parser.error(f"--domain: the {len(keys)} runs need ids {args.domain} to "
                     f"{args.domain + len(keys) - 1}, within 0-{MAX_DOMAIN}")

    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    # Ctrl-C and SIGTERM end the benchmark; the finally blocks stop the children. Installed
    # before any child starts, so the children get the default SIGINT handling even when
    # this process was started with SIGINT ignored (a background job)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    atexit.register(stop_all)

    from charmie_dynamics import bundled_model, load_model
    model = load_model(bundled_model())
    # a block of ids of its own, within 150-MAX_DOMAIN, for each benchmark beside another
    slots = max(1, (MAX_DOMAIN - 150 + 1) // len(keys))
    domain0 = args.domain if args.domain is not None else 150 + (os.getpid() % slots) * len(keys)
    try:
        with tempfile.TemporaryDirectory(prefix="bench_node_") as tmp:
            print(f"runs {', '.join(keys)}: {args.rate:g} Hz for {args.duration:g} s each, in "
                  f"windows of at most {args.window:g} s taking turns; domains {domain0} to "
                  f"{domain0 + len(keys) - 1} ...", flush=True)
            results = measure(keys, args.rate, args.duration, args.window, domain0, Path(tmp),
                              model)
    except KeyboardInterrupt:
        stop_all()
        print("interrupted; node processes stopped", file=sys.stderr)
        return 130
    finally:
        stop_all()

    floor = next((r for r in results if r["run"] == "echo"), None)
    for r in results:
        if floor is not None and r is not floor:
            r["over_echo"] = ratios(r, floor)
    print(f"\nnode benchmark, CHARMIE ({len(model.input_names)} inputs), dynamics node with "
          f"acceleration_source zero; target input rate {args.rate:g} Hz, {args.duration:g} s per "
          f"run; {os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}")
    print(table(results))
    for r in results:
        print(f"({r['run']}) achieved input rate {r['rate_achieved_hz']:.1f} Hz "
              f"(target {r['rate_target_hz']:g}; schedule resets {r['schedule_resets']}, "
              f"latest publish {r['publish_late_max_ms']:.2f} ms behind); evaluations "
              f"{r['evaluation_rate_hz']:.1f}/s; outputs timed {r['latency_ms']['n']}"
              + ("" if r["tf_rate"] is None else
                 f" (feedforwards that are no input's {r['feedforward_not_inputs']}); rejected "
                 f"{r['rejected'] or 'none'}; node compute mean "
                 f"{r['node_compute_latency_ms']['mean'] or float('nan'):.3f} ms, max "
                 f"{r['node_compute_latency_ms']['max_whole_life']:.1f} ms")
              + f"; this process {r['cpu_benchmark_pct_of_core']:.1f}% of a core; its node "
              f"idle in the other runs' windows {r['cpu_node_idle_pct_of_core'] or 0.0:.1f}%; "
              f"{r['windows']} windows of {r['window_s']:.2f} s; load average "
              f"{r['loadavg_1min_before_after'][0]:.2f} -> {r['loadavg_1min_before_after'][1]:.2f}")
    for r in results:
        if "over_echo" in r:
            o = r["over_echo"]

            def f(v):
                return "-" if v is None else f"{v:.2f}"
            print(f"({r['run']}) over the echo node: latency p50 {f(o['p50'])}x, p99 "
                  f"{f(o['p99'])}x; drops {f(o['dropped'])}x ({o['dropped_extra_pct']:+.1f} "
                  f"points); CPU per evaluation {f(o['cpu_per_evaluation'])}x")
    print("columns: in Hz = achieved joint_states rate; eval = inputs evaluated (echo: echoes "
          "received; dynamics: the node's 'evaluations', difference); drop = published - eval; "
          "out = latency from publish to receipt here of the echo or the feedforward (ms); "
          "loads = of joint_loads; CPU% node = the node process, % of one core; CPU ms/eval = its "
          "CPU time per evaluation; tf/s = /tf messages received per second")
    write_result(args.out, {"rate_hz": args.rate, "duration_s": args.duration, "runs": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
