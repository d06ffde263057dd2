#!/usr/bin/env bash
# Create .venv beside this repository and install the package with its test tools.
# Needs only python3 (3.10+) with venv; safe to run again (fast when already set up).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.charmie_setup_done
if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".[test]"
  touch "$stamp"
fi
