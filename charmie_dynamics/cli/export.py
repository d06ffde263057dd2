"""``charmie-dynamics export-urdf``: the model as a URDF, a mechanism overlay (YAML) and an
SRDF of its passive joints.

The URDF holds the tree (links, inertias, joints named after the coordinates, mimic joints,
limits, friction); ``overlay.yaml`` what URDF cannot say (named points, actuators, springs,
balancers, gravity). ``load_model(URDF, overlay=overlay.yaml)`` gives the model back.
``--joint-map`` names the joints and links as the dynamics node's ``joint_map_file`` does
(its ``names`` and ``links``). ``<name>.srdf`` lists as MoveIt ``<passive_joint>`` the joints
the dynamics node solves (indirectly actuated, loops' dependent): MoveIt plans none of them
and reads their values from the node's solved joint states.
"""
from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from ..errors import InputError
from ..export.urdf import overlay_from_model, urdf_from_model
from ..model import load_model
from ..model.model import Model
from ..ros.common.joint_map import JointMap, JointMapError, read_joint_map
from .arguments import add_overwrite_argument
from .output_files import check_output, write_all

OVERLAY_HEADER = ("# Mechanism overlay of {urdf} (charmie-dynamics export-urdf): load both with\n"
                  "# load_model('{urdf}', overlay='overlay.yaml'). SI units.\n")


def srdf_passive_joints(model: Model, joint_map: JointMap) -> str:
    """An SRDF holding the ``<passive_joint>`` of every coordinate the dynamics node solves
    (not an input: driven by an actuator, or a loop's dependent one), hardware-named."""
    measured = model.loops.independent if model.loops is not None else model.input_names
    solved = [c for c in model.coordinate_names if c not in measured]
    robot = ET.Element("robot", name=model.name)
    robot.append(ET.Comment(" the joints charmie_dynamics solves: their values come on "
                            "joint_states from the dynamics node (publish_solved_joint_states) "))
    for name in joint_map.to_hardware(solved):
        ET.SubElement(robot, "passive_joint", name=name)
    ET.indent(robot, space="  ")
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


def _cmd_export_urdf(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    joint_map = JointMap()
    if args.joint_map is not None:
        try:
            joint_map = read_joint_map((), str(args.joint_map))
            joint_map.check_model(model, model.source)
        except JointMapError as exc:
            raise InputError(f"--joint-map: {exc}") from None
    # auxiliary bodies: the overlay's
    urdf = urdf_from_model(model, include_auxiliary=False, names=joint_map.hardware,
                           links=joint_map.links)
    overlay = yaml.safe_dump(overlay_from_model(model, joint_map.hardware, joint_map.links),
                             sort_keys=False)
    srdf = srdf_passive_joints(model, joint_map)
    out: Path = args.out
    name = f"{model.name}.urdf"
    check_output(out)
    try:
        write_all(out, [(name, lambda path: path.write_text(urdf, encoding="utf-8")),
                        ("overlay.yaml", lambda path: path.write_text(
                            OVERLAY_HEADER.format(urdf=name) + overlay, encoding="utf-8")),
                        (f"{model.name}.srdf",
                         lambda path: path.write_text(srdf, encoding="utf-8"))],
                  args.overwrite)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write there: {exc.strerror or exc}, expected a "
                         "writable directory") from None
    print(f"wrote {out / name}, {out / 'overlay.yaml'} and {out / f'{model.name}.srdf'}")
    return 0


def add_export_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export-urdf")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--joint-map", type=Path, default=None,
                   help="the dynamics node's joint_map_file: joints named by its names:, links "
                        "by its links:")
    add_overwrite_argument(p)
    p.set_defaults(func=_cmd_export_urdf)
