"""A worker thread that runs the jobs handed to it in order, off the executor's thread: the
dynamics node's monitoring outputs (ros/dynamics_parts/monitoring.py) run on one, its
/diagnostics on another.

The diagnostics: the executor's timer copies the counters (tens of microseconds) and their
thread computes the status, builds the DiagnosticArray of 60 key-values and publishes it
(0.3-0.4 ms of Python once a second that would otherwise delay the next input; issue 37:
nothing periodic above 0.1 ms on the inputs' thread). They do not share the monitoring
thread: a monitoring path stalled by a slow subscriber must not silence the diagnostics that
report it. Python's GIL: the monitoring thread lowers the process's switch interval
(monitoring.SWITCH_INTERVAL_S), which bounds either thread's hold on the GIL.
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Callable


class JobThread:
    """Jobs (callables without arguments) run in order on a daemon thread; ``close`` stops it
    (jobs still queued are dropped). A job's exception goes to ``on_error`` and the thread
    goes on; once ``running()`` is false (the ROS context shut down) the thread ends."""

    def __init__(self, name: str, on_error: Callable[[BaseException], None],
                 running: Callable[[], bool]) -> None:
        self.on_error, self.running = on_error, running
        self._jobs: deque[Callable[[], None]] = deque()
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, job: Callable[[], None]) -> None:
        with self._ready:
            self._jobs.append(job)
            self._ready.notify()

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._jobs and not self._closed:
                    self._ready.wait()
                if self._closed:
                    return
                job = self._jobs.popleft()
            try:
                job()
            except Exception as exc:
                if not self.running():
                    return
                self.on_error(exc)
