"""Write the versions installed in one or more venvs as a pip constraints file.

    python3 scripts/lock.py VENV [VENV ...] > scripts/constraints-tested.txt

Every distribution that pip installed from an index is written as ``name==version``, sorted;
those installed from a local path or in editable mode (this package, the launch/ros2cli
sources of scripts/ros_path: they carry a ``direct_url.json``), those CMake installed (the
interface packages scripts/ros_wheels builds: no pip ``INSTALLER``) and pip, setuptools and
wheel (the venv's own tools) are left out. Two venvs holding one distribution at two
versions is an error (exit 1, naming it): the file must pin one version for each.
"""
from __future__ import annotations

import json
import subprocess
import sys

TOOLS = {"pip", "setuptools", "wheel"}

# Run by each venv's own Python: its distributions as (name, version, from_index).
_LIST = """
import importlib.metadata as m, json
print(json.dumps([(d.metadata["Name"], d.version, d.read_text("direct_url.json") is None
                   and (d.read_text("INSTALLER") or "").strip() == "pip")
                  for d in m.distributions()]))
"""


def installed(venv: str) -> dict[str, str]:
    """Canonical name -> version of what pip installed in ``venv`` from an index."""
    out = subprocess.run([f"{venv}/bin/python", "-c", _LIST], check=True, text=True,
                         capture_output=True, env={"PATH": "/usr/bin:/bin"}).stdout
    found: dict[str, str] = {}
    for name, version, from_index in json.loads(out.splitlines()[-1]):
        key = name.lower().replace("_", "-").replace(".", "-")
        if from_index and key not in TOOLS:
            found[key] = version
    return found


def main(venvs: list[str]) -> int:
    if not venvs:
        print(__doc__, file=sys.stderr)
        return 2
    pins: dict[str, tuple[str, str]] = {}
    for venv in venvs:
        for name, version in installed(venv).items():
            if name in pins and pins[name][0] != version:
                print(f"lock: {name} is {pins[name][0]} in {pins[name][1]} and {version} in "
                      f"{venv}: install one version in both", file=sys.stderr)
                return 1
            pins.setdefault(name, (version, venv))
    print("# The versions the whole test suite (README's test command and scripts/ros_path.sh)")
    print("# last passed with; scripts/setup.sh and scripts/ros_path.sh install exactly these.")
    print("# Refresh: scripts/test_latest.sh (the newest versions, the whole suite), then commit")
    print("# the file it writes here. Made by scripts/lock.py; do not edit by hand.")
    for name in sorted(pins):
        print(f"{name}=={pins[name][0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
