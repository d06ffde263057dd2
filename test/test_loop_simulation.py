"""The simulation of a model with loops (simulation/loop_step.py) and the nodes that run it.

In the core: the five-bar's free fall (seed 002 eq. 36) by loop_step against Pinocchio's
``constraintDynamics`` integrated here by RK4 with the same step on every coordinate, the
energy and the constraint residual along it, the independent coordinates' stops, and the
refusal of stops on dependent coordinates. Over DDS (separate processes, ros_harness): the
simulator node's free fall, every published state closing the loop to 1e-9 and equal to the
Pinocchio reference; the trajectory player's eq. 35 motion with every coordinate; and
``charmie-dynamics bringup --mode sim --model five_bar.yaml`` (kinematic and dynamic) giving
joint_loads from the dynamics node."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.mechanisms.closed_chains import ClosedChain
from charmie_dynamics.mechanisms.closed_chains.constraints import evaluate
from charmie_dynamics.model import load_model, model_from_text
from charmie_dynamics.simulation.loop_step import DependentStopError, LoopStepData, loop_step
from charmie_dynamics.trajectories import EQ35, seed002_eq35, sine_ramp

FIVE_BAR = Path(__file__).resolve().parent.parent / "config" / "examples" / "five_bar.yaml"
DT = 1e-3
START = np.radians([80.0, 70.0])          # eq. 36: at rest


@pytest.fixture(scope="module")
def chain() -> ClosedChain:
    return ClosedChain.build(load_model(str(FIVE_BAR)))


def residual(chain: ClosedChain, q: np.ndarray) -> float:
    """max |Phi| at q (the numpy constraints, constraints.py)."""
    return float(np.abs(evaluate(chain.model, chain.rows, q).residual).max())


@pytest.fixture(scope="module")
def pinocchio_free_fall(chain) -> tuple[np.ndarray, np.ndarray]:
    """(q, qd) (steps + 1, 4) of the free fall for 0.5 s: classical RK4 with the step DT on
    every coordinate, the accelerations by Pinocchio's constraintDynamics (the five-bar's
    cut as one CONTACT_3D constraint, test_closed_chains' set-up); the start solved by the
    embedding."""
    pin = pytest.importorskip("pinocchio")
    from test_closed_chains import pinocchio_constrained_acceleration

    def f(q, qd):
        return pinocchio_constrained_acceleration(chain, q, qd, np.zeros(2),
                                                  pin.ContactType.CONTACT_3D)
    q, qd = chain.positions(START), np.zeros(4)
    qs, qds = [q], [qd]
    for _ in range(500):
        a1 = f(q, qd)
        q2, v2 = q + 0.5 * DT * qd, qd + 0.5 * DT * a1
        a2 = f(q2, v2)
        q3, v3 = q + 0.5 * DT * v2, qd + 0.5 * DT * a2
        a3 = f(q3, v3)
        q4, v4 = q + DT * v3, qd + DT * a3
        a4 = f(q4, v4)
        q = q + DT / 6 * (qd + 2 * v2 + 2 * v3 + v4)
        qd = qd + DT / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        qs.append(q)
        qds.append(qd)
    return np.array(qs), np.array(qds)


def test_free_fall_matches_pinocchio_constraint_dynamics(chain, pinocchio_free_fall):
    """Every coordinate and rate at every step of 0.5 s. Measured: 1.4e-12 rad after 0.1 s,
    1.3e-11 after 0.3 s, 6.6e-10 rad and 7.2e-9 rad/s after 0.5 s (the two integrators
    differ: Pinocchio's on all four coordinates, which drift off the loop by the RK4 error;
    ours on the independent ones with the loop solved at every stage)."""
    q_ref, qd_ref = pinocchio_free_fall
    data = LoopStepData(chain.model, chain)
    data.reset(START, np.zeros(2))
    for k in range(1, len(q_ref)):
        loop_step(data, np.zeros(2), DT)
        np.testing.assert_allclose(data.q, q_ref[k], rtol=0, atol=1e-8, err_msg=f"step {k}")
        np.testing.assert_allclose(data.qd, qd_ref[k], rtol=0, atol=1e-7, err_msg=f"step {k}")


def test_free_fall_equals_closed_chain_simulate_closes_the_loop_and_keeps_its_energy(chain):
    """loop_step (compiled embedding) against closed_chain.simulate (numpy embedding, the
    same RK4) over 1 s: equal to 1e-10 (measured 2e-15 after 0.5 s); max |Phi| <= 1e-12 at
    every step (Newton's tolerance, no drift); energy constant to 1e-6 relative (measured
    2.6e-8 J of 44.85 J after 0.5 s at 1 ms)."""
    steps = 1000
    sim = cc.simulate(chain, START, np.zeros(2), steps * DT, DT)
    data = LoopStepData(chain.model, chain)
    data.reset(START, np.zeros(2))
    e0 = cc.energy(chain, data.q, data.qd)
    for k in range(1, steps + 1):
        loop_step(data, np.zeros(2), DT)
        assert residual(chain, data.q) <= 1e-12, k
        np.testing.assert_allclose(data.q, sim.q[k], rtol=0, atol=1e-10, err_msg=f"step {k}")
        if k % 100 == 0:
            assert abs(cc.energy(chain, data.q, data.qd) - e0) <= 1e-6 * abs(e0), k


def test_computed_torque_on_the_kept_dynamics_follows_eq35(chain):
    """The simulator's pd on a loop model: tau = M (x''_ref + kp e + kd e') + G^T (b + H g)
    from LoopStepData's kept M and bias, held over each 1 ms step, along eq. 35 for 3 s:
    within 1e-5 rad (measured 9.8e-7)."""
    ref = seed002_eq35(chain.model, DT)
    data = LoopStepData(chain.model, chain)
    data.reset(ref.x[0], np.zeros(2))
    for k in range(3000):
        a = ref.xdd[k] + 100.0 * (ref.x[k] - data.x) + 20.0 * (ref.xd[k] - data.v)
        loop_step(data, data.M @ a + data.bias, DT)
        np.testing.assert_allclose(data.x, ref.x[k + 1], rtol=0, atol=1e-5, err_msg=f"{k}")


def with_limits(limits: dict[str, str]) -> str:
    """The five-bar's text with ``limits`` (coordinate -> the joint's limits mapping text)."""
    text = FIVE_BAR.read_text()
    for coordinate, value in limits.items():
        old = f"coordinate: {coordinate}}}"
        assert old in text
        text = text.replace(old, f"coordinate: {coordinate}, limits: {value}}}")
    return text


def test_a_stop_on_an_independent_coordinate_holds_it():
    """theta1_2 falls from 70 deg (measured); a stop at 69 deg: never below it, and its
    rate zero while on it; the loop still closes."""
    model = model_from_text(with_limits({"theta1_2": "{lower: 69, upper: 120}"}), "stop")
    chain = ClosedChain.build(model)
    data = LoopStepData(model, chain)
    data.reset(START, np.zeros(2))
    lower = np.radians(69.0)
    hit = False
    for _ in range(300):
        loop_step(data, np.zeros(2), DT)
        assert data.x[1] >= lower - 1e-15
        if data.x[1] <= lower:
            hit = True
            assert data.v[1] >= 0.0
        assert residual(chain, data.q) <= 1e-12
    assert hit


def test_a_stop_on_a_dependent_coordinate_is_refused():
    model = model_from_text(with_limits({"theta2_1": "{lower: -170, upper: 170}"}), "stop")
    with pytest.raises(DependentStopError, match="theta2_1 have joint limits"):
        LoopStepData(model)


# ------------------------------------------------------------------ over DDS
rclpy = pytest.importorskip("rclpy")

from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

from ros_harness import (RELIABLE, Child, dump_on_failure, log_dir, node_argv,  # noqa: E402,F401
                         params, ros, ros_env)
from test_simulator_node import SimulatedRobot, remapped  # noqa: E402


@pytest.mark.ros
@dump_on_failure
def test_simulator_runs_the_free_fall(ros, ros_env, log_dir, chain, pinocchio_free_fall):
    """The simulator alone on the five-bar, no motion given, effort control without
    commands: the free fall. Every published joint_states carries the four coordinates, closes
    the loop to 1e-9 and equals the Pinocchio reference at its simulated time (to 1e-8 over
    the reference's 0.5 s); then the singular configuration stops it (ERROR), the node alive."""
    ns = "loop_fall"
    # held still (at t = 0) until a first command: the fall starts once this process hears
    # the simulator (on a loaded machine DDS discovery took longer than the 1.26 s fall)
    simulator = Child("simulator_loop_fall", node_argv("simulator_node", *remapped(ns), *params(
        model_file=str(FIVE_BAR), control="effort", wait_for_command=True, publish_clock=True,
        rate=100.0, dt=DT)), ros_env, log_dir)
    robot = SimulatedRobot(ros, ns)
    pub = ros.node.create_publisher(Float64MultiArray, f"/{ns}/effort_commands", RELIABLE)
    q_ref, _ = pinocchio_free_fall
    try:
        ros.watched = [simulator]
        assert ros.spin_until(lambda: pub.get_subscription_count() >= 1 and robot.states, 120.0)
        pub.publish(Float64MultiArray(data=[0.0, 0.0]))      # no effort: the free fall
        assert ros.spin_until(lambda: any(d["level"] == "ERROR" for d in robot.diagnostics),
                              120.0), (robot.sim_time(), robot.diagnostics[-1:])
        stopped = next(d for d in robot.diagnostics if d["level"] == "ERROR")
        assert "singular configuration" in stopped["message"], stopped
        ros.spin_until(lambda: False, 0.5)          # still alive
        fallen = list(robot.states)
        # issue 34's SIM1: ~/reset brings it back from the stop, to the start at rest
        client = ros.node.create_client(Trigger, f"/{ns}/simulator/reset")
        assert client.wait_for_service(timeout_sec=30.0)
        future = client.call_async(Trigger.Request())
        assert ros.spin_until(future.done, 30.0)
        assert future.result().success and "singular configuration" in future.result().message
        mark = len(robot.diagnostics)
        assert ros.spin_until(lambda: len(robot.diagnostics) > mark, 10.0)
        assert robot.diagnostics[-1]["level"] != "ERROR", robot.diagnostics[-1]
        restarted = robot.states[-1]
        assert restarted.header.stamp.sec == 0 and restarted.header.stamp.nanosec == 0
        np.testing.assert_allclose(restarted.position, q_ref[0], rtol=0, atol=1e-9)
        del robot.states[len(fallen):]              # the fall's states are compared below
    finally:
        ros.watched = []
        simulator.stop()
        for sub in robot.subs:
            ros.node.destroy_subscription(sub)
    names = list(chain.model.coordinate_names)
    compared = 0
    assert len(robot.states) >= 10, len(robot.states)
    for msg in robot.states:
        assert list(msg.name) == names
        q = np.array(msg.position)
        assert residual(chain, q) <= 1e-9
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        k = int(round(t / DT))
        if k < len(q_ref):
            np.testing.assert_allclose(q, q_ref[k], rtol=0, atol=1e-8, err_msg=f"t = {t}")
            compared += 1
    assert compared >= 5, compared


@pytest.mark.ros
@dump_on_failure
def test_player_plays_eq35_with_every_coordinate(ros, ros_env, log_dir, chain):
    """The player on the five-bar with no motion given: eq. 35's motion at the independent
    coordinates (at the player's time), the dependent ones solved (loop closed to 1e-9)."""
    ns = "loop_player"
    player = Child("player_loop", node_argv("trajectory_player_node", *remapped(ns), *params(
        model_file=str(FIVE_BAR), publish_clock=True, rate=100.0)), ros_env, log_dir)
    states: list[JointState] = []
    sub = ros.node.create_subscription(JointState, f"/{ns}/joint_states", states.append,
                                       qos_profile_sensor_data)
    try:
        ros.watched = [player]
        assert ros.spin_until(lambda: len(states) >= 30, 60.0), len(states)
    finally:
        ros.watched = []
        player.stop()
        ros.node.destroy_subscription(sub)
    (a0, a1), (b0, b1), T = EQ35
    for msg in states:
        assert list(msg.name) == list(chain.model.coordinate_names)
        q = np.array(msg.position)
        assert residual(chain, q) <= 1e-9
    # the player's time: /clock from 0, one period per tick; its stamps step by 10 ms
    stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in states])
    elapsed = stamps - stamps[0]
    x = np.array([[m.position[0], m.position[2]] for m in states])
    first = x[0]
    expected1 = sine_ramp(elapsed + _start_time(first[0], a0, a1, T), np.radians(a0),
                          np.radians(a1), T)[0]
    np.testing.assert_allclose(x[:, 0], expected1, atol=1e-6)


def _start_time(x0: float, a0: float, a1: float, T: float) -> float:
    """The time of eq. 22a's ramp 30 -> 90 deg at x0 (bisection: it increases)."""
    lo, hi = 0.0, T
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if sine_ramp(np.array([mid]), np.radians(a0), np.radians(a1), T)[0][0] < x0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@pytest.mark.ros
@pytest.mark.parametrize("sim", ["kinematic", "dynamic"])
def test_bringup_runs_the_five_bar(ros_env, sim):
    """``charmie-dynamics bringup --mode sim --model five_bar.yaml``, no launch: the player's
    eq. 35 (kinematic) or the simulator's free fall (dynamic), and joint_loads from the
    dynamics node (its status lines). Nothing on wall-clock speed."""
    proc = subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", "bringup",
                           "--mode", "sim", "--sim", sim, "--model", str(FIVE_BAR),
                           "--duration", "8"],
                          env=ros_env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    rates = [float(m.group(1)) for m in re.finditer(r"joint_loads\s+([\d.]+) Hz", proc.stdout)]
    assert rates and max(rates) > 0.0, proc.stdout
    assert "model 'five_bar'" in proc.stderr + proc.stdout, (proc.stdout, proc.stderr)


@pytest.mark.ros
@dump_on_failure
def test_player_lives_through_a_trajectory_whose_loops_do_not_close(ros, ros_env, log_dir,
                                                                    tmp_path):
    """The attack: a five-bar CSV through configurations where the loop cannot close
    (theta1_1 = 85 deg, theta1_2 from 95 to 115 deg) ended the player with a traceback while
    it filled the reference's efforts (and bringup with it). Now it plays on: joint_states
    with every coordinate where the loop closes, the independent ones alone where it does
    not, and the reference without efforts, with a warning that says where."""
    from trajectory_msgs.msg import JointTrajectory
    csv = tmp_path / "through_singular.csv"
    rows = [f"{0.01 * i:.2f},{np.radians(85.0):.17g},{np.radians(95.0 + 0.5 * i):.17g}"
            for i in range(41)]
    csv.write_text("time,theta1_1,theta1_2\n" + "\n".join(rows) + "\n", encoding="utf-8")
    ns = "loop_player_singular"
    player = Child("player_singular", node_argv("trajectory_player_node", *remapped(ns), *params(
        model_file=str(FIVE_BAR), trajectory_file=str(csv), rate=100.0, repeat=True)),
        ros_env, log_dir)
    states: list[JointState] = []
    references: list = []
    subs = [ros.node.create_subscription(JointState, f"/{ns}/joint_states", states.append,
                                         qos_profile_sensor_data),
            ros.node.create_subscription(JointTrajectory, f"/{ns}/reference_trajectory",
                                         references.append, RELIABLE)]
    try:
        ros.watched = [player]
        assert ros.spin_until(lambda: references and len(states) >= 90, 60.0), player.tail()
        assert player.alive()
    finally:
        ros.watched = []
        player.stop()
        for sub in subs:
            ros.node.destroy_subscription(sub)
    assert "Traceback" not in player.text()
    assert "reference trajectory published without efforts" in player.text(), player.tail()
    points = references[0].points
    assert len(points) == 41 and all(len(p.effort) == 0 for p in points)
    names = {len(m.name) for m in states}
    assert names == {2, 4}, names          # independent only where the loop does not close
    assert all(np.isfinite(m.position).all() for m in states)
