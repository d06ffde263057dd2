#!/usr/bin/env bash
# The ROS path of charmie_dynamics, taken as a ROS user takes it, on a machine without a ROS
# install: a colcon workspace with the package, its launch files under launch_testing
# (test_launch/), the ros2 CLI, and the layout of a plain `pip install .`.
#
#   scripts/ros_path.sh            (from anywhere; CI runs it after the unit tests)
#
# Needs the pure-Python sources of launch, launch_ros, ros2cli, rcl_interfaces and
# rosidl_runtime_py (no wheels exist): ../shared/ros2-src beside this checkout, or
# $CHARMIE_ROS2_SRC. Without them it says so in one line and exits 0. Everything it builds
# goes to $CHARMIE_ROS_PATH_WORK (default build/ros_path in this checkout):
#   venv/      ROS 2 Kilted from PyPI wheels + launch/ros2cli sources + colcon (ros_path/ros_venv.sh)
#   ws/        the colcon workspace, --symlink-install (build/, install/, log/); env.sh sources it
#   ws-plain/  the same built by a plain `colcon build` (files copied); env-plain.sh sources it
#   pip-venv/  the same ROS venv with the package from a plain `pip install .` (no colcon)
#   src/charmie_dynamics/  the checkout's files as a clone would have them (tracked and
#              untracked-but-not-ignored files of the working tree)
# Safe to run again: the venvs are kept, the package is rebuilt and reinstalled every run.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=${CHARMIE_ROS2_SRC:-$repo/../shared/ros2-src}
for tree in launch/launch_testing launch_ros/launch_ros ros2cli/ros2cli rcl_interfaces/composition_interfaces; do
  if [ ! -d "$src/$tree" ]; then
    echo "ros_path: skipped: no ROS 2 launch/ros2cli sources ($src/$tree not found; set CHARMIE_ROS2_SRC to a folder like ../shared/ros2-src to run colcon, launch tests and the ros2 CLI)"
    exit 0
  fi
done
src=$(realpath -- "$src")
mkdir -p "${CHARMIE_ROS_PATH_WORK:-$repo/build/ros_path}"
work=$(realpath -- "${CHARMIE_ROS_PATH_WORK:-$repo/build/ros_path}")
started=$SECONDS
doing="start"
step() { doing=$*; echo "[ros_path] $((SECONDS - started)) s: $*"; }
# any failing command ends the run (set -e, subshells included): say in which step
trap 'rc=$?; [ $rc -eq 0 ] || echo "[ros_path] FAILED (status $rc) after $((SECONDS - started)) s in: $doing" >&2' EXIT
# the versions the suite last passed with, as scripts/setup.sh installs them
if [ "${CHARMIE_CONSTRAINTS:-}" = none ]; then
  unset PIP_CONSTRAINT
else
  export PIP_CONSTRAINT=${PIP_CONSTRAINT:-$repo/scripts/constraints-tested.txt}
fi
# DDS on loopback only, in a domain of this run's own (230-232: apart from the unit tests' blocks,
# test/domains.py, and from scripts/test_jazzy.sh's launch tests, 1-9, which CI runs beside it)
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${CHARMIE_ROS_PATH_DOMAIN:-$((230 + $$ % 3))}

# --- 1. the package's files, as a clone of this working tree would have them --------------
step "copying the checkout to $work/src/charmie_dynamics"
copy=$work/src/charmie_dynamics
rm -rf "$copy" && mkdir -p "$copy"
# tar keeps the files' times: the numba kernel cache stays valid between runs
(cd "$repo" && git ls-files -z --cached --others --exclude-standard \
   | tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$copy"

# --- 2. the venv colcon builds with ------------------------------------------------------
step "venv $work/venv"
"$repo/scripts/ros_path/ros_venv.sh" "$work/venv" "$src"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check colcon-common-extensions

# --- 3. colcon build (a fresh build/ and install/ every run) -------------------------------
# --symlink-install, as a developer builds: setup.py develop, reading setup.cfg's [develop]
step "colcon build --symlink-install"
ws=$work/ws
rm -rf "$ws/build" "$ws/install" "$ws/log" && mkdir -p "$ws"
cat >"$work/env.sh" <<EOF
# source $work/env.sh: the colcon workspace on the ROS 2 wheels' venv
source "$work/venv/bin/activate"
export AMENT_PREFIX_PATH="$work/venv"        # the wheels' ament index is in the venv prefix
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
set +u                                         # colcon's setup.bash reads unset variables
source "$ws/install/setup.bash"
set -u
EOF
( source "$work/venv/bin/activate"; export AMENT_PREFIX_PATH=$work/venv; cd "$ws"
  colcon build --symlink-install --base-paths "$work/src" --packages-select charmie_dynamics \
    >"$work/colcon-build.log" 2>&1 ) || { tail -30 "$work/colcon-build.log"; exit 1; }

# a plain `colcon build` too (what bloom and most robot images run: setup.py install, the
# files copied into install/); its workspace is sourced by env-plain.sh
step "colcon build (no --symlink-install)"
ws_plain=$work/ws-plain
rm -rf "$ws_plain" && mkdir -p "$ws_plain"
sed -e "s|$ws/install/setup.bash|$ws_plain/install/setup.bash|" -e "s|colcon workspace|plain colcon workspace|" \
  "$work/env.sh" >"$work/env-plain.sh"
( source "$work/venv/bin/activate"; export AMENT_PREFIX_PATH=$work/venv; cd "$ws_plain"
  colcon build --base-paths "$work/src" --packages-select charmie_dynamics \
    >"$work/colcon-build-plain.log" 2>&1 ) || { tail -30 "$work/colcon-build-plain.log"; exit 1; }
if [ -L "$ws_plain/install/charmie_dynamics/share/charmie_dynamics/launch/sim.launch.py" ]; then
  echo "ros_path: the plain colcon build installed links, not copies" >&2; exit 1
fi

# --- 4. launch tests and the ros2 CLI on the colcon installs ------------------------------
# pytest runs from $work, so that only the installed package is importable. launch_testing's
# pytest plugin imports every module of a folder it collects from: test/ (whose modules may
# skip at import) is collected without it.
pytest_in() { local py=$1; shift; (cd "$work" && "$py" -m pytest -q -p no:cacheprovider "$@"); }
step "compiling the kernels: ros2 run charmie_dynamics charmie-dynamics compile"
(source "$work/env.sh"; ros2 run charmie_dynamics charmie-dynamics compile)
step "ros2 run --prefix 'python3 -m cProfile': the executables are Python scripts; none on PATH"
(source "$work/env.sh"
 ros2 run --prefix 'python3 -m cProfile -o /dev/null' charmie_dynamics charmie-dynamics --help >/dev/null
 # a node under the profiler: it starts rclpy and refuses a bad parameter (cProfile swallows
 # the node's exit status 1: its one-line message is the proof)
 out=$(ros2 run --prefix 'python3 -m cProfile -o /dev/null' charmie_dynamics dynamics \
   --ros-args -p stale_policy:=not_a_policy 2>&1) || true
 if ! grep -q "error: parameter stale_policy 'not_a_policy'" <<<"$out"; then
   echo "ros_path: dynamics under python3 -m cProfile: expected its stale_policy error, got: $out" >&2; exit 1
 fi
 for name in model_loader dynamics trajectory_player simulator; do
   if command -v "$name" >/dev/null; then echo "ros_path: $name on PATH: $(command -v "$name")" >&2; exit 1; fi
 done
 command -v charmie-dynamics >/dev/null || { echo "ros_path: charmie-dynamics not on PATH" >&2; exit 1; })
step "launch tests, ros2 CLI and install layout on the colcon install (ROS_DOMAIN_ID=$ROS_DOMAIN_ID)"
(source "$work/env.sh"; pytest_in python "$copy/test_launch")
(source "$work/env.sh"; pytest_in python -p no:launch_testing "$copy/test/test_install_layout.py")
step "the plain colcon install: ros2 run, the install layout and the hardware launch test"
(source "$work/env-plain.sh"
 case "$(cd "$work" && python -c 'import charmie_dynamics; print(charmie_dynamics.__file__)')" in
   "$ws_plain/install/"*) ;;
   *) echo "ros_path: env-plain.sh imports charmie_dynamics from elsewhere" >&2; exit 1 ;;
 esac
 ros2 run charmie_dynamics charmie-dynamics compile
 out=$(ros2 run charmie_dynamics dynamics --ros-args -p stale_policy:=not_a_policy 2>&1) && status=0 || status=$?
 if [ "$status" -ne 1 ] || ! grep -q "error: parameter stale_policy 'not_a_policy'" <<<"$out"; then
   echo "ros_path: ros2 run dynamics (plain install): expected exit 1 and its stale_policy error, got $status: $out" >&2; exit 1
 fi
 pytest_in python -p no:launch_testing "$copy/test/test_install_layout.py"
 pytest_in python "$copy/test_launch/test_hardware_launch.py")

# --- 5. a plain `pip install .` in a venv of its own (no colcon) ---------------------------
step "venv $work/pip-venv and pip install . (no colcon)"
pip_venv=$work/pip-venv
"$repo/scripts/ros_path/ros_venv.sh" "$pip_venv" "$src"
"$pip_venv/bin/python" -m pip uninstall --quiet --yes charmie_dynamics 2>/dev/null || true
(cd "$copy" && "$pip_venv/bin/python" -m pip install --quiet --disable-pip-version-check .)
# the wheel's console scripts are in bin/: lib/charmie_dynamics/<name> links for launch_ros
"$pip_venv/bin/python" "$copy/scripts/ros_path/setup_data.py" link-executables "$pip_venv"
export AMENT_PREFIX_PATH=$pip_venv        # the pip install's prefix alone: no colcon overlay
"$pip_venv/bin/charmie-dynamics" compile
step "install layout and the hardware launch on the pip install"
pytest_in "$pip_venv/bin/python" -p no:launch_testing "$copy/test/test_install_layout.py"
pytest_in "$pip_venv/bin/python" "$copy/test_launch/test_hardware_launch.py"
step "done: the ROS path passed (source $work/env.sh to use the workspace)"
