"""``charmie-dynamics analyze`` on models with loops (issue 13): the five-bar's torques along
seed 002 eqs. 22a/35 and its free fall of eq. 36 that stops at the singular configuration,
the carpet-scraping machine at 45 rpm (seed 002 sec. 4.4), the IRSBot-2's parabola (seed
003 sec. 6.4)."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from test_cli import PNG_SIGNATURE, _read_csv, assert_one_error_line, run_cli
from test_closed_chains import FIVE_BAR
from test_irsbot2 import IRSBOT2
from test_scraping_machine import MODEL as SCRAPING


def test_analyze_five_bar_torques(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("analyze", "--model", FIVE_BAR, "--motion", "seed002-eq35", "--dt", 0.5,
                   "--out", out)
    assert proc.returncode == 0, proc.stderr
    header, data = _read_csv(out / "loads.csv")
    assert header[:3] == ["time", "theta1_1.effort", "theta1_2.effort"]
    assert data.shape == (41, 3 + 5)
    kin_header, kin = _read_csv(out / "kinematics.csv")
    assert kin_header[-2:] == ["newton_iterations", "residual"]
    assert kin[:, -1].max() <= 1e-12 and kin[1:, -2].max() <= 4
    # eq. 22a with eq. 35: theta1_1 from 30 to 90 deg, theta1_2 from 30 to 70.3 deg
    np.testing.assert_allclose(np.degrees(kin[[0, -1], 1]), [30, 90], atol=1e-9)
    np.testing.assert_allclose(np.degrees(kin[[0, -1], 3]), [30, 70.3], atol=1e-9)
    for name in ("joint_angles.png", "joint_efforts.png", "newton_iterations.png"):
        assert (out / name).read_bytes().startswith(PNG_SIGNATURE)
    assert "theta1_1 torque" in proc.stdout


@pytest.mark.slow
def test_analyze_five_bar_free_fall_stops_at_the_singularity(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("analyze", "--model", FIVE_BAR, "--motion", "seed002-free-fall",
                   "--out", out)
    assert proc.returncode == 0, proc.stderr
    stop = re.search(r"stopped at t = ([0-9.]+) s: loop end_effector: .*condition number",
                     proc.stdout)
    assert stop is not None, proc.stdout
    assert 1.0 < float(stop.group(1)) < 1.5              # measured 1.259 s; the paper ~1.4 s
    header, data = _read_csv(out / "simulation.csv")
    assert header[-3:] == ["energy", "newton_iterations", "condition"]
    calm = data[:, -1] <= 1e2
    energy = data[calm, -3]
    assert np.ptp(energy) < 1e-5 * abs(energy[0])


def test_analyze_model_with_loops_refuses_other_motions(tmp_path):
    proc = run_cli("analyze", "--model", FIVE_BAR, "--motion", "validation", "--out", tmp_path)
    assert_one_error_line(proc, "--motion validation: five_bar has loops, expected one of "
                                "seed002-eq35, seed002-free-fall, seed002-scraping, "
                                "seed003-parabola")
    proc = run_cli("analyze", "--model", FIVE_BAR, "--motion", "seed002-scraping", "--out",
                   tmp_path)
    assert_one_error_line(proc, "--motion seed002-scraping: drives 1 independent coordinate(s) "
                                "(the crank), five_bar has 2 (theta1_1, theta1_2)")
    proc = run_cli("analyze", "--model", SCRAPING, "--motion", "seed002-eq35", "--out",
                   tmp_path)
    assert_one_error_line(proc, "--motion seed002-eq35: drives 2 independent coordinate(s) "
                                "(the five-bar), scraping_machine has 1 (theta_II_1)")
    # and the other way round: a loop motion on a model without loops (was a KeyError)
    proc = run_cli("analyze", "--motion", "seed002-eq35", "--out", tmp_path)
    assert_one_error_line(proc, "--motion seed002-eq35: a motion of a model with loops")


def test_analyze_scraping_machine_at_45_rpm(tmp_path):
    """Seed 002 sec. 4.4 (coarse 50 ms sampling): the driving torque over one revolution,
    its statics and the rest, the multipliers, the points' paths, the power balance."""
    out = tmp_path / "out"
    proc = run_cli("analyze", "--model", SCRAPING, "--motion", "seed002-scraping", "--dt", 0.05,
                   "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "45 rpm (4.7124 rad/s)" in proc.stdout         # the paper: 4.712 rad/s
    header, loads = _read_csv(out / "loads.csv")
    assert header[:7] == ["time", "theta_II_1.effort", "theta_II_1.effort_statics",
                          "theta_II_1.effort_without_gravity", "power", "energy", "denergy_dt"]
    assert loads.shape == (27, 7 + 15)                    # 0..1.30 s; 3 cuts x 5 rows
    np.testing.assert_allclose(loads[:, 1], loads[:, 2] + loads[:, 3], atol=1e-12)
    np.testing.assert_allclose(loads[:, 4], loads[:, 1] * 1.5 * np.pi, atol=1e-12)
    kin_header, kin = _read_csv(out / "kinematics.csv")
    np.testing.assert_allclose(kin[:, 1], 1.5 * np.pi * kin[:, 0], atol=1e-12)   # the crank
    assert kin[:, -1].max() <= 1e-12 and kin[1:, -2].max() <= 4
    E = [kin_header.index(f"link6.E.{a}") for a in "xy"]
    assert np.ptp(kin[:, E[0]]) > 0.5                     # the scraper's stroke, m
    for name in ("driving_torque.png", "joint_angles.png", "point_paths.png",
                 "power_balance.png"):
        assert (out / name).read_bytes().startswith(PNG_SIGNATURE)
    assert "theta_II_1 driving torque" in proc.stdout


def test_validate_model_with_loops_that_cannot_assemble_is_not_called_valid(tmp_path):
    bad = tmp_path / "apart.yaml"                 # leg 2's base 10 m away: the legs cannot meet
    bad.write_text(FIVE_BAR.read_text().replace("origin: [0.2, 0, 0]", "origin: [10, 0, 0]"))
    proc = run_cli("validate-model", bad)
    assert_one_error_line(proc, "apart.yaml: loops: loop end_effector cannot be assembled")
    assert "valid model" not in proc.stdout, proc.stdout


def test_validate_fk_and_id_on_a_model_with_loops(tmp_path):
    proc = run_cli("validate-model", FIVE_BAR)
    assert proc.returncode == 0, proc.stderr
    assert "loop end_effector: mobility 2 (constraint Jacobian of rank 2, Gruebler count -1)" \
        in proc.stdout
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"positions": {"theta1_1": 1.0, "theta1_2": 1.1},
                                 "velocities": {"theta1_1": 0.2}}))
    proc = run_cli("fk", "--model", FIVE_BAR, "--state", state)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    np.testing.assert_allclose(doc["points"]["link2_1.tip"], doc["points"]["link2_2.tip"],
                               atol=1e-12)
    assert doc["coordinates"]["theta1_1"] == 1.0 and doc["loops"]["residual"][0] <= 1e-12
    proc = run_cli("id", "--model", FIVE_BAR, "--state", state)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert list(doc["joint_efforts"]) == ["theta1_1", "theta1_2"]
    assert doc["velocities"]["theta1_2"] == 0.0 and doc["velocities"]["theta2_1"] != 0.0
    assert len(doc["cut_multipliers"]) == 5 and len(doc["indeterminate"]) == 3
    state.write_text(json.dumps({"positions": {"theta2_1": 1.0}}))
    assert_one_error_line(run_cli("fk", "--model", FIVE_BAR, "--state", state),
                          "positions.theta2_1: a dependent coordinate of the loops")


def test_fk_and_id_solve_a_far_state_on_the_same_branch(tmp_path):
    """fk solved the loops by one Newton solve from the assembly guess, id (and the node) by
    continuation from the assembled branch: for this state far from the guess fk gave
    theta2_1 1.988 (the other elbow), id 4.295. Both now solve as the node does. A state
    whose loop cannot close names the state file."""
    state = tmp_path / "far.json"
    state.write_text(json.dumps({"positions": {"theta1_1": 0.0, "theta1_2": 3.14159}}))
    fk, id_ = (json.loads(run_cli(command, "--model", FIVE_BAR, "--state", state).stdout)
               for command in ("fk", "id"))
    assert fk["coordinates"] == id_["coordinates"] and fk["loops"] == id_["loops"]
    np.testing.assert_allclose(fk["points"]["link2_1.tip"], fk["points"]["link2_2.tip"],
                               atol=1e-12)
    state.write_text(json.dumps({"positions": {"theta1_1": 0.0, "theta1_2": 12.0}}))
    for command in ("fk", "id"):
        assert_one_error_line(run_cli(command, "--model", FIVE_BAR, "--state", state),
                              f"{state}: five_bar: the independent coordinates moved by")


def test_a_state_across_a_singular_configuration_is_refused(tmp_path):
    """The attack's case: both cranks at 200 deg gave efforts (20.80, -57.82) N m, at -160
    deg (-136.57, 125.77): the continuation from the assembled branch to 200 deg passes the
    stretched elbows at 180 deg and landed on the other branch. Now refused in one line;
    -160 deg (no crossing) still solves."""
    state = tmp_path / "cranks.json"
    state.write_text(json.dumps({"positions": {"theta1_1": np.radians(200.0),
                                               "theta1_2": np.radians(200.0)}}))
    assert_one_error_line(run_cli("id", "--model", FIVE_BAR, "--state", state),
                          "crossed a singular configuration")
    state.write_text(json.dumps({"positions": {"theta1_1": np.radians(-160.0),
                                               "theta1_2": np.radians(-160.0)}}))
    assert run_cli("id", "--model", FIVE_BAR, "--state", state).returncode == 0


def test_analyze_model_with_loops_on_a_trajectory_file(tmp_path):
    """A trajectory CSV of the independent coordinates: every sample's efforts equal the
    closed chain's inverse dynamics (mass matrix and bias forces) with the file's rates; a
    column of a dependent coordinate is refused; a sample where the loop cannot close ends
    with one line naming it; payloads are carried."""
    from charmie_dynamics import load_model
    from charmie_dynamics.dynamics import closed_chain as cc
    from charmie_dynamics.mechanisms.closed_chains import ClosedChain
    chain = ClosedChain.build(load_model(FIVE_BAR))
    t = np.linspace(0.0, 1.0, 11)
    x = np.stack([0.8 + 0.3 * t**2, 0.9 - 0.2 * t], axis=1)
    xd = np.stack([0.6 * t, -0.2 + 0 * t], axis=1)
    xdd = np.stack([0.6 + 0 * t, 0 * t], axis=1)
    csv = tmp_path / "t.csv"
    header = "time,theta1_1,theta1_2,theta1_1.velocity,theta1_2.velocity," \
             "theta1_1.acceleration,theta1_2.acceleration"
    rows = [",".join(repr(float(v)) for v in (t[k], *x[k], *xd[k], *xdd[k])) for k in range(11)]
    csv.write_text(header + "\n" + "\n".join(rows) + "\n")
    out = tmp_path / "o"
    proc = run_cli("analyze", "--model", FIVE_BAR, "--trajectory", csv, "--out", out)
    assert proc.returncode == 0, proc.stderr
    head, data = _read_csv(out / "loads.csv")
    assert head[:3] == ["time", "theta1_1.effort", "theta1_2.effort"]
    last = None
    for k in range(11):
        ref = cc.inverse_dynamics(chain, x[k], xd[k], xdd[k], last)
        last = ref.q
        np.testing.assert_allclose(data[k, 1:3], ref.effort, rtol=0, atol=1e-9 * np.abs(ref.effort).max())
    _, kin = _read_csv(out / "kinematics.csv")
    assert kin[:, -1].max() <= 1e-12
    # with a payload the efforts change
    proc = run_cli("analyze", "--model", FIVE_BAR, "--trajectory", csv, "--payload",
                   "link2_1.tip:1.5", "--out", tmp_path / "p")
    assert proc.returncode == 0, proc.stderr
    assert np.abs(_read_csv(tmp_path / "p" / "loads.csv")[1][:, 1:3] - data[:, 1:3]).min() > 0.1
    # a dependent coordinate's column
    bad = tmp_path / "dependent.csv"
    bad.write_text("time,theta1_1,theta2_1\n0,0.5,0.5\n0.1,0.5,0.5\n")
    assert_one_error_line(run_cli("analyze", "--model", FIVE_BAR, "--trajectory", bad, "--out",
                                  tmp_path / "d"),
                          "unknown column(s) theta2_1; expected time and "
                          "NAME[.velocity|.acceleration] for NAME in theta1_1, theta1_2")
    # the legs swung apart in the third sample: the loop cannot close
    apart = tmp_path / "apart.csv"
    apart.write_text("time,theta1_1,theta1_2\n0,0.8,0.9\n0.1,0.81,0.9\n0.2,1.4835,1.8134\n")
    assert_one_error_line(run_cli("analyze", "--model", FIVE_BAR, "--trajectory", apart,
                                  "--out", tmp_path / "a"),
                          "sample 2 (t = 0.2 s): loop end_effector: the loop cannot be closed "
                          "there (Newton-Raphson stopped")
    assert_one_error_line(run_cli("analyze", "--model", FIVE_BAR, "--motion", "seed002-free-fall",
                                  "--payload", "link2_1.tip:1", "--out", tmp_path / "f"),
                          "--payload: --motion seed002-free-fall takes no payload")


def test_analyze_irsbot2_parabola(tmp_path):
    """Seed 003 sec. 6.4's platform path on the IRSBot-2 (coarse 50 ms sampling here; the
    paper's 1 ms is `--dt 0.001`): iterations per sample, torques and power balance."""
    out = tmp_path / "out"
    proc = run_cli("analyze", "--model", IRSBOT2, "--motion", "seed003-parabola", "--dt", 0.05,
                   "--out", out)
    assert proc.returncode == 0, proc.stderr
    header, kin = _read_csv(out / "kinematics.csv")
    assert header[:4] == ["time", "platform.x", "platform.y", "platform.z"]
    assert kin.shape[0] == 21 and kin[:, -1].max() <= 1e-10          # rigid cut residual
    np.testing.assert_allclose(kin[:, 2], 0.0, atol=1e-15)            # the path stays at y = 0
    it_header, it = _read_csv(out / "iterations.csv")
    assert it_header[1:3] == ["limb platform.nested_outer", "limb platform.compound"]
    assert 1 <= it[1:, 1].min() and it[1:, 1].max() <= 6 and it[1:, 2].max() <= 6
    load_header, loads = _read_csv(out / "loads.csv")
    assert load_header == ["time", "q1_1.effort", "q1_2.effort", "actuator_power", "energy",
                           "denergy_dt"]
    # the mirror image: the platform at t + T/2 is at (-x, z) with mirrored rates, so limb
    # 2's torque there is limb 1's at t
    np.testing.assert_allclose(loads[:11, 1], loads[10:, 2], rtol=1e-6, atol=1e-9)
    for name in ("joint_angles.png", "joint_efforts.png", "newton_iterations.png",
                 "power_balance.png"):
        assert (out / name).read_bytes().startswith(PNG_SIGNATURE)
    assert "power balance" in proc.stdout and "algorithm 3" in proc.stdout


def test_analyze_parabola_refuses_a_model_that_is_not_a_parallel_mechanism(tmp_path):
    proc = run_cli("analyze", "--model", FIVE_BAR, "--motion", "seed003-parabola",
                   "--out", tmp_path / "o")
    assert_one_error_line(proc, "five_bar.yaml: loops.cuts: no rigid (F) cut joins two "
                                "platform copies")


def test_id_with_loops_takes_payloads_forces_and_gravity_only(tmp_path):
    """The actuated torques of a payload and of a force at the five-bar's end point, by
    virtual work: tau_load = -J^T F with F the load's force (a payload's: m g) and J the end
    point's Jacobian over the independent coordinates (central differences of the solved
    positions); ``--gravity-only`` equals the state at rest; the joint wrenches carry the
    cut forces: the legs' root forces hold the mechanism and the payload."""
    from charmie_dynamics import forward_kinematics, load_model
    from charmie_dynamics.mechanisms.closed_chains import ClosedChain
    model = load_model(FIVE_BAR)
    chain = ClosedChain.build(model)
    x = np.array([1.0, 1.1])
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"positions": dict(zip(("theta1_1", "theta1_2"), x.tolist()))}))
    moving = tmp_path / "moving.json"
    moving.write_text(json.dumps({"positions": dict(zip(("theta1_1", "theta1_2"), x.tolist())),
                                  "velocities": {"theta1_1": 0.7, "theta1_2": -0.4},
                                  "accelerations": {"theta1_1": 2.0}}))

    def efforts(*extra, file=state):
        proc = run_cli("id", "--model", FIVE_BAR, "--state", file, *extra)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        return np.array(list(doc["joint_efforts"].values())), doc

    def tip(xs):
        fk = forward_kinematics(model, chain.positions(xs, chain.positions(x)))
        return fk.to_world(model.body_index("link2_1"), model.point("link2_1.tip").local)
    h = 1e-6
    J = np.stack([(tip(x + h * e) - tip(x - h * e)) / (2 * h) for e in np.eye(2)], axis=1)
    rest, doc = efforts()
    assert doc["gravity_only"] is False
    payload, doc_p = efforts("--payload", "link2_1.tip:2.5")
    np.testing.assert_allclose(payload - rest, -J.T @ (2.5 * model.gravity), rtol=0, atol=1e-6)
    force = np.array([3.0, -4.0, 0.0])
    pushed, _ = efforts("--force", "link2_2.tip:3,-4,0")
    np.testing.assert_allclose(pushed - rest, -J.T @ force, rtol=0, atol=1e-6)
    gravity, doc_g = efforts("--gravity-only", file=moving)
    np.testing.assert_allclose(gravity, rest, rtol=0, atol=1e-9)
    assert doc_g["gravity_only"] is True and doc_g["velocities"]["theta2_1"] != 0.0
    # the legs' root joints hold the whole mechanism and the payload (at rest)
    roots = sum(np.array(doc_p["joint_wrenches"][b]["force"]) for b in ("link1_1", "link1_2"))
    np.testing.assert_allclose(roots, -(model.total_mass + 2.5) * model.gravity, rtol=0,
                               atol=1e-9)
    assert doc_p["base_reaction"]["body"] == "link1_1"
    assert_one_error_line(run_cli("id", "--model", FIVE_BAR, "--payload", "link9.tip:1"),
                          "link9.tip")


def test_analyze_holds_dependent_coordinates_to_their_limits(tmp_path):
    """theta2_1 (solved) runs 9.9..83.0 deg along eq. 35; with an upper limit of 60 deg:
    an error with --check-position-limits, a warning line without."""
    text = open(FIVE_BAR).read().replace(
        "coordinate: theta2_1}", "coordinate: theta2_1, limits: {lower: -170, upper: 60}}")
    model = tmp_path / "limited.yaml"
    model.write_text(text)
    args = ("analyze", "--model", model, "--motion", "seed002-eq35", "--dt", 0.5)
    proc = run_cli(*args, "--check-position-limits", "--out", tmp_path / "a")
    assert_one_error_line(proc, "--check-position-limits: sample", "the dependent coordinate "
                          "theta2_1", "beyond its joint limits")
    proc = run_cli(*args, "--out", tmp_path / "b")
    assert proc.returncode == 0, proc.stderr
    assert "WARNING: sample" in proc.stdout and "theta2_1" in proc.stdout, proc.stdout
