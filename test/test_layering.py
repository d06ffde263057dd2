"""Imports point only downward (issue 12 item 3): every module's imports, read with ast
(function-level imports included), against the layers

    base (jit, layout, linalg, flat, documents, resources, errors)
      <- model <- kinematics <- mechanisms <- dynamics <- simulation, evaluators
      <- export, trajectories, the package's own __init__ (the core's public face)
      <- identification, datasets, feedforward_network <- studies, envs <- ros <- view <- cli

A module may import its own layer and the layers below it (the graph and the layers:
test/import_graph.py; docs/architecture.md shows them). ros sits below view and cli
because both hand over to it (the viewer's live feed, ``charmie-dynamics bringup``) and it
needs neither. rclpy and the ROS message packages are imported only under ros/, and there
only by the modules that talk to ROS (the pure helpers of the nodes stay importable
without it). No two modules import each other, directly or through others.
"""
from __future__ import annotations

import pytest

from import_graph import GRAPH, MODULES, PACKAGE, ROOT, imports_of, layer, package_graph

#: Modules under ros/ that need no ROS: the nodes' pure pieces (each has unit tests that run
#: without rclpy).
ROS_FREE = {f"{PACKAGE}.ros.{name}" for name in (
    "common.inputs", "common.model_updates", "common.odometry", "dynamics_parts.reference",
    "dynamics_parts.stale_policy", "common.stamps", "common.outputs", "dynamics_parts.node_status",
    "common.model_source", "dynamics_parts.dynamics_parameters", "common.param_spec",
    "common.joint_map", "tools.recorded_inputs", "tools.robot_inputs", "common.log_throttle",
    "dynamics_parts.learned_source")}


def _is_ros(top: str) -> bool:
    """rclpy and the ROS interface packages (messages, services), by their top-level name."""
    return top in ("rclpy", "rosidl_runtime_py", "tf2_ros", "launch_ros") or \
        top.endswith(("_msgs", "_srvs", "_interfaces"))


def _where(name: str, line: int) -> str:
    return f"{MODULES[name].relative_to(ROOT.parent)}:{line}"


def test_every_module_imports_only_its_layer_and_below():
    upward = sorted({f"{_where(name, line)}: {name} (layer {layer(name)}) imports {target} "
              f"(layer {layer(target)})"
              for name, imports in GRAPH.items() for target, line in imports
              if target.split(".")[0] == PACKAGE and layer(target) > layer(name)})
    assert not upward, "imports pointing upward:\n" + "\n".join(upward) + \
        "\n\npackage graph:\n" + package_graph()


def test_rclpy_only_under_ros_and_only_where_needed():
    direct = {name for name, imports in GRAPH.items()
              if any(_is_ros(target.split(".")[0]) for target, _ in imports)}
    outside = sorted(m for m in direct if not m.startswith(f"{PACKAGE}.ros."))
    assert not outside, f"modules outside ros/ importing rclpy or ROS messages: {outside}"
    assert ROS_FREE <= set(MODULES), f"listed but missing: {sorted(ROS_FREE - set(MODULES))}"
    for name in sorted(ROS_FREE | {f"{PACKAGE}.ros"}):
        # everything it imports of the package, transitively
        seen, todo = set(), [name]
        while todo:
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            todo += [t for t, _ in GRAPH[module] if t in MODULES]
        assert not seen & direct, f"{name} reaches ROS through {sorted(seen & direct)}"


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module, or a module importing
    itself (Tarjan's algorithm, iterative)."""
    edges = {n: sorted({t for t, _ in imports if t in MODULES}) for n, imports in GRAPH.items()}
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            child = next(it, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        component.append(m)
                        if m == node:
                            break
                    if len(component) > 1 or node in edges[node]:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


def test_no_import_cycle_between_modules():
    cycles = _cycles()
    assert not cycles, "modules importing each other:\n" + "\n".join(
        " <-> ".join(c) for c in cycles) + "\n\npackage graph:\n" + package_graph()


@pytest.mark.parametrize("source, found", [
    ("from ..cli.main import main\n", True),
    ("def f():\n    from ..cli import main\n", True),
    ("import charmie_dynamics.cli.main\n", True),
    ("from ..model import Model\n", False),
])
def test_the_check_sees_imports_in_every_form(source, found, tmp_path):
    """The parser finds module-level, function-level, relative and absolute imports."""
    path = tmp_path / "probe.py"
    path.write_text(source)
    targets = [t for t, _ in imports_of(f"{PACKAGE}.kinematics.probe", path)]
    assert any(layer(t) > layer(f"{PACKAGE}.kinematics.probe") for t in targets) == found


def test_a_cycle_is_found(monkeypatch):
    a, b = f"{PACKAGE}.cli.main", f"{PACKAGE}.cli.arguments"
    monkeypatch.setitem(GRAPH, b, GRAPH[b] + [(a, 1)])
    assert any({a, b} <= set(c) for c in _cycles())
