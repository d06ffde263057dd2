"""Issue 22 item 4: every input identify reads is refused in one line when it cannot be used
(duplicate columns, absurd or all-zero efforts, foreign MCAP schemas, too many samples), a
URDF model is identified, and a model whose inertia is a block matrix stays loadable."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import yaml

from charmie_dynamics.cli.main import main
from charmie_dynamics.identification import logs
from charmie_dynamics.identification.logs import Log, LogError, read_log, write_log
from charmie_dynamics.identification.model_file import updated_model_text
from charmie_dynamics.identification.regressor import model_parameters, parameter_layout
from charmie_dynamics.model.reader import model_from_text
from charmie_dynamics.ros.common.joint_map import JointMap
from charmie_dynamics.ros.tools.recorded_inputs import RobotTopics, read_any_log, read_recording

ROOT = Path(__file__).resolve().parent.parent
NO_HEADER = "string[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n"
NUMBER_NAMES = logs.JOINT_STATE_DEFINITION.replace("string[] name", "float64[] name")


def _log(model, samples: int = 5) -> Log:
    n = len(model.input_names)
    t = np.arange(samples) * 0.01
    x = np.array([a.default_length if a is not None else 0.0 for a in (
        {a.name: a for a in model.actuators}.get(name) for name in model.input_names)])
    return Log(t, np.tile(x, (samples, 1)), np.zeros((samples, n)), np.ones((samples, n)))


def _read(path: Path, model):
    """Any log, a recording read as the dynamics node reads its inputs (no joint map)."""
    return read_any_log(path, model, RobotTopics(), JointMap(), 0.1)[0]


def _rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def _write_rows(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)


def test_csv_log_duplicate_column_is_refused(tmp_path, charmie):
    path = tmp_path / "twice.csv"
    write_log(path, charmie, _log(charmie))
    rows = _rows(path)
    _write_rows(path, [row + [row[rows[0].index("theta3.effort")]] for row in rows])
    with pytest.raises(LogError, match=r"twice.csv: duplicate column\(s\) theta3.effort"):
        read_log(path, charmie)


def test_csv_log_with_a_byte_order_mark_is_read_and_bad_bytes_are_named(tmp_path, charmie):
    """A log saved by a spreadsheet (a UTF-8 byte-order mark first) is the same log; a byte
    that is not UTF-8 is named at its place in the file, the mark counted."""
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    write_log(plain, charmie, _log(charmie))
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    np.testing.assert_array_equal(read_log(marked, charmie).x, read_log(plain, charmie).x)
    marked.write_bytes(b"\xef\xbb\xbftime\xff")
    with pytest.raises(LogError, match=r"marked.csv: the CSV log is not UTF-8 text \(byte 7: "
                                       r"b'\\xff'\)"):
        read_log(marked, charmie)


@pytest.mark.parametrize("value, reason", [
    ("1e300", "row 4, column theta3.effort: effort 1e+300, expected |effort| <= 1e+06"),
    ("-2e6", "row 4, column theta3.effort: effort -2e+06, expected |effort| <= 1e+06")])
def test_csv_log_effort_beyond_bound_is_refused(tmp_path, charmie, value, reason):
    path = tmp_path / "big.csv"
    write_log(path, charmie, _log(charmie))
    rows = _rows(path)
    rows[3][rows[0].index("theta3.effort")] = value
    _write_rows(path, rows)
    with pytest.raises(LogError) as info:
        read_log(path, charmie)
    assert str(info.value) == f"{path}: {reason} (N m or N)"


def test_all_zero_efforts_are_refused_when_read(tmp_path, charmie):
    for name in ("zero.csv", "zero.mcap"):
        log = _log(charmie)
        write_log(tmp_path / name, charmie, Log(log.t, log.x, log.xd, 0 * log.effort))
        with pytest.raises(LogError, match=f"{name}: every effort .* is 0 in all 5 samples"):
            _read(tmp_path / name, charmie)


def test_mcap_effort_beyond_bound_is_refused(tmp_path, charmie):
    log = _log(charmie, 6)
    log.effort[2, charmie.input_names.index("theta3")] = 1e300
    write_log(tmp_path / "big.mcap", charmie, log)
    read = read_recording(tmp_path / "big.mcap", charmie, RobotTopics(), JointMap(), 0.1)
    assert dict(read.rejected) == {"invalid_value": 1}
    assert read.first_rejection["invalid_value"] == \
        "/joint_states: effort 1e+300 of theta3, expected |effort| <= 1e+06"
    assert len(read.log.t) == 6 and np.all(np.abs(read.log.effort) < 2)   # the rest read


def _mcap_with_schema(path: Path, definition: str, message: dict) -> None:
    """An MCAP file of one /joint_states message written with the mcap-ros2 writer under
    JointState's name but with another ``definition``."""
    from mcap_ros2.writer import Writer
    with open(path, "wb") as f:
        writer = Writer(f)
        schema = writer.register_msgdef(logs.JOINT_STATE, definition)
        writer.write_message(logs.JOINT_STATES, schema, message, log_time=0, publish_time=0)
        writer.finish()


def test_mcap_foreign_schemas_are_one_line_errors(tmp_path, capsys, charmie):
    stamp = {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}
    cases = {"numbers.mcap": (NUMBER_NAMES, {"header": stamp, "name": [1.0], "position": [0.0],
                                             "velocity": [], "effort": [1.0]},
                              "field name is not a string[], expected a "
                              "sensor_msgs/msg/JointState"),
             "headless.mcap": (NO_HEADER, {"name": ["theta3"], "position": [0.0],
                                           "velocity": [], "effort": [1.0]},
                               "not a sensor_msgs/msg/JointState (AttributeError)")}
    for name, (definition, message, reason) in cases.items():
        path = tmp_path / name
        _mcap_with_schema(path, definition, message)
        capsys.readouterr()
        assert main(["identify", "--log", str(path), "--out", str(tmp_path / "m.yaml")]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(
            f"charmie-dynamics: error: {path}: no samples (two at least) of d1, d2, theta3, "), err
        assert err[0].endswith(f"rejected messages: invalid_value 1 (first: /joint_states: "
                               f"{reason})"), err


def test_logs_over_the_sample_cap_are_refused(tmp_path, charmie, monkeypatch):
    per_sample = 8 * len(charmie.input_names) * len(parameter_layout(charmie))
    monkeypatch.setattr(logs, "MAX_REGRESSOR_BYTES", 4 * per_sample)      # 4 samples
    assert logs.max_samples(charmie) == 4
    write_log(tmp_path / "four.csv", charmie, _log(charmie, 4))
    assert len(read_log(tmp_path / "four.csv", charmie).t) == 4
    write_log(tmp_path / "long.csv", charmie, _log(charmie, 5))
    with pytest.raises(LogError, match=f"long.csv: more than 4 rows of samples, expected at most "
                                       f"4 for {charmie.name} .its regressor within"):
        read_log(tmp_path / "long.csv", charmie)
    write_log(tmp_path / "long.mcap", charmie, _log(charmie, 5))
    with pytest.raises(LogError, match=f"long.mcap: 5 samples at 10 ms, expected at most 4 for "
                                       f"{charmie.name} .its regressor within"):
        _read(tmp_path / "long.mcap", charmie)


def test_linear_algebra_errors_are_one_line(monkeypatch, capsys):
    def singular(*_args, **_kwargs):
        raise np.linalg.LinAlgError("Singular matrix")
    monkeypatch.setattr("charmie_dynamics.cli.identify.base_parameters", singular)
    assert main(["base-parameters"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        "charmie-dynamics: error: base-parameters: linear algebra failed on these inputs "
        "(Singular matrix)"), err


def test_block_matrix_inertia_stays_loadable_after_identify_edits_it():
    text = (ROOT / "config" / "charmie.yaml").read_text()
    box = "    inertia: {solid_box: [400, 200, 500]}\n"
    assert text.count(box) == 1
    text = text.replace(box, "    inertia:              # kg mm^2\n      - [3.0e+5, 0, 0]\n"
                             "      - [0, 4.0e+5, 0]\n      - [0, 0, 5.0e+5]  # about the com\n")
    model = model_from_text(text, "block.yaml")
    layout = parameter_layout(model)
    k = layout.bodies.index(model.body_names.index("body_5"))
    pi = model_parameters(model)
    pi[10 * k:10 * k + 10] *= 1.05          # heavier, same centre of mass
    edited = model_from_text(updated_model_text(text, "block.yaml", model, layout, pi),
                             "edited.yaml")
    i = model.body_names.index("body_5")
    assert edited.bodies[i].mass == pytest.approx(9.0 * 1.05)
    np.testing.assert_allclose(edited.bodies[i].inertia, 1.05 * model.bodies[i].inertia,
                               rtol=1e-9, atol=1e-12)


@pytest.mark.slow
def test_identify_writes_a_urdf_model_as_yaml(tmp_path, capsys):
    assert main(["export-urdf", "--out", str(tmp_path)]) == 0
    urdf = tmp_path / "charmie.urdf"
    log, out = tmp_path / "fit.csv", tmp_path / "identified.yaml"
    assert main(["record", "--model", str(urdf), "--dt", "0.05", "--out", str(log)]) == 0
    capsys.readouterr()
    assert main(["identify", "--model", str(urdf), "--log", str(log), "--out", str(out)]) == 0, \
        capsys.readouterr().err
    assert isinstance(yaml.safe_load(out.read_text()), dict)
    model_from_text(out.read_text(), str(out))


def _mcap_with_actuator_stamps(path: Path, model, joint_t: np.ndarray, actuator_t: list) -> None:
    """A log whose /actuator_states carry ``actuator_t`` (in that order) beside /joint_states
    at ``joint_t``: what a robot whose actuator driver stopped or reordered writes."""
    from mcap_ros2.writer import Writer
    joints, actuators = logs._split(model)
    names = model.input_names
    lengths = {a.name: a.default_length for a in model.actuators}

    def message(t: float, cols: list[int]) -> dict:
        ns = int(round(t * 1e9))
        return {"header": {"stamp": {"sec": ns // 10**9, "nanosec": ns % 10**9}, "frame_id": ""},
                "name": [names[k] for k in cols],
                "position": [lengths.get(names[k], 0.0) for k in cols],
                "velocity": [0.0] * len(cols), "effort": [1.0] * len(cols)}
    with open(path, "wb") as f:
        writer = Writer(f)
        schema = writer.register_msgdef(logs.JOINT_STATE, logs.JOINT_STATE_DEFINITION)
        for topic, stamps, cols in ((logs.JOINT_STATES, joint_t, joints),
                                    (logs.ACTUATOR_STATES, actuator_t, actuators)):
            for t in stamps:
                writer.write_message(topic, schema, message(t, cols), log_time=0,
                                     publish_time=0)
        writer.finish()


def test_actuator_states_that_stop_early_or_go_back(tmp_path, charmie):
    """Issue 34, I1 residue, read as the node reads (issue 36): the actuators' samples are
    interpolated, never extrapolated: the times outside them are dropped (missing_name) and
    counted, a message older than the one before is refused (time_backwards) and counted."""
    joint_t = np.arange(100) * 0.01
    cases = {"early.mcap": (list(joint_t[:40]), 40, {}, {"missing_name": 60}),
             "late.mcap": (list(joint_t[20:]), 80, {}, {"missing_name": 20}),
             "shuffled.mcap": (list(joint_t[[0, 1, 3, 2] + list(range(4, 100))]), 100,
                               {"time_backwards": 1}, {}),
             # half an actuator period late: the first joint sample has none before it
             "offset.mcap": (list(joint_t + 0.004), 99, {}, {"missing_name": 1})}
    for name, (actuator_t, samples, rejected, dropped) in cases.items():
        path = tmp_path / name
        _mcap_with_actuator_stamps(path, charmie, joint_t, actuator_t)
        read = read_recording(path, charmie, RobotTopics(), JointMap(), 0.1)
        assert (len(read.log.t), dict(read.rejected), dict(read.dropped)) == \
            (samples, rejected, dropped), name
    assert read.first_rejection == {} and read.log.t[0] == pytest.approx(0.01)


def test_hostile_recordings_are_one_line_and_nothing_is_written(tmp_path, capsys):
    """Issue 36: a recording identify cannot read is one line, exit 1, nothing written: a
    truncated split file, metadata naming a missing file, a topic of another type than asked,
    a sqlite3 file that is not a bag."""
    import shutil
    import sqlite3
    assert main(["record", "--dt", "0.05", "--out", str(tmp_path / "good")]) == 0
    bags = {}
    bags["truncated"] = shutil.copytree(tmp_path / "good", tmp_path / "truncated")
    part = bags["truncated"] / "good_0.mcap"
    part.write_bytes(part.read_bytes()[:len(part.read_bytes()) // 2])
    bags["missing"] = shutil.copytree(tmp_path / "good", tmp_path / "missing")
    meta = bags["missing"] / "metadata.yaml"
    meta.write_text(meta.read_text().replace("  - good_0.mcap\n", "  - good_0.mcap\n  - good_1.mcap\n"))
    bags["not_a_bag.db3"] = tmp_path / "not_a_bag.db3"
    with sqlite3.connect(bags["not_a_bag.db3"]) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    expected = {"truncated": "not a readable MCAP file",
                "missing": "good_1.mcap: cannot read the recording file",
                "not_a_bag.db3": "without the tables topics and messages",
                "good": "/actuator_states is sensor_msgs/msg/JointState, expected "
                        "nav_msgs/msg/Odometry"}
    for name, needle in expected.items():
        out = tmp_path / f"{name}_model.yaml"
        extra = ["--odometry", "/actuator_states", "--actuator-states", ""] \
            if name == "good" else []
        capsys.readouterr()
        assert main(["identify", "--log", str(tmp_path / name), "--out", str(out)] + extra) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0] and str(tmp_path / name) in err[0], err
        assert not out.exists() and not (tmp_path / f"{name}_model_report").exists()


def test_record_never_replaces_a_folder_and_checks_it_first(tmp_path, capsys):
    """Issue 36: ``record --out NAME`` (a recording folder) refuses, before any work, an
    existing non-empty folder (also with --overwrite: it applies to files), a file and a
    dangling link, keeping the user's files; a missing parent is created."""
    user = tmp_path / "bag"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    (tmp_path / "plain").write_text("mine")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for name, extra in (("bag", []), ("bag", ["--overwrite"]), ("plain", []), ("dangling", [])):
        capsys.readouterr()
        assert main(["record", "--dt", "0.05", "--out", str(tmp_path / name)] + extra) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"charmie-dynamics: error: --out {tmp_path / name} exists: a recording "
                       "folder is never replaced (--overwrite applies to files); give a new "
                       "name"], err
    assert (user / "notes.txt").read_text() == "mine" and len(list(user.iterdir())) == 1
    assert (tmp_path / "plain").read_text() == "mine"
    assert main(["record", "--dt", "0.05", "--out", str(tmp_path / "new" / "sub" / "bag")]) == 0
    assert sorted(p.name for p in (tmp_path / "new" / "sub" / "bag").iterdir()) == \
        ["bag_0.mcap", "metadata.yaml"]


def test_a_robot_recording_round_trip_with_the_base_unmeasured(tmp_path, capsys):
    """Issue 36 item 3 and the unmeasured path through the CLI: ``record --joint-map`` writes
    the robot's names and units (hardware names, the actuators in mm) and identify reads it
    back with the same map; where the base's messages carry no efforts (as from odometry),
    its inputs are left out of the fit and the report says so."""
    import yaml

    from charmie_dynamics.recordings import open_recording, write_recording
    from charmie_dynamics.recordings.definitions import JOINT_STATE_DEFINITION
    from robot_graph_config import ROBOT_MAP
    rec = tmp_path / "robot"
    assert main(["record", "--dt", "0.02", "--effort-noise", "0.2", "--joint-map",
                 str(ROBOT_MAP), "--out", str(rec)]) == 0
    recording = open_recording(rec)
    first = next(m.message for m in recording.messages(["/actuator_states"]))
    assert first.name == ["lift_actuator", "torso_actuator"]
    assert all(10 < p < 200 for p in first.position)             # millimetres from 0.33 m
    # the same messages with the base (d1, d2, theta3) apart and without efforts
    split, topics = [], {"/joint_states": (logs.JOINT_STATE, JOINT_STATE_DEFINITION),
                         "/actuator_states": (logs.JOINT_STATE, JOINT_STATE_DEFINITION)}
    base = ("d1", "d2", "theta3")
    for m in recording.messages(["/joint_states", "/actuator_states"]):
        msg = m.message
        fields = {"header": {"stamp": {"sec": msg.header.stamp.sec,
                                       "nanosec": msg.header.stamp.nanosec}, "frame_id": ""}}
        keep = [k for k, n in enumerate(msg.name) if n not in base]
        apart = [k for k, n in enumerate(msg.name) if n in base]
        for cols, effort in ((keep, True), (apart, False)):
            if cols:
                split.append((m.topic, m.log_time, dict(fields, name=[msg.name[k] for k in cols],
                              position=[msg.position[k] for k in cols],
                              velocity=[msg.velocity[k] for k in cols],
                              effort=[msg.effort[k] for k in cols] if effort else [])))
    write_recording(tmp_path / "no_base_efforts", topics, split)
    for name, unmeasured in (("robot", False), ("no_base_efforts", True)):
        out = tmp_path / f"{name}.yaml"
        capsys.readouterr()
        assert main(["identify", "--log", str(tmp_path / name), "--joint-map", str(ROBOT_MAP),
                     "--out", str(out)]) == 0, capsys.readouterr().err
        printed = capsys.readouterr().out
        assert ("inputs without efforts, not fitted: d1, d2, theta3" in printed) == unmeasured
        report = (tmp_path / f"{name}_report" / "report.txt").read_text()
        rows = {line.split()[0]: line for line in report.splitlines()
                if line.split() and line.split()[0] in ("d1", "theta7a")}
        assert ("no efforts" in rows["d1"]) == unmeasured and "no efforts" not in rows["theta7a"]
        assert isinstance(yaml.safe_load(out.read_text()), dict)
