#!/usr/bin/env bash
# Create .venv beside this repository: ROS 2 from its PyPI wheels (rclpy, Fast DDS, the
# message packages; tf2_msgs built from source), then this package with its test tools.
# CHARMIE_VENV=DIR makes that venv instead. pip installs exactly the versions the suite last
# passed with (scripts/constraints-tested.txt), unless PIP_CONSTRAINT=FILE names others
# (scripts/test_floors.sh) or CHARMIE_CONSTRAINTS=none lets it take the newest
# (scripts/test_latest.sh).
# Needs only python3 (3.10+) with venv, cmake, g++ and make (installed with apt-get when
# missing and run as root; so is Chromium, for the view's test). Safe to run again: fast when already set up.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${CHARMIE_VENV:-.venv}
if [ "${CHARMIE_CONSTRAINTS:-}" = none ]; then
  unset PIP_CONSTRAINT
else
  export PIP_CONSTRAINT=${PIP_CONSTRAINT:-$PWD/scripts/constraints-tested.txt}
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
scripts/ros_wheels/install.sh "$VENV"
stamp=$VENV/.charmie_setup_done
if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ] ||
   [ "${PIP_CONSTRAINT:-$stamp}" -nt "$stamp" ] || [ "$(cat "$stamp")" != "${PIP_CONSTRAINT:-}" ]; then
  # one editable install at a time on this checkout (it writes its egg-info here; CI's two
  # lanes each make a venv)
  ( flock 9
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[test]"
  ) 9<setup.py
  echo "${PIP_CONSTRAINT:-}" >"$stamp"
fi
# pip -e installs no data_files: link share/charmie_dynamics, the ament index marker and
# lib/charmie_dynamics (where launch_ros looks for executables) into the venv prefix
"$VENV/bin/python" scripts/ros_path/setup_data.py link-data "$VENV"
# headless Chromium for test/test_view.py (the view itself needs only a browser): Debian's
# package, installed like the build tools when missing and run as root
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[setup] installing Debian's chromium (for test/test_view.py)"
    export DEBIAN_FRONTEND=noninteractive
    # one apt-get at a time (CI runs two setups side by side): the second finds it installed
    ( flock 9
      command -v chromium >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }
    ) 9>/tmp/charmie_dynamics-apt.lock
  else
    echo "[setup] note: test/test_view.py needs Chromium: sudo apt-get install -y chromium"
  fi
fi
# compile the numerical kernels once (numba caches them on disk; about 25 s the first time,
# a second when cached) so that the first node start and the first test do not pay for it
"$VENV/bin/charmie-dynamics" compile
