"""Issue 35, item 1: the dynamics node as a managed (lifecycle) node, over DDS in a separate
process. configure -> activate -> deactivate -> activate -> SIGTERM, asserting what is
published in each state: nothing on the feedforward before activate, the feedforward equal to
the core's after it, ``deactivate_command`` exactly once on deactivate and then silence, and
the same command once more on SIGTERM before the process exits 0."""
from __future__ import annotations

import signal
import time

import numpy as np
import pytest

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros]

from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402

from node_process import Child  # noqa: E402
from ros_harness import (TOL, Dynamics, core, dump_on_failure, log_dir,  # noqa: E402,F401
                         namespaced_dynamics, random_state, ros, ros_env)


def _transition(ros, client, transition: int) -> bool:
    assert client.wait_for_service(timeout_sec=60.0)
    return ros.call(client, ChangeState.Request(transition=Transition(id=transition)),
                    timeout=120.0).success


def _state(ros, client) -> str:
    """The node's lifecycle state (GetState is idempotent: see Ros.call)."""
    assert client.wait_for_service(timeout_sec=60.0)
    return ros.call(client, GetState.Request(), timeout=60.0, idempotent=True).current_state.label


def _silent(ros, dyn: Dynamics, pos: dict, vel: dict, seconds: float) -> list:
    """Feed valid inputs for ``seconds``; the feedforward messages that arrived meanwhile."""
    mark = len(dyn.feedforward)
    for _ in range(int(seconds / 0.05)):
        dyn.publish_actuators(pos, vel)
        dyn.publish_joints(ros.next_stamp(), pos, vel)
        ros.spin_for(0.05)
    return [v for _, v in dyn.feedforward[mark:]]


def _terminate(ros, child: Child) -> float:
    """SIGTERM to ``child``, which must end with status 0; when it was sent."""
    ros.watched = []
    signalled = time.monotonic()
    child.proc.send_signal(signal.SIGTERM)
    assert ros.spin_until(lambda: not child.alive(), 60.0), child.tail()
    assert child.proc.returncode == 0, child.tail()
    return signalled


@dump_on_failure
def test_configure_activate_deactivate_activate_sigterm(ros, ros_env, log_dir):
    # stale_policy zero: the watchdog's safe output (zeros) is not deactivate_command's
    child: Child = namespaced_dynamics("life", ros_env, log_dir, autostart="false",
                                       deactivate_command="gravity", stale_timeout=5.0,
                                       stale_policy="zero", watchdog_rate=20.0)
    node = ros.node
    change = node.create_client(ChangeState, "/life/dynamics/change_state")
    get = node.create_client(GetState, "/life/dynamics/get_state")
    dyn = Dynamics(ros, child, "/life", with_tf=False)
    rng = np.random.default_rng(35)
    pos, vel = random_state(rng)
    try:
        ros.watched = [child]
        assert _state(ros, get) == "unconfigured"
        assert ros.spin_until(lambda: dyn.diagnostics and
                              dyn.diagnostics[-1]["lifecycle"] == "unconfigured", 30.0)
        assert _silent(ros, dyn, pos, vel, 0.5) == []          # unconfigured: nothing

        assert _transition(ros, change, Transition.TRANSITION_CONFIGURE)
        assert _state(ros, get) == "inactive"
        assert ros.spin_until(lambda: dyn.diagnostics[-1]["lifecycle"] == "inactive", 30.0)
        assert dyn.diagnostics[-1]["message"].startswith("inactive")
        assert _silent(ros, dyn, pos, vel, 0.5) == []          # inactive: nothing
        assert ros.spin_until(lambda: int(dyn.diagnostics[-1]["inputs_while_inactive"]) > 0, 10.0)
        assert not dyn.tf_static                               # frames come with activate

        assert _transition(ros, change, Transition.TRANSITION_ACTIVATE)
        assert ros.spin_until(dyn.ready, 30.0)
        _, out = dyn.send_state(pos, vel)
        np.testing.assert_allclose(out["feedforward"], core(pos, vel)[4], **TOL)

        # deactivate: gravity at the last valid input, once; then nothing
        mark = len(dyn.feedforward)
        assert _transition(ros, change, Transition.TRANSITION_DEACTIVATE)
        assert ros.spin_until(lambda: len(dyn.feedforward) > mark, 10.0)
        after = _silent(ros, dyn, pos, vel, 1.0)
        sent = [v for _, v in dyn.feedforward[mark:]]
        assert len(sent) == 1 and after == [], (len(sent), len(after))
        np.testing.assert_allclose(sent[0], core(pos, vel, gravity_only=True)[4], **TOL)
        assert _state(ros, get) == "inactive"

        # active again: the feedforward of new inputs
        assert _transition(ros, change, Transition.TRANSITION_ACTIVATE)
        pos, vel = random_state(rng)
        _, out = dyn.send_state(pos, vel)
        np.testing.assert_allclose(out["feedforward"], core(pos, vel)[4], **TOL)

        # a deactivate with no input since the activation still knows the last positions
        # (the attack: it published zeros, which drop the arms)
        for transition in (Transition.TRANSITION_DEACTIVATE, Transition.TRANSITION_ACTIVATE):
            assert _transition(ros, change, transition)
        mark = len(dyn.feedforward)
        assert _transition(ros, change, Transition.TRANSITION_DEACTIVATE)
        assert ros.spin_until(lambda: len(dyn.feedforward) > mark, 10.0)
        np.testing.assert_allclose(dyn.feedforward[-1][1], core(pos, vel, gravity_only=True)[4],
                                   **TOL)
        assert _transition(ros, change, Transition.TRANSITION_ACTIVATE)

        # SIGTERM while active: the safe command before the process ends, exit status 0
        mark = len(dyn.feedforward)
        signalled = _terminate(ros, child)
        ros.spin_for(0.5)
        sent = [v for _, v in dyn.feedforward[mark:]]
        assert len(sent) >= 1, child.tail()
        np.testing.assert_allclose(sent[-1], core(pos, vel, gravity_only=True)[4], **TOL)
        # three deactivates by the service, the fourth by the SIGTERM
        assert child.text().count("inactive: outputs off (deactivate_command gravity)") == 4
        # a figure for docs/ros.md (printed, never asserted)
        print(f"SIGTERM to the safe command over DDS: "
              f"{(dyn.feedforward[-1][0] - signalled) * 1e3:.1f} ms")
    finally:
        ros.watched = []
        for client in (change, get):
            node.destroy_client(client)
        child.stop()


@pytest.mark.slow
@dump_on_failure
def test_a_cold_cache_configure_says_it_compiles(ros, ros_env, log_dir, tmp_path):
    """A configure that compiles the kernels (an empty numba cache: a new build, a service
    user's fresh home) is said on /diagnostics while it runs, from the node's configuring
    thread (the executor's is busy compiling), and ends inactive."""
    env = dict(ros_env, NUMBA_CACHE_DIR=str(tmp_path / "cold-cache"))
    child = namespaced_dynamics("cold", env, log_dir, autostart="false", diagnostics_period=0.5)
    change = ros.node.create_client(ChangeState, "/cold/dynamics/change_state")
    dyn = Dynamics(ros, child, "/cold", with_tf=False)
    try:
        ros.watched = [child]
        assert change.wait_for_service(timeout_sec=60.0)
        future = change.call_async(ChangeState.Request(
            transition=Transition(id=Transition.TRANSITION_CONFIGURE)))
        assert ros.spin_until(future.done, 600.0), child.tail()
        assert future.result().success, child.tail()
        configuring = [d for d in dyn.diagnostics if d["lifecycle"] == "configuring"]
        assert configuring, dyn.diagnostics[-3:]
        assert configuring[-1]["message"].startswith(
            "configuring: reading the model and compiling the kernels (")
        assert ros.spin_until(lambda: dyn.diagnostics[-1]["lifecycle"] == "inactive", 30.0)
    finally:
        ros.watched = []
        ros.node.destroy_client(change)
        child.stop()


@dump_on_failure
def test_a_second_signal_during_the_teardown_is_still_a_clean_exit(ros, ros_env, log_dir):
    """The attack: a second SIGINT 0.05-0.5 s after the first (``ros2 launch`` forwards its
    own after the terminal's) ended the process by the signal (-2) as the interpreter
    finalized, after the safe command."""
    for gap in (0.05, 0.3):
        child = namespaced_dynamics("twice", ros_env, log_dir)
        dyn = Dynamics(ros, child, "/twice", with_tf=False)
        try:
            ros.watched = [child]
            assert ros.spin_until(dyn.ready, 60.0)
            ros.watched = []
            child.proc.send_signal(signal.SIGINT)
            ros.spin_for(gap)
            if child.alive():
                child.proc.send_signal(signal.SIGINT)
            assert ros.spin_until(lambda: not child.alive(), 30.0), child.tail()
            assert child.proc.returncode == 0, (gap, child.tail())
            assert "Traceback" not in child.text()
        finally:
            child.stop()


def test_autostart_does_not_activate_after_a_signal_and_names_any_configure_error(
        monkeypatch):
    """The attack: a signal during autostart's configure still activated the node; an
    unexpected exception in configure (rclpy drops it) gave an empty reason."""
    import rclpy
    from rclpy.parameter import Parameter

    from charmie_dynamics.ros import dynamics_node
    from conftest import CHARMIE
    from domains import domain_id
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    context = rclpy.context.Context()
    rclpy.init(context=context)
    try:
        node = dynamics_node.DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(CHARMIE))])
        node.autostart(lambda: True)                  # the signal came during configure
        assert node.configured and not node.active
        node.destroy_node()

        def broken(*args, **kwargs):
            raise OSError("disk on fire")
        monkeypatch.setattr(dynamics_node, "read_model_file", broken)
        node = dynamics_node.DynamicsNode(context=context, parameter_overrides=[
            Parameter("model_file", value=str(CHARMIE))])
        with pytest.raises(ValueError, match="^OSError: disk on fire$"):
            node.autostart()
        assert not node.configured
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


@dump_on_failure
def test_ctrl_c_in_bringup_publishes_the_safe_command(ros, ros_env, log_dir):
    """The attack: bringup let rclpy's signal handlers shut the context down inside the
    signal, so Ctrl-C or SIGTERM published no deactivate_command (and once a FATAL stack)."""
    import sys

    from std_msgs.msg import Float64MultiArray
    received: list = []
    sub = ros.node.create_subscription(Float64MultiArray, "/feedforward_efforts",
                                       lambda m: received.append(time.monotonic()), 100)
    child = Child("bringup", [sys.executable, "-m", "charmie_dynamics.cli.main", "bringup",
                              "--mode", "sim", "--duration", "300"], ros_env, log_dir)
    try:
        ros.watched = [child]
        assert ros.spin_until(lambda: len(received) >= 20, 120.0), child.tail()
        signalled = _terminate(ros, child)
        ros.spin_for(0.3)
        assert "inactive: outputs off (deactivate_command gravity)" in child.text(), child.tail()
        assert any(t > signalled for t in received), child.tail()
        assert "Traceback" not in child.text() and "FATAL" not in child.text()
    finally:
        ros.watched = []
        ros.node.destroy_subscription(sub)
        child.stop()
