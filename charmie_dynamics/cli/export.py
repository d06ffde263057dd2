"""``charmie-dynamics export-urdf``: the model as a URDF and a mechanism overlay (YAML).

The URDF holds the tree (links, inertias, joints named after the coordinates, mimic joints,
limits, friction); ``overlay.yaml`` what URDF cannot say (named points, actuators, springs,
balancers, gravity). ``load_model(URDF, overlay=overlay.yaml)`` gives the model back.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from ..export.urdf import overlay_from_model, urdf_from_model
from ..model import load_model
from ..errors import InputError
from .arguments import add_overwrite_argument
from .output_files import check_output, write_all

OVERLAY_HEADER = ("# Mechanism overlay of {urdf} (charmie-dynamics export-urdf): load both with\n"
                  "# load_model('{urdf}', overlay='overlay.yaml'). SI units.\n")


def _cmd_export_urdf(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    urdf = urdf_from_model(model, include_auxiliary=False)   # auxiliary bodies: the overlay's
    overlay = yaml.safe_dump(overlay_from_model(model), sort_keys=False)
    out: Path = args.out
    name = f"{model.name}.urdf"
    check_output(out)
    try:
        write_all(out, [(name, lambda path: path.write_text(urdf, encoding="utf-8")),
                        ("overlay.yaml", lambda path: path.write_text(
                            OVERLAY_HEADER.format(urdf=name) + overlay, encoding="utf-8"))],
                  args.overwrite)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write there: {exc.strerror or exc}, expected a "
                         "writable directory") from None
    print(f"wrote {out / name} and {out / 'overlay.yaml'}")
    return 0


def add_export_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export-urdf")
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    add_overwrite_argument(p)
    p.set_defaults(func=_cmd_export_urdf)
