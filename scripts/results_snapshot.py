"""Every public algorithm's results on a fixed set of robots, saved, and two saves compared
bit for bit: the guard of a refactoring that must not move the arithmetic.

    python scripts/results_snapshot.py save before.npz        # on the commit before
    python scripts/results_snapshot.py save after.npz         # on the commit after
    python scripts/results_snapshot.py compare before.npz after.npz

``compare`` prints each array that differs (its largest difference) or is missing on one
side, and exits 1 if any does; arrays only in the newer save (a new algorithm) are listed,
not failed. Robots: CHARMIE, PUMA, the Stanford arm, the five-bar, the IRSBot-2, the scraping
machine, three example-robot-data URDFs (Talos on a free-flyer, G1, UR5) where
example-robot-data is installed, and a small arm with a helical joint and a torsion spring.
States: seeded random, within the joint limits.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import logging
import sys
from pathlib import Path
from typing import Iterator

import numpy as np

from charmie_dynamics import forward_kinematics, load_model, resolve_state
from charmie_dynamics.dynamics import closed_chain, forward_dynamics, inverse_dynamics
from charmie_dynamics.dynamics.mass_matrix import MassMatrixError, bias_forces, mass_matrix
from charmie_dynamics.evaluators.loop_evaluator import evaluator_for
from charmie_dynamics.identification.base import random_inputs
from charmie_dynamics.identification.regressor import regressor
from charmie_dynamics.kinematics import body_motion
from charmie_dynamics.mechanisms.auxiliary import auxiliary_segments
from charmie_dynamics.model import JointType, Model, model_from_dict
from charmie_dynamics.resources import bundled_model
from charmie_dynamics.simulation.integrate import mechanical_energy, simulate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "config" / "examples"
N_STATES = 8
ERD_URDFS = {"talos_floating": ("talos_data/robots/talos_reduced.urdf", True),
             "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", False),
             "ur5": ("ur_description/urdf/ur5_robot.urdf", False)}


def erd_models() -> Iterator[tuple[str, Model]]:
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        return
    paths = [Path(f.locate()) for f in files if str(f).endswith(".urdf")]
    logging.getLogger("charmie_dynamics").setLevel(logging.ERROR)   # their inertia warnings
    for name, (tail, floating) in ERD_URDFS.items():
        path = next((p for p in paths if str(p).endswith(tail)), None)
        if path is not None:
            yield name, load_model(path, floating_base=floating)


def helical_torsion_arm() -> Model:
    """A small arm with a helical joint and a torsion spring (what the other robots lack)."""
    inertia = {"ixx": 0.02, "iyy": 0.03, "izz": 0.01}
    body = lambda name, parent, origin, joint, mass: {  # noqa: E731
        "name": name, "parent": parent, "origin": origin, "joint": joint, "mass": mass,
        "com": [0.05, 0.01, 0.02], "inertia": inertia}
    return model_from_dict({
        "format": "charmie_dynamics/model/1", "name": "helical_torsion_arm",
        "bodies": [body("l1", "world", [0, 0, 0.1], {"type": "R", "axis": "z",
                                                     "coordinate": "q1"}, 2.0),
                   body("l2", "l1", [0.05, 0, 0.3], {"type": "H", "axis": "y", "pitch": 0.05,
                                                     "coordinate": "q2"}, 1.5),
                   body("l3", "l2", [0.4, 0.02, 0], {"type": "R", "axis": "y",
                                                     "coordinate": "q3"}, 1.0)],
        "torsion_springs": [{"name": "t23", "between": ["l2", "l3"], "axis": [0, 1, 0],
                             "start_reference": [1, 0, 0], "end_reference": [1, 0, 0],
                             "stiffness": 3.0, "free_angle": 0.2, "preload": 0.5}],
    }, "helical_torsion_arm")


def states(model: Model, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """(q, qd, qdd) of N_STATES samples: coordinates within their limits (+-pi where none;
    a coupled joint's sample drawn again for each of its joints), a free-flyer at a normal
    position with a random unit quaternion."""
    q = np.zeros((N_STATES, model.nq))
    lower, upper = model.compiled.coordinate_limits
    for i, body in enumerate(model.bodies):
        c, iq = int(model.coordinate_index[i]), int(model.configuration_index[i])
        if body.joint_type == JointType.FLOATING:
            q[:, iq:iq + 3] = rng.normal(size=(N_STATES, 3))
            quaternion = rng.normal(size=(N_STATES, 4))
            q[:, iq + 3:iq + 7] = quaternion / np.linalg.norm(quaternion, axis=1, keepdims=True)
        elif c >= 0:
            q[:, iq] = rng.uniform(max(lower[c], -np.pi), min(upper[c], np.pi), N_STATES)
    n = model.n_coordinates
    return q, rng.normal(size=(N_STATES, n)), rng.normal(size=(N_STATES, n))


def fields(prefix: str, result) -> dict[str, np.ndarray]:
    """The array fields of a result dataclass, under ``prefix/field``."""
    out = {}
    for name in getattr(result, "__dataclass_fields__", {}):
        value = getattr(result, name)
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiub":
            out[f"{prefix}/{name}"] = value
    return out


def tree_results(name: str, model: Model, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The open tree's algorithms (a loop model's tree with its cut joints open)."""
    q, qd, qdd = states(model, rng)
    frames = forward_kinematics(model, q)
    out = fields(f"{name}/forward_kinematics", frames)
    out |= fields(f"{name}/body_motion", body_motion(model, frames, qd, qdd))
    H = mass_matrix(model, q)
    b = bias_forces(model, q, qd)
    tau = np.einsum("sij,sj->si", H, qdd) + b
    out[f"{name}/mass_matrix"], out[f"{name}/bias_forces"] = H, b
    out |= fields(f"{name}/mechanical_energy", mechanical_energy(model, q, qd))
    try:
        for method in ("aba", "cholesky"):
            out[f"{name}/forward_dynamics_{method}"] = forward_dynamics(model, q, qd, tau,
                                                                        method=method)
        run = simulate(model, q[:2], np.zeros_like(qd[:2]), None, 0.02, 1e-3, "rk4",
                       dynamics="aba")
    except MassMatrixError:             # a loop model's tree: massless links of its loops
        return out
    return out | fields(f"{name}/simulate", run)


def input_results(name: str, model: Model, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """What runs on a tree's inputs (CHARMIE's actuator lengths): the state's closed forms,
    inverse dynamics with springs and balancers, the auxiliary bodies, the regressor and the
    node's evaluator, one state at a time."""
    x, xd, xdd = random_inputs(model, N_STATES, rng)
    state = resolve_state(model, x, xd, xdd)
    out = fields(f"{name}/resolve_state", state)
    out |= fields(f"{name}/inverse_dynamics", inverse_dynamics(model, state))
    frames = forward_kinematics(model, state.q)
    for k, segment in enumerate(auxiliary_segments(model, frames)):
        out |= fields(f"{name}/auxiliary_segments/{k}", segment)
    out[f"{name}/regressor"] = regressor(model, state)
    evaluate = evaluator_for(model)
    for s in range(N_STATES):
        result = evaluate(x[s], xd[s], xdd[s])
        out[f"{name}/evaluator/{s}/efforts"] = result.efforts.copy()
        out[f"{name}/evaluator/{s}/translations"] = result.translations.copy()
        out[f"{name}/evaluator/{s}/quaternions"] = result.quaternions.copy()
    return out


def chain_results(name: str, model: Model, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A loop model's embedded dynamics (closed_chain.py) and the node's loop evaluator, at
    small steps from the assembled configuration (each call continues from the last)."""
    evaluate = evaluator_for(model)
    chain = evaluate.chain
    start = chain.assembled[chain.independent]
    ni = len(start)
    out = {}
    for s in range(N_STATES):
        x = start + 0.02 * (s + 1) * rng.uniform(-1, 1, ni)
        xd, xdd = rng.normal(size=ni), rng.normal(size=ni)
        loads = closed_chain.inverse_dynamics(chain, x, xd, xdd)
        out |= {k: v for k, v in fields(f"{name}/closed_chain_inverse/{s}", loads).items()}
        out[f"{name}/closed_chain_forward/{s}"] = np.concatenate(
            closed_chain.forward_dynamics(chain, x, xd, loads.effort))
        result = evaluate(x, xd, xdd)
        out[f"{name}/loop_evaluator/{s}/efforts"] = result.efforts.copy()
        out[f"{name}/loop_evaluator/{s}/multipliers"] = evaluate.multipliers.copy()
    return out


def snapshot() -> dict[str, np.ndarray]:
    """Every robot's results (module docstring), each robot seeded by its position."""
    examples = {name: load_model(EXAMPLES / f"{name}.yaml")
                for name in ("puma", "stanford_arm", "five_bar", "irsbot2", "scraping_machine")}
    robots = {"charmie": load_model(bundled_model()), **examples, **dict(erd_models()),
              "helical_torsion_arm": helical_torsion_arm()}
    out = {}
    for seed, (name, model) in enumerate(robots.items()):
        rng = np.random.default_rng(seed)
        out |= tree_results(name, model, rng)
        if model.loops is not None:
            out |= chain_results(name, model, rng)
        elif model.nq == model.n_coordinates:       # inputs: no free-flyer's
            out |= input_results(name, model, rng)
    return out


def save(path: Path) -> int:
    results = snapshot()
    np.savez_compressed(path, **results)
    print(f"{path}: {len(results)} arrays")
    return 0


def load_snapshot(path: Path) -> "np.lib.npyio.NpzFile":
    """A file ``save`` wrote, or SystemExit with one line saying why not."""
    try:
        snapshot = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"results_snapshot: {path}: cannot read it ({exc}), expected a file "
                         "written by `results_snapshot.py save`") from None
    if not hasattr(snapshot, "files") or not snapshot.files:
        raise SystemExit(f"results_snapshot: {path}: no arrays in it, expected a file written "
                         "by `results_snapshot.py save`")
    return snapshot


def compare(before_path: Path, after_path: Path) -> int:
    before, after = load_snapshot(before_path), load_snapshot(after_path)
    differ = []
    for key in sorted(before.files):
        if key not in after.files:
            differ.append(f"{key}: missing in {after_path}")
            continue
        a, b = before[key], after[key]
        if a.shape != b.shape or a.dtype != b.dtype:
            differ.append(f"{key}: {a.shape} {a.dtype} -> {b.shape} {b.dtype}")
        elif a.tobytes() != b.tobytes():
            difference = np.abs(a.astype(float) - b.astype(float)) if a.dtype.kind in "fiub" \
                else np.array([np.nan])
            differ.append(f"{key}: differs, largest {np.max(difference):.3g}")
    new = sorted(set(after.files) - set(before.files))
    for line in differ:
        print("DIFFERS", line)
    for key in new:
        print("new", key)
    same = len(before.files) - len(differ)
    print(f"{same} of {len(before.files)} arrays bit-identical; {len(differ)} differ; "
          f"{len(new)} new")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("save").add_argument("out", type=Path)
    cmp = sub.add_parser("compare")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "save":
        return save(args.out)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
