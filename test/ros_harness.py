"""What the node tests share (test_ros_nodes, test_simulator_node, test_node_hardening,
test_fuzz_nodes): DDS on loopback in a domain of this pytest run, node processes, this
process's rclpy context and test node (advanced with ``spin_once`` until a condition holds
or a timeout passes: never a blind sleep for discovery), a dynamics node seen from the test
node, and the core's reference values. Import the fixtures (``ros_env``, ``log_dir``,
``ros``) into a test module to use them."""
from __future__ import annotations

import functools
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.srv import ListParameters
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from tf2_msgs.msg import TFMessage

from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.kinematics import inputs_from_dict, resolve_state
from charmie_dynamics.model import load_model
from charmie_dynamics.ros.common.inputs import InputLimits
from conftest import CHARMIE
from domains import domain_id
from node_process import CHILDREN, Child

DOMAIN = domain_id(100, 100)                # the node tests' domain (one per pytest process)
STATUS_NAME = "charmie_dynamics: dynamics"
TOL = dict(rtol=1e-9, atol=1e-9)

RELIABLE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
LATE = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                  durability=DurabilityPolicy.TRANSIENT_LOCAL, history=HistoryPolicy.KEEP_LAST)

MODEL = load_model(CHARMIE)
ACTUATORS = tuple(MODEL.actuator_names)                       # act4, act5
JOINT_INPUTS = tuple(n for n in MODEL.input_names if n not in ACTUATORS)
LIMITS = InputLimits.of(MODEL)



# ---------------------------------------------------------------------------- processes
def node_argv(module: str, *ros_args: str) -> list[str]:
    return [sys.executable, "-m", f"charmie_dynamics.ros.{module}", "--ros-args", *ros_args]


def params(**values) -> list[str]:
    out = []
    for name, value in values.items():
        out += ["-p", f"{name}:={value}"]
    return out


def dump_children() -> None:
    for child in CHILDREN:
        state = "running" if child.alive() else f"exited {child.proc.returncode}"
        print(f"----- {child.label} ({state}) -----\n{child.text()[-4000:]}")


def dump_on_failure(test):
    """Print the node processes' output (stderr and stdout) when the test fails."""
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        try:
            return test(*args, **kwargs)
        except BaseException:
            dump_children()
            raise
    return wrapper


def namespaced_dynamics(ns: str, env: dict, log_dir: Path, command: list[str] | None = None,
                        **overrides) -> Child:
    """A dynamics node in namespace ``/ns`` with its model from model_file and its absolute
    topics (/tf, /tf_static, /diagnostics, /clock) moved under ``/ns``; ``command``: what
    runs the node, ``--ros-args`` and the arguments follow (default: the package's module);
    ``overrides``: other parameter values."""
    values = dict(model_file=CHARMIE, acceleration_source="zero", tf_rate=0.0, output_rate=0.0,
                  stale_timeout=0.3, stale_policy="gravity", diagnostics_period=0.2) | overrides
    ros_args = ["-r", f"__ns:=/{ns}", *(a for t in ("tf", "tf_static", "diagnostics", "clock")
                                        for a in ("-r", f"/{t}:=/{ns}/{t}")), *params(**values)]
    argv = node_argv("dynamics_node", *ros_args) if command is None \
        else [*command, "--ros-args", *ros_args]
    return Child(f"dynamics_{ns}", argv, env, log_dir)


# ---------------------------------------------------------------------------- rclpy side
def stamp_key(stamp: Time) -> tuple[int, int]:
    return (stamp.sec, stamp.nanosec)


def quaternion_matrix(q) -> np.ndarray:
    x, y, z, w = q.x, q.y, q.z, q.w
    assert abs(x * x + y * y + z * z + w * w - 1.0) < 1e-9
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def vec(v) -> np.ndarray:
    return np.array([v.x, v.y, v.z])


class Ros:
    """This process's rclpy context, test node and executor."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("ros_nodes_test", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.watched: list[Child] = []         # processes that must stay up while spinning
        self._t_ns = 1_700_000_000 * 10**9     # message stamps, unique and increasing

    def close(self) -> None:
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.try_shutdown(context=self.context)

    def spin_until(self, predicate, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not predicate():
            for child in self.watched:
                assert child.alive(), f"{child.label} exited with {child.proc.returncode}"
            if time.monotonic() >= deadline:
                return predicate()
            self.executor.spin_once(timeout_sec=0.01)
        return True

    def spin_for(self, seconds: float) -> None:
        """Keep the executor going for a while (only where a duration is the point)."""
        deadline = time.monotonic() + seconds
        self.spin_until(lambda: time.monotonic() >= deadline, seconds + 1.0)

    def next_stamp(self) -> Time:
        self._t_ns += 10_000_000
        return Time(sec=self._t_ns // 10**9, nanosec=self._t_ns % 10**9)

    def late(self, topic: str, msg_type, done, timeout: float = 10.0) -> list:
        """A late-joining (transient local) subscriber: the messages it got once ``done``."""
        got: list = []
        sub = self.node.create_subscription(msg_type, topic, got.append, LATE)
        try:
            ok = self.spin_until(lambda: done(got), timeout)
            assert ok, f"late subscriber of {topic}: {len(got)} message(s) in {timeout} s: {got!r:.300}"
        finally:
            self.node.destroy_subscription(sub)
        return got

    def call(self, client, request, timeout: float = 10.0, idempotent: bool = False):
        """The service's answer within ``timeout``. An idempotent request is sent again every
        15 s until then: on Jazzy's Fast DDS a request sent right after discovery can lose its
        answer (the service ready, the answer never coming; seen in CI for GetState and
        ListParameters), and only a request that may run twice can be repeated."""
        assert self.spin_until(client.service_is_ready, timeout), f"service {client.srv_name} not ready"
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            future = client.call_async(request)
            if self.spin_until(future.done, min(left, 15.0) if idempotent else left):
                return future.result()
            assert idempotent and time.monotonic() < deadline, f"no answer from {client.srv_name}"
            client.remove_pending_request(future)

    def wait_answering(self, node_name: str, timeout: float = 60.0) -> None:
        """Wait until a freshly started node answers its parameter services. They are
        discoverable from the node's first line (rclpy's Node.__init__), but answered only
        once it spins, after its own start-up (a dynamics node loads its model and its
        compiled kernels first: seconds under load); the fixtures' 60 s, as for ready()."""
        client = self.node.create_client(ListParameters, f"{node_name}/list_parameters")
        try:
            self.call(client, ListParameters.Request(), timeout, idempotent=True)
        finally:
            self.node.destroy_client(client)


def joint_state_msg(stamp: Time, names, positions, velocities=None) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(v) for v in positions]
    msg.velocity = [float(v) for v in (velocities if velocities is not None else [])]
    return msg


class Dynamics:
    """A dynamics node seen from the test node: its inputs and outputs under ``prefix``."""

    def __init__(self, ros: Ros, child: Child, prefix: str, with_tf: bool):
        self.ros, self.child, self.prefix, self.with_tf = ros, child, prefix, with_tf
        node = ros.node
        self.pub_joints = node.create_publisher(JointState, f"{prefix}/joint_states", RELIABLE)
        self.pub_actuators = node.create_publisher(JointState, f"{prefix}/actuator_states", RELIABLE)
        self.joint_loads: dict = {}
        self.actuator_loads: dict = {}
        self.tf: dict = {}
        self.wrenches: dict = {}
        self.loads_order: list = []                  # stamps of joint_loads, in arrival order
        self.feedforward: list = []                  # (arrival time, np.array)
        self.diagnostics: list = []                  # status values (dict), in arrival order
        self.diagnostics_times: list = []            # their arrival (time.monotonic())
        self.tf_static: list = []
        self.subs = [
            node.create_subscription(JointState, f"{prefix}/joint_loads", self._on_loads, RELIABLE),
            node.create_subscription(JointState, f"{prefix}/actuator_loads",
                                     lambda m: self.actuator_loads.__setitem__(stamp_key(m.header.stamp), m), RELIABLE),
            node.create_subscription(Float64MultiArray, f"{prefix}/feedforward_efforts",
                                     lambda m: self.feedforward.append((time.monotonic(), np.array(m.data))), RELIABLE),
            node.create_subscription(DiagnosticArray, f"{prefix}/diagnostics", self._on_diagnostics, RELIABLE),
            node.create_subscription(TFMessage, f"{prefix}/tf_static", self.tf_static.append, LATE),
        ]
        if with_tf:
            self.subs += [
                node.create_subscription(TFMessage, f"{prefix}/tf", self._on_tf, RELIABLE),
                node.create_subscription(WrenchStamped, f"{prefix}/joint_wrenches/body_3",
                                         lambda m: self.wrenches.__setitem__(stamp_key(m.header.stamp), m), RELIABLE),
            ]

    def _on_loads(self, msg: JointState) -> None:
        key = stamp_key(msg.header.stamp)
        self.joint_loads[key] = msg
        self.loads_order.append(key)

    def _on_tf(self, msg: TFMessage) -> None:
        keys = {stamp_key(t.header.stamp) for t in msg.transforms}
        assert len(keys) == 1, keys
        self.tf[keys.pop()] = msg

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            if status.name == STATUS_NAME:
                self.diagnostics.append({kv.key: kv.value for kv in status.values}
                                        | {"level": int.from_bytes(status.level, "little"),
                                           "message": status.message})
                self.diagnostics_times.append(time.monotonic())

    def ready(self) -> bool:
        """Model loaded (its static frames seen) and every endpoint matched."""
        return (bool(self.tf_static) and self.pub_joints.get_subscription_count() >= 1
                and self.pub_actuators.get_subscription_count() >= 1
                and all(sub.get_publisher_count() >= 1 for sub in self.subs))

    def publish_joints(self, stamp: Time, pos: dict, vel: dict | None = None, names=JOINT_INPUTS) -> None:
        self.pub_joints.publish(joint_state_msg(
            stamp, names, [pos[n] for n in names], None if vel is None else [vel[n] for n in names]))

    def publish_actuators(self, pos: dict, vel: dict | None = None) -> None:
        self.pub_actuators.publish(joint_state_msg(
            self.ros.next_stamp(), ACTUATORS, [pos[n] for n in ACTUATORS],
            None if vel is None else [vel[n] for n in ACTUATORS]))

    def send_state(self, pos: dict, vel: dict, settle: float = 0.0, timeout: float = 5.0,
                   attempts: int = 4):
        """Publish actuator_states then joint_states; wait for this stamp's outputs.

        Messages on two topics reach the node in either order; an evaluation that used the
        previous actuator lengths (seen in actuator_loads' positions) or none at all is
        repeated with a new stamp. The evaluation's feedforward is the last one received
        ``settle`` s after the outputs (a stale node's watchdog may publish before it).
        Returns (stamp key, outputs by name)."""
        for _ in range(attempts):
            mark = len(self.feedforward)
            self.publish_actuators(pos, vel)
            self.ros.spin_for(0.03)             # let actuator_states go first
            stamp = self.ros.next_stamp()
            key = stamp_key(stamp)
            self.publish_joints(stamp, pos, vel)

            def arrived():
                ok = key in self.joint_loads and key in self.actuator_loads \
                    and len(self.feedforward) > mark
                if self.with_tf:
                    ok = ok and key in self.tf and key in self.wrenches
                return ok
            if not self.ros.spin_until(arrived, timeout):
                continue
            if settle:
                self.ros.spin_for(settle)
            act = self.actuator_loads[key]
            echo = dict(zip(act.name, act.position))
            if all(echo[a] == pos[a] for a in ACTUATORS):
                return key, dict(joint_loads=self.joint_loads[key], actuator_loads=act,
                                 feedforward=self.feedforward[-1][1],
                                 feedforward_time=self.feedforward[-1][0],
                                 feedforward_new=[v for _, v in self.feedforward[mark:]],
                                 tf=self.tf.get(key), wrench=self.wrenches.get(key))
        raise AssertionError(f"{self.prefix or '/'}: no outputs for a valid state in {attempts} attempts")

    def counts_after(self, n_evaluations: int, timeout: float = 5.0) -> dict:
        """Rejection counters from a diagnostics message sent after ``n_evaluations``."""
        mark = len(self.diagnostics)
        assert self.ros.spin_until(lambda: any(int(d["evaluations"]) >= n_evaluations
                                               for d in self.diagnostics[mark:]), timeout)
        return {k: int(v) for k, v in self.diagnostics[-1].items() if k.startswith("rejected_")}

    def wait_count(self, reason: str, at_least: int, timeout: float = 5.0) -> int:
        key = f"rejected_{reason}"
        self.ros.spin_until(lambda: self.diagnostics and int(self.diagnostics[-1][key]) >= at_least, timeout)
        return int(self.diagnostics[-1][key]) if self.diagnostics else -1


# ---------------------------------------------------------------------------- core side
def random_state(rng: np.random.Generator, act4: float | None = None, act5: float | None = None):
    """Random inputs inside the model's limits (positions within +-1.2 rad or m, velocities
    within +-0.8 rad/s or m/s)."""
    pos = {n: float(rng.uniform(max(LIMITS.lower.get(n, -1.2), -1.2), min(LIMITS.upper.get(n, 1.2), 1.2)))
           for n in JOINT_INPUTS}
    pos["act4"] = float(rng.uniform(0.33, 0.49)) if act4 is None else act4
    pos["act5"] = float(rng.uniform(0.34, 0.46)) if act5 is None else act5
    vel = {n: float(rng.uniform(-1.0, 1.0) * min(0.8, 0.9 * LIMITS.velocity.get(n, 1.0)))
           for n in MODEL.input_names}
    return pos, vel


def core(pos: dict, vel: dict, gravity_only: bool = False):
    """What the node must publish, from the core: inputs, state, loads, efforts in input order."""
    x, xd, xdd = inputs_from_dict(MODEL, pos, vel)
    state = resolve_state(MODEL, x, xd, xdd)                 # acceleration_source zero
    loads = inverse_dynamics(MODEL, state, gravity_only=gravity_only)
    efforts = np.array(loads.coordinate_effort, dtype=float)
    for k, name in enumerate(ACTUATORS):
        efforts[MODEL.input_names.index(name)] = loads.actuator_force[k]
    return x, xd, state, loads, efforts


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def ros_env():
    """Loopback DDS in this run's own domain, for this process (before rclpy.init) and children."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    mp.setenv("ROS_DOMAIN_ID", str(DOMAIN))
    mp.delenv("ROS_LOCALHOST_ONLY", raising=False)
    yield dict(os.environ)
    mp.undo()


@pytest.fixture(scope="module")
def log_dir():
    with tempfile.TemporaryDirectory(prefix="charmie_ros_nodes_") as d:
        yield Path(d)


@pytest.fixture(scope="module")
def ros(ros_env):
    r = Ros()
    yield r
    r.close()
