"""SIGINT and SIGTERM reach a node process whose main thread cannot run a Python handler
(run._SignalWatch): the executor's wait is woken; a callback still running at the stop limit
says where and finishes; a teardown that hangs ends after the limit with every thread's
traceback and status 1, not by launch's SIGKILL with nothing said.
Real processes over DDS (test/signal_watch_node.py)."""
from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy")
pytestmark = [pytest.mark.ros]

from node_process import Child  # noqa: E402
from ros_harness import log_dir, ros_env  # noqa: E402,F401

SCRIPT = str(Path(__file__).with_name("signal_watch_node.py"))


def _until(condition, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("executor", ["events", "single"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_wakes_an_executor_waiting_in_rcl(ros_env, log_dir, executor, signum):
    """Without the wake the wait returns after its 60 s (measured on both executors: the
    Python handler ran only when the wait ended)."""
    env = dict(ros_env, CHARMIE_DYNAMICS_EXECUTOR=executor)
    child = Child(f"wait_{executor}_{signum}", [sys.executable, SCRIPT, "wait"], env, log_dir)
    try:
        assert _until(lambda: "waiting" in child.text(), 60.0), child.tail()
        time.sleep(0.5)                             # inside the wait
        child.proc.send_signal(signum)
        assert _until(lambda: not child.alive(), 30.0), child.tail()
        assert child.proc.returncode == 0, child.tail()
        woke = float(child.text().split("woke after ")[1].split(" s")[0])
        assert woke < 30.0 and "interrupted: True" in child.text(), child.tail()
    finally:
        child.stop()


def test_a_callback_still_running_after_the_limit_says_where_then_stops_cleanly(
        ros_env, log_dir):
    """A lifecycle configure compiling when Ctrl-C comes is such a callback: it finishes."""
    env = dict(ros_env, CHARMIE_DYNAMICS_STOP_LIMIT="3")
    child = Child("long_callback", [sys.executable, SCRIPT, "callback"], env, log_dir)
    try:
        assert _until(lambda: "stuck" in child.text(), 60.0), child.tail()
        child.proc.send_signal(signal.SIGINT)
        assert _until(lambda: not child.alive(), 60.0), child.tail()
        assert child.proc.returncode == 0, child.tail()
        text = child.text()
        assert "Timeout (0:00:03)!" in text and "callback_that_takes_6_s" in text, text
        assert text.index("callback_that_takes_6_s") < text.index("done"), text
    finally:
        child.stop()


def test_a_teardown_that_hangs_ends_after_the_limit_with_its_tracebacks(ros_env, log_dir):
    env = dict(ros_env, CHARMIE_DYNAMICS_STOP_LIMIT="3")
    child = Child("hung_teardown", [sys.executable, SCRIPT, "teardown"], env, log_dir)
    try:
        assert _until(lambda: "spinning" in child.text(), 60.0), child.tail()
        child.proc.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        assert _until(lambda: not child.alive(), 60.0), child.tail()
        assert time.monotonic() - signalled >= 3.0
        assert child.proc.returncode == 1, child.tail()
        text = child.text()
        assert "Timeout (0:00:03)!" in text and "in destroy_node" in text, text
    finally:
        child.stop()


def test_a_start_up_slow_after_a_signal_says_where_and_then_stops_cleanly(ros_env, log_dir):
    child = Child("slow_start", [sys.executable, SCRIPT, "slow_start"], ros_env, log_dir)
    try:
        assert _until(lambda: "starting" in child.text(), 60.0), child.tail()
        child.proc.send_signal(signal.SIGINT)
        assert _until(lambda: not child.alive(), 120.0), child.tail()
        assert child.proc.returncode == 0, child.tail()
        text = child.text()
        assert "Timeout (0:00:45)!" in text and "construction_that_takes_50_s" in text, text
    finally:
        child.stop()


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_stop_limit_is_one_line_and_status_1(ros_env, log_dir, value):
    env = dict(ros_env, CHARMIE_DYNAMICS_STOP_LIMIT=value)
    child = Child(f"limit_{value}", [sys.executable, SCRIPT, "teardown"], env, log_dir)
    try:
        assert _until(lambda: not child.alive(), 60.0), child.tail()
        assert child.proc.returncode == 1, child.tail()
        assert child.text().strip() == (f"HungTeardown: error: CHARMIE_DYNAMICS_STOP_LIMIT="
                                        f"{value!r}: expected seconds > 0"), child.tail()
    finally:
        child.stop()
