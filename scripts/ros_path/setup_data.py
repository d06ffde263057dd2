"""What setup.py declares, read from setup.py itself (so that no list is written twice):

    python scripts/ros_path/setup_data.py install_requires          one requirement a line
    python scripts/ros_path/setup_data.py link-data PREFIX          data_files and executables
    python scripts/ros_path/setup_data.py link-executables PREFIX   executables only

A pip install (no colcon) puts every console script in PREFIX/bin: setup.cfg's
lib/charmie_dynamics applies to colcon's setup.py runs, not to wheels. ``link-executables``
links PREFIX/lib/charmie_dynamics/<name> to PREFIX/bin/<name> for each, where launch_ros and
``ros2 run`` look (the post-install step of a plain ``pip install .``). ``link-data`` is the
editable install's: ``pip install -e`` installs no data_files either, so it also links the
ament index marker and share/charmie_dynamics (package.xml, launch/, config/) into PREFIX (a
venv) as symlinks to the checkout, as ``colcon build --symlink-install`` does; not
bin/charmie-dynamics, which pip wrote as a console script. Needs setuptools only.
"""
from __future__ import annotations

import os
import sys
from distutils.core import run_setup
from pathlib import Path

import setuptools  # noqa: F401  (provides distutils on Python 3.12+)

ROOT = Path(__file__).resolve().parents[2]


def setup_arguments():
    """The Distribution setup.py describes (setup() called, no command run)."""
    cwd = os.getcwd()
    os.chdir(ROOT)                     # setup.py globs paths relative to the checkout
    try:
        return run_setup(str(ROOT / "setup.py"), stop_after="init")
    finally:
        os.chdir(cwd)


def install_requires() -> list[str]:
    """setup.py's install_requires as written: setuptools moves each requirement with an
    environment marker into extras_require[":MARKER"], whence it is put back."""
    dist = setup_arguments()
    return list(dist.install_requires) + [f"{requirement}; {key[1:]}"
                                          for key, listed in dist.extras_require.items()
                                          if key.startswith(":") for requirement in listed]


def _link(link: Path, target: Path) -> Path:
    """``link`` made a symlink to ``target`` (whatever was there replaced)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(target)
    return link


def link_executables(prefix: Path) -> list[Path]:
    """lib/charmie_dynamics/<name> -> ../../bin/<name> in ``prefix`` for every console
    script; returns the links made."""
    dist = setup_arguments()
    names = [entry.split("=")[0].strip() for entry in dist.entry_points["console_scripts"]]
    missing = [name for name in names if not (prefix / "bin" / name).is_file()]
    if missing:
        raise SystemExit(f"setup_data: {prefix}/bin lacks the console scripts "
                         f"{', '.join(missing)}: expected a pip install of the package in that "
                         "prefix")
    return [_link(prefix / "lib" / dist.get_name() / name, Path("..", "..", "bin", name))
            for name in names]


def link_data(prefix: Path) -> list[Path]:
    """Symlink every data file but bin/'s into ``prefix``, then the executables; returns the
    links made."""
    links = [_link(prefix / destination / Path(name).name, ROOT / name)
             for destination, files in setup_arguments().data_files if destination != "bin"
             for name in files]
    return links + link_executables(prefix)


def main(argv: list[str]) -> int:
    if argv[:1] == ["install_requires"] and len(argv) == 1:
        print("\n".join(install_requires()))
        return 0
    if argv[:1] == ["link-data"] and len(argv) == 2:
        links = link_data(Path(argv[1]).resolve())
        print(f"setup_data: {len(links)} data files and executables linked into {argv[1]}")
        return 0
    if argv[:1] == ["link-executables"] and len(argv) == 2:
        links = link_executables(Path(argv[1]).resolve())
        print(f"setup_data: {len(links)} executables linked into {argv[1]}/lib")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
