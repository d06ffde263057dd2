"""The dynamics node's learned feedforward source without ROS (issue 38 item 3; the node
over DDS: test_learned_node.py): a network's efforts only within the tolerance of the
model's, a network for other inputs or another model refused by file and field, the
diagnostics, the parameters."""
from __future__ import annotations

import numpy as np
import pytest

from charmie_dynamics.feedforward_network import LearnedFeedforward, LearnedFeedforwardError
from charmie_dynamics.ros.dynamics_parts.learned_source import LearnedSource
from charmie_dynamics.ros.dynamics_parts.node_status import StatusCounts, dynamics_status


def constant_network(names, output, model_name: str) -> LearnedFeedforward:
    """A network for ``names`` whose output is ``output`` (n,) whatever its input."""
    n = len(names)
    return LearnedFeedforward(model_name, "0" * 16, tuple(names), np.zeros(3 * n),
                              np.ones(3 * n), np.asarray(output, dtype=float), np.ones(n),
                              (np.zeros((3 * n, n)),), (np.zeros(n),))


NAMES = ("a", "b")
LIMIT = np.array([10.0, 100.0])


def source(output, tolerance: float = 0.05) -> LearnedSource:
    return LearnedSource.of(constant_network(NAMES, output, "m"), "net.npz", NAMES, "m", LIMIT,
                            tolerance)


def test_the_network_within_the_tolerance_else_the_model():
    x = np.zeros(2)
    model = np.array([1.0, 20.0])
    near = source([1.4, 24.0])                   # 0.04 of each limit away
    efforts, learned = near(x, x, x, model)
    assert learned and efforts.tolist() == [1.4, 24.0]
    assert near.largest_difference == pytest.approx(0.04)
    far = source([1.4, 26.0])                    # b 0.06 of its limit away
    efforts, learned = far(x, x, x, model)
    assert not learned and efforts is model
    assert far.largest_difference == pytest.approx(0.06)
    # a network that overflows is never published
    overflow = source([1.0, 20.0])
    overflow.network.weights[0][0, 0] = 1e308
    efforts, learned = overflow(np.array([1e308, 0.0]), x, x, model)
    assert not learned and efforts is model and overflow.largest_difference == np.inf


def test_a_network_for_other_inputs_or_another_model_is_refused():
    with pytest.raises(LearnedFeedforwardError, match=r"net.npz: names: got 2 inputs \(a, b\), "
                       r"expected the model's 2 \(b, a\)"):
        LearnedSource.of(constant_network(NAMES, [0, 0], "m"), "net.npz", ("b", "a"), "m", LIMIT,
                         0.05)
    with pytest.raises(LearnedFeedforwardError, match="net.npz: model.name: got 'm', expected 'n'"):
        LearnedSource.of(constant_network(NAMES, [0, 0], "m"), "net.npz", NAMES, "n", LIMIT, 0.05)
    with pytest.raises(LearnedFeedforwardError, match="no effort limit for b, expected one"):
        LearnedSource.of(constant_network(NAMES, [0, 0], "m"), "net.npz", NAMES, "m",
                         np.array([1.0, np.inf]), 0.05)


def test_diagnostics_say_the_source_and_warn_on_replacements():
    from collections import Counter
    counts = dict(rejected=Counter(), received=Counter(),
                  stats=dict(evaluated=1, latency_sum=0.0, latency_max=0.0), model="m",
                  pending=None, parsing=False, superseded=0, repeated=0, arrivals=(),
                  last_valid_age=0.0, stale=False, acceleration_source="zero", effort_flags=())

    def status(**changes):
        return dynamics_status(StatusCounts(**counts, **changes), Counter())
    quiet = status(events=Counter(), feedforward_source="learned", learned_difference=0.01)
    assert quiet.message == "ok" and quiet.values["feedforward_source"] == "learned"
    assert quiet.values["learned_feedforward_largest_difference"] == "0.01"
    replaced = status(events=Counter(learned_feedforward_replaced=1),
                      feedforward_source="learned", learned_difference=0.2)
    assert replaced.level.name == "WARN" and "learned_feedforward_tolerance" in replaced.message
    refused = status(events=Counter(), feedforward_source="learned (refused)")
    assert refused.level.name == "WARN" and "refused" in refused.message


def test_the_source_and_the_file_go_together():
    from charmie_dynamics.ros.dynamics_parts.dynamics_parameters import (check_parameters,
                                                                         with_defaults)
    assert check_parameters(with_defaults()) is None
    assert "expected a network file with learned" in check_parameters(
        with_defaults({"feedforward_source": "learned"}))
    assert "expected one of model, learned" in check_parameters(
        with_defaults({"feedforward_source": "network"}))


def test_a_network_file_that_is_no_regular_file_or_unpacks_too_large_is_refused(tmp_path):
    """A FIFO would block the reader (the node's configure, for ever), a directory is no
    file, and compressed members could unpack into gigabytes: each refused by name."""
    import os
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        with pytest.raises(LearnedFeedforwardError, match=f"{path}: cannot read the network: "
                           "not a regular file"):
            LearnedFeedforward.load(path)
    bomb = tmp_path / "bomb.npz"
    np.savez_compressed(bomb, header=np.array("{}"), weight_0=np.zeros((3000, 3000)))
    with pytest.raises(LearnedFeedforwardError, match="bomb.npz: file: 72000[0-9]+ bytes "
                       "unpacked, expected at most"):
        LearnedFeedforward.load(bomb)
    single = tmp_path / "array.npy"
    np.save(single, np.zeros(3))
    with pytest.raises(LearnedFeedforwardError, match="array.npy: file: a single array, expected "
                       "an NPZ archive"):
        LearnedFeedforward.load(single)
