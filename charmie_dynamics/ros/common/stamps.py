"""The stamp checks of the dynamics node's evaluated input (pure Python: no rclpy here).

Stamps and node times are integer nanoseconds (a float of seconds since 1970 resolves only
about 240 ns).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional, Protocol

from .inputs import InputRejected

NS_PER_S = 1_000_000_000


class SecNanosec(Protocol):
    """builtin_interfaces Time or Duration."""

    sec: int
    nanosec: int


def to_nanoseconds(stamp: SecNanosec, what: str = "header.stamp") -> int:
    """A stamp or duration as integer nanoseconds (exact, unlike a float of seconds); raises
    ``invalid_value`` for a malformed one, ``nanosec`` beyond 999,999,999 (``what`` names it)."""
    if not 0 <= stamp.nanosec < NS_PER_S:
        raise InputRejected("invalid_value", f"{what}.nanosec {stamp.nanosec} is not below 1e9")
    return stamp.sec * NS_PER_S + stamp.nanosec


class NodeClock(Protocol):
    """rclpy's Clock of a node (ROS time: /clock with use_sim_time)."""

    ros_time_is_active: bool

    def now(self): ...


def clock_now_ns(clock: NodeClock) -> int:
    """A node clock's time in integer nanoseconds; while no /clock drives it, the system clock
    it reads, read directly (rclpy's ``now()`` builds a Time object: 5-7 us a call, once per
    input)."""
    return clock.now().nanoseconds if clock.ros_time_is_active else time.time_ns()


@dataclass(frozen=True)
class ClockJump:
    """The source clock went back: the stamp checks were re-armed at this stamp."""

    back_s: float          # how far back from the last evaluated stamp
    why: str


@dataclass
class StampGuard:
    """The stamp checks of the evaluated input (integer ns): ``future_stamp`` beyond
    ``max_lead_ns`` ahead of the node clock, ``time_backwards`` before the last evaluated
    stamp, ``throttled`` faster than a rate limit; a jump back of the source clock re-arms.

    The last stamp advances only in :meth:`accept` (an evaluated input), so a rejected stamp
    (one far in the future, say) poisons nothing. ``now`` is 0 while simulated time has not
    started (no /clock yet): no comparison with the node clock then."""

    max_lead_ns: int
    rearm_after_ns: int                          # every input back for this long: re-arm
    last: Optional[int] = None                   # the last evaluated stamp
    backwards_since: Optional[int] = None        # node time of the first of a run going back

    def check_lead(self, stamp: int, now: int) -> None:
        """Raise ``future_stamp`` for a stamp more than ``max_lead_ns`` ahead of ``now`` (the
        one stamp check of actuator_states and odometry: they need no order)."""
        lead = self.max_lead_ns
        if now > 0 and stamp - now > lead:
            raise InputRejected("future_stamp",
                                f"stamp {stamp * 1e-9:.9f} s is {(stamp - now) * 1e-9:.3g} s "
                                f"ahead of the node clock (max_stamp_lead {lead * 1e-9:g} s)")

    def check(self, stamp: int, now: int) -> Optional[ClockJump]:
        """Raise ``future_stamp`` or ``time_backwards``; a :class:`ClockJump` when the stamp
        went back because the clock did (the checks are then re-armed: :meth:`reset`)."""
        self.check_lead(stamp, now)
        lead = self.max_lead_ns
        last = self.last
        if last is None or stamp >= last:
            self.backwards_since = None
            return None
        if now > 0 and last - now > lead:
            # the node clock itself is behind the last stamp: /clock restarted
            return self._rearm(stamp, f"the node clock is {(last - now) * 1e-9:.3f} s behind "
                                      "the last input stamp")
        if self.backwards_since is None:
            self.backwards_since = now
        elif not 0 <= now - self.backwards_since <= self.rearm_after_ns:
            # every input for longer than stale_timeout went back: the source's clock did
            return self._rearm(stamp, f"input stamps went back for more than stale_timeout "
                                      f"({self.rearm_after_ns * 1e-9:g} s)")
        raise InputRejected("time_backwards", f"stamp {stamp * 1e-9:.9f} s before "
                                              f"{last * 1e-9:.9f} s")

    def check_rate(self, stamp: int, limit_hz: float) -> None:
        """Raise ``throttled`` for a stamp less than 1/``limit_hz`` after the last evaluated
        one (``limit_hz`` 0: no limit)."""
        if limit_hz > 0 and self.last is not None and (stamp - self.last) * limit_hz < 1e9:
            raise InputRejected("throttled", "faster than publish_rate_limit")

    def accept(self, stamp: int) -> None:
        self.last = stamp

    def reset(self) -> None:
        """Forget the time base (a new model, or a clock jump)."""
        self.last = self.backwards_since = None

    def _rearm(self, stamp: int, why: str) -> ClockJump:
        jump = ClockJump((self.last - stamp) * 1e-9, why)
        self.reset()
        return jump
