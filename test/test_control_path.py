"""The dynamics node's control path apart from its monitoring path, over real DDS: with the
monitoring thread held (test/stalled_dynamics_node.py: every snapshot waits while a file
exists), each input still gets its feedforward, equal to the core's, in input order; the
monitoring outputs held meanwhile come out afterwards in input order, each message describing
one evaluation (its loads, wrench and /tf from the same input), and those the held thread
could not take are counted as ``monitoring_skipped``, never published out of order.

Nothing here is timed: the test waits for each feedforward before the next input, so it
asserts ordering and completeness only."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from charmie_dynamics.ros.dynamics_parts.monitoring import SNAPSHOTS  # noqa: E402
from ros_harness import (MODEL, TOL, Dynamics, core, dump_on_failure, log_dir,  # noqa: E402,F401
                         namespaced_dynamics, random_state, ros, ros_env, stamp_key)

STALLED = Path(__file__).resolve().parent / "stalled_dynamics_node.py"
HELD_INPUTS = SNAPSHOTS + 12         # more than the snapshots: some are skipped


@pytest.fixture(scope="module")
def held(ros, ros_env, log_dir, tmp_path_factory):
    """A dynamics node (/st) publishing every monitoring output at every evaluation, its
    monitoring thread held while the returned file exists (created before it starts)."""
    hold = tmp_path_factory.mktemp("hold") / "held"
    hold.touch()
    child = namespaced_dynamics("st", ros_env, log_dir, command=[sys.executable, str(STALLED), str(hold)],
                                stale_timeout=1000.0, diagnostics_period=0.1)
    try:
        ros.watched = [child]
        node = Dynamics(ros, child, "/st", with_tf=True)
        assert ros.spin_until(node.ready, 60.0), "the held node is not ready in 60 s"
        yield node, hold
    finally:
        hold.unlink(missing_ok=True)
        ros.watched = []
        child.stop()


def send(node: Dynamics, rng: np.random.Generator) -> tuple[tuple[int, int], dict, dict]:
    """One complete input (joint positions and actuator lengths in one message); waits for
    its feedforward. Returns its stamp key, positions and velocities."""
    pos, vel = random_state(rng)
    mark = len(node.feedforward)
    stamp = node.ros.next_stamp()
    node.publish_joints(stamp, pos, vel, names=MODEL.input_names)
    assert node.ros.spin_until(lambda: len(node.feedforward) > mark, 10.0), \
        "no feedforward for an input while the monitoring thread is held"
    return stamp_key(stamp), pos, vel


def check_monitoring(node: Dynamics, key, pos: dict, vel: dict) -> None:
    """Every monitoring message of ``key`` holds that input's evaluation."""
    x, xd, state, loads, efforts = core(pos, vel)
    np.testing.assert_allclose(node.joint_loads[key].effort, loads.coordinate_effort, **TOL)
    np.testing.assert_allclose(node.joint_loads[key].position, state.q, **TOL)
    np.testing.assert_allclose(node.actuator_loads[key].position, x, **TOL)
    np.testing.assert_allclose(node.actuator_loads[key].effort, efforts, **TOL)
    w = node.wrenches[key].wrench
    body = MODEL.body_index("body_3")
    # body_3's wrench in REP 103's base_link axes (the model's base: rotation)
    np.testing.assert_allclose([w.force.x, w.force.y, w.force.z],
                               MODEL.base.rotation @ loads.joint_force[body], **TOL)
    assert key in node.tf           # its transforms all carry this stamp (Dynamics._on_tf)


@dump_on_failure
def test_feedforwards_go_on_while_the_monitoring_path_is_held(ros, held):
    node, hold = held
    rng = np.random.default_rng(25)
    sent = [send(node, rng) for _ in range(HELD_INPUTS)]
    # every input's feedforward, in input order, while no monitoring message came out
    ffs = [v for _, v in node.feedforward]
    assert len(ffs) == HELD_INPUTS
    for ff, (_, pos, vel) in zip(ffs, sent):
        np.testing.assert_allclose(ff, core(pos, vel)[4], **TOL)
    assert not node.loads_order and not node.tf and not node.wrenches
    assert ros.spin_until(lambda: node.diagnostics and int(node.diagnostics[-1]["evaluations"])
                          == HELD_INPUTS, 10.0)
    # the snapshots held: the oldest inputs', published once released, in input order;
    # the rest skipped and counted
    assert int(node.diagnostics[-1]["monitoring_skipped"]) == HELD_INPUTS - SNAPSHOTS
    hold.unlink()
    kept = sent[:SNAPSHOTS]
    assert ros.spin_until(lambda: len(node.loads_order) >= SNAPSHOTS
                          and all(k in node.tf and k in node.wrenches for k, _, _ in kept), 10.0)
    assert node.loads_order == [k for k, _, _ in kept]
    for key, pos, vel in kept:
        check_monitoring(node, key, pos, vel)
    # released: every input's monitoring again, in order
    after = [send(node, rng) for _ in range(5)]
    assert ros.spin_until(lambda: all(k in node.tf and k in node.wrenches
                                      and k in node.actuator_loads for k, _, _ in after), 10.0)
    assert node.loads_order == [k for k, _, _ in kept + after]
    for key, pos, vel in after:
        check_monitoring(node, key, pos, vel)
    assert ros.spin_until(lambda: int(node.diagnostics[-1]["evaluations"])
                          == HELD_INPUTS + len(after), 10.0)
    assert int(node.diagnostics[-1]["monitoring_skipped"]) == HELD_INPUTS - SNAPSHOTS
