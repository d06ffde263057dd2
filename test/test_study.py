"""``charmie-dynamics study``: the optimiser against a brute-force grid of separate
``analyze`` runs on model files edited by plain text substitution, the envelope against
``analyze``'s loads.csv, the sensitivities against central differences of those runs, an
infeasible region, joblib and Dask against one process, and the one-line errors."""
import csv
import socket

import numpy as np
import pytest
import yaml

import charmie_dynamics.cli.analyze as analyze_cli
import charmie_dynamics.cli.study as study_cli
from charmie_dynamics.cli.main import main
from conftest import CHARMIE

#: spring_5s's two lines in config/charmie.yaml, as written there
STIFFNESS_LINE = "    stiffness: 2.0                  # N/mm\n"
PRELOAD_LINE = "    preload: 50                     # N\n"
TEXT = CHARMIE.read_text()
# about a minute: the optimisers against grids of analyze runs
pytestmark = pytest.mark.slow


def _no_plot(path, *args, **kwargs):
    path.write_bytes(b"")


@pytest.fixture
def no_plots(monkeypatch):
    """analyze's and study's plots stubbed (the tests read the numbers; a plot takes a
    second)."""
    for name in ("plot_series", "plot_efforts"):
        monkeypatch.setattr(analyze_cli, name, _no_plot)
    for name in ("plot_input_efforts", "plot_response", "plot_torque_speed"):
        monkeypatch.setattr(study_cli, name, _no_plot)


def _columns(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return {name: np.array([float(r[k]) for r in rows[1:]]) for k, name in enumerate(rows[0])}


def _edited(tmp_path, stiffness=None, preload=None):
    """CHARMIE's file with spring_5s's values replaced by text substitution."""
    text = TEXT
    for line, value in ((STIFFNESS_LINE, stiffness), (PRELOAD_LINE, preload)):
        assert text.count(line) == 1
        if value is not None:
            text = text.replace(line, line.split(":")[0] + f": {value!r}\n")
    path = tmp_path / f"charmie_{stiffness!r}_{preload!r}.yaml"
    path.write_text(text)
    return path


def _analyze(tmp_path, model, *extra):
    out = tmp_path / f"an_{model.stem}"
    assert main(["analyze", "--model", str(model), "--out", str(out), *extra]) == 0
    return _columns(out / "loads.csv")


def _peak_act5(tmp_path, **values):
    return float(np.max(np.abs(_analyze(tmp_path, _edited(tmp_path, **values))["act5.force"])))


def _study(tmp_path, name, text, *args):
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"model: {CHARMIE}\n" + text)
    out = tmp_path / name
    assert main(["study", str(path), "--out", str(out), *args]) == 0
    return out


def _best(out):
    spring = yaml.safe_load((out / "best_model.yaml").read_text())["springs"][0]
    return spring["stiffness"], spring["preload"]


def _free_port() -> int:
    """A port nothing listens on: bound, then released."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_one_parameter_optimum_equals_the_analyze_grid(tmp_path, no_plots, capsys):
    out = _study(tmp_path, "one", """kind: optimize
parameters: [{path: springs.spring_5s.stiffness, bounds: [5, 35]}]
objective: act5.peak_force
optimize: {seed: 3, population: 8, iterations: 20}
""")
    grid = np.linspace(5, 35, 61)
    peaks = [_peak_act5(tmp_path, stiffness=float(k)) for k in grid]
    k_grid = grid[int(np.argmin(peaks))]
    k_best, _ = _best(out)
    assert abs(k_best - k_grid) <= grid[1] - grid[0]
    with open(out / "outputs.csv", newline="") as f:
        after = {r["output"]: float(r["after"]) for r in csv.DictReader(f)}
    found = _peak_act5(tmp_path, stiffness=k_best)
    assert found <= min(peaks) + 1e-9
    report = (out / "report.txt").read_text()
    assert f"act5.peak_force: {_peak_act5(tmp_path):.1f} -> {found:.1f} N" in report
    assert "best_model.yaml" in capsys.readouterr().out
    # the file holds 12 significant digits (model_file.py), the study its own float
    assert after["act5.peak_force"] == pytest.approx(found, rel=1e-9)
    marked = [line for line in (out / "best_model.yaml").read_text().splitlines()
              if line.endswith("# N/mm; study")]
    assert len(marked) == 1 and "stiffness:" in marked[0]


def test_two_parameter_optimum_and_sensitivities(tmp_path, monkeypatch):
    for name in ("plot_series", "plot_efforts"):
        monkeypatch.setattr(analyze_cli, name, _no_plot)
    out = _study(tmp_path, "two", """kind: optimize
parameters:
  - {path: springs.spring_5s.stiffness, bounds: [10, 30]}
  - {path: springs.spring_5s.preload, bounds: [-100, 300]}
objective: act5.peak_force
optimize: {seed: 1, population: 8, iterations: 25}
""")
    ks, ps = np.linspace(10, 30, 11), np.linspace(-100, 300, 9)
    peaks = np.array([[_peak_act5(tmp_path, stiffness=float(k), preload=float(p)) for p in ps]
                      for k in ks])
    i, j = np.unravel_index(np.argmin(peaks), peaks.shape)
    k_best, p_best = _best(out)
    assert abs(k_best - ks[i]) <= ks[1] - ks[0] and abs(p_best - ps[j]) <= ps[1] - ps[0]
    assert _peak_act5(tmp_path, stiffness=k_best, preload=p_best) <= peaks.min() + 1e-9
    # the sensitivities: central differences of separate analyze runs
    with open(out / "sensitivity.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["parameter"] for r in rows] == ["springs.spring_5s.stiffness",
                                              "springs.spring_5s.preload"]
    for r in rows:
        x, h = float(r["value"]), float(r["step"])
        values = {"stiffness": k_best, "preload": p_best}
        key = r["parameter"].split(".")[-1]
        lo, hi = ({**values, key: x - h}, {**values, key: x + h}) if r["kind"] == "central" \
            else (({**values, key: x}, {**values, key: x + h}) if r["kind"] == "forward"
                  else ({**values, key: x - h}, {**values, key: x}))
        expected = (_peak_act5(tmp_path, **hi) - _peak_act5(tmp_path, **lo)) / \
            (hi[key] - lo[key])
        assert float(r["derivative"]) == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert (out / "efforts_validation.png").read_bytes().startswith(b"\x89PNG")


def test_envelope_peaks_equal_analyze(tmp_path, no_plots):
    out = _study(tmp_path, "env", """kind: envelope
payloads: [{body_12a.D12a: 2.0}]
""")
    loads = _analyze(tmp_path, CHARMIE, "--payload", "body_12a.D12a:2.0")
    with open(out / "envelope.csv", newline="") as f:
        rows = {r["input"]: r for r in csv.DictReader(f)}
    assert len(rows) == 21
    for name, r in rows.items():
        column = loads[f"{name}.force"] if name.startswith("act") else loads[f"{name}.effort"]
        assert float(r["peak_effort"]) == pytest.approx(np.max(np.abs(column)), rel=1e-12,
                                                        abs=1e-12)
        assert float(r["rms_effort"]) == pytest.approx(np.sqrt(np.mean(column ** 2)),
                                                       rel=1e-12, abs=1e-12)
    with open(out / "torque_speed.csv", newline="") as f:
        points = list(csv.DictReader(f))
    assert len(points) == len(loads["time"])
    assert [float(r["act5.effort"]) for r in points] == loads["act5.force"].tolist()


def test_infeasible_region_counted_and_feasible_optimum_found(tmp_path, no_plots):
    """The smallest peak tension of spring_5s that never pushes: below preload = -(its
    lowest tension at preload 0) the spring pushes (infeasible); the tension is linear in the
    preload with slope 1 (mechanisms/forces.py), so the optimum is that preload."""
    out = _study(tmp_path, "infeasible", """kind: optimize
parameters: [{path: springs.spring_5s.preload, bounds: [-400, 300]}]
objective: spring_5s.peak_tension
constraints: [spring_tension]
optimize: {seed: 2, population: 8, iterations: 20}
""")
    tension = _analyze(tmp_path, _edited(tmp_path, preload=0.0))["spring_5s.tension"]
    _, preload = _best(out)
    assert preload == pytest.approx(-tension.min(), abs=0.05)
    report = (out / "report.txt").read_text()
    counted = [line for line in report.splitlines() if line.strip().startswith("spring_tension:")]
    assert counted and int(counted[0].split(":")[1].split()[0]) > 0
    assert "active constraints: spring_tension.spring_5s" in report


SWEEP = """kind: sweep
parameters:
  - {path: springs.spring_5s.stiffness, bounds: [0, 20]}
  - {path: springs.spring_5s.preload, bounds: [-1500, 300]}
sweep: {method: grid, points: [3, 3]}
"""


def test_joblib_and_dask_give_the_single_process_table(tmp_path, no_plots):
    distributed = pytest.importorskip("dask.distributed")
    one = _study(tmp_path, "one", SWEEP)
    two = _study(tmp_path, "two", SWEEP, "--jobs", "2")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        dask = _study(tmp_path, "dask", SWEEP, "--scheduler", cluster.scheduler_address)
    table = (one / "sweep.csv").read_text()
    assert "spring_tension" in table            # an infeasible design is in the table
    assert (two / "sweep.csv").read_text() == table
    assert (dask / "sweep.csv").read_text() == table


def test_an_optimisation_on_a_cluster_of_worker_processes(tmp_path, no_plots):
    """Issue 34: on a real cluster (`dask scheduler` and `dask worker --nworkers 2` on
    127.0.0.1, separate processes, as a user starts them) the optimisation's second call
    scattered its problem under the same key the scheduler was releasing: "lost
    dependencies". Now the same best design as one process."""
    pytest.importorskip("dask.distributed")
    import subprocess
    import sys
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    logs = tmp_path / "cluster.log"
    with open(logs, "w") as log:
        cluster = [subprocess.Popen(dask + ["scheduler", "--host", "127.0.0.1", "--port",
                                            str(port), "--no-dashboard"], stdout=log, stderr=log)]
        try:
            cluster.append(subprocess.Popen(dask + ["worker", address, "--nworkers", "2",
                                                    "--nthreads", "1", "--no-dashboard"],
                                            stdout=log, stderr=log))
            from dask.distributed import Client
            with Client(address, timeout="120s") as client:   # both workers up (busy CI)
                client.wait_for_workers(2, timeout=120)
            study = """kind: optimize
parameters:
  - {path: springs.spring_5s.stiffness, bounds: [10, 30]}
  - {path: springs.spring_5s.preload, bounds: [-100, 300]}
objective: act5.peak_force
motions: [{samples: 50}]
optimize: {seed: 2, population: 6, iterations: 3}
"""
            alone = _study(tmp_path, "alone", study)
            # in a process of its own with a time limit: the fault hung the run, not failed it
            (tmp_path / "clustered.yaml").write_text(f"model: {CHARMIE}\n" + study)
            clustered = tmp_path / "clustered"
            run = subprocess.run(
                [sys.executable, "-c", "import sys; from charmie_dynamics.cli.main import main; "
                 "sys.exit(main(sys.argv[1:]))", "study", str(tmp_path / "clustered.yaml"),
                 "--out", str(clustered), "--scheduler", address],
                capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, run.stderr[-2000:]
        finally:
            for process in reversed(cluster):
                process.terminate()
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
    assert _best(clustered) == _best(alone), logs.read_text()[-2000:]


#: one stiffness parameter and the objective: what the cost caps' entries below add to
ONE = "parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]}]\nobjective: act5.peak_force\n"


@pytest.mark.parametrize("entry, fragments", [
    ("parameters: [{path: springs.spring_9s.stiffness, bounds: [1, 2]}]\n"
     "objective: act5.peak_force\n", ["parameters[0].path", "spring_9s"]),
    ("parameters: [{path: springs.spring_5s.stiffness, bounds: [-1, 2]}]\n"
     "objective: act5.peak_force\n", ["parameters[0].bounds", "-1", "stiffness", ">= 0"]),
    ("parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]}]\n"
     "objective: act9.peak_force\n", ["objective", "act9.peak_force"]),
    # the cost caps: refused when read, before any design
    (ONE + "motions: [{samples: 20001}]\n", ["motions[0].samples", "20001", "[1, 20000]"]),
    (ONE + "motions: [" + ", ".join(["validation"] * 17) + "]\n", ["motions", "1 to 16 motions"]),
    (ONE + "payloads: [" + ", ".join(["{}"] * 17) + "]\n", ["payloads", "1 to 16 load cases"]),
    (ONE + "motions: [" + ", ".join(["{samples: 20000}"] * 6) + "]\n",
     ["motions[5]", "120000 states per design", "at most 100000"]),
    (ONE + "payloads: [{}, {}, {}, {}]\nmotions: [kinematic-validation, validation]\ndt: 0.001\n",
     ["motions[1]", "100008 states per design", "at most 100000"]),
    ("parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]},\n"
     "             {path: springs.spring_5s.preload, bounds: [0, 50]}]\nobjective: act5.peak_force\n"
     "sweep: {points: 1000}\n", ["sweep.points", "at most 100000 designs"]),
    (ONE + "sweep: {method: lhs, samples: 1000000}\n", ["sweep.samples", "1000000", "[1, 100000]"]),
    (ONE + "optimize: {population: 200, iterations: 10000}\n",
     ["optimize", "2000200 designs", "at most 100000"]),
    # issue 34, S2 and S4: two parameters on one value; a constraint that is not a name
    ("parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]},\n"
     "             {path: springs.spring_5s.stiffness, bounds: [3, 4]}]\nobjective: act5.peak_force\n",
     ["parameters[1].paths[0]", "parameters[0].paths[0]", "in one parameter"]),
    ("parameters: [{paths: ['bodies.body_4.points.S4[1]', 'bodies.body_4.points.S4[1]'],\n"
     "               bounds: [-100, 0]}]\nobjective: act5.peak_force\n",
     ["parameters[0].paths[1]", "sets a value that parameters[0].paths[0]"]),
    # issue 34's S8: one value written as a preload and a stiffness has no unit
    ("parameters: [{paths: [balancers.balancer_left.spring.preload, springs.spring_5s.stiffness],\n"
     "               bounds: [1, 2]}]\nobjective: act5.peak_force\n",
     ["parameters[0].paths[1]", "is a springs.*.stiffness, paths[0] a balancers.*.spring.preload",
      "one field"]),
    ("parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]}]\nobjective: act5.peak_force\n"
     "constraints: [[stroke]]\n", ["constraints", "[['stroke']]", "a list of stroke"]),
    # issue 34's S8: YAML 1.1 reads 1e308 as text; said so, not "got '1e308', expected a number"
    ("parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 1e308]}]\n"
     "objective: act5.peak_force\n", ["parameters[0].bounds", "text to YAML 1.1"]),
    # issue 34's S3: an alias bomb inside an accepted key (ran over 60 s at 585 MB)
    ("parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2],\n"
     "  note: [&a [x, x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a],\n"
     "   &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c],\n"
     "   &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e],\n"
     "   &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f], &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]]}]\n"
     "objective: act5.peak_force\n", ["not usable YAML: aliases repeat collections"]),
])
def test_errors_are_one_line_naming_file_and_field(tmp_path, capsys, entry, fragments):
    path = tmp_path / "bad.yaml"
    path.write_text(f"kind: optimize\nmodel: {CHARMIE}\n" + entry)
    assert main(["study", str(path), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("charmie-dynamics: error: ")
    for fragment in [str(path)] + fragments:
        assert fragment in err
    assert not (tmp_path / "out").exists()


def test_linked_parameter_and_indexed_path_in_the_model_and_its_file(tmp_path):
    """One parameter writes both balancers; a point's coordinate is addressed by index; the
    model built and the best model file written agree with a plain YAML reading."""
    from charmie_dynamics.identification.model_file import edited_model_text
    from charmie_dynamics.studies import DesignProblem, read_study
    path = tmp_path / "linked.yaml"
    path.write_text(f"""kind: sweep
model: {CHARMIE}
parameters:
  - name: balancer_preload
    paths: [balancers.balancer_left.spring.preload, balancers.balancer_right.spring.preload]
    bounds: [0, 200]
  - {{path: "bodies.body_4.points.S4[1]", bounds: [-100, 0]}}
""")
    study = read_study(path, CHARMIE)
    problem = DesignProblem.of(study)
    model = problem.model((123.5, -75.25))
    assert [b.spring.preload for b in model.balancers] == [123.5, 123.5]
    assert model.point("body_4.S4").local[1] == pytest.approx(-0.07525, abs=1e-15)
    text = edited_model_text(TEXT, str(CHARMIE), [
        (p, v) for parameter, v in zip(study.parameters, (123.5, -75.25))
        for p in parameter.paths], "study")
    doc = yaml.safe_load(text)
    assert [b["spring"]["preload"] for b in doc["balancers"]] == [123.5, 123.5]
    body_4 = next(b for b in doc["bodies"] if b["name"] == "body_4")
    assert body_4["points"]["S4"] == [0, -75.25, 300]
    changed = [new for old, new in zip(TEXT.splitlines(), text.splitlines()) if old != new]
    assert len(changed) == 3 and all(line.endswith("study") for line in changed)


def test_the_cost_is_printed_first(tmp_path, no_plots, capsys):
    """The designs and the states per design (motions' samples x payload cases) before the
    work."""
    out = _study(tmp_path, "cost", "kind: envelope\nmotions: [{samples: 5, seed: 1}]\n"
                                   "payloads: [{}, {body_12a.D12a: 1.0}]\n")
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"{tmp_path / 'cost.yaml'}: envelope: 1 design(s), 10 states per design"
    assert (out / "envelope.csv").exists()


@pytest.mark.parametrize("scheduler, reason", [
    ("http://127.0.0.1:1", "scheme 'http' is not one of tcp, tls"),
    ("tcp://", "not HOST:PORT with a port from 1 to 65535"),
    ("127.0.0.1", "not HOST:PORT"), ("tcp://127.0.0.1:99999", "not HOST:PORT"),
    ("tcp://[::1", "not HOST:PORT"),
    ("tcp://nosuchhost.invalid:8786", "host 'nosuchhost.invalid' is unknown"),
    ("tcp://127.0.0.1:CLOSED", "nothing listens on 127.0.0.1 port CLOSED (connection refused)")])
def test_a_bad_scheduler_is_one_line(tmp_path, capsys, scheduler, reason):
    """Issue 34, S5: the address's form, an unknown host and a refused port are said in the
    address's own words, before Dask's client would wait 10 s on them."""
    pytest.importorskip("dask.distributed")
    port = str(_free_port())
    scheduler, reason = scheduler.replace("CLOSED", port), reason.replace("CLOSED", port)
    path = tmp_path / "s.yaml"
    path.write_text(f"kind: sweep\nmodel: {CHARMIE}\nmotions: [{{samples: 2}}]\n"
                    "parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]}]\n"
                    "sweep: {points: 2}\n")
    assert main(["study", str(path), "--out", str(tmp_path / "out"),
                 "--scheduler", scheduler]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--scheduler {scheduler}: {reason}" in err, err


@pytest.mark.parametrize("make", [lambda out: out.symlink_to(out.parent / "missing"),
                                  lambda out: out.parent.joinpath("file").write_text("x")])
def test_an_unusable_out_is_refused_before_reading_the_study(tmp_path, capsys, make):
    """A dangling link, or a path under a file: refused first (the study file is missing)."""
    out = tmp_path / "out"
    make(out)
    target = out if out.is_symlink() else tmp_path / "file" / "x"
    assert main(["study", str(tmp_path / "none.yaml"), "--out", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {target}: " in err
    assert "dangling symbolic link" in err or "exists and is not a directory" in err


def test_a_run_replaces_no_file_it_was_not_told_to(tmp_path, no_plots, capsys):
    """Issue 34, S1: `study --out DIR` replaced the user's files that share an output's name
    (sweep.csv, report.txt), and a run that then failed on a folder named like an output had
    already replaced some. Now every target is checked before anything moves: a folder there
    refuses the run, an existing file refuses it unless --overwrite, and nothing is written."""
    path = tmp_path / "s.yaml"
    path.write_text(f"kind: sweep\nmodel: {CHARMIE}\nmotions: [{{samples: 2}}]\n"
                    "parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]}]\n"
                    "sweep: {points: 2}\n")
    out = tmp_path / "u"
    (out / "sweep.png").mkdir(parents=True)
    (out / "sweep.csv").write_text("mine\n")
    assert main(["study", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "sweep.png is a folder there" in err and "nothing was written" in err, err
    (out / "sweep.png").rmdir()
    assert main(["study", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "already holds sweep.csv" in err and "--overwrite" in err, err
    assert (out / "sweep.csv").read_text() == "mine\n"
    assert sorted(p.name for p in out.iterdir()) == ["sweep.csv"]
    assert main(["study", str(path), "--out", str(out), "--overwrite"]) == 0
    assert (out / "sweep.csv").read_text() != "mine\n" and (out / "report.txt").is_file()
    assert not list(tmp_path.glob(".u.*.partial"))


def test_no_more_processes_than_batches(monkeypatch):
    """Issue 34's S7: `--jobs 16` on 2 designs started 18 processes."""
    joblib = pytest.importorskip("joblib")
    from charmie_dynamics.studies.runner import Runner
    asked = []

    class Recorder(joblib.Parallel):
        def __init__(self, n_jobs=None, **kwargs):
            asked.append(n_jobs)
            super().__init__(n_jobs=1, **kwargs)

    class Problem:
        def evaluate(self, design):
            return sum(design)
    monkeypatch.setattr(joblib, "Parallel", Recorder)
    assert Runner(jobs=16).evaluate(Problem(), np.array([[1.0], [2.0]])) == [1.0, 2.0]
    assert asked == [2]


def test_a_file_that_is_not_yaml_is_not_quoted_back(tmp_path, capsys):
    """Issue 34, S8: ``model: /etc/passwd`` quoted the file in the error; a study or model
    file that is one scalar is named by its length."""
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:secret-token:/root:/bin/bash\n")
    study = tmp_path / "s.yaml"
    study.write_text(f"kind: sweep\nmodel: {secret}\nmotions: [{{samples: 2}}]\n"
                     "parameters: [{path: springs.spring_5s.stiffness, bounds: [1, 2]}]\n"
                     "sweep: {points: 2}\n")
    for argv, where in ((["study", str(study)], f"{study}: model: {secret}: top level"),
                        (["study", str(secret)], f"{secret}: top level"),
                        (["analyze", "--model", str(secret)], f"{secret}: top level")):
        assert main(argv + ["--out", str(tmp_path / "out")]) == 1
        err = capsys.readouterr().err
        assert f"{where}: got 39 characters of text, expected a mapping" in err, err
        assert "secret-token" not in err
