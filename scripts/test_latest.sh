#!/usr/bin/env bash
# The whole test suite on the newest versions of every dependency: a fresh venv made by
# scripts/setup.sh with no constraints (CHARMIE_CONSTRAINTS=none, an empty pip cache), the
# README's test command in it, then scripts/ros_path.sh and scripts/test_jazzy.sh the same way
# (when the ROS 2 sources are there). Not run by CI: an upgrade is a deliberate step. When everything passes it
# writes the candidate lock and says how to adopt it:
#
#   scripts/test_latest.sh [PYTEST_ARGS ...]     (default: test)
#   cp "$TMPDIR/charmie_dynamics-latest/constraints-tested.txt" scripts/constraints-tested.txt
#   git commit -m "constraints-tested: ..." scripts/constraints-tested.txt
#
# Work folder: $CHARMIE_LATEST_WORK, else $TMPDIR/charmie_dynamics-latest (made anew each run).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(realpath -m -- "${CHARMIE_LATEST_WORK:-${TMPDIR:-/tmp}/charmie_dynamics-latest}")
rm -rf "$work" && mkdir -p "$work"
start=$SECONDS
export CHARMIE_CONSTRAINTS=none PIP_NO_CACHE_DIR=1 NUMBA_CACHE_DIR=$work/numba-cache
CHARMIE_VENV=$work/venv scripts/setup.sh
"$work/venv/bin/python" -m pip list --format=freeze >"$work/versions.txt"
echo "test_latest: venv ready in $((SECONDS - start)) s:" \
  $(grep -iE '^(numpy|numba|scipy|pyyaml|matplotlib|pin|ros-rclpy)==' "$work/versions.txt")
status=0
"$work/venv/bin/python" -m pytest -q "${@:-test}" || status=$?
venvs=("$work/venv")
if [ $status -eq 0 ] && [ -d "${CHARMIE_ROS2_SRC:-../shared/ros2-src}" ]; then
  CHARMIE_ROS_PATH_WORK=$work/ros_path scripts/ros_path.sh || status=$?
  venvs+=("$work/ros_path/venv" "$work/ros_path/pip-venv")
  if [ $status -eq 0 ]; then
    CHARMIE_JAZZY_VENV=$work/jazzy-venv scripts/test_jazzy.sh || status=$?
  fi
fi
if [ $status -ne 0 ]; then
  echo "test_latest: FAILED (status $status) after $((SECONDS - start)) s; versions in $work/versions.txt"
  exit "$status"
fi
"$work/venv/bin/python" scripts/lock.py "${venvs[@]}" >"$work/constraints-tested.txt"
echo "test_latest: passed in $((SECONDS - start)) s; the new lock: $work/constraints-tested.txt"
diff scripts/constraints-tested.txt "$work/constraints-tested.txt" || true
echo "adopt it: cp $work/constraints-tested.txt scripts/constraints-tested.txt && git commit"
if [ -d "$work/jazzy-venv" ]; then
  { sed -n '/^#/p' scripts/constraints-jazzy.txt
    "$work/venv/bin/python" scripts/lock.py "$work/jazzy-venv" | sed '/^#/d'; } >"$work/constraints-jazzy.txt"
  echo "Jazzy's: cp $work/constraints-jazzy.txt scripts/constraints-jazzy.txt (same commit)"
fi
