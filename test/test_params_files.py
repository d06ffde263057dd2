"""The parameter files of the bring-ups (config/sim.yaml, config/hardware.yaml) reach their
nodes in any namespace (keys ``/**/<node>``, as rcl matches them for ``--params-file``), and
the model loader's ``publish_robot_description``: false in config/hardware.yaml, where it
creates no robot_description publisher at all. In-process nodes, parameters as rcl parses
them from the command line arguments of their context."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from rclpy.node import Node  # noqa: E402

from charmie_dynamics.ros.model_loader_node import ModelLoaderNode  # noqa: E402
from domains import domain_id  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FILES = [ROOT / "config" / "sim.yaml", ROOT / "config" / "hardware.yaml"]


@pytest.fixture
def context_with(monkeypatch):
    """A function giving an rclpy context initialised with ``--ros-args`` + its arguments;
    every context made is shut down after the test."""
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    contexts = []

    def make(*ros_args: str) -> rclpy.context.Context:
        context = rclpy.context.Context()
        rclpy.init(args=["test", "--ros-args", *ros_args], context=context)
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        rclpy.try_shutdown(context=context)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_section_is_a_wildcard(path):
    """No section keys on a bare node name, which a namespace would miss."""
    sections = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert all(key.startswith("/**/") for key in sections), f"{path.name}: {sorted(sections)}"


@pytest.mark.ros
@pytest.mark.parametrize("namespace", ["", "robot", "robot/left"])
def test_sections_reach_namespaced_nodes(context_with, namespace):
    """Each node of config/hardware.yaml, in a namespace or none, gets its own section's values
    (model_loader and dynamics share names like overlay_file, so sections stay per node)."""
    context = context_with("--params-file", str(FILES[1]))
    expected = {"dynamics": {"stale_timeout": 0.1, "publish_tf": "not_in_urdf",
                             "acceleration_source": "estimate"},
                "model_loader": {"publish_robot_description": False}}
    for name, values in expected.items():
        node = Node(name, namespace=namespace, context=context,
                    automatically_declare_parameters_from_overrides=True)
        try:
            got = {key: node.get_parameter(key).value for key in values
                   if node.has_parameter(key)}
            assert got == values, f"{node.get_fully_qualified_name()}: {got}"
            assert not node.has_parameter("stale_policy") or name == "dynamics"
        finally:
            node.destroy_node()


def _description_publishers(node: Node) -> list[str]:
    return [pub.topic_name for pub in node.publishers if pub.topic_name.endswith("/robot_description")]


@pytest.mark.ros
def test_hardware_loader_has_no_robot_description_publisher(context_with):
    context = context_with("--params-file", str(FILES[1]))
    node = ModelLoaderNode(context=context, namespace="robot")
    try:
        assert node.get_parameter("publish_robot_description").value is False
        assert _description_publishers(node) == []
        assert node.get_publishers_info_by_topic("/robot/robot_description") == []
    finally:
        node.destroy_node()


@pytest.mark.ros
def test_sim_loader_publishes_robot_description(context_with):
    context = context_with("--params-file", str(FILES[0]))
    node = ModelLoaderNode(context=context, namespace="robot")
    try:
        assert node.get_parameter("publish_robot_description").value is True
        assert _description_publishers(node) == ["/robot/robot_description"]
        described = node.describe_parameter("publish_robot_description").description
        assert "robot_state_publisher" in described
    finally:
        node.destroy_node()
