"""The dynamics node's /diagnostics status from its counters (pure Python: no rclpy here):
the level, the message and the key-value pairs."""
from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Optional, Sequence

from ...documents import bounded
from ..common.inputs import REASONS

TOPICS = ("joint_states", "actuator_states", "odometry", "reference", "model")
EVENTS = ("models_taken", "models_held", "models_unchanged", "model_changes", "clock_jumps",
          "clock_rejected",
          "efforts_beyond_limits", "messages_with_ignored_names",
          "joint_states_without_model_joints", "gravity_fallback_zero", "monitoring_skipped",
          "solved_joint_states_skipped", "odometry_unused", "joint_source_conflicts",
          "waiting_for_model", "inputs_while_inactive", "activations", "deactivate_commands",
          "learned_feedforward_replaced", "learned_feedforward_refused")
REJECTIONS = REASONS + ("bad_model", "model_publisher")


class Level(enum.Enum):
    OK = 0
    WARN = 1
    ERROR = 2


class Status(NamedTuple):
    level: Level
    message: str
    values: dict[str, str]
    reported: Counter               # the counts now reported, for the next status


def input_rate(arrivals: Sequence[float]) -> float:
    """Messages per second over the arrival times (s) kept."""
    if len(arrivals) >= 2 and arrivals[-1] > arrivals[0]:
        return (len(arrivals) - 1) / (arrivals[-1] - arrivals[0])
    return 0.0


@dataclass(frozen=True)
class StatusCounts:
    """A copy of the node's counters for one status: ``rejected`` by reason, ``received`` by
    topic, ``events`` (model and clock), ``stats`` (evaluated, latency_sum and latency_max in
    s), the installed and the pending model's names, the parse worker's state, the inputs'
    arrival times (s) and the safe policy's view; ``feedforward_source``: what the
    feedforward comes from (``learned_source``), with ``learned_difference`` the network's
    largest distance from the model's (a fraction of the effort limits; None: no network in
    use)."""

    rejected: Counter
    received: Counter
    events: Counter
    stats: Mapping[str, float]
    model: Optional[str]
    pending: Optional[str]
    parsing: bool
    superseded: int
    repeated: int
    arrivals: Sequence[float]
    last_valid_age: Optional[float]
    stale: bool
    acceleration_source: str
    effort_flags: Sequence[str]
    ignored_names: Sequence[str] = ()
    pending_hash: Optional[str] = None
    feedforward_source: str = "model"
    learned_difference: Optional[float] = None


def dynamics_status(counts: StatusCounts, reported: Counter) -> Status:
    """One status from ``counts``; ``reported``: the counts at the last status (what is new
    in this period warns)."""
    c = counts
    rejected, events, stats = c.rejected, c.events, c.stats
    n = stats["evaluated"]
    values = {
        "model": c.model or "none",
        "model_pending": c.pending or "none",
        "model_pending_hash": c.pending_hash or "none",   # what accept_model_hash must name
        "model_parsing": str(c.parsing),
        "input_rate_hz": f"{input_rate(c.arrivals):.1f}",
        "evaluations": str(n),
        "compute_latency_mean_ms": f"{(stats['latency_sum'] / n * 1e3) if n else 0.0:.3f}",
        "compute_latency_max_ms": f"{stats['latency_max'] * 1e3:.3f}",
        "last_valid_input_age_s":
            "never" if c.last_valid_age is None else f"{c.last_valid_age:.3f}",
        "stale": str(c.stale),
        "acceleration_source": c.acceleration_source,
        "efforts_beyond_limits_inputs": ", ".join(c.effort_flags) or "none",
        # names in joint_states the model does not use (merge policy): not a fault
        "ignored_joint_names": bounded(", ".join(c.ignored_names), 500) or "none",
        "feedforward_source": c.feedforward_source,
        "learned_feedforward_largest_difference":
            "none" if c.learned_difference is None else f"{c.learned_difference:.4g}",
    }
    for topic in TOPICS:
        values[f"received_{topic}"] = str(c.received[topic])
    for reason in REJECTIONS:
        values[f"rejected_{reason}"] = str(rejected[reason])
    values["actuator_lengths_out_of_range"] = str(rejected["out_of_range"])
    values["models_superseded"] = str(c.superseded)
    values["models_repeated"] = str(c.repeated)       # answered from a remembered outcome
    for event in EVENTS:
        values[event] = str(events[event])
    new = {key: events[key] > reported[key] for key in events}
    warnings = []
    if new.get("clock_jumps"):
        warnings.append("clock jumped back: stamp checks re-armed")
    if new.get("clock_rejected"):
        warnings.append("/clock messages rejected (negative or malformed time)")
    if new.get("model_changes"):
        warnings.append("model changed")
    if new.get("models_held"):
        warnings.append("model update held: ~/accept_model_update installs it")
    if new.get("efforts_beyond_limits"):
        warnings.append(f"efforts beyond the model's limits: {', '.join(c.effort_flags)}")
    if new.get("joint_source_conflicts"):
        warnings.append("joints given by two publishers (joint_source_conflicts)")
    if new.get("learned_feedforward_replaced"):
        warnings.append("learned feedforward beyond learned_feedforward_tolerance of the "
                        "model's: the model's published")
    if c.feedforward_source == "learned (refused)":
        warnings.append("learned feedforward refused for this model: the model's published")
    if new.get("monitoring_skipped"):
        warnings.append("monitoring outputs skipped (the monitoring thread fell behind)")
    if c.stale or c.last_valid_age is None:
        warnings.append("inputs stale or missing")
    # throttling is the rate limit doing its job, not a fault
    if any(rejected[r] > reported[r] for r in REJECTIONS if r != "throttled"):
        warnings.append("inputs rejected in the last period")
    now = Counter(events) + Counter(rejected)
    if c.model is None:
        return Status(Level.ERROR, "no model", values, now)
    if warnings:
        return Status(Level.WARN, "; ".join(warnings), values, now)
    return Status(Level.OK, "ok", values, now)
