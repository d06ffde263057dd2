"""The install layout ROS tools rely on, in the environment running the tests: the package's
share directory found through the ament index (package.xml, launch/, config/: every data
file setup.py declares, identical to the checkout's) and its executables in
<prefix>/lib/charmie_dynamics, where launch_ros and `ros2 run` look for them.

The unit suite checks the editable install scripts/setup.sh makes in .venv (its post-install
step links the data files); scripts/ros_path.sh runs this file again on a colcon install and
on a plain `pip install .`.
"""
from __future__ import annotations

import filecmp
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "charmie_dynamics"


def _setup_data():
    spec = importlib.util.spec_from_file_location("setup_data", ROOT / "scripts" / "ros_path" / "setup_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.setup_arguments()


SETUP = _setup_data()
CONSOLE_SCRIPTS = [entry.split("=")[0].strip() for entry in SETUP.entry_points["console_scripts"]]


@pytest.fixture(scope="module")
def prefix() -> Path:
    """The install prefix of the package: from the ament index (AMENT_PREFIX_PATH; the venv's
    prefix when unset, as for a venv holding the ROS 2 wheels), else sys.prefix."""
    try:
        from ament_index_python.packages import get_package_prefix
    except ImportError:
        return Path(sys.prefix)
    saved = os.environ.get("AMENT_PREFIX_PATH")
    os.environ.setdefault("AMENT_PREFIX_PATH", sys.prefix)
    try:
        found = Path(get_package_prefix(PACKAGE))
    except Exception as exc:      # PackageNotFoundError, or an index without the marker
        pytest.fail(f"{PACKAGE} not in the ament index of {os.environ['AMENT_PREFIX_PATH']}: "
                    f"{exc} (an editable install needs scripts/setup.sh's post-install step)")
    finally:
        if saved is None:
            del os.environ["AMENT_PREFIX_PATH"]
    return found


def test_every_console_script_has_a_launcher():
    """setup.py installs lib/charmie_dynamics/<name> for every console script: libexec/<name>,
    a link to the one launcher."""
    installed = dict(SETUP.data_files)[f"lib/{PACKAGE}"]
    assert sorted(Path(f).name for f in installed) == sorted(CONSOLE_SCRIPTS)
    launcher = ROOT / "libexec" / "run_console_script"
    for name in CONSOLE_SCRIPTS:
        assert (ROOT / "libexec" / name).resolve() == launcher.resolve(), name
    assert os.access(launcher, os.X_OK)


def test_data_files_installed(prefix):
    """Every data file of setup.py is in the prefix, with the checkout's content; the share
    directory has package.xml, launch/ and config/."""
    share = prefix / "share" / PACKAGE
    for name in ("package.xml", "launch/sim.launch.py", "launch/hardware.launch.py",
                 "config/sim.yaml", "config/hardware.yaml", "config/charmie.yaml"):
        assert (share / name).is_file(), f"{share / name} missing"
    for destination, files in SETUP.data_files:
        for name in files:
            installed = prefix / destination / Path(name).name
            assert installed.is_file(), f"{installed} missing"
            assert filecmp.cmp(installed, ROOT / name, shallow=False), f"{installed} differs from {name}"


def test_executables_in_lib(prefix):
    """Each executable is where launch_ros looks and runs its console script; the CLI's
    answers without ROS, a node starts rclpy and refuses a bad parameter with status 1."""
    lib = prefix / "lib" / PACKAGE
    for name in CONSOLE_SCRIPTS:
        assert os.access(lib / name, os.X_OK), f"{lib / name} missing or not executable"
    cli = subprocess.run([str(lib / "charmie-dynamics"), "--help"], capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 0 and "usage: charmie-dynamics" in cli.stdout, cli.stderr


def test_node_executable_starts(prefix):
    pytest.importorskip("rclpy")
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    node = subprocess.run([str(prefix / "lib" / PACKAGE / "dynamics"), "--ros-args",
                           "-p", "stale_policy:=not_a_policy"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert node.returncode == 1, node.stdout + node.stderr
    assert "stale_policy" in node.stderr and "Traceback" not in node.stderr, node.stderr
