"""The documentation held to the code: docs/ros.md's table of the dynamics node's parameters
(generated: scripts/generate_parameter_types.py) names every declared parameter and no other,
with its default and range as the node declares them
(``ros/dynamics_parts/dynamics_parameters.py``); every page the README links exists, and the
README stays a page a newcomer reads in minutes."""
from __future__ import annotations

import re
from pathlib import Path

from charmie_dynamics.ros.common.param_spec import default_text
from charmie_dynamics.ros.dynamics_parts.dynamics_parameters import PARAMETERS

ROOT = Path(__file__).resolve().parent.parent
#: Parameters every rclpy node has, documented beside the package's own.
STANDARD = {"use_sim_time"}
MAX_README_LINES = 250


def parameter_rows() -> dict[str, tuple[str, str]]:
    """docs/ros.md's parameter table: name -> (default, range) as written."""
    text = (ROOT / "docs" / "ros.md").read_text(encoding="utf-8")
    section = text.split("## Parameters of the dynamics node", 1)[1].split("\n#", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        names = re.findall(r"`(\w+)`", cells[0])
        defaults = [d.strip() for d in re.split(r",\s*(?![^\[]*\])", cells[1])]
        assert len(defaults) == len(names), f"docs/ros.md: row {cells[0]}: one default per name"
        for name, default in zip(names, defaults):
            assert name not in rows, f"docs/ros.md: {name} documented twice"
            rows[name] = (default, cells[2])
    return rows


def test_the_parameter_table_is_the_declared_parameters():
    rows = parameter_rows()
    assert set(rows) == set(PARAMETERS) | STANDARD, (
        f"undocumented: {sorted(set(PARAMETERS) - set(rows))}, "
        f"not declared: {sorted(set(rows) - set(PARAMETERS) - STANDARD)}")
    for name, param in PARAMETERS.items():
        default, limits = rows[name]
        assert default == default_text(param.default), \
            f"{name}: docs say {default}, the node declares {default_text(param.default)}"
        if param.low is not None:
            assert limits == param.range_text(), \
                f"{name}: docs give the range {limits!r}, the node {param.range_text()}"


def test_readme_links_exist_and_it_stays_short():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = set(re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme))
    local = {link for link in links if not link.startswith("http")}
    assert {"docs/ros.md", "docs/performance.md", "docs/validation.md"} <= local
    missing = [link for link in local if not (ROOT / link).is_file()]
    assert not missing, f"README links missing pages: {missing}"
    assert len(readme.splitlines()) <= MAX_README_LINES
