"""The package's rclpy, launch, launch_ros and message calls exist on every ROS 2 distro it
names (Humble, Jazzy, Kilted): checked by reading the code (test/ros_api_gate.py) against
API lists made from each distro's sources (test/data/ros_api/, scripts/ros_api/)."""
import json
from pathlib import Path

import pytest

from ros_api_gate import (API_LISTS, DISTROS, ROOT, ApiList, check_package, check_source,
                          package_files)

RUN_PY = ROOT / "charmie_dynamics" / "ros" / "common" / "run.py"


@pytest.fixture(scope="module", params=DISTROS)
def api(request):
    return ApiList.load(request.param)


def test_every_list_names_its_sources():
    for distro in DISTROS:
        data = json.loads((API_LISTS / f"{distro}.json").read_text(encoding="utf-8"))
        assert data["distro"] == distro
        assert data["made_by"].startswith("scripts/ros_api/make_api_lists.py")
        for repo in ("rclpy", "launch", "launch_ros"):
            source = data["sources"][repo]
            assert source.get("commit") or source.get("pypi"), (distro, repo, source)


def test_the_package_calls_only_what_each_distro_has(api):
    findings, checked = check_package(api)
    assert not findings, "\n".join(map(str, findings))
    # the gate read the calls it is for (a resolver that resolved nothing would pass too)
    for used in ("rclpy.node.Node.create_publisher", "rclpy.node.Node.create_subscription",
                 "rclpy.publisher.Publisher.publish", "rclpy.logging.set_logger_level",
                 "rclpy.utilities.ok", "sensor_msgs.msg.JointState", "tf2_msgs.msg.TFMessage",
                 "diagnostic_msgs.msg.DiagnosticStatus.WARN", "std_srvs.srv.Trigger",
                 "launch.launch_description.LaunchDescription", "launch_ros.actions.node.Node",
                 "rcl_interfaces.msg.ParameterDescriptor"):
        assert used in checked, f"{api.distro}: the gate never checked {used}"


def test_the_gate_reads_every_file_of_the_package():
    files = {str(p.relative_to(ROOT)) for p in package_files()}
    assert "charmie_dynamics/ros/common/run.py" in files and "launch/hardware.launch.py" in files
    assert not any(name.startswith("test") for name in files)


@pytest.mark.parametrize("distro, old, new, missing", [
    # the calls that ended every node on Humble (and the signal path on Jazzy), put back
    ("humble", "previous = logger_level(\"rcl\")",
     "previous = rclpy.logging.get_logger_level(\"rcl\")", "get_logger_level"),
    ("humble", "rclpy.try_shutdown()\n    ignore_signals()\n    return code",
     "rclpy.try_shutdown(uninstall_handlers=False)\n    ignore_signals()\n    return code", "uninstall_handlers"),
    ("jazzy", "rclpy.try_shutdown()\n    ignore_signals()\n    return code",
     "rclpy.try_shutdown(uninstall_handlers=False)\n    ignore_signals()\n    return code", "uninstall_handlers"),
])
def test_a_call_a_distro_lacks_fails_naming_call_file_line_and_distro(distro, old, new, missing):
    source = RUN_PY.read_text(encoding="utf-8")
    assert old in source
    mutated = source.replace(old, new)
    line = mutated[:mutated.index(new)].count("\n") + 1
    findings, _ = check_source(ApiList.load(distro), "charmie_dynamics/ros/common/run.py", mutated)
    assert [f for f in findings if missing in f.call], findings
    text = str(findings[0])
    assert f"charmie_dynamics/ros/common/run.py:{line}:" in text and f"({distro})" in text
    assert missing in text
    # Kilted has both: the same source passes there
    assert not check_source(ApiList.load("kilted"), "run.py", mutated)[0]


@pytest.mark.parametrize("snippet, missing", [
    ("from rclpy.node import Nodes\n", "no Nodes in rclpy.node"),
    ("import rclpy\nrclpy.init(argz=[])\n", "no keyword argz"),
    ("from sensor_msgs.msg import JointState\nJointState(names=[])\n", "no keyword names"),
    ("from diagnostic_msgs.msg import DiagnosticStatus\nDiagnosticStatus.FINE\n",
     "no field or constant FINE"),
    ("from rclpy.node import Node\nclass N(Node):\n    def f(self):\n"
     "        self.create_publisherr(int, 't', 1)\n", "no create_publisherr"),
    ("from rclpy.node import Node\nclass N(Node):\n    def f(self):\n"
     "        self.create_timer(1.0, self.f, autostrat=True)\n", "no keyword autostrat"),
    ("from rclpy.node import Node\nclass N(Node):\n    def f(self):\n"
     "        p = self.create_publisher(int, 't', 1)\n        p.publsh(1)\n", "no publsh"),
    ("from launch_ros.actions import Node\nNode(package='p', executabel='e')\n",
     "no keyword executabel"),
    ("from std_srvs.srv import Trigger\nTrigger.Response(sucess=True)\n", "no keyword sucess"),
])
def test_the_gate_finds_each_kind_of_missing_name(api, snippet, missing):
    findings, _ = check_source(api, "snippet.py", snippet)
    assert any(missing in str(f) for f in findings), (api.distro, findings)


def test_feature_detection_is_not_a_finding(api):
    snippet = ("try:\n    from rclpy.experimental import EventsExecutor\n"
               "except ImportError:\n    EventsExecutor = None\n")
    assert not check_source(api, "snippet.py", snippet)[0]


def test_the_lists_tell_the_distros_apart():
    """The differences the package works around are in the lists themselves."""
    humble, jazzy, kilted = (ApiList.load(d) for d in DISTROS)
    assert "get_logger_level" not in humble.modules["rclpy.logging"]
    assert "get_logger_level" in jazzy.modules["rclpy.logging"]
    for api in (humble, jazzy):
        assert "uninstall_handlers" not in api.modules["rclpy.utilities"]["try_shutdown"]["kwonly"]
    kilted_try_shutdown = kilted.resolve("rclpy.try_shutdown")[1]
    assert "uninstall_handlers" in kilted_try_shutdown["kwonly"]
    assert "rclpy.experimental" in kilted.modules and "rclpy.experimental" not in humble.modules


def test_the_list_maker_is_in_the_repository():
    assert (ROOT / "scripts" / "ros_api" / "make_api_lists.py").is_file()
    assert Path(API_LISTS / "humble.json").is_file()
