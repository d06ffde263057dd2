"""The ROS domain ids of a test run. Each pytest process takes its own id in each block, so
runs side by side never meet each other's nodes: the workers of one run (pytest-xdist) by
their index, and the lanes of a CI run (``CHARMIE_TEST_LANES`` runs at once, this one
``CHARMIE_TEST_LANE``, from 0) by theirs; a plain run takes a slot from its pid."""
from __future__ import annotations

import os


def domain_id(first: int, count: int) -> int:
    """An id in ``first`` .. ``first + count - 1`` for this process."""
    lanes = max(1, int(os.environ.get("CHARMIE_TEST_LANES", "1")))
    lane = int(os.environ.get("CHARMIE_TEST_LANE", "0")) % lanes
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    index = lane * workers + (int(worker[2:]) % workers if worker else 0)
    stride = lanes * workers
    run = os.getppid() if worker else os.getpid()
    return first + (run % max(1, count // stride)) * stride + index
