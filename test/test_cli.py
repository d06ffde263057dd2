"""The ``charmie-dynamics`` command line: exit status, output, one-line errors without
tracebacks (``main`` in this process; in a process of its own where the process is tested:
the console script, hostile inputs under a memory cap, the import footprint)."""
import contextlib
import csv
import io
import json
import math
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from charmie_dynamics.cli.main import COMMANDS, main
from conftest import CHARMIE, ROOT
from test_edge_models import FIXED, MASSLESS, body, document

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run_cli(*args, cwd=ROOT, memory_cap=None) -> subprocess.CompletedProcess:
    """The CLI's exit status and output: ``main`` run in this process (the command's logic; a
    process start costs seconds), or with ``memory_cap`` (bytes of address space) in a
    process of its own, for inputs that would fill the memory if the guard failed
    (/dev/zero): a regression then fails the test with a MemoryError (or a hang with
    TimeoutExpired) instead of starving the machine."""
    argv = [str(a) for a in args]
    if memory_cap is not None:
        env = dict(os.environ, MPLBACKEND="Agg",
                   OPENBLAS_NUM_THREADS="1")          # each BLAS thread reserves address space

        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))
        return subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", *argv],
                              capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
                              preexec_fn=limit)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exc:             # argparse: usage errors, --help
                status = exc.code
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())


def assert_one_error_line(proc, *fragments):
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("charmie-dynamics: error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def console_script():
    found = shutil.which("charmie-dynamics", path=str(Path(sys.executable).parent))
    return found or shutil.which("charmie-dynamics")


# ---------------------------------------------------------------- validate-model

def test_validate_bundled_model():
    proc = run_cli("validate-model", "config/charmie.yaml")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout.strip()
    assert out.startswith("config/charmie.yaml: valid model 'charmie'")
    for fragment in ("27 bodies", "21 coordinates", "2 actuators", "1 springs", "2 balancers",
                     "total mass 54.670 kg"):
        assert fragment in out


@pytest.mark.slow
def test_console_script_validate():
    script = console_script()
    assert script is not None, "the charmie-dynamics console script is not installed"
    proc = subprocess.run([script, "validate-model", str(CHARMIE)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "valid model 'charmie': 27 bodies, 21 coordinates" in proc.stdout
    bad = subprocess.run([script, "validate-model", str(ROOT / "no_such.yaml")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert_one_error_line(bad, "no_such.yaml", "cannot read the model file")


def _bad_models(tmp_path):
    with open(CHARMIE, encoding="utf-8") as f:
        good = yaml.safe_load(f)
    unknown_parent = yaml.safe_load(yaml.safe_dump(good))
    unknown_parent["bodies"][5]["parent"] = "body_77"
    axis_vector = yaml.safe_load(yaml.safe_dump(good))
    axis_vector["bodies"][2]["joint"]["axis"] = [0, 0, 0]     # no direction
    cases = {
        "unknown_parent": (yaml.safe_dump(unknown_parent), ["parent", "'body_77'", "expected"]),
        "not_yaml": ("bodies: [unclosed\n", ["not valid YAML"]),
        "python_tag": ('!!python/object/apply:os.system ["echo hi"]\n', ["not valid YAML"]),
        "axis_vector": (yaml.safe_dump(axis_vector), ["joint.axis", "expected"]),
    }
    return cases


def test_validate_refuses_what_the_node_refuses_at_start(tmp_path):
    """A spring whose two points (on two bodies) coincide at the default inputs has no
    direction there: the dynamics node refuses the model at start (the loads are not finite);
    validate-model said it was valid (an attack's finding)."""
    body = {"mass": 1.0, "com": [0, 0, 0.1], "inertia": {"solid_box": [0.1, 0.1, 0.2]}}
    document = {"format": "charmie_dynamics/model/1", "name": "pinched",
                "units": {"length": "m"},
                "bodies": [{"name": "a", "parent": "world", "points": {"p": [0, 0, 0.3]},
                            "joint": {"type": "R", "axis": "z", "coordinate": "qa"}, **body},
                           {"name": "b", "parent": "a", "origin": [0, 0, 0.3],
                            "points": {"q": [0, 0, 0]},
                            "joint": {"type": "R", "axis": "y", "coordinate": "qb"}, **body}],
                "springs": [{"name": "s", "between": ["a.p", "b.q"], "stiffness": 100.0,
                             "free_length": 0.1}]}
    path = tmp_path / "pinched.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    proc = run_cli("validate-model", path)
    assert_one_error_line(proc, str(path), "does not assemble at its default inputs",
                          "not finite")
    assert proc.stdout == ""
    # moved apart, the same model is valid
    document["bodies"][1]["points"]["q"] = [0.1, 0, 0]
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    assert run_cli("validate-model", path).returncode == 0


def test_validate_evaluates_a_model_with_loops_at_its_assembled_configuration(tmp_path):
    """The five-bar with a spring whose points coincide with every joint at zero, but not
    where its loops assemble (the guess): valid, as the dynamics node takes it (the loop
    evaluator's tree once made its first evaluation at zero and refused it)."""
    with open(ROOT / "config/examples/five_bar.yaml", encoding="utf-8") as f:
        document = yaml.safe_load(f)
    bodies = {b["name"]: b for b in document["bodies"]}
    bodies["link1_1"]["points"]["a"] = [0.5, 0, 0]
    bodies["link1_2"]["points"]["b"] = [0.3, 0, 0]     # link1_2 stands at x = 0.2
    document["springs"] = [{"name": "s", "between": ["link1_1.a", "link1_2.b"],
                            "stiffness": 100.0, "free_length": 0.1}]
    path = tmp_path / "five_bar_spring.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    proc = run_cli("validate-model", path)
    assert proc.returncode == 0, proc.stderr
    assert "valid model 'five_bar'" in proc.stdout and "1 springs" in proc.stdout


@pytest.mark.parametrize("case", ["unknown_parent", "not_yaml", "python_tag", "axis_vector",
                                  "missing"])
def test_validate_bad_model(tmp_path, case):
    path = tmp_path / f"{case}.yaml"
    if case == "missing":
        fragments = ["cannot read the model file"]
    else:
        text, fragments = _bad_models(tmp_path)[case]
        path.write_text(text, encoding="utf-8")
    proc = run_cli("validate-model", path)
    assert_one_error_line(proc, str(path), *fragments)
    assert proc.stdout == ""
    if case == "python_tag":
        assert "hi" not in proc.stdout



def test_usage_error_is_exit_2():
    proc = run_cli("validate-model")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "usage:" in proc.stderr


# ---------------------------------------------------------------- fk

def test_fk_default_state():
    proc = run_cli("fk")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == {"model", "coordinates", "frames", "points", "auxiliary"}
    assert doc["model"] == "charmie"
    assert len(doc["coordinates"]) == 21
    assert len(doc["frames"]) == 27
    f12 = doc["frames"]["body_12a"]
    assert f12["parent"] == "body_11a"
    R = np.array(f12["rotation"])
    assert R.shape == (3, 3)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-12)
    assert len(f12["origin"]) == 3
    assert len(doc["points"]["body_12a.D12a"]) == 3
    assert {"act4", "act5", "spring_5s"} <= set(doc["auxiliary"])
    # default act4 = 0.400 m: seed 001 eq. 14
    assert doc["coordinates"]["d4"] == pytest.approx(0.5735 - math.sqrt(0.4**2 - 0.095**2),
                                                     abs=1e-12)
    assert doc["auxiliary"]["act4"]["length"] == pytest.approx(0.4, abs=1e-12)
    assert doc["coordinates"]["theta8a"] == 0.0
    # world frame of body_1: origin at the wheel axle height 36.8 mm
    assert doc["frames"]["body_1"]["origin"] == pytest.approx([0, 0, 0.0368], abs=1e-15)


def test_fk_with_state(tmp_path):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"positions": {"act4": 0.42, "theta8a": 0.3}}), encoding="utf-8")
    proc = run_cli("fk", "--state", state, "--indent", 2)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    expected = 0.383 - 0.0995 + 0.290 - math.sqrt(0.42**2 - 0.095**2)
    assert expected == pytest.approx(0.5735 - math.sqrt(0.42**2 - 0.095**2), abs=1e-15)
    assert abs(doc["coordinates"]["d4"] - expected) < 1e-12
    assert doc["coordinates"]["theta8a"] == 0.3
    assert doc["auxiliary"]["act4"]["length"] == pytest.approx(0.42, abs=1e-12)
    # the actuator's segment really joins E3 and F4
    seg = doc["auxiliary"]["act4"]
    assert np.linalg.norm(np.subtract(seg["end"], seg["start"])) == pytest.approx(0.42, abs=1e-12)


@pytest.mark.parametrize("case,content,fragments", [
    ("unknown", {"positions": {"theta99": 0.1}}, ["positions.theta99", "unknown name"]),
    ("nan_string", {"positions": {"theta8a": "nan"}}, ["positions.theta8a", "'nan'",
                                                       "expected a finite number"]),
    ("nan_literal", '{"positions": {"theta8a": NaN}}', ["positions.theta8a", "nan",
                                                        "expected a finite number"]),
    ("driven", {"positions": {"d4": 0.1}}, ["d4", "driven by actuator act4", "give act4"]),
    ("out_of_stroke", {"positions": {"act4": 0.9}}, ["act4", "0.9", "outside the valid range",
                                                     "[0.31, 0.51]"]),
    ("malformed", '{"positions": {"act4": 0.42', ["not valid JSON"]),
    ("not_object", "[1, 2]", ["expected a JSON object"]),
    ("unknown_key", {"position": {"act4": 0.42}}, ["unknown key(s) position"]),
    ("missing", None, ["cannot read the state file"]),
])
def test_fk_invalid_state(tmp_path, case, content, fragments):
    path = tmp_path / f"{case}.json"
    if content is not None:
        path.write_text(content if isinstance(content, str) else json.dumps(content),
                        encoding="utf-8")
    for command in ("fk", "id"):
        proc = run_cli(command, "--state", path)
        assert_one_error_line(proc, str(path), *fragments)   # the file named, whatever failed
        assert proc.stdout == ""


# ---------------------------------------------------------------- analyze

def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


def test_analyze_kinematic_validation(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("analyze", "--motion", "kinematic-validation", "--out", out, "--dt", 0.05)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    header, data = _read_csv(out / "kinematics.csv")
    assert header[:4] == ["time", "body_12a.D12a.x", "body_12a.D12a.y", "body_12a.D12a.z"]
    assert "act4.length" in header and "d4" in header
    assert data.shape == (401, len(header))
    assert data[0, 0] == 0.0 and data[-1, 0] == pytest.approx(20.0, abs=1e-12)
    # act4 from 0.400 m at 5 mm/s; d4 from seed 001 eq. 14
    L = data[:, header.index("act4.length")]
    np.testing.assert_allclose(L, 0.4 + 0.005 * data[:, 0], atol=1e-12)
    np.testing.assert_allclose(data[:, header.index("d4")], 0.5735 - np.sqrt(L**2 - 0.095**2),
                               atol=1e-12)
    png = (out / "claw_position.png").read_bytes()
    assert png.startswith(PNG_SIGNATURE) and len(png) > 1000
    assert "401 samples" in proc.stdout


def test_analyze_bad_dt(tmp_path):
    proc = run_cli("analyze", "--motion", "kinematic-validation", "--out", tmp_path, "--dt", 0)
    assert_one_error_line(proc, "--dt", "expected a sample period")


def test_analyze_bad_dt_console_script(tmp_path):
    script = console_script()
    assert script is not None
    proc = subprocess.run([script, "analyze", "--motion", "kinematic-validation", "--out",
                           str(tmp_path), "--dt", "0"], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert_one_error_line(proc, "--dt 0.0", "expected a sample period in [0.001, 0.5] s")


def test_analyze_unknown_point(tmp_path):
    proc = run_cli("analyze", "--motion", "kinematic-validation", "--out", tmp_path, "--dt", 0.1,
                   "--point", "body_12a.nope")
    assert_one_error_line(proc, "--point", "unknown point 'body_12a.nope'")


def test_analyze_tracks_the_last_bodys_origin_on_a_model_without_charmies_claw(tmp_path):
    """--point defaults to CHARMIE's claw only where the model has it (the attack: every other
    open tree failed on an option the user never gave)."""
    proc = run_cli("analyze", "--model", ROOT / "config" / "examples" / "puma.yaml", "--out",
                   tmp_path, "--dt", 0.1)
    assert proc.returncode == 0, proc.stderr
    header, _ = _read_csv(tmp_path / "kinematics.csv")
    assert header[:4] == ["time", "link6.origin.x", "link6.origin.y", "link6.origin.z"]


def test_analyze_kinematic_validation_other_model(tmp_path):
    """The reference motion on a model without CHARMIE's actuators: no traceback."""
    proc = run_cli("analyze", "--motion", "kinematic-validation", "--model",
                   ROOT / "config" / "examples" / "puma.yaml", "--point", "link6.origin",
                   "--out", tmp_path, "--dt", 0.1)
    assert "Traceback" not in proc.stderr, proc.stderr
    if proc.returncode == 0:
        header, data = _read_csv(tmp_path / "kinematics.csv")
        assert header[:2] == ["time", "link6.origin.x"] and data.shape[0] == 201
    else:
        assert_one_error_line(proc, "kinematic-validation")


def _write_traj(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_analyze_trajectory_csv(tmp_path):
    # act4 at 20 mm/s, within its 50 mm/s velocity limit
    traj = _write_traj(tmp_path / "traj.csv", ["time", "act4", "theta8a"],
                       [[0.0, 0.40, 0.0], [0.5, 0.41, 0.05], [1.0, 0.42, 0.1], [1.5, 0.43, 0.15]])
    out = tmp_path / "out"
    proc = run_cli("analyze", "--trajectory", traj, "--out", out)
    assert proc.returncode == 0, proc.stderr
    header, data = _read_csv(out / "kinematics.csv")
    assert data.shape[0] == 4
    np.testing.assert_allclose(data[:, header.index("time")], [0.0, 0.5, 1.0, 1.5])
    np.testing.assert_allclose(data[:, header.index("theta8a")], [0.0, 0.05, 0.1, 0.15])
    np.testing.assert_allclose(data[:, header.index("act4.length")], [0.40, 0.41, 0.42, 0.43])
    np.testing.assert_allclose(data[2, header.index("d4")],
                               0.5735 - math.sqrt(0.42**2 - 0.095**2), atol=1e-12)
    assert (out / "claw_position.png").read_bytes().startswith(PNG_SIGNATURE)


@pytest.mark.parametrize("case,header,rows,fragments", [
    ("time_not_increasing", ["time", "act4", "theta8a"],
     [[0.0, 0.40, 0.0], [0.1, 0.41, 0.0], [0.1, 0.42, 0.0]], ["time must increase"]),
    ("time_decreasing", ["time", "act4"], [[0.2, 0.40], [0.1, 0.41], [0.3, 0.42]],
     ["time must increase"]),
    ("unknown_column", ["time", "act4", "theta99"], [[0.0, 0.4, 0.0], [0.1, 0.41, 0.0]],
     ["unknown column(s) theta99"]),
    ("not_a_number", ["time", "act4", "theta8a"], [[0.0, 0.4, 0.0], [0.1, "abc", 0.0]],
     ["row 3, column act4", "'abc'", "expected a number"]),
    ("nan", ["time", "act4", "theta8a"], [[0.0, 0.4, 0.0], [0.1, "nan", 0.0]],
     ["expected finite numbers"]),
    ("ragged", ["time", "act4", "theta8a"], [[0.0, 0.4, 0.0], [0.1, 0.41]],
     ["row 3 has 2 values, expected 3"]),
    ("no_time", ["t", "act4"], [[0.0, 0.4], [0.1, 0.41]], ["no 'time' column"]),
    ("out_of_stroke", ["time", "act4"], [[0.0, 0.4], [10.0, 0.6]],
     ["act4", "outside the valid range"]),
])
def test_analyze_bad_trajectory(tmp_path, case, header, rows, fragments):
    traj = _write_traj(tmp_path / f"{case}.csv", header, rows)
    out = tmp_path / "out"
    proc = run_cli("analyze", "--trajectory", traj, "--out", out)
    assert_one_error_line(proc, *fragments)
    assert not (out / "kinematics.csv").exists()


def test_analyze_missing_trajectory(tmp_path):
    proc = run_cli("analyze", "--trajectory", tmp_path / "none.csv", "--out", tmp_path / "out")
    assert_one_error_line(proc, "none.csv", "cannot read")


# ---------------------------------------------------------------- import footprint

def test_core_imports_without_rclpy_and_matplotlib(tmp_path):
    # a decoy rclpy on the path: importing it would succeed and be seen in sys.modules
    (tmp_path / "rclpy").mkdir()
    (tmp_path / "rclpy" / "__init__.py").write_text("", encoding="utf-8")
    code = ("import charmie_dynamics, sys\n"
            "import charmie_dynamics.cli.main\n"
            "m = charmie_dynamics.load_model(charmie_dynamics.bundled_model())\n"
            "assert 'rclpy' not in sys.modules, 'rclpy imported'\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n"
            "print('ok', m.n_bodies)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok 27"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_its_help(name, capsys):
    """The listing says each command's help line; each command's own --help is its module's."""
    if name == "bringup":
        pytest.importorskip("rclpy")
    with pytest.raises(SystemExit) as listing:
        main(["--help"])
    assert listing.value.code == 0
    assert " ".join(COMMANDS[name].help.split()) in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit) as own:
        main([name, "--help"])
    assert own.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: charmie-dynamics {name} [-h]")


def test_bringup_without_ros_is_one_line(monkeypatch):
    # None in sys.modules: importing the ROS layer fails as it does without rclpy
    monkeypatch.setitem(sys.modules, "charmie_dynamics.ros.tools.bringup", None)
    assert_one_error_line(run_cli("bringup", "--mode", "sim"), "bringup needs ROS 2",
                          "scripts/setup.sh")


@pytest.mark.parametrize("argv", [["--help"], ["fk"]])
def test_light_commands_import_no_scipy_or_matplotlib(argv):
    """The listing and ``fk`` leave the other commands' modules unimported (cli/main.py
    COMMANDS), so neither scipy nor matplotlib. Without the JIT: numba itself imports scipy
    (its version check, and compiled np.linalg binds to scipy's BLAS)."""
    code = ("import contextlib, io, sys\n"
            "from charmie_dynamics.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n"
            f"        main({argv!r})\n"
            "    except SystemExit as exc:\n"
            "        assert exc.code == 0, exc.code\n"
            "print(sorted(m for m in sys.modules if m.partition('.')[0] in "
            "('scipy', 'matplotlib')))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, CHARMIE_DYNAMICS_JIT="0"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_plots_optional(tmp_path):
    """matplotlib and tqdm are optional (the `plots` extra): without them the CLI runs, and
    a command writing plots says in one line what to install, before any work."""
    for name in ("matplotlib", "tqdm"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(f"raise ImportError('no {name}')\n",
                                                     encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", *map(str, args)],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)

    assert cli("--help").returncode == 0
    out = tmp_path / "out"
    assert_one_error_line(cli("analyze", "--out", out), "analyze", "pip install matplotlib")
    assert not out.exists()
    assert_one_error_line(cli("identify", "--model", ROOT / "config" / "charmie.yaml",
                              "--log", tmp_path / "log.csv", "--out", tmp_path / "id.yaml"),
                          "identify", "pip install matplotlib")


def test_no_progress_bar_without_tqdm(tmp_path, monkeypatch):
    from charmie_dynamics.cli import output_files

    monkeypatch.setattr(output_files, "tqdm", None)
    output_files.write_all(tmp_path / "out", [("a.txt", lambda path: path.write_text("a"))])
    assert (tmp_path / "out" / "a.txt").read_text() == "a"


# ---------------------------------------------------------------- hostile files and inputs (issue 10)
# Each of these broke the contract on the package before issue 10: a traceback (MemoryError,
# UnicodeDecodeError, ValueError, RecursionError, FileExistsError), a hang (/dev/zero or a
# FIFO read to the end), or NaN printed / written with exit status 0.

def _hostile(tmp_path, case):
    """The command line of a case and a fragment of its error, its bad file written into
    tmp_path."""
    out = tmp_path / "out"

    def file(content, name="input"):
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def fifo():
        os.mkfifo(tmp_path / "m.fifo")
        return tmp_path / "m.fifo"

    model_head = "format: charmie_dynamics/model/1\nname: x\n"
    cases = {
        "model_dev_zero": lambda: (["validate-model", "/dev/zero"], "not a regular file"),
        "state_dev_zero": lambda: (["fk", "--state", "/dev/zero"], "not a regular file"),
        "analyze_model_dev_zero": lambda: (["analyze", "--model", "/dev/zero", "--out", out],
                                           "not a regular file"),
        "analyze_trajectory_dev_zero": lambda: (["analyze", "--trajectory", "/dev/zero",
                                                 "--out", out], "not a regular file"),
        "model_fifo": lambda: (["validate-model", fifo()], "not a regular file"),
        "model_not_utf8": lambda: (["validate-model", file(b"name: \xff\xfe\n")],
                                   "not UTF-8 text"),
        "state_binary": lambda: (["id", "--state", file(bytes(range(256)))], "not UTF-8 text"),
        "trajectory_binary": lambda: (["analyze", "--trajectory", file(bytes(range(256)) * 4),
                                       "--out", out], "not UTF-8 text"),
        "state_huge_integer": lambda: (["fk", "--state", file('{"positions": {"act4": '
                                                              + "1" * 5000 + "}}")],
                                       "4300 digits"),
        "model_huge_integer": lambda: (["validate-model", file(model_head + "gravity: [0, 0, "
                                                               + "1" * 5000 + "]\n")],
                                       "4300 digits"),
        "state_deep_nesting": lambda: (["fk", "--state", file("[" * 100000 + "]" * 100000)],
                                       "nested too deeply"),
        "model_deep_nesting": lambda: (["validate-model", file("a: " + "[" * 1000 + "]" * 1000)],
                                       "nested too deeply"),
        "model_impossible_date": lambda: (["validate-model", file("name: 2001-02-30\n")],
                                          "day is out of range for month"),
        "analyze_out_is_a_file": lambda: (["analyze", "--motion", "kinematic-validation", "--dt",
                                           "0.5", "--out", file("x")],
                                          "exists and is not a directory"),
        "id_huge_velocity": lambda: (["id", "--state", file(json.dumps(
            {"velocities": {"theta7a": 1e200}}))], "velocities.theta7a: 1e+200 is implausible"),
        "analyze_huge_position": lambda: (["analyze", "--trajectory",
                                           file("time,theta7a\n0,0\n0.1,1e300\n0.2,0\n"),
                                           "--out", out], "row 3, column theta7a: 1e+300 is "
                                                          "implausible"),
        "dt_tiny": lambda: (["analyze", "--motion", "validation", "--dt", "1e-9", "--out", out],
                            "expected a sample period in [0.001, 0.5] s"),
        "payload_huge": lambda: (["id", "--payload", "body_12a.D12a:1e300"],
                                 "0 <= MASS <= 1e+06 kg"),
    }
    return cases[case]()


HOSTILE = ["model_dev_zero", "state_dev_zero", "analyze_model_dev_zero",
           "analyze_trajectory_dev_zero", "model_not_utf8", "state_binary", "trajectory_binary",
           "state_huge_integer", "model_huge_integer", "state_deep_nesting", "model_deep_nesting",
           "model_impossible_date", "analyze_out_is_a_file", "id_huge_velocity",
           "analyze_huge_position", "dt_tiny", "payload_huge", "model_fifo"]


@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_input_gives_one_error_line(tmp_path, case):
    args, fragment = _hostile(tmp_path, case)
    proc = run_cli(*args, memory_cap=4 << 30)
    assert_one_error_line(proc, fragment)
    assert proc.stdout == ""                    # no NaN (nor anything else) printed
    assert not (tmp_path / "out").exists()      # nothing written


# ---------------------------------------------------------------- models at the edges (issue 10)

def _edge_model(tmp_path, kind):
    """test_edge_models' FIXED (two 1 kg bodies on fixed joints: no coordinates) or
    MASSLESS (two massless bodies on a revolute joint about x and a prismatic one)."""
    path = tmp_path / f"{kind}.yaml"
    path.write_text(yaml.safe_dump({"fixed": FIXED, "massless": MASSLESS}[kind]),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("kind,summary", [("fixed", "2 bodies, 0 coordinates"),
                                          ("massless", "2 bodies, 2 coordinates")])
def test_edge_model_validate_fk_id(tmp_path, kind, summary):
    model = _edge_model(tmp_path, kind)
    proc = run_cli("validate-model", model)
    assert proc.returncode == 0 and summary in proc.stdout, proc.stderr
    proc = run_cli("fk", "--model", model)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["frames"]["b"]["origin"] == pytest.approx([0, 0, 0.2])
    assert len(doc["coordinates"]) == (0 if kind == "fixed" else 2)
    payload = "a.arm:2" if kind == "massless" else "a.tip:2"
    proc = run_cli("id", "--model", model, "--payload", payload)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["base_reaction"]["body"] == "a"
    weight = 2.0 * 9.81 + (2.0 * 9.81 if kind == "fixed" else 0.0)
    assert doc["base_reaction"]["force"] == pytest.approx([0, 0, weight])
    if kind == "massless":                      # 2 kg at 0.5 m from the x axis
        assert doc["joint_efforts"] == pytest.approx({"q1": 9.81, "d2": 0.0})
    else:
        assert doc["joint_efforts"] == {}


@pytest.mark.parametrize("kind", ["fixed", "massless"])
def test_edge_model_analyze(tmp_path, kind):
    out = tmp_path / "out"
    proc = run_cli("analyze", "--model", _edge_model(tmp_path, kind), "--point", "b.origin",
                   "--dt", "0.5", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    header, data = _read_csv(out / "kinematics.csv")
    assert header[:4] == ["time", "b.origin.x", "b.origin.y", "b.origin.z"] and data.shape[0] == 11
    header, data = _read_csv(out / "loads.csv")
    assert np.all(np.isfinite(data))
    if kind == "fixed":                         # at rest on the floor: its weight
        np.testing.assert_allclose(data[:, header.index("base_reaction.force.z")], 2 * 9.81)


# ---------------------------------------------------------------- export-urdf: models URDF cannot say

def _joint(coordinate, multiplier=1.0):
    return {"type": "R", "axis": "z", "coordinate": coordinate, "multiplier": multiplier}


URDF_UNSAYABLE = {
    # theta1 moves two joints, neither with multiplier +-1: no URDF joint takes its value
    "no_unit_leader": (document(body("a", "world", joint=_joint("theta1", 2.0)),
                                body("b", "a", joint=_joint("theta1", 0.5)), name="coupled"),
                       ("theta1", "multiplier", "a, b")),
    # fixed joint of body a is "a_joint", the coordinate of body b too
    "duplicate_joint_name": (document(body("a", "world"), body("b", "a", joint=_joint("a_joint")),
                                      name="clash"),
                             ("duplicate joint names a_joint",)),
}


@pytest.mark.parametrize("case", sorted(URDF_UNSAYABLE))
def test_export_urdf_unsayable_model(tmp_path, case):
    doc, fragments = URDF_UNSAYABLE[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert run_cli("validate-model", path).returncode == 0       # the loader accepts it
    proc = run_cli("export-urdf", "--model", path, "--out", tmp_path / "out")
    assert_one_error_line(proc, str(path), "URDF export", *fragments)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_trajectory_with_100k_duplicate_columns_is_refused_quickly(tmp_path):
    """The duplicate-column check is linear: 100,000 columns are refused at once, naming a
    duplicate (the check counted each column's occurrences, quadratic: 1 min 43 s)."""
    from charmie_dynamics import load_model
    from charmie_dynamics.trajectories import TrajectoryFileError, from_csv
    from conftest import CHARMIE
    model = load_model(CHARMIE)
    n = 100_000
    header = ["time"] + [("act4", "theta8a", "act4.velocity")[i % 3] for i in range(n - 1)]
    path = tmp_path / "wide.csv"
    path.write_text(",".join(header) + "\n" + ",".join(["0"] * n) + "\n" + ",".join(["1"] * n) + "\n")
    with pytest.raises(TrajectoryFileError) as err:
        from_csv(model, str(path))
    message = str(err.value)
    assert "duplicate column(s)" in message and "act4" in message and "\n" not in message


# ---------------------------------------------------------------- names with '/'

SLASHED = document(
    body("arm/upper", "world", (0, 0, 0.1),
         {"type": "R", "axis": "y", "coordinate": "arm/shoulder"}, points={"tip": [0.3, 0, 0]}),
    body("arm/fore.arm", "arm/upper", (0.3, 0, 0), {"type": "R", "axis": "y",
                                                    "coordinate": "arm/elbow.joint"},
         points={"tip": [0.25, 0, 0]}),
    name="ns/arm")


def test_names_with_slashes_through_the_cli(tmp_path):
    """Bodies and coordinates named with '/' (and '.') through fk, id's BODY.POINT payloads and
    forces and analyze's --point: every name parser splits at the last '.' or ':' only."""
    model = tmp_path / "slashed.yaml"
    model.write_text(yaml.safe_dump(SLASHED), encoding="utf-8")
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"positions": {"arm/shoulder": 0.5, "arm/elbow.joint": -0.25}}),
                     encoding="utf-8")
    proc = run_cli("fk", "--model", model, "--state", state)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["model"] == "ns/arm"
    assert doc["coordinates"] == {"arm/shoulder": 0.5, "arm/elbow.joint": -0.25}
    assert doc["frames"]["arm/fore.arm"]["parent"] == "arm/upper"
    # the forearm's tip: the upper arm turned 0.5 rad about y, the forearm 0.25 rad back
    expected = [0.3 * math.cos(0.5) + 0.25 * math.cos(0.25), 0.0,
                0.1 - 0.3 * math.sin(0.5) - 0.25 * math.sin(0.25)]
    np.testing.assert_allclose(doc["points"]["arm/fore.arm.tip"], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(doc["frames"]["arm/fore.arm"]["origin"],
                               doc["points"]["arm/upper.tip"], rtol=0, atol=1e-12)
    proc = run_cli("id", "--model", model, "--state", state, "--payload",
                   "arm/fore.arm.tip:2.0", "--force", "arm/upper.tip:0,0,-9.81")
    assert proc.returncode == 0, proc.stderr
    loads = json.loads(proc.stdout)
    assert set(loads["joint_efforts"]) == {"arm/shoulder", "arm/elbow.joint"}
    assert loads["base_reaction"]["body"] == "arm/upper"
    # at rest the elbow carries the 2 kg payload at the forearm's tip: 2 g 0.25 cos(0.25),
    # g = 9.81 the format's default
    elbow_without = json.loads(run_cli("id", "--model", model, "--state", state).stdout)
    g = 9.81
    assert loads["joint_efforts"]["arm/elbow.joint"] - \
        elbow_without["joint_efforts"]["arm/elbow.joint"] == pytest.approx(
            -2.0 * g * 0.25 * math.cos(0.25), abs=1e-9)
    proc = run_cli("analyze", "--motion", "kinematic-validation", "--model", model, "--point",
                   "arm/fore.arm.tip", "--out", tmp_path / "out", "--dt", 0.1)
    assert proc.returncode == 0, proc.stderr
    header, _ = _read_csv(tmp_path / "out" / "kinematics.csv")
    assert "arm/fore.arm.tip.x" in header, header
    assert_one_error_line(run_cli("id", "--model", model, "--payload", "arm/fore.arm.nope:1"),
                          "unknown point 'arm/fore.arm.nope'", "points of arm/fore.arm: tip")
