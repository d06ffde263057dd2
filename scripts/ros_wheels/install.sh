#!/usr/bin/env bash
# Install ROS 2 from its PyPI wheels into a Python venv, plus tf2_msgs/TFMessage and
# control_msgs/action/FollowJointTrajectory (no wheel exists for either), built here from
# ./tf2_msgs and ./control_msgs against the wheels (control_msgs: the distro's own definition,
# -DCHARMIE_ROS_DISTRO).
#
#   [CHARMIE_ROS_DISTRO=kilted|jazzy] scripts/ros_wheels/install.sh VENV_DIR [INTERFACE_PACKAGE_DIR ...]
#
# CHARMIE_ROS_DISTRO (default kilted) picks the wheels: Kilted's are named ros-<package>,
# Jazzy's ros-jazzy-<package> (Jazzy's tf2_msgs build also needs its ament_cmake test macros
# and python_cmake_module, which Kilted's ament_cmake_ros_core brings). Humble has no wheels.
# Each INTERFACE_PACKAGE_DIR (an ament_cmake interface package, e.g. composition_interfaces of
# rcl_interfaces, which launch_ros imports) is built into the venv as tf2_msgs is.
# VENV_DIR is created with ${PYTHON:-python3} -m venv if it does not exist. Safe to run again:
# when rclpy, the message packages, tf2_msgs and control_msgs already import, it only checks
# and exits.
# Needs cmake >= 3.19, g++ and make (installed with apt-get when missing and run as root)
# and the CPython headers. pip honours PIP_* variables, e.g. an offline install from a
# wheelhouse: PIP_NO_INDEX=1 PIP_FIND_LINKS=/path/to/wheelhouse install.sh VENV_DIR
# On a real ROS 2 install none of this is needed (and colcon skips this folder: COLCON_IGNORE).
set -euo pipefail

log() { echo "[ros_wheels] $*"; }
die() { echo "[ros_wheels] ERROR: $*" >&2; exit 1; }

[ $# -ge 1 ] || { echo "usage: $0 VENV_DIR [INTERFACE_PACKAGE_DIR ...]" >&2; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=$(realpath -m -- "$1")
vpy=$venv/bin/python
interfaces=("$here/tf2_msgs" "$here/control_msgs")
for dir in "${@:2}"; do
  [ -f "$dir/package.xml" ] || die "$dir: no package.xml (expected an interface package)"
  interfaces+=("$(realpath -- "$dir")")
done

distro=${CHARMIE_ROS_DISTRO:-kilted}
MSGS=(std-msgs geometry-msgs sensor-msgs trajectory-msgs visualization-msgs diagnostic-msgs
      builtin-interfaces nav-msgs std-srvs rosgraph-msgs action-msgs)
case "$distro" in
  kilted) prefix=ros-
          BUILD=(ament-cmake ament-cmake-ros-core ament-cmake-include-directories ament-package
                 rosidl-default-generators rosidl-core-generators) ;;
  jazzy)  prefix=ros-jazzy-
          BUILD=(ament-cmake ament-cmake-ros ament-cmake-include-directories ament-package
                 rosidl-default-generators rosidl-core-generators ament-cmake-gmock
                 ament-cmake-gtest ament-cmake-pytest python-cmake-module) ;;
  *) die "CHARMIE_ROS_DISTRO=$distro: expected kilted or jazzy (the distros with PyPI wheels)" ;;
esac
WHEELS=(catkin_pkg)
for name in rclpy rmw-fastrtps-cpp "${MSGS[@]}" "${BUILD[@]}"; do WHEELS+=("$prefix$name"); done
# What must import at run time for the install to count as done.
CHECK='import rclpy
from tf2_msgs.msg import TFMessage
from std_msgs.msg import Header
from geometry_msgs.msg import TransformStamped
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray
from diagnostic_msgs.msg import DiagnosticArray
from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry
from std_srvs.srv import Trigger
from rosgraph_msgs.msg import Clock
from control_msgs.action import FollowJointTrajectory'
for dir in "${interfaces[@]:2}"; do CHECK+=$'\n'"import $(basename "$dir")"; done

check_imports() { "$vpy" -c "$CHECK" >/dev/null 2>&1; }

# --- 0. already done? ---------------------------------------------------------------------
if [ -x "$vpy" ] && check_imports; then
  log "ROS 2 wheels and ${interfaces[*]##*/} already importable in $venv: nothing to do"
  exit 0
fi

# --- 1. venv and wheels -------------------------------------------------------------------
if [ ! -x "$vpy" ]; then
  log "creating venv $venv"
  "${PYTHON:-python3}" -m venv "$venv"
fi
log "installing ROS 2 $distro wheels into $venv (${#WHEELS[@]} packages and their dependencies)"
"$vpy" -m pip install --quiet --disable-pip-version-check "${WHEELS[@]}"
"$vpy" -c 'import rclpy' || die "rclpy does not import in $venv after pip install"

# --- 2. build tools -----------------------------------------------------------------------
cmake_ok() {
  command -v cmake >/dev/null 2>&1 || return 1
  local v
  v=$(cmake --version | sed -n '1s/^cmake version \([0-9][0-9.]*\).*/\1/p')
  [ -n "$v" ] && [ "$(printf '%s\n3.19\n' "$v" | sort -V | head -n1)" = "3.19" ]
}
py_include=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
missing=()
cmake_ok || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
if [ ! -f "$py_include/Python.h" ]; then
  case "$py_include" in
    /usr/include/python3*) missing+=("$(basename "$py_include")-dev") ;;  # Debian's python3.X-dev
    *) die "Python.h not found in $py_include: install the headers of the Python that made $venv" ;;
  esac
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    die "missing build tools: ${missing[*]} (need cmake >= 3.19, g++, make, Python headers). Run as root, or: sudo apt-get install -y ${missing[*]}"
  fi
  command -v apt-get >/dev/null 2>&1 || die "missing build tools ${missing[*]} and no apt-get to install them"
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # one apt-get at a time (CI runs two installs side by side)
  ( flock 9
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ) 9>/tmp/charmie_dynamics-apt.lock
  cmake_ok || die "cmake >= 3.19 still not available (found: $(cmake --version 2>/dev/null | head -n1))"
  [ -f "$py_include/Python.h" ] || die "Python.h still not found in $py_include"
fi

# --- 3. build and install the interface packages into the venv prefix ---------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ros_wheels_interfaces.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
build_log=$tmp/build.log
run_logged() {
  if ! "$@" >>"$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    die "failed: $*"
  fi
}
for dir in "${interfaces[@]}"; do
  name=$(basename "$dir")
  "$vpy" -c "import $name" >/dev/null 2>&1 && continue      # built by an earlier run
  log "building $name in $tmp"
  run_logged cmake -S "$dir" -B "$tmp/$name" \
    -DCMAKE_PREFIX_PATH="$venv" -DCMAKE_INSTALL_PREFIX="$venv" \
    -DPython3_EXECUTABLE="$vpy" -DBUILD_TESTING=OFF -DCHARMIE_ROS_DISTRO="$distro" \
    -DCMAKE_PROJECT_INCLUDE="$here/fix_manylinux_includes.cmake"
  run_logged cmake --build "$tmp/$name" -j "$(nproc 2>/dev/null || echo 2)"
  run_logged cmake --install "$tmp/$name"
done

if ! "$vpy" -c "$CHECK"; then
  die "install finished but the imports still fail in $venv"
fi
log "done: ROS 2 wheels and ${interfaces[*]##*/} installed in $venv"
