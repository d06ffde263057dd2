"""Processes for test_signal_watch.py, each blocked where a Python signal handler cannot run:

    python signal_watch_node.py wait       # spin_once(60 s) with nothing to do, then prints
    python signal_watch_node.py callback   # run_node, a timer callback that takes 6 s
    python signal_watch_node.py teardown   # run_node, a node whose destroy_node never returns
    python signal_watch_node.py slow_start # run_node, a node whose construction takes 50 s

``wait`` prints ``waiting`` before its wait and ``woke after S s, interrupted: B`` after it.
``callback`` prints ``stuck`` as its (first) callback starts and ``done`` as it ends,
``teardown`` ``spinning`` from its first callback, ``slow_start`` ``starting`` as its
construction does."""
from __future__ import annotations

import sys
import time

from rclpy.node import Node

from charmie_dynamics.ros.common.run import (init_ros, interrupted, make_executor, note_signals,
                                             run_node, spinning)


def wait() -> int:
    note_signals()
    init_ros(None)
    node = Node("signal_watch_wait")
    executor = make_executor(nodes=[node])
    executor.add_node(node)
    spinning(node)
    print("waiting", flush=True)
    start = time.monotonic()
    executor.spin_once(timeout_sec=60.0)
    print(f"woke after {time.monotonic() - start:.2f} s, interrupted: {interrupted()}",
          flush=True)
    return 0


def _sleep(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.5)


class LongCallback(Node):
    def __init__(self) -> None:
        super().__init__("signal_watch_long_callback")
        self.timer = self.create_timer(0.1, self.callback_that_takes_6_s)

    def callback_that_takes_6_s(self) -> None:
        self.timer.cancel()
        print("stuck", flush=True)
        _sleep(6.0)
        print("done", flush=True)


class HungTeardown(Node):
    def __init__(self) -> None:
        super().__init__("signal_watch_hung_teardown")
        self.timer = self.create_timer(0.1, self.say_spinning)

    def say_spinning(self) -> None:
        self.timer.cancel()
        print("spinning", flush=True)

    def destroy_node(self) -> None:
        while True:
            time.sleep(1.0)


class SlowStart(Node):
    def __init__(self) -> None:
        print("starting", flush=True)
        self.construction_that_takes_50_s()
        super().__init__("signal_watch_slow_start")

    def construction_that_takes_50_s(self) -> None:
        _sleep(50.0)


if __name__ == "__main__":
    sys.exit(wait() if sys.argv[1] == "wait" else
             run_node({"callback": LongCallback, "teardown": HungTeardown,
                       "slow_start": SlowStart}[sys.argv[1]]))
