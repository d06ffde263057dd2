"""The package's modules and their imports, read from the code with ast: the import graph
that test/test_layering.py holds to the layers and test/test_architecture.py holds
docs/architecture.md to.

Run it to print what docs/architecture.md shows of the code (the package-level import
graph, the modules, the Data classes)::

    .venv/bin/python test/import_graph.py
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "charmie_dynamics"
PACKAGE = "charmie_dynamics"
LAYERS = (
    {"jit", "linalg", "flat", "layout", "documents", "resources", "errors"},
    {"model"},
    {"kinematics"},
    {"mechanisms"},
    {"dynamics"},
    {"simulation", "evaluators"},
    {"export", "trajectories", "recordings", PACKAGE},
    {"identification", "datasets", "feedforward_network"},
    {"studies", "envs"},
    {"ros"},
    {"view"},
    {"cli"},
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


#: dotted module name -> file
MODULES = _modules()


def imports_of(name: str, path: Path) -> list[tuple[str, int]]:
    """(imported module, line) for every import statement of the module, anywhere in it, and
    every module it names in a string: ``from a import b`` counts as a.b when that is a
    module, else as a."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub if sub in MODULES else base, node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and "." in node.value and node.value in MODULES:
            # a module named in full is imported by that name (cli/main.py's lazy COMMANDS)
            found.append((node.value, node.lineno))
    return found


#: dotted module name -> [(imported module, line)]
GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def layer(module: str) -> int:
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else PACKAGE
    return next(k for k, names in enumerate(LAYERS) if key in names)


def group(module: str) -> str:
    """The package (or top-level module) of a module, for the package-level graph."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def package_graph() -> str:
    """One line per package: what it imports of the package, lowest layer first."""
    edges: dict[str, set[str]] = defaultdict(set)
    for name, imports in GRAPH.items():
        for target, _ in imports:
            if target.split(".")[0] == PACKAGE and group(target) != group(name):
                edges[group(name)].add(group(target))
    groups = sorted({group(m) for m in MODULES} | set().union(*edges.values()),
                    key=lambda g: (layer(PACKAGE if g == "__init__" else f"{PACKAGE}.{g}"), g))
    width = max(map(len, groups))
    order = {g: k for k, g in enumerate(groups)}
    return "\n".join(f"{g:>{width}} -> {', '.join(sorted(edges[g], key=order.get)) or '-'}"
                     for g in groups)


def module_files() -> list[str]:
    """Every module's file relative to the package folder (``model/joint.py``)."""
    return [str(path.relative_to(ROOT)) for path in MODULES.values()]


def data_classes(base: str = "AlgorithmData") -> dict[str, str]:
    """Classes derived directly from ``base`` -> their file relative to the package folder:
    the algorithms' workspaces."""
    out = {}
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(b, ast.Name) and b.id == base for b in node.bases):
                out[node.name] = str(path.relative_to(ROOT))
    return out


if __name__ == "__main__":
    print("Package-level import graph:\n```text\n" + package_graph() + "\n```\n")
    print("Modules:\n" + "\n".join(module_files()) + "\n")
    print("Data classes:\n" + "\n".join(f"{k}: {v}" for k, v in data_classes().items()))
