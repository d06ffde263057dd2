"""The torsion spring (mechanisms/forces.py), checked by means independent of its kernel:
virtual work against central differences of its potential energy, the joint-space spring
k (q - q0) + tau0 across one revolute joint, energy kept by a free RK4 simulation, the same
results with numba off; and the loader's section (errors name file, field and range)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from charmie_dynamics import forward_kinematics, resolve_state
from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.export.urdf import overlay_from_model, urdf_from_model
from charmie_dynamics.identification.model_file import updated_model_text
from charmie_dynamics.identification.regressor import (input_efforts, model_parameters,
                                                       parameter_layout, regressor, with_parameters)
from charmie_dynamics.mechanisms.forces import law_arguments, passive_forces
from charmie_dynamics.model import ModelError, load_model, model_from_dict, model_from_text
from charmie_dynamics.simulation import mechanical_energy, simulate
from conftest import CHARMIE

ROOT = Path(__file__).resolve().parent.parent
K, FREE, PRELOAD = 3.0, 0.2, 0.5          # N m/rad, rad, N m


def arm(torsion=None, units="rad"):
    """A 3-link arm: q1 about z, then q2 and q3 about parallel y axes; ``torsion``: the
    torsion_springs section."""
    return model_from_dict(arm_data(torsion, units), "arm.yaml")


def arm_data(torsion=None, units="rad"):
    """The model document of :func:`arm`."""
    inertia = {"ixx": 0.02, "iyy": 0.03, "izz": 0.01}
    data = {
        "format": "charmie_dynamics/model/1", "name": "torsion_arm",
        "units": {"length": "m", "angle": units},
        "bodies": [
            {"name": "l1", "parent": "world", "origin": [0, 0, 0.1],
             "joint": {"type": "R", "axis": "z", "coordinate": "q1"},
             "mass": 2.0, "com": [0.01, 0.02, 0.1], "inertia": inertia},
            {"name": "l2", "parent": "l1", "origin": [0.05, 0, 0.3],
             "joint": {"type": "R", "axis": "y", "coordinate": "q2"},
             "mass": 1.5, "com": [0.2, 0.01, 0.0], "inertia": inertia},
            {"name": "l3", "parent": "l2", "origin": [0.4, 0.02, 0],
             "joint": {"type": "R", "axis": "y", "coordinate": "q3"},
             "mass": 1.0, "com": [0.15, 0, 0.02], "inertia": inertia},
        ],
    }
    if torsion is not None:
        data["torsion_springs"] = torsion
    return data


def spring(**fields):
    out = {"name": "wrist_torsion", "between": ["l1", "l2"], "axis": [0, 1, 0],
           "start_reference": [1, 0, 0], "end_reference": [1, 0, 0], "stiffness": K,
           "free_angle": FREE, "preload": PRELOAD}
    return out | fields


def efforts(model, q):
    zero = np.zeros_like(q)
    return inverse_dynamics(model, resolve_state(model, q, zero, zero)).coordinate_effort


def potential(model, q):
    """The torsion springs' energy from the public energy (mechanisms/forces.law_arguments)."""
    zero = np.zeros(q.shape[:-1] + (model.n_coordinates,))
    return mechanical_energy(model, q, zero).spring


STATES = np.array([[0.3, -0.7, 1.1], [-1.2, 0.4, -0.5], [2.0, 1.3, 1.4], [0.0, 0.0, 0.0]])


def test_torsion_across_one_joint_is_the_joint_space_spring():
    """Across q2 alone, theta = q2: the efforts gain k (q2 - q0) + tau0 on q2 only (the
    joint holds the spring's torque)."""
    bare, sprung = arm(), arm([spring()])
    diff = efforts(sprung, STATES) - efforts(bare, STATES)
    expected = np.zeros_like(diff)
    expected[:, 1] = K * (STATES[:, 1] - FREE) + PRELOAD
    np.testing.assert_allclose(diff, expected, rtol=0, atol=1e-12)
    fk = forward_kinematics(sprung, STATES)
    np.testing.assert_allclose(law_arguments(sprung, fk)[:, 0], STATES[:, 1], atol=1e-14)
    forces = passive_forces(sprung, fk)
    assert forces.spring_names == ("wrist_torsion",)
    np.testing.assert_allclose(forces.spring_tension[:, 0], expected[:, 1], atol=1e-12)


def test_virtual_work_matches_the_energy_gradient():
    """Across q2 and q3 (a chain of parallel joints), with a rotated reference: the
    spring's generalized force is -dV/dq (V its energy, by central differences), so the
    efforts that hold the arm (inverse dynamics with it minus without) gain dV/dq."""
    c, s = math.cos(0.4), math.sin(0.4)
    section = [spring(between=["l1", "l3"], start_reference=[c, 0, s], end_reference=[1, 0, 0]),
               spring(between=["l2", "l3"], name="elbow_torsion", preload=-0.3)]
    bare, sprung = arm(), arm(section)
    diff = efforts(sprung, STATES) - efforts(bare, STATES)
    h = 1e-6
    gradient = np.empty_like(STATES)
    for k, step in enumerate(h * np.eye(3)):
        gradient[:, k] = (potential(sprung, STATES + step)
                          - potential(sprung, STATES - step)) / (2 * h)
    error = np.abs(diff - gradient).max()
    assert error < 1e-8, error
    assert np.abs(gradient).max() > 1.0          # the springs do load the joints


@pytest.mark.parametrize("dynamics", ["cholesky", "aba"])
def test_energy_is_kept_by_a_free_rk4_simulation(dynamics):
    """2 s at 1 ms: the drift is about 6e-9 J of a 4.8 J swing of the spring's energy."""
    model = arm([spring(between=["l1", "l3"], preload=0.0, stiffness=8.0)])
    q0, qd0 = np.array([0.2, 0.5, -0.9]), np.array([0.5, -1.0, 2.0])
    run = simulate(model, q0, qd0, None, 2.0, 1e-3, "rk4", limits=False, dynamics=dynamics)
    e = mechanical_energy(model, run.q, run.qd)
    total = e.kinetic + e.gravitational + e.spring
    drift = np.abs(total - total[0]).max()
    assert np.ptp(e.spring) > 1.0                # the spring stores and gives back energy
    assert drift < 1e-6 * np.ptp(e.spring), drift


SCRIPT = """
import json, sys
sys.path.insert(0, {test!r})
import numpy as np
from charmie_dynamics import jit
from test_torsion_spring import STATES, arm, efforts, potential, spring
model = arm([spring(between=["l1", "l3"])])
print(json.dumps({{"jit": jit.ENABLED, "efforts": efforts(model, STATES).tolist(),
                  "energy": potential(model, STATES).tolist()}}))
"""


@pytest.mark.parametrize("jit", ["1", "0"])
def test_numba_off_gives_the_same_results(jit):
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(test=str(ROOT / "test"))],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, "CHARMIE_DYNAMICS_JIT": jit})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["jit"] is (jit == "1")
    model = arm([spring(between=["l1", "l3"])])
    np.testing.assert_allclose(out["efforts"], efforts(model, STATES), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(out["energy"], potential(model, STATES), rtol=1e-13, atol=1e-13)


def test_units_deg_scale_the_stiffness_and_free_angle():
    law = arm([spring(stiffness=2.0, free_angle=90.0)], units="deg").torsion_springs[0].params
    assert law.stiffness == pytest.approx(2.0 * 180.0 / math.pi)
    assert law.free_length == pytest.approx(math.pi / 2)


@pytest.mark.parametrize("fields, message", [
    ({"between": ["l1", "nowhere"]}, "torsion_springs[0] (wrist_torsion).between[1]: got "
                                     "'nowhere', expected a body name"),
    ({"between": ["l2", "l2"]}, "between: got ['l2', 'l2'], expected two different bodies"),
    ({"between": "l1"}, "between: got 'l1', expected [START_BODY, END_BODY]"),
    ({"axis": [0, 0, 0]}, "axis: got [0, 0, 0] of length 0, expected a nonzero vector"),
    ({"start_reference": [1, 1, 0]}, "start_reference: got [1, 1, 0], at cos 0.707 to the axis, "
                                     "expected a direction perpendicular to the axis"),
    ({"stiffness": -1.0}, "stiffness: got -1.0, expected a number >= 0"),
    ({"stiffness": 1e12}, "stiffness: got 1000000000000.0, expected |stiffness| <= 1e+09 N m/rad"),
    ({"preload": 1e9}, "preload: got 1000000000.0, expected |preload| <= 1e+07 N m"),
    ({"free_angle": "x"}, "free_angle: got 'x', expected a number"),
    ({"twist": 1}, "twist"),
    # the end body's reference along the axis (in its own frame): the angle would be rounding
    ({"end_reference": [0, 1, 0]}, "end_reference: got [0, 1, 0], at cos 1 to the axis (in "
                                   "l2's frame: [0.0, 1.0, 0.0]), expected a direction "
                                   "perpendicular to it"),
    # the end body turns about y, not about the spring's x: its angle is not the joints'
    ({"axis": [1, 0, 0], "start_reference": [0, 1, 0], "end_reference": [0, 1, 0]},
     "between: the joint of l2 (revolute, axis [0.0, 1.0, 0.0] in the world at zero) lies "
     "between the two bodies, expected only revolute joints about axes parallel to the "
     "spring's ([1.0, 0.0, 0.0])"),
    # across the z joint and the y joint: two axes, no one angle
    ({"between": ["world", "l2"]}, "between[0]: got 'world', expected a body name"),
    ({"between": ["l1", "l3"], "axis": [0, 1, 0]}, None),
])
def test_loader_errors_name_file_field_and_range(fields, message):
    if message is None:                 # across two parallel joints: accepted
        assert arm([spring(**fields)]).torsion_springs[0].end == 2
        return
    with pytest.raises(ModelError) as info:
        arm([spring(**fields)])
    text = str(info.value)
    assert text.startswith("arm.yaml: ") and message in text, text


def test_a_spring_across_a_prismatic_joint_is_refused():
    data = arm_data([spring(between=["l1", "l3"])])
    data["bodies"][2]["joint"] = {"type": "P", "axis": "y", "coordinate": "q3"}
    with pytest.raises(ModelError, match=r"between: the joint of l3 \(prismatic"):
        model_from_dict(data, "arm.yaml")


def test_the_end_axis_check_is_linear_in_the_depth():
    """The loader's check of the joints between a torsion spring's bodies reads each body's
    rotation once (it was once per body on the path and its every ancestor: depth^2 / 2
    reads, 20 000 for this 200-link chain)."""
    from types import SimpleNamespace

    from charmie_dynamics.model import JointType
    from charmie_dynamics.model.kinds.torsion_spring import torsion_end_axis

    class Counted(np.ndarray):
        reads = 0

        def __getitem__(self, key):
            Counted.reads += 1
            return np.asarray(super().__getitem__(key))

    n = 200
    link = SimpleNamespace(joint_type=JointType.REVOLUTE, name="link")
    tree = SimpleNamespace(parent=np.arange(-1, n - 1), bodies=[link] * n,
                           rotation=np.tile(np.eye(3), (n, 1, 1)).view(Counted),
                           axis=np.tile([0.0, 0.0, 1.0], (n, 1)))
    end_axis = torsion_end_axis(None, tree, 0, n - 1, np.array([0.0, 0.0, 1.0]), "spring")
    np.testing.assert_array_equal(end_axis, [0.0, 0.0, 1.0])
    assert Counted.reads <= 2 * n, Counted.reads


def test_cli_counts_the_torsion_springs_and_writes_their_torque(tmp_path):
    """validate-model's summary counts the torsion springs (it counted springs only), and
    analyze's loads.csv names a torsion spring's column NAME.torque, in N m (it was
    NAME.tension)."""
    from charmie_dynamics.cli.analyze import spring_columns
    path = tmp_path / "arm.yaml"
    path.write_text(yaml.safe_dump(arm_data([spring()])))
    command = [sys.executable, "-m", "charmie_dynamics.cli.main"]
    out = subprocess.run(command + ["validate-model", str(path)], capture_output=True,
                         text=True, check=True, cwd=ROOT).stdout
    assert "0 springs, 0 balancers, 1 torsion springs" in out, out
    subprocess.run(command + ["analyze", "--model", str(path), "--out", str(tmp_path / "out"),
                              "--dt", "0.1"], capture_output=True, text=True, check=True,
                   cwd=ROOT)
    header = (tmp_path / "out" / "loads.csv").read_text().splitlines()[0].split(",")
    assert "wrist_torsion.torque" in header and not any(h.endswith(".tension") for h in header), header
    assert spring_columns(arm([spring()])) == ["wrist_torsion.torque"]
    charmie = load_model(CHARMIE)          # a spring and two balancers, by their kinds
    assert spring_columns(charmie) == [f"{s.name}.tension" for s in charmie.springs] + \
        [f"{b.name}_spring.tension" for b in charmie.balancers]


def test_identification_columns_reproduce_the_efforts():
    """tau = k theta + (tau0 - k theta0) is linear in (k, t0): the regressor's spring columns
    (unit laws over the table) reproduce the efforts, and with_parameters keeps the law."""
    model = arm([spring(between=["l1", "l3"])])
    rng = np.random.default_rng(3)
    state = resolve_state(model, STATES, rng.normal(size=STATES.shape),
                          rng.normal(size=STATES.shape))
    pi = model_parameters(model)
    layout = parameter_layout(model)
    assert layout.names[layout.spring_start:layout.spring_start + 2] == (
        "wrist_torsion.k", "wrist_torsion.t0")
    np.testing.assert_allclose(regressor(model, state) @ pi, input_efforts(model, state),
                               rtol=1e-12, atol=1e-12)
    pi[layout.spring_start] *= 2.0
    law = with_parameters(model, pi).torsion_springs[0].params
    assert (law.stiffness, law.free_length) == (2 * K, FREE)
    assert law.preload == pytest.approx(PRELOAD + K * FREE)


def test_identified_law_is_written_in_the_file_units():
    text = yaml.safe_dump(arm_data([spring(stiffness=2.0, free_angle=10.0)], units="deg"))
    model = model_from_text(text, "arm.yaml")
    layout = parameter_layout(model)
    pi = model_parameters(model)
    pi[layout.spring_start] *= 3.0
    edited = model_from_text(updated_model_text(text, "arm.yaml", model, layout, pi), "arm.yaml")
    law, old = edited.torsion_springs[0].params, model.torsion_springs[0].params
    assert law.stiffness == pytest.approx(3.0 * old.stiffness, rel=1e-11)
    assert law.free_length == old.free_length
    assert law.preload == pytest.approx(pi[layout.spring_start + 1]
                                        + law.stiffness * law.free_length, rel=1e-11)


def test_urdf_and_overlay_carry_the_torsion_spring(tmp_path):
    """export-urdf's URDF and overlay load back with the torsion spring: the same efforts."""
    model = arm([spring(between=["l1", "l3"])])
    (tmp_path / "arm.urdf").write_text(urdf_from_model(model, include_auxiliary=False))
    (tmp_path / "overlay.yaml").write_text(yaml.safe_dump(overlay_from_model(model)))
    loaded = load_model(tmp_path / "arm.urdf", overlay=tmp_path / "overlay.yaml")
    assert loaded.torsion_springs[0].params == model.torsion_springs[0].params
    np.testing.assert_allclose(efforts(loaded, STATES), efforts(model, STATES), atol=1e-12)


def test_names_are_unique_across_sections():
    with pytest.raises(ModelError, match="duplicate name.*l2.*torsion springs"):
        arm([spring(name="l2")])
