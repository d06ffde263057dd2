"""The dynamics node with its monitoring thread held while a file exists, for
test_control_path.py: ``python test/stalled_dynamics_node.py HOLD_FILE --ros-args ...``.

Each monitoring snapshot waits, before any of its messages is built, until ``HOLD_FILE`` is
gone: the monitoring path stalls as a slow subscriber or an overloaded process would stall
it, while the executor thread (the feedforward) runs as in the real node."""
from __future__ import annotations

import os
import sys
import time

from charmie_dynamics.ros.common.run import run_node
from charmie_dynamics.ros.dynamics_node import DynamicsNode
from charmie_dynamics.ros.dynamics_parts.monitoring import MonitoringPublisher


def main() -> int:
    hold = sys.argv.pop(1)
    publish = MonitoringPublisher._publish

    def held(self, snapshot) -> None:
        while os.path.exists(hold):
            time.sleep(0.005)
        publish(self, snapshot)
    MonitoringPublisher._publish = held
    return run_node(DynamicsNode)


if __name__ == "__main__":
    sys.exit(main())
