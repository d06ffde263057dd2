"""The ROS domain ids of a test run. Each pytest process takes its own id in each block, so
runs side by side and the workers of one run (pytest-xdist, ``-n 2``) never meet each other's
nodes: a worker's slot is its run's (its parent's pid) and its index."""
from __future__ import annotations

import os


def domain_id(first: int, count: int) -> int:
    """An id in ``first`` .. ``first + count - 1`` for this process."""
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    index = int(worker[2:]) % workers if worker else 0
    run = os.getppid() if worker else os.getpid()
    return first + (run % max(1, count // workers)) * workers + index
