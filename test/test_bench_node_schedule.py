"""benchmarks/bench_node.py's schedule of turns (``williams_rows``, ``interleaved``): every run
gets its whole duration in windows no longer than asked, never two in a row, and within the
design's rows every run comes right after every other equally often (a fixed order had put the
dynamics run after the heaviest runs every time). Pure Python: no node is started."""
from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from itertools import permutations
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def bench_node():
    sys.path.insert(0, str(BENCHMARKS))          # its ``common``, as when run as a script
    try:
        spec = importlib.util.spec_from_file_location("bench_node", BENCHMARKS / "bench_node.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7])
def test_the_rows_are_orders_balanced_in_who_comes_after_whom(bench_node, n):
    rows = bench_node.williams_rows(n)
    assert all(sorted(row) == list(range(n)) for row in rows)
    after = Counter((row[k - 1], row[k]) for row in rows for k in range(1, n))
    assert set(after) == set(permutations(range(n), 2))
    assert len(set(after.values())) <= 1


class _Run:
    def __init__(self, key: str) -> None:
        self.key = key


@pytest.mark.parametrize("n, duration, window", [(1, 30, 2), (2, 30, 2), (5, 30, 2), (5, 7, 3),
                                                 (4, 20, 1.5)])
def test_every_run_gets_its_duration_in_short_windows_never_two_in_a_row(
        bench_node, n, duration, window):
    runs = [_Run(f"run{k}") for k in range(n)]
    schedule = bench_node.interleaved(runs, duration, window)
    for run in runs:
        mine = [seconds for target, seconds in schedule if target is run]
        assert sum(mine) == pytest.approx(duration)
        assert max(mine) <= window + 1e-9
    if n > 1:
        assert all(schedule[k - 1][0] is not schedule[k][0] for k in range(1, len(schedule)))
        after = Counter((schedule[k - 1][0].key, schedule[k][0].key)
                        for k in range(1, len(schedule)))
        assert len(after) == n * (n - 1)          # every run after every other, some time
