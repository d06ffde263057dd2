"""The install layout ROS tools rely on, in the environment running the tests: the package's
share directory found through the ament index (package.xml, launch/, config/: every data
file setup.py declares, identical to the checkout's) and its executables in
<prefix>/lib/charmie_dynamics, where launch_ros and `ros2 run` look for them: Python scripts,
so that `ros2 run --prefix 'python3 -m pdb'` runs them. A colcon install (setup.cfg) puts
nothing else on PATH but `charmie-dynamics`; a pip install puts every console script in bin/
and links lib/charmie_dynamics/<name> to them (scripts/ros_path/setup_data.py).

The unit suite checks the editable install scripts/setup.sh makes in .venv (its post-install
step links the data files); scripts/ros_path.sh runs this file again on a colcon install and
on a plain `pip install .`.
"""
from __future__ import annotations

import filecmp
import importlib.util
import os
import shutil
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
CLI = "charmie-dynamics"
NODES = [name for name in CONSOLE_SCRIPTS if name != CLI]


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


@pytest.fixture(scope="module")
def colcon(prefix: Path) -> bool:
    """Whether ``prefix`` is a colcon install (colcon's package marker is there)."""
    return (prefix / "share" / "colcon-core" / "packages" / PACKAGE).is_file()


def test_template_layout():
    """setup.cfg as `ros2 pkg create --build-type ament_python` writes it; the CLI alone is
    installed into bin/ as a data file, a Python script running the console script's entry."""
    import configparser

    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "setup.cfg")
    assert dict(cfg["develop"]) == {"script_dir": f"$base/lib/{PACKAGE}"}
    assert dict(cfg["install"]) == {"install_scripts": f"$base/lib/{PACKAGE}"}
    assert dict(SETUP.data_files)["bin"] == [f"bin/{CLI}"]
    assert f"lib/{PACKAGE}" not in dict(SETUP.data_files)
    script = (ROOT / "bin" / CLI).read_text(encoding="utf-8")
    entry = next(e for e in SETUP.entry_points["console_scripts"] if e.startswith(CLI + " "))
    module, function = entry.split("=")[1].strip().split(":")
    assert script.startswith("#!/usr/bin/env python3\n") and os.access(ROOT / "bin" / CLI, os.X_OK)
    assert f"from {module} import {function}" in script
    assert not (ROOT / "libexec").exists()


def test_data_files_installed(prefix, colcon):
    """Every data file of setup.py is in the prefix, with the checkout's content; the share
    directory has package.xml, launch/ and config/. bin/charmie-dynamics: pip's console script
    outside colcon."""
    share = prefix / "share" / PACKAGE
    for name in ("package.xml", "launch/sim.launch.py", "launch/hardware.launch.py",
                 "config/sim.yaml", "config/hardware.yaml", "config/charmie.yaml"):
        assert (share / name).is_file(), f"{share / name} missing"
    for destination, files in SETUP.data_files:
        if destination == "bin" and not colcon:
            continue
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
    cli = subprocess.run([str(lib / CLI), "--help"], capture_output=True,
                         text=True, timeout=120)
    assert cli.returncode == 0 and f"usage: {CLI}" in cli.stdout, cli.stderr


def test_executables_are_python_scripts(prefix):
    """`ros2 run --prefix 'python3 -m pdb'` runs `python3 -m pdb <lib/.../name>`: each
    executable is a Python script (a python shebang), which a Python interpreter runs."""
    for name in CONSOLE_SCRIPTS:
        path = prefix / "lib" / PACKAGE / name
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("#!") and "python" in first, f"{path}: first line {first!r}"
    profiled = subprocess.run([sys.executable, "-m", "cProfile", "-o", os.devnull,
                               str(prefix / "lib" / PACKAGE / CLI), "--help"],
                              capture_output=True, text=True, timeout=120)
    assert profiled.returncode == 0 and f"usage: {CLI}" in profiled.stdout, profiled.stderr


def test_only_the_cli_on_path(prefix, colcon):
    """A colcon install puts `charmie-dynamics` alone in bin/, so no node executable is
    found on PATH (after sourcing install/setup.bash) while the CLI is."""
    if not colcon:
        pytest.skip(f"{prefix}: not a colcon install (pip writes every console script to bin/)")
    assert sorted(p.name for p in (prefix / "bin").iterdir()) == [CLI]
    for name in NODES:
        assert shutil.which(name) is None, f"{name} on PATH: {shutil.which(name)}"
    assert Path(shutil.which(CLI) or "").resolve() == (prefix / "bin" / CLI).resolve()
    cli = subprocess.run([CLI, "--help"], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0 and f"usage: {CLI}" in cli.stdout, cli.stderr


@pytest.mark.ros
def test_node_executable_starts(prefix):
    pytest.importorskip("rclpy")
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    node = subprocess.run([str(prefix / "lib" / PACKAGE / "dynamics"), "--ros-args",
                           "-p", "stale_policy:=not_a_policy"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert node.returncode == 1, node.stdout + node.stderr
    assert "stale_policy" in node.stderr and "Traceback" not in node.stderr, node.stderr
