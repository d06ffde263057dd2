"""The model loader node: validates the model file and publishes it, and its URDF, to
late-joining subscribers (reliable, transient local, depth 1).

``model_file`` is YAML or a URDF (with the mechanism overlay ``overlay_file``). For YAML, the
model topic carries the file's text and robot_description the URDF made from it; for a URDF,
robot_description carries the URDF as read and the model topic the model document of the URDF
with the overlay merged in (``model_source.model_to_publish``), which the dynamics node loads
like any model file.

A path is never taken from a message: the ``~/reload`` service (std_srvs/Trigger) re-reads
the configured ``model_file``. An invalid file at start-up ends the node with the loader's
message and exit status 1; an invalid file on reload is rejected with the message and the
last valid model stays published, and later calls work: the file is read through the
package's guard (regular files only, never a FIFO or a device; at most ``max_model_bytes``;
strict UTF-8; every parser failure a ModelError).

``publish_robot_description: false`` leaves robot_description to robot_state_publisher or
ros2_control's controller manager (Jazzy's subscribes to it): the node then has no publisher
on it.
"""
from __future__ import annotations

import sys
from pathlib import Path

from rclpy.node import Node
from std_msgs.msg import String
from std_srvs.srv import Trigger

from ..documents import DEFAULT_MAX_BYTES
from ..mechanisms.closed_chains import ClosedChain
from ..model import ModelError
from ..resources import bundled_model
from .common import qos
from .common.clock_guard import ClockGuard
from .common.joint_map import read_joint_map
from .common.model_source import model_to_publish
from .common.param_spec import Param
from .common.parameter_types import ModelLoaderParameters
from .common.parameters import declare_parameters

PARAMETERS = {
    "model_file": Param(str(bundled_model()),
                        "Model file (YAML, docs/model_format.md, or a URDF); default: the "
                        "bundled CHARMIE"),
    "overlay_file": Param("", "Mechanism overlay (YAML) of a URDF model_file; empty: none"),
    "model_topic": Param("charmie/model", "Topic of the validated model (std_msgs/String)",
                         topic=True),
    "frame_prefix": Param("", "Prefix of the link names of the URDF made from a YAML "
                          "model_file, as robot_state_publisher's"),
    "max_model_bytes": Param(DEFAULT_MAX_BYTES, "Largest model file read (bytes)", True,
                             1024, 256 * 2**20),
    "publish_robot_description": Param(True, "Publish the URDF on robot_description; set "
                                       "false beside robot_state_publisher/ros2_control, "
                                       "which own that topic"),
    "joint_map_file": Param("", "The dynamics node's joint_map_file: the URDF made from a "
                            "YAML model_file names its joints by its names: and its "
                            "links by its links:; empty: the model's names"),
}


class ModelLoaderNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("model_loader", **kwargs)
        self.clock_guard = ClockGuard(self)
        self.p = declare_parameters(self, PARAMETERS, ModelLoaderParameters)
        self.joint_map = read_joint_map((), self.p.joint_map_file, self.p.max_model_bytes)
        self.path = Path(self.p.model_file)
        self.overlay = Path(self.p.overlay_file) if self.p.overlay_file else None
        self.pub_model = self.create_publisher(String, self.p.model_topic, qos.LATCHED)
        # off: no publisher at all, so that robot_description has its owner's alone
        self.pub_description = (self.create_publisher(String, "robot_description", qos.LATCHED)
                                if self.p.publish_robot_description else None)
        self._load()                       # ModelError ends start-up
        self.create_service(Trigger, "~/reload", self._on_reload)

    def _load(self) -> str:
        loaded = model_to_publish(self.path, self.overlay, self.p.max_model_bytes,
                                  self.p.frame_prefix, self.joint_map)
        model = loaded.model
        # the loops' assembly and mobility (the dynamics node then evaluates the model at its
        # default inputs, as validate-model does)
        if model.loops is not None:
            ClosedChain.build(model)
        self.pub_model.publish(String(data=loaded.text))
        if self.pub_description is not None:
            self.pub_description.publish(String(data=loaded.description))
        source = self.path if self.overlay is None else f"{self.path} + {self.overlay}"
        summary = (f"{source}: model {model.name!r}, {model.n_bodies} bodies, "
                   f"{model.n_coordinates} coordinates, {model.total_mass:.2f} kg")
        self.get_logger().info(f"published {summary}")
        return summary

    def _on_reload(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        try:
            response.message = self._load()
            response.success = True
        except ModelError as exc:
            response.success = False
            response.message = f"rejected, the last valid model stays published: {exc}"
            self.get_logger().error(response.message)
        return response


def main(args=None) -> int:
    from .common.run import run_node
    return run_node(ModelLoaderNode, args)


if __name__ == "__main__":
    sys.exit(main())
