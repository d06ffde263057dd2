"""The package's calls into rclpy, launch, launch_ros and the message packages, checked against
one distro's API list (test/data/ros_api/DISTRO.json, made by scripts/ros_api/make_api_lists.py
from that distro's sources).

Read from the package's own code with ``ast``, without importing it:
- every import of those packages, and every dotted use of an imported name
  (``rclpy.logging.get_logger_level``, ``DiagnosticStatus.OK``);
- the keywords of every call to a function, a class or a message type known to the list;
- ``self.x`` in a class derived from a listed class (``Node``), where the class does not
  define ``x`` itself, and its keywords when called;
- attributes and call keywords on values whose type is known: made by a listed class, or
  returned by a listed function whose return is annotated in that distro's source
  (``self.create_publisher(...)`` -> ``Publisher``), kept in a local name or in ``self.x``.
Not checked: values of unknown type (a return without annotation, a parameter), and imports
inside ``try: ... except ImportError``, which is how the package detects a feature
(``charmie_dynamics/ros/common/distro.py``).
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

ROOT = Path(__file__).resolve().parent.parent
API_LISTS = ROOT / "test" / "data" / "ros_api"
DISTROS = ("humble", "jazzy", "kilted")
PYTHON_ROOTS = {"rclpy", "launch", "launch_ros"}
# the package's code that runs on the robot: the library and its launch files
PACKAGE_FILES = ("charmie_dynamics/**/*.py", "launch/*.py")


# bases that give a class no member the package could call
NO_MEMBERS = {"object", "builtins.object", "typing.Generic", "typing.Protocol"}


#: Interface packages the lists do not hold. control_msgs (ros2_control's, not a core
#: repository; the lists are made from rclpy, launch, common_interfaces, rcl_interfaces and
#: geometry2): the effort proxy's FollowJointTrajectory is built here from ros-controls/
#: control_msgs' own definitions for Kilted and Jazzy (scripts/ros_wheels/control_msgs), and
#: test/test_effort_proxy.py sends, fills and relays its goals on both; Humble's definition
#: is Jazzy's. The lists' actions (.action files) are not read by make_api_lists.py.
UNLISTED = {"control_msgs"}


def is_tracked(dotted: str) -> bool:
    root = dotted.split(".")[0]
    return root not in UNLISTED and (
        root in PYTHON_ROOTS or root.endswith(("_msgs", "_srvs", "_interfaces")))


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    call: str
    distro: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.call}: {self.why} ({self.distro})"


class Missing(Exception):
    """A name the distro's list does not have: ``where`` exists, ``name`` not in it."""


class ApiList:
    """One distro's list: modules with their names, classes with members, interfaces."""

    def __init__(self, data: dict):
        self.distro = data["distro"]
        self.modules: Dict[str, dict] = {k: v["names"] for k, v in data["modules"].items()}
        self.interfaces: Dict[str, dict] = data["interfaces"]
        for name in self.interfaces:                  # sensor_msgs, sensor_msgs.msg as modules
            package, kind, _ = name.split(".")
            self.modules.setdefault(package, {})[kind] = {"kind": "module"}
            self.modules.setdefault(f"{package}.{kind}", {})[name.split(".")[-1]] = {
                "kind": "interface", "name": name}

    @classmethod
    def load(cls, distro: str) -> "ApiList":
        return cls(json.loads((API_LISTS / f"{distro}.json").read_text(encoding="utf-8")))

    # -- resolving dotted paths -----------------------------------------------------------

    def resolve(self, dotted: str, depth: int = 0) -> Tuple[str, dict]:
        """The canonical path and record of ``dotted``; raises Missing naming what lacks it,
        returns kind 'unknown' where the list cannot tell (a class with a base outside it)."""
        if depth > 20:
            return dotted, {"kind": "unknown"}
        if dotted in self.modules:
            return dotted, {"kind": "module"}
        parts = dotted.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in self.modules:
                break
        else:
            raise Missing(f"no module {parts[0]}")
        names, rest = self.modules[module], parts[cut:]
        head = rest[0]
        if head not in names:
            if f"{module}.{head}" in self.modules:
                return self.resolve(".".join([module, *rest]), depth + 1)
            raise Missing(f"no {head} in {module}")
        record = names[head]
        path = f"{module}.{head}"
        if record["kind"] == "alias":
            target = record["target"]
            if not is_tracked(target):
                return dotted, {"kind": "unknown"}
            return self.resolve(".".join([target, *rest[1:]]), depth + 1)
        if record["kind"] == "interface":
            return self.interface_member(record["name"], rest[1:])
        for member in rest[1:]:
            if record["kind"] != "class":
                return dotted, {"kind": "unknown"}
            found = self.member(path, member)
            if found is None:
                return dotted, {"kind": "unknown"}
            path, record = found
        return path, record

    def interface_member(self, name: str, rest: List[str]) -> Tuple[str, dict]:
        record = {"kind": "interface", "name": name}
        path = name
        for member in rest:
            spec = self.interfaces[record["name"]] if record["kind"] == "interface" else None
            if spec is None:
                return path, {"kind": "unknown"}
            if "request" in spec:                       # a service type
                if member not in ("Request", "Response", "Event"):
                    raise Missing(f"no {member} in service {path}")
                record = {"kind": "service_part", "spec": spec[member.lower()]} \
                    if member != "Event" else {"kind": "unknown"}
            elif member in spec["fields"] or member in spec["constants"]:
                record = {"kind": "value"}
            else:
                raise Missing(f"no field or constant {member} in {path}")
            path = f"{path}.{member}"
        return path, record

    def class_record(self, path: str) -> Optional[dict]:
        try:
            _, record = self.resolve(path)
        except Missing:
            return None
        return record if record["kind"] == "class" else None

    def member(self, class_path: str, name: str) -> Optional[Tuple[str, dict]]:
        """``name`` in the class or its bases (first found, in order); None where a base is
        outside the list (it could come from there); raises Missing where every base is known."""
        seen: Set[str] = set()
        unknown_base = False
        queue = [class_path]
        while queue:
            current = queue.pop(0)
            if current in seen:
                continue
            seen.add(current)
            record = self.class_record(current)
            if record is None:
                unknown_base = True
                continue
            if name in record["members"]:
                return f"{current}.{name}", record["members"][name]
            for base in record["bases"]:
                if base in NO_MEMBERS:
                    continue
                if not is_tracked(base) or self._missing(base):
                    unknown_base = True
                else:
                    queue.append(self.resolve(base)[0])
        if unknown_base:
            return None
        raise Missing(f"no {name} in {class_path}")

    def _missing(self, dotted: str) -> bool:
        try:
            return self.resolve(dotted)[1]["kind"] == "unknown"
        except Missing:
            return True

    def keywords(self, path: str, record: dict) -> Optional[Tuple[Set[str], str]]:
        """The keywords a call of ``path`` takes and the name to show; None: any (or unknown)."""
        if record["kind"] in ("function", "method"):
            if record["varkw"]:
                return None
            return set(record["params"]) | set(record["kwonly"]), path
        if record["kind"] == "class":
            return self._constructor_keywords(path, depth=0)
        if record["kind"] == "interface":
            return set(self.interfaces[record["name"]]["fields"]), path
        if record["kind"] == "service_part":
            return set(record["spec"]["fields"]), path
        return None


    def _constructor_keywords(self, path: str, depth: int) -> Optional[Tuple[Set[str], str]]:
        """A class's ``__init__`` keywords; where it takes ``**kwargs``, those of its bases'
        constructors too (launch's actions hand them on: Node -> ExecuteProcess -> Action)."""
        try:
            found = self.member(path, "__init__")
        except Missing:
            return set(), f"{path}.__init__"
        if found is None or depth > 10:
            return None
        init_path, init = found
        names = set(init["params"]) | set(init["kwonly"])
        if not init["varkw"]:
            return names, init_path
        owner = init_path.rpartition(".")[0]
        bases = self.class_record(owner)["bases"]
        if not bases:
            return None
        for base in bases:
            if not is_tracked(base) or self._missing(base):
                return None
            inherited = self._constructor_keywords(self.resolve(base)[0], depth + 1)
            if inherited is None:
                return None
            names |= inherited[0]
        return names, init_path


@dataclass
class _Scope:
    locals: Dict[str, str] = field(default_factory=dict)      # name -> instance's class path


class _FileChecker(ast.NodeVisitor):
    def __init__(self, api: ApiList, path: str, source: str):
        self.api, self.path = api, path
        self.tree = ast.parse(source)
        self.findings: List[Finding] = []
        self.checked: Set[str] = set()
        self.aliases: Dict[str, str] = {}
        self.guarded: Set[int] = set()
        self.class_stack: List[Tuple[List[str], Set[str], Dict[str, str]]] = []
        self.scopes: List[_Scope] = [_Scope()]
        self._mark_guarded_imports()

    # -- bookkeeping ------------------------------------------------------------------------

    def _mark_guarded_imports(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Try) and any(
                    _catches_import_error(handler) for handler in node.handlers):
                for stmt in node.body:
                    for sub in ast.walk(stmt):
                        if isinstance(sub, (ast.Import, ast.ImportFrom)):
                            self.guarded.add(id(sub))

    def report(self, node: ast.AST, call: str, why: str) -> None:
        self.findings.append(Finding(self.path, getattr(node, "lineno", 0), call,
                                     self.api.distro, why))

    def resolve(self, node: ast.AST, dotted: str) -> Optional[Tuple[str, dict]]:
        try:
            found = self.api.resolve(dotted)
        except Missing as exc:
            self.report(node, dotted, f"{self.api.distro} has {exc}")
            return None
        self.checked.add(found[0])
        return found

    def member(self, node: ast.AST, class_path: str, name: str) -> Optional[Tuple[str, dict]]:
        try:
            found = self.api.member(class_path, name)
        except Missing as exc:
            self.report(node, f"{class_path}.{name}", f"{self.api.distro} has {exc}")
            return None
        if found:
            self.checked.add(found[0])
        return found

    # -- imports ----------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not is_tracked(alias.name) or id(node) in self.guarded:
                continue
            self.resolve(node, alias.name)
            bound = alias.asname or alias.name.split(".")[0]
            self.aliases[bound] = alias.name if alias.asname else bound

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module or not is_tracked(node.module) or id(node) in self.guarded:
            return
        for alias in node.names:
            dotted = f"{node.module}.{alias.name}"
            if self.resolve(node, dotted):
                self.aliases[alias.asname or alias.name] = dotted

    # -- classes and scopes -----------------------------------------------------------------

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = []
        for base in node.bases:
            value = self.value(base)
            if value and value[0] == "path":
                bases.append(value[1])
        own: Set[str] = set()
        for stmt in ast.walk(node):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(stmt.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in (leaf for t in targets for leaf in ast.walk(t)):
                    if isinstance(target, ast.Name):
                        own.add(target.id)
                    elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                          and target.value.id == "self"):
                        own.add(target.attr)
        for base in node.bases + node.keywords:
            self.visit(base)
        self.class_stack.append((bases, own, {}))
        for stmt in node.body:
            self.visit(stmt)
        self.class_stack.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.scopes.append(_Scope())
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.value(node.value)
        for target in node.targets:
            self.visit(target)
            if value and value[0] == "instance":
                if isinstance(target, ast.Name):
                    self.scopes[-1].locals[target.id] = value[1]
                elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                      and target.value.id == "self" and self.class_stack):
                    self.class_stack[-1][2][target.attr] = value[1]

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        """``name: Class = value``: the annotation names what ``name`` holds where it is a
        subclass of what the value's own annotation says (a node's clock: ``get_clock()``
        returns a Clock, a ROSClock on every distro), so its attributes are checked on it."""
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)
        annotation = self.value(node.annotation)
        if annotation and annotation[0] == "path" and isinstance(node.target, ast.Name) \
                and self.scopes:
            self.scopes[-1].locals[node.target.id] = annotation[1]

    # -- expressions ------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.value(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.value(node)

    def value(self, node: ast.AST):
        """('path', dotted) for a listed name, ('instance', class path) for a value of a
        listed type, ('member', path, record) for a bound method; None where unknown. Visits
        (and checks) every sub-expression once."""
        if isinstance(node, ast.Name):
            if node.id in self.aliases:
                return ("path", self.aliases[node.id])
            for scope in reversed(self.scopes):
                if node.id in scope.locals:
                    return ("instance", scope.locals[node.id])
            return None
        if isinstance(node, ast.Attribute):
            if (isinstance(node.value, ast.Name) and node.value.id == "self" and self.class_stack):
                return self._self_attribute(node)
            base = self.value(node.value)
            return self._attribute(node, base)
        if isinstance(node, ast.Call):
            func = self.value(node.func)
            for arg in node.args:
                self.visit(arg)
            for keyword in node.keywords:
                self.visit(keyword.value)
            return self._call(node, func)
        self.generic_visit(node)
        return None

    def _self_attribute(self, node: ast.Attribute):
        bases, own, typed = self.class_stack[-1]
        if node.attr in typed:
            return ("instance", typed[node.attr])
        if node.attr in own or not bases:
            return None
        for base in bases:
            found = self.member(node, base, node.attr)
            if found:
                return ("member", *found)
        return None

    def _attribute(self, node: ast.Attribute, base):
        if base is None:
            return None
        if base[0] == "path":
            dotted = f"{base[1]}.{node.attr}"
            found = self.resolve(node, dotted)
            if found is None:
                return None
            return ("path", found[0]) if found[1]["kind"] != "unknown" else None
        if base[0] == "instance":
            path, record = base[1], self._record(base[1])
            if record is None:
                return None
            if record["kind"] == "interface":
                try:
                    self.api.interface_member(record["name"], [node.attr])
                except Missing as exc:
                    self.report(node, f"{path}.{node.attr}", f"{self.api.distro} has {exc}")
                return None
            found = self.member(node, path, node.attr)
            return ("member", *found) if found else None
        return None

    def _record(self, path: str) -> Optional[dict]:
        try:
            return self.api.resolve(path)[1]
        except Missing:
            return None

    def _call(self, node: ast.Call, func):
        if func is None:
            return None
        if func[0] == "path":
            path, record = func[1], self._record(func[1])
        elif func[0] == "member":
            path, record = func[1], func[2]
        else:
            return None
        if record is None:
            return None
        accepted = self.api.keywords(path, record)
        if accepted is not None:
            names, shown = accepted
            for keyword in node.keywords:
                if keyword.arg is not None and keyword.arg not in names:
                    self.report(node, f"{shown}({keyword.arg}=)",
                                f"{self.api.distro} has no keyword {keyword.arg} in {shown}")
        if record["kind"] in ("class", "interface", "service_part"):
            return ("instance", path)
        returns = record.get("returns")
        if returns and is_tracked(returns) and self.api.class_record(returns):
            return ("instance", returns)
        return None


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
               for n in names)


def check_source(api: ApiList, path: str, source: str) -> Tuple[List[Finding], Set[str]]:
    """The findings in one file's source, and the listed paths it was checked against."""
    checker = _FileChecker(api, path, source)
    checker.visit(checker.tree)
    return sorted(set(checker.findings), key=lambda f: (f.path, f.line, f.call)), checker.checked


def package_files(root: Path = ROOT) -> Iterable[Path]:
    for pattern in PACKAGE_FILES:
        yield from sorted(root.glob(pattern))


def check_package(api: ApiList, root: Path = ROOT) -> Tuple[List[Finding], Set[str]]:
    findings: List[Finding] = []
    checked: Set[str] = set()
    for file in package_files(root):
        found, seen = check_source(api, str(file.relative_to(root)),
                                   file.read_text(encoding="utf-8"))
        findings += found
        checked |= seen
    return findings, checked
