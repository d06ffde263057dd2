"""The CLI refuses inputs beyond the model's limits (the dynamics node's check,
charmie_dynamics/kinematics/limits.py), caps trajectory files at MAX_SAMPLES rows, and writes
``analyze --out`` all at once or not at all."""
import math

import numpy as np
import pytest

from charmie_dynamics import load_model
from charmie_dynamics.cli import analyze
from charmie_dynamics.cli.main import check_finite, main
from charmie_dynamics.errors import InputError
from charmie_dynamics.kinematics.limits import PLAUSIBLE, InputLimits
from charmie_dynamics.trajectories import MAX_SAMPLES, from_csv
from conftest import CHARMIE
from test_cli import assert_one_error_line, run_cli

MODEL = load_model(CHARMIE)


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _rows(n, dt, value=lambda k: 0.0):
    return "".join(f"{k * dt!r},{value(k)}\n" for k in range(n))


STATES = {
    "fk_position_1e300": ("fk", '{"positions": {"d1": 1e300}}', [],
                          ["positions.d1: 1e+300 is implausible", "at most 1e+06 (m or rad)"]),
    "id_acceleration_1e300": ("id", '{"accelerations": {"d1": 1e300}}', [],
                              ["accelerations.d1: 1e+300 is implausible",
                               "at most 1e+06 (m/s^2 or rad/s^2)"]),
    "id_velocity_beyond_limit": ("id", '{"velocities": {"theta11a": -3.4}}', [],
                                 ["velocities.theta11a: -3.4 beyond its limit 3 (tolerance 10%)"]),
    "fk_position_beyond_limit": ("fk", '{"positions": {"theta13b": 0.82}}',
                                 ["--check-position-limits"],
                                 ["positions.theta13b: 0.82 outside its limits [-0.2, 0.8] "
                                  "(tolerance 0.01)"]),
}


@pytest.mark.parametrize("case", sorted(STATES))
def test_state_beyond_limits_refused(tmp_path, case):
    command, text, flags, fragments = STATES[case]
    state = _file(tmp_path, "state.json", text)
    proc = run_cli(command, "--state", state, *flags)
    assert_one_error_line(proc, str(state), *fragments)
    assert proc.stdout == ""


def test_positions_checked_only_with_the_flag(tmp_path):
    """Without --check-position-limits a position is held only to PLAUSIBLE (the papers'
    validation motion leaves CHARMIE's joint limits); within tolerance it passes with it."""
    beyond = _file(tmp_path, "beyond.json", '{"positions": {"theta13b": 0.82}}')
    assert run_cli("fk", "--state", beyond).returncode == 0
    within = _file(tmp_path, "within.json", '{"positions": {"theta13b": 0.805}}')
    proc = run_cli("id", "--state", within, "--check-position-limits")
    assert proc.returncode == 0, proc.stderr


TRAJECTORIES = {
    "acceleration_column_1e300": (
        "time,d1,d1.acceleration\n" + _rows(6, 0.01, lambda k: f"0,{1e300 if k == 3 else 0.0}"),
        ["row 5, column d1.acceleration: 1e+300 is implausible"]),
    # positions 1 um apart every 1 ns: 1,000 m/s is plausible, the acceleration is not
    "nanosecond_steps": ("time,d1\n" + _rows(6, 1e-9, lambda k: 1e-6 * k * k),
                         ["row 2, column d1.acceleration (not in the file: the central "
                          "difference of d1.velocity over time)", "is implausible"]),
    "velocity_beyond_limit": ("time,theta11a\n" + _rows(6, 0.1, lambda k: 0.5 * k),
                              ["row 2, column theta11a.velocity (not in the file: the central "
                               "difference of theta11a over time): 5 beyond its limit 3"]),
    "too_many_rows": ("time,d1\n" + _rows(MAX_SAMPLES + 1, 1e-3),
                      [f"more than {MAX_SAMPLES:,} rows of samples"]),
}


@pytest.mark.parametrize("case", sorted(TRAJECTORIES))
def test_trajectory_beyond_limits_refused(tmp_path, case):
    text, fragments = TRAJECTORIES[case]
    traj = _file(tmp_path, "traj.csv", text)
    proc = run_cli("analyze", "--trajectory", traj, "--out", tmp_path / "out")
    assert_one_error_line(proc, str(traj), *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["traj.csv"]     # nothing written


def test_trajectory_position_limits_with_the_flag(tmp_path):
    traj = _file(tmp_path, "traj.csv", "time,theta13b\n" + _rows(4, 0.1, lambda k: 0.3 * k))
    proc = run_cli("analyze", "--trajectory", traj, "--out", tmp_path / "out",
                   "--check-position-limits")
    assert_one_error_line(proc, "row 5, column theta13b: 0.9 outside its limits [-0.2, 0.8]")
    assert not (tmp_path / "out").exists()


def test_row_cap_is_inclusive(tmp_path):
    traj = _file(tmp_path, "traj.csv", "time,d1\n" + _rows(MAX_SAMPLES, 1e-3))
    assert len(from_csv(MODEL, str(traj)).t) == MAX_SAMPLES


def test_a_spreadsheet_byte_order_mark_is_not_part_of_the_header(tmp_path):
    """The attack: a CSV saved with a UTF-8 byte-order mark read "no 'time' column; columns:
    \ufefftime, ..."."""
    plain = _file(tmp_path, "plain.csv", "time,d1\n" + _rows(3, 1e-3, lambda k: 1e-4 * k))
    marked = _file(tmp_path, "marked.csv", "\ufefftime,d1\n" + _rows(3, 1e-3, lambda k: 1e-4 * k))
    np.testing.assert_array_equal(from_csv(MODEL, str(marked)).x, from_csv(MODEL, str(plain)).x)


@pytest.mark.parametrize("motion", ["validation", "kinematic-validation"])
def test_validation_motions_still_run(tmp_path, motion):
    """The papers' motions pass the limits that are checked by default."""
    out = tmp_path / "out"
    proc = run_cli("analyze", "--motion", motion, "--dt", 0.05, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} >= {"kinematics.csv", "loads.csv",
                                                "joint_efforts.png"}


def test_validation_motion_leaves_the_position_limits(tmp_path):
    proc = run_cli("analyze", "--motion", "validation", "--out", tmp_path / "out",
                   "--check-position-limits")
    assert_one_error_line(proc, "motion 'validation': sample ", "outside its limits")
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- atomic output

def _analyze(out, *extra):
    return main(["analyze", "--motion", "kinematic-validation", "--dt", "0.5", "--out", str(out),
                 *extra])


def _fail_on_plot(monkeypatch, exc):
    def plot(*args, **kwargs):
        raise exc
    monkeypatch.setattr(analyze, "plot_series", plot)       # after kinematics.csv and loads.csv


def test_failed_write_leaves_nothing(tmp_path, monkeypatch, capsys):
    _fail_on_plot(monkeypatch, OSError(28, "No space left on device"))
    assert _analyze(tmp_path / "out") == 1
    assert capsys.readouterr().err.startswith("charmie-dynamics: error: --out ")
    assert list(tmp_path.iterdir()) == []             # no out, no temporary folder


def test_interrupted_write_keeps_the_old_files(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kinematics.csv").write_text("old")
    (out / "notes.txt").write_text("mine")
    _fail_on_plot(monkeypatch, KeyboardInterrupt())
    # Ctrl-C: one line and status 130, no traceback (issue 34's S6, seen during --jobs 2)
    assert _analyze(out) == 130
    assert capsys.readouterr().err == "charmie-dynamics: interrupted\n"
    assert list(tmp_path.iterdir()) == [out]
    assert sorted(p.name for p in out.iterdir()) == ["kinematics.csv", "notes.txt"]
    assert (out / "kinematics.csv").read_text() == "old"


def test_write_into_an_existing_folder(tmp_path, capsys):
    """The user's other files stay; a file of an output's name is replaced only when told
    (--overwrite; issue 34, S1), and a refused run writes nothing."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "kinematics.csv").write_text("old")
    (out / "notes.txt").write_text("mine")
    assert _analyze(out) == 1
    assert "already holds kinematics.csv: give --overwrite" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["kinematics.csv", "notes.txt"]
    assert (out / "kinematics.csv").read_text() == "old"
    assert _analyze(out, "--overwrite") == 0
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "kinematics.csv").read_text().startswith("time,")
    assert list(tmp_path.iterdir()) == [out]


# ---------------------------------------------------------------- the check and the backstops

def test_violation_names_the_earliest_sample():
    limits = InputLimits.of(MODEL)
    x = {"d1": np.array([0.0, 0.0, 2e6]), "d2": np.array([0.0, -2e6, 0.0])}
    bad = limits.violation(x, {}, math.inf, 0.1)
    assert (bad.name, bad.quantity, bad.sample, bad.value) == ("d2", "position", 1, -2e6)
    bad = limits.violation({}, {}, math.inf, 0.1, {"theta3": np.array([0.0, math.nan])})
    assert (bad.name, bad.quantity, bad.sample) == ("theta3", "acceleration", 1)
    # the bound itself passes (every CHARMIE input has a velocity limit of its own)
    assert limits.violation({"d1": PLAUSIBLE}, {"d1": -1.1}, math.inf, 0.1,
                            {"d1": -PLAUSIBLE}) is None


def test_non_finite_results_still_refused():
    """Inputs within the limits give finite results on CHARMIE; the result checks stay as
    the backstop of the contract and still name the cell."""
    t = np.array([0.0, 0.1])
    with pytest.raises(InputError, match=r"loads.csv: column b, sample 1 \(time 0.1 s\) is inf"):
        analyze._table("loads.csv", t, ["time", "b"], [t, np.array([0.0, math.inf])])
    with pytest.raises(InputError, match=r"id: joint_efforts.d1 is nan"):
        check_finite({"joint_efforts": {"d1": math.nan}}, "id")
