#!/usr/bin/env python3
"""Make the API lists that test/test_ros_api.py checks the package's calls against.

One JSON file per ROS 2 distro (test/data/ros_api/DISTRO.json): for rclpy, launch and
launch_ros, every module with the names it defines or imports (functions with their parameter
names, classes with their bases and members), read from the Python sources with ``ast`` (no
import, so a distro that does not install here can be listed); the names of rclpy's pybind11
module (its C++ sources: ``m.def("x"``, ``register_exception<...>(m, "X"``); and for the
message packages, every message's and service's fields and constants, from the ``.msg`` and
``.srv`` files. Each file records the repositories, branches and commits it was made from.

  Humble and Jazzy, from clones of the ROS 2 repositories (git directories; a branch is read
  with ``git show``, no checkout needed):

    git clone --bare https://github.com/ros2/rclpy  DIR/rclpy     (likewise launch, launch_ros,
    common_interfaces, rcl_interfaces, geometry2)
    scripts/ros_api/make_api_lists.py --distro humble --repos DIR
    scripts/ros_api/make_api_lists.py --distro jazzy --repos DIR

  Kilted, from what CI runs: the PyPI wheels' rclpy and message files in a venv, and the
  launch sources beside the checkout (no Kilted branches were in the clones used):

    scripts/ros_api/make_api_lists.py --distro kilted --venv .venv --ros2-src ../shared/ros2-src

A repository under DIR may also be named ``ros2+NAME/repo`` (a mirror's layout).
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "test" / "data" / "ros_api"

# Python packages listed: (repository, folder of the package inside it)
PY_PACKAGES = {"rclpy": ("rclpy", "rclpy/rclpy"),
               "launch": ("launch", "launch/launch"),
               "launch_ros": ("launch_ros", "launch_ros/launch_ros")}
PYBIND_SOURCES = ("rclpy", "rclpy/src/rclpy")
PYBIND_MODULE = "rclpy._rclpy_pybind11"       # what implementation_singleton's name stands for
# interface packages listed: repository -> package folders
INTERFACES = {
    "common_interfaces": ["std_msgs", "geometry_msgs", "sensor_msgs", "nav_msgs", "diagnostic_msgs",
                          "trajectory_msgs", "visualization_msgs", "std_srvs", "shape_msgs"],
    "rcl_interfaces": ["builtin_interfaces", "rosgraph_msgs", "rcl_interfaces", "lifecycle_msgs",
                       "action_msgs"],
    "geometry2": ["tf2_msgs"],
}


@dataclass
class GitTree:
    """One branch of a git directory, read without a checkout."""
    gitdir: Path
    ref: str

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.gitdir), *args], check=True,
                              capture_output=True, text=True).stdout

    @property
    def commit(self) -> str:
        return self.git("rev-parse", f"{self.ref}^{{commit}}").strip()

    def files(self, folder: str) -> List[str]:
        out = self.git("ls-tree", "-r", "--name-only", self.ref, "--", folder)
        return [line[len(folder) + 1:] for line in out.splitlines()]

    def read(self, folder: str, name: str) -> str:
        return self.git("show", f"{self.ref}:{folder}/{name}")


@dataclass
class DirTree:
    """A folder on disk (an installed package, a source tree)."""
    root: Path

    commit = None

    def files(self, folder: str) -> List[str]:
        base = self.root / folder
        return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())

    def read(self, folder: str, name: str) -> str:
        return (self.root / folder / name).read_text(encoding="utf-8")


# --- Python modules ------------------------------------------------------------------------

def _dotted(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Subscript):            # Publisher[MsgT]: Publisher
        return _dotted(node.value)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _dotted(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None
    return None


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, imports: Dict[str, str],
              module: str, method: bool) -> dict:
    args = node.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    decorators = {_dotted(d) for d in node.decorator_list}
    kind = "function"
    if method:
        kind = "method"
        if "property" in decorators or any(d and d.endswith(".setter") for d in decorators):
            return {"kind": "property"}
        if "staticmethod" not in decorators and positional:
            positional = positional[1:]              # self or cls
    record = {"kind": kind, "params": positional, "kwonly": [a.arg for a in args.kwonlyargs],
              "varargs": args.vararg is not None, "varkw": args.kwarg is not None}
    returns = _dotted(node.returns) if node.returns is not None else None
    if returns:
        head, _, rest = returns.partition(".")
        target = imports.get(head)
        record["returns"] = (f"{target}.{rest}" if rest else target) if target \
            else f"{module}.{returns}"
    return record


def _import_table(tree: ast.Module, module: str, is_package: bool) -> Dict[str, str]:
    table: Dict[str, str] = {}
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    table[alias.asname] = alias.name
                else:
                    table[alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                if alias.name != "*":
                    table[alias.asname or alias.name] = f"{base}.{alias.name}"
    return table


def _top_statements(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """A module's or class's statements, those inside if/try blocks included."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _top_statements(node.body)
            yield from _top_statements(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_statements(node.body)
            for handler in node.handlers:
                yield from _top_statements(handler.body)
            yield from _top_statements(node.orelse)
            yield from _top_statements(node.finalbody)
        else:
            yield node


def _private(node: ast.stmt) -> bool:
    """A function or class whose name starts with one underscore (not the package's API)."""
    name = getattr(node, "name", "")
    return name.startswith("_") and not name.startswith("__")


def _targets(node: ast.stmt) -> List[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = []
    for target in targets:
        for leaf in ast.walk(target):
            if isinstance(leaf, ast.Name):
                names.append(leaf.id)
    return names


def _class(node: ast.ClassDef, imports: Dict[str, str], module: str) -> dict:
    members: Dict[str, dict] = {}
    for stmt in _top_statements(node.body):
        if _private(stmt):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name not in members or members[stmt.name]["kind"] != "property":
                members[stmt.name] = _function(stmt, imports, module, method=True)
            for sub in ast.walk(stmt):            # instance attributes: self.x = ...
                if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                    targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                    for target in targets:
                        if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                                and target.value.id == "self"):
                            members.setdefault(target.attr, {"kind": "value"})
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for name in _targets(stmt):
                members.setdefault(name, {"kind": "value"})
        elif isinstance(stmt, ast.ClassDef):
            members[stmt.name] = {"kind": "class"}
    bases = []
    for base in node.bases:
        name = _dotted(base)
        if name:
            head, _, rest = name.partition(".")
            target = imports.get(head)
            bases.append((f"{target}.{rest}" if rest else target) if target else f"{module}.{name}")
    return {"kind": "class", "bases": bases, "members": members}


def python_modules(tree, folder: str, package: str) -> Dict[str, dict]:
    modules: Dict[str, dict] = {}
    for name in tree.files(folder):
        if not name.endswith(".py"):
            continue
        parts = name[:-3].split("/")
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        module = ".".join([package, *parts])
        source = ast.parse(tree.read(folder, name))
        imports = _import_table(source, module, is_package)
        names: Dict[str, dict] = {}
        for stmt in _top_statements(source.body):
            if _private(stmt):
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names[stmt.name] = _function(stmt, imports, module, method=False)
            elif isinstance(stmt, ast.ClassDef):
                names[stmt.name] = _class(stmt, imports, module)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                for target in _targets(stmt):
                    names.setdefault(target, {"kind": "value"})
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                local = _import_table(ast.Module(body=[stmt], type_ignores=[]), module, is_package)
                for alias, target in local.items():
                    names[alias] = {"kind": "alias", "target": target}
        if module == "rclpy.impl.implementation_singleton":
            names["rclpy_implementation"] = {"kind": "alias", "target": PYBIND_MODULE}
        modules[module] = {"names": names}
    return modules


_PYBIND = re.compile(r'(?:\.def|register_exception<[^>]*>\s*\(\s*\w+\s*,'
                     r'|class_<[^;]*?>\s*\(\s*\w+\s*,'
                     r'|enum_<[^>]*>\s*\(\s*\w+\s*,)\s*\(?\s*"(\w+)"')


def pybind_names_from_cpp(tree) -> Dict[str, dict]:
    repo_folder = PYBIND_SOURCES[1]
    names = {}
    for name in tree.files(repo_folder):
        if name.endswith(".cpp"):
            for match in _PYBIND.finditer(tree.read(repo_folder, name)):
                names[match.group(1)] = {"kind": "value"}
    return names


def pybind_names_from_import(python: Path) -> Dict[str, dict]:
    out = subprocess.run([str(python), "-c", "from rclpy.impl.implementation_singleton import "
                          "rclpy_implementation as m; print('\\n'.join(dir(m)))"],
                         check=True, capture_output=True, text=True).stdout
    return {name: {"kind": "value"} for name in out.split() if not name.startswith("__")}


# --- interfaces ----------------------------------------------------------------------------

_FIELD = re.compile(r"^\s*([A-Za-z_][\w/]*(?:\[[^\]]*\])?(?:<=\d+)?)\s+([A-Za-z_]\w*)\s*(=)?")


def interface_fields(text: str) -> dict:
    fields, constants = [], []
    for line in text.splitlines():
        match = _FIELD.match(line.split("#", 1)[0])
        if match:
            (constants if match.group(3) else fields).append(match.group(2))
    return {"fields": fields, "constants": constants}


def interfaces(tree, packages: List[str], folder_of) -> Dict[str, dict]:
    found = {}
    for package in packages:
        for kind in ("msg", "srv"):
            folder = folder_of(package, kind)
            try:
                names = tree.files(folder)
            except (subprocess.CalledProcessError, FileNotFoundError):
                continue
            for name in names:
                if "/" in name or not name.endswith(f".{kind}"):
                    continue
                text = tree.read(folder, name)
                dotted = f"{package}.{kind}.{name[:-4]}"
                if kind == "msg":
                    found[dotted] = interface_fields(text)
                else:
                    request, response = (re.split(r"^---[ \t]*$", text, maxsplit=1, flags=re.M)
                                         + [""])[:2]
                    found[dotted] = {"request": interface_fields(request),
                                     "response": interface_fields(response)}
    return found


# --- the distros ---------------------------------------------------------------------------

def repo_dir(repos: Path, name: str) -> Path:
    for candidate in (repos / name, repos / f"{name}.git", repos / f"ros2+{name}" / "repo"):
        if candidate.exists():
            return candidate
    sys.exit(f"make_api_lists: no clone of {name} under {repos}")


def from_branches(distro: str, repos: Path) -> dict:
    sources, modules, messages = {}, {}, {}
    for package, (repo, folder) in PY_PACKAGES.items():
        tree = GitTree(repo_dir(repos, repo), distro)
        sources[repo] = {"repository": f"https://github.com/ros2/{repo}", "branch": distro,
                         "commit": tree.commit}
        modules.update(python_modules(tree, folder, package))
    rclpy_tree = GitTree(repo_dir(repos, "rclpy"), distro)
    modules[PYBIND_MODULE] = {"names": pybind_names_from_cpp(rclpy_tree)}
    for repo, packages in INTERFACES.items():
        tree = GitTree(repo_dir(repos, repo), distro)
        sources[repo] = {"repository": f"https://github.com/ros2/{repo}", "branch": distro,
                         "commit": tree.commit}
        messages.update(interfaces(tree, packages, lambda package, kind: f"{package}/{kind}"))
    return {"sources": sources, "modules": modules, "interfaces": messages}


def from_venv(venv: Path, ros2_src: Path) -> dict:
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import rclpy, os; print(os.path.dirname("
                                "os.path.dirname(rclpy.__file__)))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    rclpy_version = subprocess.run([str(python), "-m", "pip", "show", "ros-rclpy"], check=True,
                                   capture_output=True, text=True).stdout
    version = re.search(r"^Version: (\S+)", rclpy_version, re.M).group(1)
    versions = dict(line.split() for line in (ros2_src / "VERSIONS").read_text().splitlines()
                    if line)
    sources = {"rclpy": {"pypi": f"ros-rclpy {version}"}}
    modules = python_modules(DirTree(site), "rclpy", "rclpy")
    modules[PYBIND_MODULE] = {"names": pybind_names_from_import(python)}
    for package, (repo, folder) in PY_PACKAGES.items():
        if repo != "rclpy":
            sources[repo] = {"repository": f"https://github.com/ros2/{repo}",
                             "commit": versions[repo], "folder": f"{ros2_src.name}/{repo}"}
            modules.update(python_modules(DirTree(ros2_src / repo), folder, package))
    share = venv / "share"
    messages = {}
    for packages in INTERFACES.values():
        messages.update(interfaces(DirTree(share), packages,
                                   lambda package, kind: f"{package}/{kind}"))
    sources["interfaces"] = {"pypi": "ros-*-msgs wheels in the venv (share/PACKAGE/msg)"}
    return {"sources": sources, "modules": modules, "interfaces": messages}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--distro", required=True, choices=("humble", "jazzy", "kilted"))
    parser.add_argument("--repos", type=Path, help="folder of the git clones (humble, jazzy)")
    parser.add_argument("--venv", type=Path, help="the Kilted wheels' venv (kilted)")
    parser.add_argument("--ros2-src", type=Path, help="launch and launch_ros sources (kilted)")
    args = parser.parse_args(argv)
    if args.distro == "kilted":
        if not (args.venv and args.ros2_src):
            parser.error("kilted needs --venv and --ros2-src")
        listing = from_venv(args.venv.resolve(), args.ros2_src.resolve())
    else:
        if not args.repos:
            parser.error(f"{args.distro} needs --repos")
        listing = from_branches(args.distro, args.repos.resolve())
    listing = {"distro": args.distro,
               "made_by": "scripts/ros_api/make_api_lists.py " + " ".join(
                   a for a in (argv if argv is not None else sys.argv[1:])
                   if not a.startswith("/")),
               **listing}
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{args.distro}.json"
    path.write_text(json.dumps(listing, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: {len(listing['modules'])} modules, "
          f"{len(listing['interfaces'])} interfaces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
