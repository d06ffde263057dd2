"""Issue 35, item 2: a system-wide kernel cache (``$CHARMIE_DYNAMICS_SYSTEM_CACHE``) that a
service's user who cannot write it starts from instead of compiling, used only when nobody
but root or that user could have written the compiled code in it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from charmie_dynamics import jit

pytestmark = pytest.mark.skipif(not jit.ENABLED, reason="numba is not enabled: no kernels")

PROBE = """
import sys
from numba.core.dispatcher import Dispatcher
from charmie_dynamics import jit
from charmie_dynamics.evaluators.evaluator import Evaluator
from charmie_dynamics.model import load_model
from charmie_dynamics.resources import bundled_model
Evaluator(load_model(bundled_model()))
kernels = {id(k): k for name, module in list(sys.modules.items())
           if name.startswith("charmie_dynamics") for k in vars(module).values()
           if isinstance(k, Dispatcher)}.values()
print(jit._CACHE_DIR)
print(sum(sum(k.stats.cache_hits.values()) for k in kernels),
      sum(sum(k.stats.cache_misses.values()) for k in kernels))
"""


def _as_nobody(argv: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["runuser", "-u", "nobody", "--", *argv], env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def tmp_path():
    """A temporary folder the service user can reach (pytest's is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="charmie_kernel_cache_"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def system_cache(tmp_path):
    """A system cache as root's install step leaves it: this machine's compiled kernels
    (the user's cache, compiled by scripts/setup.sh) copied under the sources' fingerprint,
    root's and read-only for others."""
    if os.getuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("needs root and runuser: the service user is `nobody`")
    here = Path(jit._CACHE_DIR)
    # what the install step compiles (a no-op where setup.sh's compile filled the cache)
    compiled = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                              timeout=900)
    assert compiled.returncode == 0 and compiled.stdout.split("\n")[0] == str(here), \
        compiled.stderr
    root = tmp_path / "system"
    shutil.copytree(here, root / here.name)
    for path in [tmp_path, root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    probe = _as_nobody([sys.executable, "-c", "import charmie_dynamics"], dict(os.environ))
    if probe.returncode != 0:
        pytest.skip(f"user nobody cannot import the package here: {probe.stderr[-200:]}")
    return root


def _env(tmp_path: Path, system: Path, home: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    home_dir = tmp_path / home
    home_dir.mkdir(mode=0o700)
    shutil.chown(home_dir, "nobody")
    return env | {"CHARMIE_DYNAMICS_SYSTEM_CACHE": str(system), "XDG_CACHE_HOME": str(home_dir),
                  "HOME": str(home_dir)}


def test_a_service_user_starts_from_the_system_cache(tmp_path, system_cache):
    env = _env(tmp_path, system_cache, "service")
    done = _as_nobody([sys.executable, "-c", PROBE], env)
    assert done.returncode == 0, done.stderr
    cache, counts = done.stdout.split("\n")[:2]
    assert cache.startswith(str(tmp_path / "service"))          # its own, seeded
    seeded = {p.relative_to(cache) for p in Path(cache).rglob("*.nbi")}
    installed = {p.relative_to(system_cache / Path(cache).name)
                 for p in (system_cache / Path(cache).name).rglob("*.nbi")}
    assert seeded >= installed
    hits, misses = counts.split()
    assert int(hits) >= 1 and int(misses) == 0, counts               # loaded, not compiled


def test_a_system_cache_others_could_write_is_not_used(tmp_path, system_cache):
    kernel = next(system_cache.rglob("*.nbc"))
    kernel.chmod(0o666)
    env = _env(tmp_path, system_cache, "service")
    done = _as_nobody([sys.executable, "-c", "from charmie_dynamics import jit; "
                                             "print(jit._CACHE_DIR)"], env)
    assert done.returncode == 0, done.stderr
    assert f"CHARMIE_DYNAMICS_SYSTEM_CACHE not used: {kernel} can be written by its group " \
           "or others" in done.stderr, done.stderr
    cache = Path(done.stdout.strip())
    assert not any(cache.rglob("*.nb*"))                        # nothing copied from it


def test_the_install_step_makes_the_system_cache(tmp_path):
    """The review: ``sudo CHARMIE_DYNAMICS_SYSTEM_CACHE=/var/cache/... charmie-dynamics
    compile`` on a machine without that folder compiled into root's own cache instead."""
    root = tmp_path / "var" / "cache" / "charmie_dynamics"
    env = dict(os.environ, CHARMIE_DYNAMICS_SYSTEM_CACHE=str(root))
    done = subprocess.run([sys.executable, "-c", "from charmie_dynamics import jit; "
                                                 "print(jit._CACHE_DIR)"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).parent == root and root.is_dir()
    assert "not used" not in done.stderr


def test_a_partial_user_cache_gets_the_kernels_it_lacks(tmp_path, system_cache):
    """The review: a cache left partial (a compile stopped halfway) was never seeded."""
    env = _env(tmp_path, system_cache, "partial")
    fingerprint = next(system_cache.iterdir()).name
    partial = tmp_path / "partial" / "charmie_dynamics" / fingerprint
    installed = sorted(p.relative_to(system_cache / fingerprint)
                       for p in (system_cache / fingerprint).rglob("*.nbi"))
    for relative in installed[:3]:                     # three kernels already there
        (partial / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(system_cache / fingerprint / relative, partial / relative)
    shutil.chown(tmp_path / "partial", "nobody")
    for path in (tmp_path / "partial").rglob("*"):
        shutil.chown(path, "nobody")
    done = _as_nobody([sys.executable, "-c", PROBE], env)
    assert done.returncode == 0, done.stderr
    hits, misses = done.stdout.split("\n")[1].split()
    assert int(hits) >= 1 and int(misses) == 0, done.stdout
    assert not list(partial.rglob("*.part"))
