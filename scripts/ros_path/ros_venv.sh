#!/usr/bin/env bash
# A venv that runs launch files, launch tests and the ros2 CLI without a ROS install:
#   - ROS 2 Kilted's core from its PyPI wheels with tf2_msgs, and composition_interfaces
#     (launch_ros imports it; no wheel) built the same way (scripts/ros_wheels/install.sh);
#   - launch, launch_ros, launch_testing, ros2launch, ros2cli and its verbs, rosidl_runtime_py
#     from the pure-Python sources in SRC_DIR (no wheels; their pip names do not match the
#     wheels' names, so they go in without dependencies);
#   - their PyPI dependencies, pytest < 9 (launch_testing's pytest plugin of these sources
#     takes the `path` hook argument that pytest 9 removed), and this package's run-time
#     dependencies (read from setup.py).
#
#   scripts/ros_path/ros_venv.sh VENV_DIR SRC_DIR
#
# SRC_DIR holds launch/ launch_ros/ ros2cli/ rcl_interfaces/ rosidl_runtime_py/ (as
# ../shared/ros2-src does). Safe to run again: fast when nothing changed.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 VENV_DIR SRC_DIR" >&2; exit 2; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
venv=$(realpath -m -- "$1")
src=$(realpath -- "$2")
py=$venv/bin/python

"$repo/scripts/ros_wheels/install.sh" "$venv" "$src/rcl_interfaces/composition_interfaces"

# what this venv was made from: the sources' versions, this script, the package's requirements
listed=$("$py" "$repo/scripts/ros_path/setup_data.py" install_requires)
mapfile -t requirements <<<"$listed"
key=$(cat "$src/VERSIONS" "${BASH_SOURCE[0]}" "${PIP_CONSTRAINT:-/dev/null}" 2>/dev/null; printf '%s\n' "${requirements[@]}")
stamp=$venv/.ros_path_venv
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
  echo "[ros_venv] launch, launch_testing and ros2cli already in $venv"
  exit 0
fi
pipq() { "$py" -m pip install --quiet --disable-pip-version-check "$@"; }
echo "[ros_venv] installing launch, launch_testing, ros2cli and their dependencies into $venv"
pipq wheel osrf-pycommon lark pyyaml argcomplete packaging psutil importlib-metadata netifaces \
     "pytest<9" "${requirements[@]}"
pipq --no-deps --no-build-isolation \
  "$src/launch/launch" "$src/launch/launch_xml" "$src/launch/launch_yaml" \
  "$src/launch/launch_testing" "$src/launch_ros/launch_ros" "$src/launch_ros/ros2launch" \
  "$src/rosidl_runtime_py" "$src/ros2cli/ros2cli" "$src/ros2cli/ros2pkg" \
  "$src/ros2cli/ros2run" "$src/ros2cli/ros2topic" "$src/ros2cli/ros2node" \
  "$src/ros2cli/ros2param" "$src/ros2cli/ros2service" "$src/ros2cli/ros2interface"
echo "$key" >"$stamp"
