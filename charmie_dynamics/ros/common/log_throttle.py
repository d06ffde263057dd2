"""Throttling of the log lines a flood of messages can trigger.

rclpy's own ``throttle_duration_sec`` looks up its caller's frame with ``inspect`` (source
files read and stat'ed) on every call, logged or not: 1.7 ms a call on the development
machine, so a publisher of bad input at 1 kHz would hold a node's executor busy with
suppressed log lines alone. A :class:`LogThrottle` decides first, in a clock read.
"""
from __future__ import annotations

import math
import time
from typing import Callable


class LogThrottle:
    """True at most once per ``period_s`` of ``clock`` (monotonic seconds)."""

    def __init__(self, period_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.period_s = period_s
        self._clock = clock
        self._next = -math.inf

    def __call__(self) -> bool:
        now = self._clock()
        if now < self._next:
            return False
        self._next = now + self.period_s
        return True
