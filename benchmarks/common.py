"""What the benchmark scripts share: timing cases that take turns, and the JSON they save.

Each script imports it as ``common`` (they run as ``python benchmarks/NAME.py``, which puts
this folder on ``sys.path``).
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np


def take_turns(cases: dict[str, Callable[[], object]], repeats: int, calls: int = 1,
               clock: Callable[[], float] = time.perf_counter) -> dict[str, list[float]]:
    """Seconds per call of each case in each of ``repeats`` rounds, after one warm-up call
    each (kernel caches, first allocations). Within a round the cases take turns, ``calls``
    calls each, so that a change of the machine's load hits them alike. ``clock``:
    ``time.process_time`` for CPU time where waits for a shared core would count."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()
    for _ in range(repeats):
        for name, fn in cases.items():
            start = clock()
            for _ in range(calls):
                fn()
            samples[name].append((clock() - start) / calls)
    return samples


def timings_us(cases: dict[str, Callable[[], object]], repeats: int, calls: int = 1,
               clock: Callable[[], float] = time.perf_counter
               ) -> dict[str, tuple[float, float, float]]:
    """(median, min, max) microseconds per call of each case over the rounds of
    :func:`take_turns`."""
    return {name: (1e6 * statistics.median(v), 1e6 * min(v), 1e6 * max(v))
            for name, v in take_turns(cases, repeats, calls, clock).items()}


def machine_facts() -> dict[str, Any]:
    """When and where a result was measured."""
    return {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "python": platform.python_version(),
            "machine": platform.machine(), "cpus": os.cpu_count(), "numpy": np.__version__}


def write_result(path: Path, doc: dict[str, Any]) -> None:
    """``doc`` with :func:`machine_facts` first, as indented JSON at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**machine_facts(), **doc}, indent=2))
    print(f"wrote {path}")
