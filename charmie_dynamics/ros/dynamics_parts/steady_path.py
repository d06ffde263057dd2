"""The control path's steady state in two compiled calls per joint_states message (issue 37,
"one compiled call per message"): a message whose names block was seen before goes from its
bytes to the inputs' latest values in one call (``measurements.take_joint_state``: the
stamp, the lengths, the value checks, the store and the gathering), and from the inputs to
the feedforward in another (``Evaluator.mapping``: the evaluation, the feedforward's
order, units and clamp, and the effort limits' count). Between the two, in Python, what
keeps Python state: the stamp checks, the rate limit and the accelerations.

The reference is the control path's own route (``control_path.ControlPath``, the reader,
the compiled checks and the evaluator called one by one). A names block enters this path
only after that route has read a message of it and accepted its names; a message the first
call does not take (another block, a value that fails a check, a stamp that is not simply
newer, inputs missing or stale: anything but the steady state) is left to the reference on
the same bytes at the same node time, which gives the rejection, its text and its counts.
Nothing the first call stores before leaving a message differs from what the reference then
stores. test/test_input_path.py checks the node's outcomes equal to the reference's,
message by message, on hostile streams.

Where it applies: a model evaluated by the tree evaluator (a model with generic loops
takes the reference), the model's feedforward (``feedforward_source learned`` takes the
reference from the evaluation on), either ``joint_state_policy``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional, Sequence

import numpy as np

from ... import jit
from ...evaluators.evaluator import Evaluator
from ...evaluators.measurements import (CLOCK_SIZE, HAS_LAST, LAST, MAX_LEAD, MERGED, NOW,
                                        OTHER_BLOCK, STAMP, STRICT, TAKEN, take_joint_state)
from ..common.inputs import CompiledChecks, MessageLayout
from ..common.outputs import FeedforwardMap
from .cdr import MAX_CACHED_NAME_BLOCKS


def names_source(names: Sequence[str]) -> int:
    """A message's set of names, as the control path tells two publishers apart (a
    reordering is no other set)."""
    return hash(frozenset(names))


@dataclass(frozen=True, eq=False)
class NamesBlock:
    """One names block the reference accepted: its bytes (the names' count and strings, as
    messages hold them), the message's names, what they decide, and the first call's arrays
    for them."""

    block: bytes
    names: tuple[str, ...]           # as sent (the robot's names)
    layout: MessageLayout
    source: int                      # the set of names (ControlPath's joint sources)
    arguments: tuple                 # take_joint_state's after the message's bytes


class Taken(NamedTuple):
    """A message the first call took: its stamp, the merged stamp (merge policy), the
    inputs' positions and velocities (arrays of their own) and its names block."""

    stamp: int
    merged: int
    x: np.ndarray
    xd: np.ndarray
    block: NamesBlock


class SteadyPath:
    """The two calls for one installed model (module docstring); its names blocks change
    as messages arrive, so it belongs to the executor's thread, as the compiled checks'
    buffers do."""

    def __init__(self, checks: CompiledChecks, evaluator: Evaluator,
                 feedforward: FeedforwardMap) -> None:
        self.checks = checks
        assembler = checks.assembler
        self.blocks: list[NamesBlock] = []            # newest first
        self.clock = np.zeros(CLOCK_SIZE, dtype=np.int64)
        self.tolerances, self.times = np.zeros(2), np.zeros(2)
        self.stamp, self.merge = np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)
        self.codes = np.zeros(2, dtype=np.int64)
        n = len(assembler.names)
        self.x, self.xd = np.zeros(n), np.zeros(n)
        # the entry for these types, taken on a message of no bytes (left at once)
        none, entries = np.zeros(0), np.zeros((2, 0), dtype=np.int64)
        nothing = np.frombuffer(b"", dtype=np.uint8)
        self._shared = ((checks.bounds, self.tolerances),
                        (assembler.latest, assembler.stamps, self.stamp),
                        (assembler.input_slots, assembler.required_slots, self.times,
                         self.merge, self.codes, self.x, self.xd), self.clock)
        self._take = jit.fixed_entry(
            take_joint_state, nothing, nothing,
            (entries, np.zeros((2, 0)), np.zeros((2, 0)), none), *self._shared)
        #: the second call; its ``values``: the feedforward of the last evaluation
        self.mapped = evaluator.mapping(feedforward.index, feedforward.factors,
                                        feedforward.effort_limit)

    def remember(self, block: bytes, names: tuple[str, ...], layout: MessageLayout) -> None:
        """A block whose message the reference read and whose names it accepted."""
        if any(known.block == block for known in self.blocks):
            return
        array = np.frombuffer(block, dtype=np.uint8)
        self.blocks.insert(0, NamesBlock(block, names, layout, names_source(names), (
            array, (*self.checks.layout_arrays(layout), np.zeros(2 * len(names))),
            *self._shared)))
        del self.blocks[MAX_CACHED_NAME_BLOCKS:]

    def take(self, data: bytes, now: int, strict: bool, last: Optional[int], max_lead: int,
             tolerances: tuple[float, float], stale_timeout: float,
             max_joint_age: int) -> Optional[Taken]:
        """The first call on a message's bytes at node time ``now`` (ns), with the control
        path's parameters (``last``: the last evaluated stamp, ``max_lead`` and
        ``max_joint_age`` in ns); None where it leaves the message to the reference."""
        if not self.blocks:
            return None
        clock = self.clock
        clock[NOW], clock[MAX_LEAD], clock[STRICT] = now, max_lead, strict
        clock[LAST], clock[HAS_LAST] = (0, 0) if last is None else (last, 1)
        self.tolerances[0], self.tolerances[1] = tolerances
        self.times[0], self.times[1], self.merge[0] = now * 1e-9, stale_timeout, max_joint_age
        message = np.frombuffer(data, dtype=np.uint8)
        for k, block in enumerate(self.blocks):
            code = self._take(message, *block.arguments)
            if code == OTHER_BLOCK:
                continue
            if code != TAKEN:                 # its block, left: no other block is its
                return None
            if k:
                self.blocks.insert(0, self.blocks.pop(k))
            return Taken(int(clock[STAMP]), int(clock[MERGED]), self.x.copy(), self.xd.copy(),
                         block)
        return None

    def evaluate(self, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray, gravity_only: bool,
                 clamp: bool) -> int:
        """The second call: the evaluation and the feedforward into ``mapped.values``; the
        number of efforts beyond their limits (the evaluator's errors raised)."""
        return self.mapped(x, xd, xdd, gravity_only, clamp)
