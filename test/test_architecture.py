"""docs/architecture.md against the code (issue 12's closing note asked for the layout and
the import graph): the modules it lists are the package's modules, its import graph is the
code's (test/import_graph.py builds both from the code with ast), its workspaces are the
AlgorithmData classes with their files, and the README links it. Each fails when the code
changes and the page does not; ``.venv/bin/python test/import_graph.py`` prints what the
code has."""
from __future__ import annotations

import ast
import re

from import_graph import ROOT, data_classes, module_files, package_graph

DOC = ROOT.parent / "docs" / "architecture.md"
README = ROOT.parent / "README.md"


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_module_list_is_the_packages_modules():
    listed = re.findall(r"^- `([\w/]+\.py)`: \S", _section(DOC.read_text(), "Folders and modules"),
                        flags=re.M)
    assert len(listed) == len(set(listed)), "a module is listed twice"
    missing = sorted(set(module_files()) - set(listed))
    stale = sorted(set(listed) - set(module_files()))
    assert not missing and not stale, (
        f"docs/architecture.md: modules missing from the list: {missing}; listed but not in "
        f"the package: {stale}")


def test_the_import_graph_is_the_codes():
    graph = package_graph()
    assert f"```text\n{graph}\n```" in _section(DOC.read_text(), "Import graph"), (
        "docs/architecture.md's import graph differs from the code's; the code's is\n" + graph)


def test_every_workspace_is_listed_with_its_file():
    section = _section(DOC.read_text(), "The model, the compiled model and the workspaces")
    rows = dict(re.findall(r"^ *\| `(\w+)` \| `([\w/]+\.py)` \|", section, flags=re.M))
    assert rows == data_classes(), (rows, data_classes())
    assert {"StepData", "SimulationData", "BiasForcesData"} <= set(rows)


def test_the_readme_links_the_page():
    assert "(docs/architecture.md)" in README.read_text()


def test_the_spatial_vector_table_is_the_slots():
    """Each row of the page's buffer table names its slots in their order (0, 1, ...): the
    convention written down is the one the kernels index with; every slot of layout.py's
    result buffers is in the table."""
    from charmie_dynamics import layout
    section = _section(DOC.read_text(), "Spatial vectors: one convention")
    rows = re.findall(r"^\|[^|]+\|[^|]+\| `([A-Z_, ]+)` \|$", section, flags=re.M)
    assert len(rows) == 8, rows
    named = set()
    for row in rows:
        names = row.split(", ")
        values = [getattr(layout, n) for n in names]
        assert values == list(range(len(names))), (row, values)
        named |= set(names)
    constants = {m.name for slots in layout.RESULT_LAYOUTS for m in slots}
    assert constants <= named, constants - named


def test_no_kernel_takes_more_than_ten_arguments():
    """The kernels' convention (the page's last section): groups travel as tuples."""
    long = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    (d.id if isinstance(d, ast.Name) else getattr(d.func, "id", None)) == "kernel"
                    for d in node.decorator_list if isinstance(d, (ast.Name, ast.Call))):
                if len(node.args.args) > 10:
                    long.append(f"{path.name}:{node.name} ({len(node.args.args)})")
    assert not long, long
