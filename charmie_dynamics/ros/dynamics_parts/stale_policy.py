"""The safe policy of the feedforward as a small state machine (pure Python: no rclpy here).

After a rejected input the last valid feedforward is held: republished by the watchdog at
most once a watchdog period (a flood of bad input is not echoed), for at most the stale
timeout; after that, every watchdog period, gravity compensation at the last valid positions
(``gravity``) or zeros (``zero``), until a valid input arrives. Times are integer ns.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Optional

import numpy as np

POLICIES = ("gravity", "zero")


class Action(enum.Enum):
    """What the watchdog publishes on this tick."""

    NOTHING = "nothing"
    HOLD = "hold"            # the last valid feedforward again
    GRAVITY = "gravity"      # gravity compensation at the last valid positions
    ZERO = "zero"


@dataclass
class StalePolicy:
    timeout_ns: int
    policy: str = "gravity"
    last_valid: Optional[int] = None              # node time of the last valid input
    last_feedforward: Optional[np.ndarray] = None
    last_x: Optional[np.ndarray] = None           # its input positions
    hold_due: bool = False                        # a rejection since the last feedforward
    stale: bool = False

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"stale policy {self.policy!r}, expected one of {', '.join(POLICIES)}")

    def accepted(self, now: int, feedforward: np.ndarray, x: np.ndarray) -> None:
        """A valid input, published at ``now``."""
        self.last_valid, self.last_feedforward, self.last_x = now, feedforward, x
        self.stale = self.hold_due = False

    def rejected(self) -> None:
        """A rejected input: the last valid feedforward is due again, unless already stale."""
        self.hold_due = self.last_feedforward is not None and not self.stale

    def forget(self) -> None:
        """A new model: the last feedforward and positions are of the old one."""
        self.last_feedforward = self.last_x = None
        self.hold_due = False

    def tick(self, now: int) -> Action:
        """The watchdog's decision at ``now``."""
        if self.last_valid is None:
            return Action.NOTHING
        age = now - self.last_valid
        if 0 <= age <= self.timeout_ns:           # (a clock gone back: stale)
            if self.hold_due:
                self.hold_due = False
                return Action.HOLD
            return Action.NOTHING
        self.stale, self.hold_due = True, False
        if self.policy == "zero" or self.last_x is None:
            return Action.ZERO
        return Action.GRAVITY
