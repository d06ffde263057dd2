#!/usr/bin/env bash
# The ROS tests on ROS 2 Jazzy's rclpy (the ros-jazzy-* PyPI wheels: rclpy 7.1, Fast DDS 2.14,
# Jazzy's messages), as CI runs them after the Kilted suite:
#   - a venv with Jazzy's wheels, tf2_msgs and composition_interfaces built against them, the
#     launch/launch_ros/ros2cli sources of ../shared/ros2-src (rolling of December 2024: no
#     Jazzy wheels or sources of launch reach CI; Jazzy's launch API is checked by
#     test/test_ros_api.py instead), and this package (editable) with its test tools;
#   - every `ros`-marked test of test/ (the nodes over DDS, in child processes) and the launch
#     tests of test_launch/.
#
#   scripts/test_jazzy.sh [PYTEST_ARGS ...]     venv: $CHARMIE_JAZZY_VENV, else build/jazzy/venv
#
# Without ../shared/ros2-src ($CHARMIE_ROS2_SRC) it says so in one line and exits 0, as
# scripts/ros_path.sh does. The kernels are numba's of the same version and sources as .venv's
# (scripts/constraints-jazzy.txt pins the same numba as scripts/constraints-tested.txt): the
# kernels compiled by scripts/setup.sh are loaded from the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
src=${CHARMIE_ROS2_SRC:-$repo/../shared/ros2-src}
if [ ! -d "$src/launch_ros/launch_ros" ]; then
  echo "test_jazzy: skipped: no ROS 2 launch sources ($src/launch_ros not found; set CHARMIE_ROS2_SRC)"
  exit 0
fi
venv=$(realpath -m -- "${CHARMIE_JAZZY_VENV:-build/jazzy/venv}")
start=$SECONDS
export CHARMIE_ROS_DISTRO=jazzy
if [ "${CHARMIE_CONSTRAINTS:-}" = none ]; then
  unset PIP_CONSTRAINT
else
  export PIP_CONSTRAINT=${PIP_CONSTRAINT:-$repo/scripts/constraints-jazzy.txt}
fi
scripts/ros_path/ros_venv.sh "$venv" "$src"
stamp=$venv/.charmie_jazzy_done
if [ ! -f "$stamp" ] || [ setup.py -nt "$stamp" ] || [ "$0" -nt "$stamp" ]; then
  # --use-pep517: the venv has wheel (for launch), with which pip would run setup.py develop
  # (setup.cfg then puts the console scripts in lib/, where .venv has them in bin/)
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --use-pep517 -e ".[test]"
  touch "$stamp"
fi
"$venv/bin/python" scripts/ros_path/setup_data.py link-data "$venv"
version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("ros-jazzy-rclpy"))')
echo "test_jazzy: venv $venv (ros-jazzy-rclpy $version) ready in $((SECONDS - start)) s"
"$venv/bin/charmie-dynamics" compile
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# the launch tests' domain (1-9: apart from test/'s blocks, test/domains.py, and from
# scripts/ros_path.sh's, 230-232, which CI runs beside it)
export ROS_DOMAIN_ID=${CHARMIE_JAZZY_DOMAIN:-$((1 + $$ % 9))}
status=0
# launch_testing's pytest plugin imports every module of a folder it collects: test/ without it
"$venv/bin/python" -m pytest -q -p no:cacheprovider -p no:launch_testing -m ros "${@:-test}" || status=$?
if [ $# -eq 0 ]; then
  # as a user with the venv active: ros2 on PATH (test_ros2_cli), the venv as the ament prefix
  PATH=$venv/bin:$PATH AMENT_PREFIX_PATH=$venv "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    test_launch || status=$?
fi
echo "test_jazzy: done in $((SECONDS - start)) s (pytest exit status $status)"
exit "$status"
