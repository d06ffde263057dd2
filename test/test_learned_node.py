"""The dynamics node's learned feedforward source over real DDS (issue 38 item 3):
``feedforward_source: learned`` publishes a network's efforts only within
``learned_feedforward_tolerance`` of the model's, the model's otherwise (counted in
/diagnostics), and a network for other inputs than the model's ends start-up in one line
naming the file and the field.

The networks are built by hand (no training): one layer whose output is a constant the test
chooses, so what the node publishes says which source it took.
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

pytestmark = pytest.mark.ros
rclpy = pytest.importorskip("rclpy")

from charmie_dynamics.ros.common.outputs import FeedforwardMap  # noqa: E402
from conftest import CHARMIE  # noqa: E402
from ros_harness import (MODEL, Dynamics, core, dump_on_failure, log_dir,  # noqa: E402,F401
                         namespaced_dynamics, node_argv, params, ros, ros_env)
from test_learned_source import NAMES, constant_network  # noqa: E402

LIMITS = FeedforwardMap(MODEL, MODEL.input_names, MODEL.input_names).effort_limit
REST = dict.fromkeys(MODEL.input_names, 0.0)


def pose(act4: float, shoulder: float) -> dict:
    return {**REST, "act4": act4, "act5": 0.40, "theta7a": shoulder}


@dump_on_failure
def test_the_node_publishes_the_network_within_the_tolerance_else_the_model(
        ros, ros_env, log_dir, tmp_path):
    near, far = pose(0.40, 0.0), pose(0.40, 1.2)
    at_near = core(near, REST)[-1]
    at_far = core(far, REST)[-1]
    # the network: the model's efforts at `near`, each off by 2 % of its limit; at `far` the
    # model's differ from it by more than the 5 % tolerance
    output = at_near + 0.02 * LIMITS
    assert np.max(np.abs(at_far - output) / LIMITS) > 0.05
    path = tmp_path / "feedforward.npz"
    constant_network(MODEL.input_names, output, MODEL.name).save(path)
    child = namespaced_dynamics("lf", ros_env, log_dir, feedforward_source="learned",
                                feedforward_network_file=str(path),
                                learned_feedforward_tolerance=0.05, check_position_limits=False)
    ros.watched = [child]
    node = None
    try:
        node = Dynamics(ros, child, "/lf", with_tf=False)
        assert ros.spin_until(node.ready, 60.0), "node not ready in 60 s"
        _, out = node.send_state(near, REST)
        np.testing.assert_allclose(out["feedforward"], output, rtol=1e-12, atol=1e-12)
        _, out = node.send_state(far, REST)
        np.testing.assert_allclose(out["feedforward"], at_far, rtol=1e-9, atol=1e-9)
        mark = len(node.diagnostics)
        assert ros.spin_until(lambda: any(int(d["learned_feedforward_replaced"]) >= 1
                                          for d in node.diagnostics[mark:]), 10.0)
        last = node.diagnostics[-1]
        assert last["feedforward_source"] == "learned"
        assert float(last["learned_feedforward_largest_difference"]) > 0.05
    finally:
        ros.watched = []
        child.stop()
        for sub in node.subs if node else ():
            ros.node.destroy_subscription(sub)


@pytest.mark.parametrize("network,message", [
    ("other_inputs", "names: got 2 inputs (a, b), expected the model's 21"),
    ("missing", "cannot read the network"),
])
def test_a_network_the_model_refuses_ends_start_up_in_one_line(ros_env, tmp_path, network,
                                                               message):
    path = tmp_path / "feedforward.npz"
    if network == "other_inputs":
        constant_network(NAMES, [0.0, 0.0], MODEL.name).save(path)
    proc = subprocess.run(node_argv("dynamics_node", "-r", "__ns:=/refused", *params(
        model_file=CHARMIE, feedforward_source="learned", feedforward_network_file=str(path))),
        env=ros_env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert str(path) in proc.stderr and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, \
        proc.stderr
