"""``charmie-dynamics bringup``: the nodes of a launch file in one process (rclpy executor),
with the same parameter files, for machines without launch_ros. Prints what is happening
(input and output rates, latency, a few loads, rejected inputs) every status period."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import JointState

from ...resources import share_directory
from ..common import qos
from ..common.run import (autostart, ignore_signals, init_ros, interrupted, make_executor,
                          note_signals, spinning, stop_safely, stopping)


class StatusPrinter(Node):
    """Counts what the dynamics node publishes and prints one line per period."""

    def __init__(self) -> None:
        super().__init__("bringup_status")
        self.counts = {"joint_states": 0, "joint_loads": 0}
        self.last: dict[str, JointState] = {}
        self.diagnostics: dict[str, str] = {}
        self.simulator: dict[str, str] = {}
        self.create_subscription(JointState, "joint_states", self._count("joint_states"),
                                 qos.SENSOR)
        self.create_subscription(JointState, "joint_loads", self._count("joint_loads"), qos.OUTPUT)
        self.create_subscription(JointState, "actuator_loads", self._keep("actuator_loads"),
                                 qos.OUTPUT)
        self.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, qos.OUTPUT)
        self.started = time.monotonic()
        self.window = (time.monotonic(), dict(self.counts))

    def _count(self, key):
        def callback(msg):
            self.counts[key] += 1
            self.last[key] = msg
        return callback

    def _keep(self, key):
        def callback(msg):
            self.last[key] = msg
        return callback

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            values["level_message"] = status.message
            if status.name.endswith("dynamics"):
                self.diagnostics = values
            elif status.name.endswith("simulator"):
                self.simulator = values

    def line(self) -> str:
        now = time.monotonic()
        t0, counts0 = self.window
        rates = {k: (self.counts[k] - counts0[k]) / (now - t0) for k in self.counts}
        self.window = (now, dict(self.counts))
        parts = [f"t={now - self.started:5.1f} s", f"joint_states {rates['joint_states']:6.1f} Hz",
                 f"joint_loads {rates['joint_loads']:6.1f} Hz"]
        act = self.last.get("actuator_loads")
        if act is not None:
            efforts = dict(zip(act.name, act.effort))
            parts += [f"{n} {efforts[n]:+7.1f} N" for n in ("act4", "act5") if n in efforts]
        loads = self.last.get("joint_loads")
        if loads is not None:
            efforts = dict(zip(loads.name, loads.effort))
            parts += [f"{n} {efforts[n]:+6.2f} N m" for n in ("theta8a",) if n in efforts]
        sim = self.simulator
        if sim:
            parts.insert(1, f"sim t={sim['simulated_time_s']} s "
                            f"(x{sim['real_time_factor']} real time, "
                            f"saturated: {sim['saturated_now']})")
        d = self.diagnostics
        if d:
            rejected = sum(int(v) for k, v in d.items()
                           if k.startswith("rejected_") and k != "rejected_throttled")
            parts += [f"latency {d.get('compute_latency_mean_ms', '?')} ms", f"rejected {rejected}",
                      f"[{d.get('level_message', '')}]"]
        return " | ".join(parts)


def add_bringup_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bringup")
    p.add_argument("--mode", choices=("sim", "hardware"), default="sim",
                   help="sim: with the trajectory player; hardware: on the robot's topics")
    p.add_argument("--params", type=Path, default=None,
                   help="parameter file (default: config/<mode>.yaml of the package)")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds to run (default: sim ends 1 s after the motion, hardware runs "
                        "until Ctrl-C)")
    p.add_argument("--status-period", type=float, default=1.0, help="seconds between status lines")
    p.add_argument("--sim", choices=("kinematic", "dynamic"), default="kinematic",
                   help="sim mode: kinematic (the trajectory player) or dynamic (the simulator "
                        "node integrating the forward dynamics; it publishes /clock)")
    p.add_argument("--model", type=Path, default=None,
                   help="model file (YAML or URDF) instead of the params file's: the loader, "
                        "player and simulator take it, the dynamics node publishes the joint "
                        "wrench of its base body, the motion is the model's default (a model "
                        "with loops: seed002-eq35 played, the free fall of seed002-free-fall "
                        "simulated)")
    p.add_argument("--use-sim-time", action="store_true",
                   help="kinematic sim: the player publishes /clock and the nodes run on it")
    p.set_defaults(func=run_bringup)


def model_overrides(path: Path | None) -> dict[str, list[rclpy.parameter.Parameter]]:
    """Each node's parameter overrides for ``--model`` (none without it): the model file;
    the dynamics node's wrench of the model's base body; the model's default motion; for a
    model with loops the simulator's free fall (effort control, no command awaited).
    ModelError for a file that does not load."""
    nodes = ("model_loader", "dynamics", "simulator", "player")
    out: dict[str, list[rclpy.parameter.Parameter]] = {n: [] for n in nodes}
    if path is None:
        return out
    from ...model import load_model
    model = load_model(str(path))
    Parameter = rclpy.parameter.Parameter
    out["model_loader"] = [Parameter("model_file", value=str(path))]
    out["dynamics"] = [Parameter("wrench_joints", value=[""])]
    out["player"] = [Parameter("model_file", value=str(path)), Parameter("motion", value="")]
    out["simulator"] = [Parameter("model_file", value=str(path)), Parameter("motion", value="")]
    if model.loops is not None:
        out["simulator"] += [Parameter("control", value="effort"),
                             Parameter("wait_for_command", value=False)]
    return out


def run_bringup(args: argparse.Namespace) -> int:
    from ...errors import InputError
    from ...model import ModelError
    from ..dynamics_node import DynamicsNode
    from ..model_loader_node import ModelLoaderNode
    from ..simulator_node import SimulatorNode
    from ..trajectory_player_node import TrajectoryPlayerNode

    params = args.params or share_directory() / "config" / f"{args.mode}.yaml"
    if not Path(params).is_file():
        raise InputError(f"--params {params}: no such parameter file")
    dynamic = args.mode == "sim" and args.sim == "dynamic"
    sim_time = args.use_sim_time or dynamic
    ros_args = ["--ros-args", "--params-file", str(params)]
    if sim_time:
        ros_args += ["-p", "use_sim_time:=true"]
    nodes = []
    player = None
    try:
        model = model_overrides(args.model)
        note_signals()                  # Ctrl-C and SIGTERM stop the nodes, safely, below
        init_ros(ros_args)
        nodes.append(ModelLoaderNode(parameter_overrides=model["model_loader"]))
        # bringup is no lifecycle manager: the node configures and activates itself
        nodes.append(DynamicsNode(parameter_overrides=model["dynamics"] + [
            rclpy.parameter.Parameter("autostart", value=True)]))
        if dynamic:
            # the simulator owns simulated time: its own timer runs on the wall clock
            nodes.append(SimulatorNode(parameter_overrides=[
                rclpy.parameter.Parameter("use_sim_time", value=False)] + model["simulator"]))
        elif args.mode == "sim":
            overrides = [rclpy.parameter.Parameter("publish_clock", value=True)] if sim_time else []
            player = TrajectoryPlayerNode(parameter_overrides=overrides + model["player"])
            nodes.append(player)
        for node in nodes:              # the dynamics node's configure and activate
            autostart(node)
    except (ModelError, ValueError, ParameterException) as exc:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
        raise InputError(str(exc)) from None
    status = StatusPrinter()
    nodes.append(status)
    executor = make_executor(nodes=nodes)
    for node in nodes:
        executor.add_node(node)
    duration = args.duration
    if duration is None and player is not None and not player.p.repeat:
        duration = player.duration + 1.0
    if duration is None and dynamic:
        duration = 30.0        # the simulator runs at a fraction of real time: see its status
    print(f"charmie_dynamics bringup --mode {args.mode}"
          + (f" --sim {args.sim}" if args.mode == "sim" else "")
          + f": {', '.join(n.get_name() for n in nodes)} "
          f"with {params}" + (f" for {duration:.1f} s" if duration else " (Ctrl-C to stop)"),
          flush=True)
    start = next_status = time.monotonic()
    spinning(status)
    try:
        while rclpy.ok() and not interrupted():
            executor.spin_once(timeout_sec=0.05)
            now = time.monotonic()
            if now >= next_status + args.status_period:
                next_status = now
                print(status.line(), flush=True)
            if duration is not None and now - start >= duration:
                break
    except ExternalShutdownException:
        pass
    finally:
        stopping()
        if time.monotonic() - next_status > 0.5 * args.status_period:
            print(status.line(), flush=True)
        for node in nodes:
            stop_safely(node)
            executor.remove_node(node)
        executor.shutdown()             # before the nodes' entities go (run.run_node)
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
        ignore_signals()
    return 0
