"""Where numba is missing or older than the tested floor (ROS 2 Humble's apt numba 0.55), the
package still runs: the kernels run as plain Python after one warning line naming the pip
command, with the compiled kernels' results. And on Humble (Python 3.10, its apt versions)
no install requirement is unmet, since the console scripts of its setuptools refuse to start
on one. The old and the missing numba are simulated in subprocesses."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement

from charmie_dynamics import jit
from domains import domain_id

ROOT = Path(__file__).resolve().parent.parent
PIP_HINT = f"pip install 'numba>={jit.MIN_NUMBA[0]}.{jit.MIN_NUMBA[1]}'"
# Ubuntu 22.04's apt packages, which rosdep installs for Humble
HUMBLE = {"numpy": "1.21.5", "numba": "0.55.1", "scipy": "1.8.0", "pyyaml": "5.4.1",
          "matplotlib": "3.5.1", "tqdm": "4.57.0", "setuptools": "59.6.0"}

SCRIPT = """
import json, sys
import numpy as np
{prelude}
from charmie_dynamics import bundled_model, inputs_from_dict, jit, load_model, resolve_state
from charmie_dynamics.dynamics import inverse_dynamics
model = load_model(bundled_model())
x, xd, xdd = inputs_from_dict(model, dict(theta8a=0.3, d1=0.05, theta10b=-0.4, act4=0.42))
loads = inverse_dynamics(model, resolve_state(model, x, xd + 0.2, xdd - 0.5))
print(json.dumps({{"jit": jit.ENABLED, "reason": jit.DISABLED_REASON,
                  "effort": loads.coordinate_effort.tolist()}}))
"""


def run(prelude: str = "", **env: str) -> tuple[dict, list[str]]:
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(prelude=prelude)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), proc.stderr.splitlines()


@pytest.fixture(scope="module")
def compiled_effort() -> np.ndarray:
    out, _ = run()
    assert out["jit"], "numba >= the floor is a dependency: the tests run the compiled kernels"
    return np.array(out["effort"])


@pytest.fixture
def old_numba(tmp_path: Path) -> Path:
    """A numba 0.55.1 that fails the test if anything asks it to compile."""
    (tmp_path / "numba").mkdir()
    (tmp_path / "numba" / "__init__.py").write_text(
        '__version__ = "0.55.1"\n'
        "def njit(*args, **kwargs):\n"
        "    raise AssertionError('an old numba must not compile the kernels')\n")
    return tmp_path


def test_old_numba_runs_plain_python_with_one_warning(old_numba, compiled_effort):
    out, stderr = run(PYTHONPATH=str(old_numba))
    assert not out["jit"]
    assert "numba 0.55.1" in out["reason"]
    assert len(stderr) == 1, stderr
    assert "numba 0.55.1" in stderr[0] and PIP_HINT in stderr[0] and "plain Python" in stderr[0]
    np.testing.assert_allclose(out["effort"], compiled_effort, rtol=1e-12, atol=1e-12)


def test_missing_numba_runs_plain_python_with_one_warning(compiled_effort):
    out, stderr = run(prelude="sys.modules['numba'] = None   # import numba raises ImportError")
    assert not out["jit"]
    assert out["reason"].startswith("numba is not importable")
    assert len(stderr) == 1 and PIP_HINT in stderr[0], stderr
    np.testing.assert_allclose(out["effort"], compiled_effort, rtol=1e-12, atol=1e-12)


def test_jit_switched_off_is_silent(old_numba):
    out, stderr = run(PYTHONPATH=str(old_numba), CHARMIE_DYNAMICS_JIT="0")
    assert not out["jit"] and out["reason"] == "CHARMIE_DYNAMICS_JIT=0"
    assert stderr == []


FREE_FLYER_SCRIPT = """
import json, sys
sys.path.insert(0, "test")
import numpy as np
from charmie_dynamics import jit, forward_kinematics
from charmie_dynamics.dynamics import forward_dynamics, inverse_dynamics, mass_matrix
from test_free_flyer import floating_model, random_states, state
model = floating_model(0, coupled=False)
assert model.compiled.aba_coupling is None
q, qd, qdd = random_states(model, np.random.default_rng(1))
held = np.zeros(qd.shape, dtype=bool)
held[:, 2] = True
out = {"jit": jit.ENABLED, "fk": forward_kinematics(model, q).rotations.tolist(),
       "effort": inverse_dynamics(model, state(model, q, qd, qdd)).coordinate_effort.tolist(),
       "crba": mass_matrix(model, q).tolist(),
       "aba": forward_dynamics(model, q, qd, qdd, method="aba").tolist(),
       "aba_held": forward_dynamics(model, q, qd, qdd, method="aba", held=held).tolist(),
       "cholesky": forward_dynamics(model, q, qd, qdd, method="cholesky").tolist()}
print(json.dumps(out))
"""


def assert_equal_with_numba_off(script: str, keys: tuple[str, ...]) -> None:
    """Run ``script`` (it prints one JSON line with "jit" and ``keys``) compiled and as plain
    Python (CHARMIE_DYNAMICS_JIT=0) in new processes; the ``keys`` agree to 1e-12."""
    results = []
    for env in ({}, {"CHARMIE_DYNAMICS_JIT": "0"}):
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True,
                              text=True, timeout=600, cwd=ROOT, env={**os.environ, **env})
        assert proc.returncode == 0, proc.stderr
        results.append(json.loads(proc.stdout.splitlines()[-1]))
    compiled, plain = results
    assert compiled["jit"] and not plain["jit"]
    for key in keys:
        np.testing.assert_allclose(plain[key], compiled[key], rtol=1e-12, atol=1e-12,
                                   err_msg=key)


def test_free_flyer_kernels_equal_with_numba_off():
    """The free-flyer's branches of the kernels (joint transform and motion, efforts, CRBA,
    the ABA's 6 x 6 root solve with a held coordinate) and the Cholesky solve give the
    compiled kernels' results as plain Python (CHARMIE_DYNAMICS_JIT=0)."""
    assert_equal_with_numba_off(FREE_FLYER_SCRIPT, ("fk", "effort", "crba", "aba", "aba_held",
                                                    "cholesky"))


LOOP_SCRIPT = """
import json
import numpy as np
from charmie_dynamics import jit, load_model
from charmie_dynamics.evaluators.loop_evaluator import LoopEvaluator
evaluator = LoopEvaluator(load_model("config/examples/irsbot2.yaml"))
x = evaluator.chain.assembled[evaluator.chain.independent] + 0.02
out = evaluator(x, np.array([0.3, -0.2]), np.array([1.0, 0.5]))
print(json.dumps({"jit": jit.ENABLED, "efforts": out.efforts.tolist(),
                  "coordinate_effort": out.loads.coordinate_effort.tolist(),
                  "joint_force": out.loads.joint_force.tolist(),
                  "translations": out.translations.tolist(),
                  "quaternions": out.quaternions.tolist()}))
"""


def test_loop_evaluator_equal_with_numba_off():
    """The loop evaluator (the evaluator's kernel with the cut wrenches as applied loads)
    gives the compiled results as plain Python, on the IRSBot-2 (spatial and rigid cuts)."""
    assert_equal_with_numba_off(LOOP_SCRIPT, ("efforts", "coordinate_effort", "joint_force",
                                              "translations", "quaternions"))


def test_console_script_starts_with_old_numba(old_numba):
    script = Path(sys.executable).parent / "charmie-dynamics"
    assert script.is_file(), f"{script}: the package's console script is not installed"
    proc = subprocess.run([str(script), "validate-model", str(ROOT / "config" / "charmie.yaml")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(old_numba)})
    assert proc.returncode == 0, proc.stderr
    assert "valid model 'charmie'" in proc.stdout
    assert len(proc.stderr.splitlines()) == 1 and PIP_HINT in proc.stderr


def _setup_data():
    spec = importlib.util.spec_from_file_location("setup_data", ROOT / "scripts" / "ros_path" / "setup_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _install_requires() -> list[str]:
    return _setup_data().install_requires()


def test_humble_apt_versions_meet_every_requirement():
    """What pkg_resources checks when a console script of setuptools 59 starts, for Humble."""
    env = {"python_version": "3.10", "python_full_version": "3.10.12"}
    unmet = []
    for line in _install_requires():
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(env):
            version = HUMBLE.get(req.name.lower())
            if version is None or not req.specifier.contains(version, prereleases=True):
                unmet.append(f"{line} (Humble: {version})")
    assert not unmet, unmet


def test_floors_apply_on_python_311_and_newer():
    """The tested floors (scripts/constraints-floor.txt) are required where they were tested:
    by install_requires, and by the `plots` extra for the optional matplotlib and tqdm (also
    in the test extra, for the plot tests)."""
    pins = dict(line.split("==") for line in (ROOT / "scripts" / "constraints-floor.txt")
                .read_text().splitlines() if "==" in line and not line.startswith("#"))
    env = {"python_version": "3.11", "python_full_version": "3.11.7"}
    floors = {}
    for line in _install_requires():
        req = Requirement(line)
        if req.marker is not None and req.marker.evaluate(env):
            floors[req.name] = str(req.specifier)
    extras = _setup_data().setup_arguments().extras_require
    plots = {req.name: str(req.specifier) for req in map(Requirement, extras["plots"])}
    assert set(plots) == {"matplotlib", "tqdm"} and set(extras["plots"]) <= set(extras["test"])
    floors.update(plots)
    assert floors == {name: f">={pins[name]}" for name in floors}
    assert set(floors) == {"numpy", "numba", "scipy", "PyYAML", "matplotlib", "tqdm", "mcap",
                           "mcap-ros2-support", "joblib"}
    assert floors["numba"] == ">={}.{}.0".format(*jit.MIN_NUMBA)


def test_the_lock_pins_every_requirement_within_its_range():
    """scripts/constraints-tested.txt (what setup.sh installs) pins every requirement of
    install_requires and of the test extra, each at a version the requirement accepts, and
    pins nothing twice. setuptools is the venv's own (python -m venv brings it), not pinned."""
    lines = [line for line in (ROOT / "scripts" / "constraints-tested.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    names = [line.split("==")[0] for line in lines]
    assert all("==" in line for line in lines) and len(names) == len(set(names))
    pins = dict(line.split("==") for line in lines)
    env = {"python_version": "3.11", "python_full_version": "3.11.7", "extra": ""}
    extras = _setup_data().setup_arguments().extras_require
    wanted = [Requirement(line) for line in _install_requires() + extras["test"]]
    for req in wanted:
        if (req.marker is not None and not req.marker.evaluate(env)) or req.name == "setuptools":
            continue
        key = req.name.lower().replace("_", "-")
        assert key in pins, f"{req.name} not in the lock"
        assert req.specifier.contains(pins[key], prereleases=True), (req, pins[key])


def start_dynamics_node(old_numba: Path, *params: str) -> subprocess.CompletedProcess:
    """The dynamics node as a process under the old numba; its start-up error ends it. One
    that does not end within 300 s gets SIGABRT, and Python's faulthandler (on in it) prints
    every thread's stack into the stderr the test's failure shows."""
    args = [arg for param in params for arg in ("-p", param)]
    command = [sys.executable, "-m", "charmie_dynamics.ros.dynamics_node", "--ros-args", *args]
    env = {**os.environ, "PYTHONFAULTHANDLER": "1",
           "PYTHONPATH": os.pathsep.join([str(old_numba), os.environ.get("PYTHONPATH", "")]),
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST", "ROS_DOMAIN_ID": str(domain_id(200, 30))}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=ROOT, env=env) as process:
        try:
            stdout, stderr = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGABRT)
            stdout, stderr = process.communicate(timeout=60)
            pytest.fail(f"the node did not exit within 300 s after its error; its stacks:\n"
                        f"{stderr}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.mark.ros
def test_the_control_path_refuses_plain_python_kernels_unless_told(old_numba, tmp_path):
    """On Humble's apt numba the dynamics node would answer 1 kHz inputs a thousand times too
    slowly: it refuses to start, in one line naming the cause and both ways out."""
    missing = tmp_path / "no_such_model.yaml"
    refused = start_dynamics_node(old_numba, f"model_file:={missing}")
    assert refused.returncode == 1, refused.stderr
    errors = [line for line in refused.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, refused.stderr
    assert "numba 0.55.1" in errors[0] and PIP_HINT in errors[0]
    assert "allow_slow_kernels:=true" in errors[0]
    # told: the start goes past that check to the next one (the missing model file)
    allowed = start_dynamics_node(old_numba, f"model_file:={missing}", "allow_slow_kernels:=true")
    assert allowed.returncode == 1, allowed.stderr
    assert "allow_slow_kernels" not in allowed.stderr and str(missing) in allowed.stderr


CACHE_SCRIPT = """
import json
import numpy as np
from charmie_dynamics import jit, linalg
a = np.arange(12.0).reshape(2, 2, 3)
value = linalg.vec(a, 1, 0)
print(json.dumps({"file": linalg.__file__, "value": list(value), "cache": jit.cache_dir().name,
                  "hits": sum(linalg.vec.stats.cache_hits.values()),
                  "misses": sum(linalg.vec.stats.cache_misses.values())}))
"""


def test_copies_of_the_same_sources_share_their_compiled_kernels(tmp_path):
    """A kernel compiled from one copy of the package (the checkout) is loaded, not compiled
    again, by another copy of the same sources elsewhere (a colcon or pip install); a copy
    with one core file changed compiles its own."""
    copies = []
    for name in ("checkout", "install", "changed"):
        copies.append(tmp_path / name)
        shutil.copytree(ROOT / "charmie_dynamics", tmp_path / name / "charmie_dynamics",
                        ignore=shutil.ignore_patterns("__pycache__"))
    with open(copies[2] / "charmie_dynamics" / "linalg.py", "a", encoding="utf-8") as f:
        f.write("\n# changed\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = []
    for copy in copies:
        proc = subprocess.run([sys.executable, "-c", CACHE_SCRIPT], capture_output=True,
                              text=True, timeout=300, cwd=copy,
                              env={**env, "PYTHONPATH": str(copy)})
        assert proc.returncode == 0, proc.stderr
        runs.append(json.loads(proc.stdout.splitlines()[-1]))
    checkout, install, changed = runs
    assert [run["file"].startswith(str(copy)) for run, copy in zip(runs, copies)] == [True] * 3
    assert checkout["misses"] == 1 and checkout["hits"] == 0
    assert install["hits"] == 1 and install["misses"] == 0       # loaded from the cache
    assert install["cache"] == checkout["cache"] != changed["cache"]
    assert changed["misses"] == 1 and changed["hits"] == 0
    assert checkout["value"] == install["value"] == changed["value"] == [6.0, 7.0, 8.0]
