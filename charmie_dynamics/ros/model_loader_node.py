"""The model loader node: validates the model file and publishes it, and its URDF, to
late-joining subscribers (reliable, transient local, depth 1).

A path is never taken from a message: the ``~/reload`` service (std_srvs/Trigger) re-reads
the configured ``model_file``. An invalid file at start-up ends the node with the loader's
message and exit status 1; an invalid file on reload is rejected with the message and the
last valid model stays published, and later calls work: the file is read through the
package's guard (regular files only, never a FIFO or a device; at most ``max_model_bytes``;
strict UTF-8; every parser failure a ModelError).
"""
from __future__ import annotations

import sys
from pathlib import Path

from rclpy.node import Node
from std_msgs.msg import String
from std_srvs.srv import Trigger

from ..documents import DEFAULT_MAX_BYTES
from ..export.urdf import urdf_from_model
from ..model import ModelError, read_model_file
from ..resources import bundled_model
from . import qos
from .parameters import Param, declare_parameters


class ModelLoaderNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("model_loader", **kwargs)
        self.p = declare_parameters(self, {
            "model_file": Param(str(bundled_model()),
                                "Model file (YAML, docs/model_format.md); default: the bundled CHARMIE"),
            "model_topic": Param("charmie/model", "Topic of the validated model (std_msgs/String)"),
            "frame_prefix": Param("", "Prefix of the URDF's link names, as robot_state_publisher's"),
            "max_model_bytes": Param(DEFAULT_MAX_BYTES, "Largest model file read (bytes)", True,
                                     1024, 256 * 2**20),
        })
        self.path = Path(self.p["model_file"])
        self.pub_model = self.create_publisher(String, self.p["model_topic"], qos.LATCHED)
        self.pub_description = self.create_publisher(String, "robot_description", qos.LATCHED)
        self._load()                       # ModelError ends start-up
        self.create_service(Trigger, "~/reload", self._on_reload)

    def _load(self) -> str:
        model, text = read_model_file(self.path, self.p["max_model_bytes"])
        urdf = urdf_from_model(model, frame_prefix=self.p["frame_prefix"])
        self.pub_model.publish(String(data=text))
        self.pub_description.publish(String(data=urdf))
        summary = (f"{self.path}: model {model.name!r}, {model.n_bodies} bodies, "
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
    from .run import run_node
    return run_node(ModelLoaderNode, args)


if __name__ == "__main__":
    sys.exit(main())
