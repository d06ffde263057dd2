"""What setup.py declares, read from setup.py itself (so that no list is written twice):

    python scripts/ros_path/setup_data.py install_requires     one requirement a line
    python scripts/ros_path/setup_data.py link-data PREFIX     link data_files into PREFIX

``link-data`` is the editable install's post-install step: ``pip install -e`` installs no
data_files, so the ament index marker, share/charmie_dynamics (package.xml, launch/, config/)
and the executables in lib/charmie_dynamics are linked into PREFIX (a venv) as symlinks to
the checkout, as ``colcon build --symlink-install`` does. Needs setuptools only.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import setuptools  # noqa: F401  (provides distutils on Python 3.12+)
from distutils.core import run_setup

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


def link_data(prefix: Path) -> list[Path]:
    """Symlink every data file into ``prefix``; returns the links made."""
    links = []
    for destination, files in setup_arguments().data_files:
        folder = prefix / destination
        folder.mkdir(parents=True, exist_ok=True)
        for name in files:
            link = folder / Path(name).name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(ROOT / name)
            links.append(link)
    return links


def main(argv: list[str]) -> int:
    if argv[:1] == ["install_requires"] and len(argv) == 1:
        print("\n".join(install_requires()))
        return 0
    if argv[:1] == ["link-data"] and len(argv) == 2:
        links = link_data(Path(argv[1]).resolve())
        print(f"setup_data: {len(links)} data files linked into {argv[1]}")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
