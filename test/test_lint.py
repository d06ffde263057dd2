"""The linters as tests (issue 39 item 4): ruff (pycodestyle's errors and warnings, pyflakes;
within 100 columns, 120 in the tests and benchmarks: ruff.toml) and isort (the import order: setup.cfg [isort]) over the
package, the tests, the benchmarks, the scripts and the launch files. A failure prints what
to fix; ``.venv/bin/isort .`` sorts the imports."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff_finds_nothing():
    done = run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_imports_are_sorted():
    done = run("isort", "--check-only", "--diff", ".")
    assert done.returncode == 0, done.stdout + done.stderr
