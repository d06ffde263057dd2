"""A ROS 2 node run as a child process, its output in a log file: shared by the node tests
and benchmarks/bench_node.py (which puts this folder on sys.path)."""
from __future__ import annotations

import signal
import subprocess
from pathlib import Path

CHILDREN: list["Child"] = []                 # every process started and not yet stopped


class Child:
    """A node process; stdout and stderr go to ``log_dir/label.log``."""

    def __init__(self, label: str, argv: list[str], env: dict, log_dir: Path):
        self.label = label
        self.log = log_dir / f"{label}.log"
        self._file = open(self.log, "w", encoding="utf-8")
        self.proc = subprocess.Popen(argv, env=env, stdout=self._file, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        CHILDREN.append(self)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def text(self) -> str:
        if not self._file.closed:
            self._file.flush()
        return self.log.read_text(encoding="utf-8", errors="replace")

    def tail(self, n: int = 3000) -> str:
        return self.text()[-n:]

    def stop(self) -> None:
        """SIGINT (the node's clean shutdown), then kill after 5 s."""
        if self.alive():
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        if not self._file.closed:
            self._file.close()
        if self in CHILDREN:
            CHILDREN.remove(self)
