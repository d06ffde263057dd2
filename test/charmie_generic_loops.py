"""CHARMIE with its two actuator loops written as generic cut joints (issue 13 item 5),
derived from config/charmie.yaml so that the two descriptions cannot drift apart.

Each linear actuator (``actuators:`` section, solved by the closed forms of seed 001 section
4.2) becomes two massless bodies, as the closed forms treat it: a cylinder pinned on the
joint's parent at the base anchor (revolute about x, the axis of the actuators' yz-plane;
coordinate ``ACT_angle``) and a rod sliding in it (prismatic along the cylinder's y axis;
coordinate ``ACT``, the actuator length), closed onto the driven body's end anchor by a
revolute cut joint about x. The actuator lengths are the loops' independent coordinates; d4,
theta5 and the cylinder angles are dependent. Springs and balancers stay as they are.

Run as a script it prints the variant model file (YAML).
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

CHARMIE = Path(__file__).resolve().parent.parent / "config" / "charmie.yaml"


def generic_loops_document(path: Path = CHARMIE) -> dict:
    """The variant document (module docstring), lengths in the file's unit (mm)."""
    doc = yaml.safe_load(path.read_text())
    bodies = {b["name"]: b for b in doc["bodies"]}
    cuts, guess = [], {}
    for act in doc.pop("actuators"):
        name = act["name"]
        base_body, base_point = act["base"].rsplit(".", 1)
        end_body, end_point = act["end"].rsplit(".", 1)
        base = bodies[base_body]["points"][base_point]
        doc["bodies"] += [
            {"name": f"{name}_cylinder", "parent": base_body, "origin": base,
             "joint": {"type": "R", "axis": "x", "coordinate": f"{name}_angle"},
             "virtual": True},
            {"name": f"{name}_rod", "parent": f"{name}_cylinder",
             "joint": {"type": "P", "axis": "y", "coordinate": name,
                       "limits": {"lower": act["stroke"][0], "upper": act["stroke"][1]}},
             "virtual": True}]
        cuts.append({"name": f"{name}_end", "type": "R", "predecessor": f"{name}_rod.origin",
                     "successor": f"{end_body}.{end_point}", "axis": "x"})
        guess[name] = act["default_length"]
    # the assembly guess near the built branch (act4: rod up and back; act5: rod up)
    guess.update(act4_angle=1.8, act5_angle=1.5, d4=185.0)
    doc["name"] = "charmie_generic_loops"
    doc["loops"] = {"independent": ["act4", "act5"], "guess": guess, "cuts": cuts}
    return doc


if __name__ == "__main__":
    yaml.safe_dump(generic_loops_document(), sys.stdout, sort_keys=False)
    print(f"# derived from {CHARMIE.name} by {Path(__file__).name}", file=sys.stdout)
