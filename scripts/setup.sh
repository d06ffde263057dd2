#!/usr/bin/env bash
# Create .venv beside this repository: ROS 2 from its PyPI wheels (rclpy, Fast DDS, the
# message packages; tf2_msgs built from source), then this package with its test tools.
# Needs only python3 (3.10+) with venv, cmake, g++ and make (installed with apt-get when
# missing and run as root). Safe to run again: fast when already set up.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
scripts/ros_wheels/install.sh .venv
stamp=.venv/.charmie_setup_done
if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
  touch "$stamp"
fi
# pip -e installs no data_files: link share/charmie_dynamics, the ament index marker and
# lib/charmie_dynamics (where launch_ros looks for executables) into the venv prefix
.venv/bin/python scripts/ros_path/setup_data.py link-data .venv
# compile the numerical kernels once (numba caches them on disk; about 25 s the first time,
# a second when cached) so that the first node start and the first test do not pay for it
.venv/bin/charmie-dynamics compile
