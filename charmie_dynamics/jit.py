"""Compilation of the numerical kernels with numba, when it is available.

The recursions are written once, as plain Python loops over float scalars, 3-tuples and
preallocated arrays, in the subset of Python that numba compiles. With numba installed (a
dependency on every supported platform: PyPI wheels for x86_64 and aarch64) each kernel is
compiled on first use and cached on disk, so only the first run on a machine pays the
compilation (``charmie-dynamics compile`` does it ahead). Without numba, with a numba older
than ``MIN_NUMBA`` (the oldest the tests ran on: ROS 2 Humble's apt numba 0.55 is older) or
with ``CHARMIE_DYNAMICS_JIT=0``, the same functions run as plain Python: the same results,
about a thousand times slower. Missing or old numba is reported once, at import, in one
warning line that names the pip command; CHARMIE_DYNAMICS_JIT=0 is a choice and silent.

The cache lives in ``$NUMBA_CACHE_DIR`` or ``~/.cache/charmie_dynamics`` (``$XDG_CACHE_HOME``),
in a folder named after a fingerprint of the core's source files: numba checks only the file
of each compiled function, not the helpers it calls from other files, so a changed helper
must not meet kernels cached before the change. Inside it a kernel is found by its file's
place in the package, so every copy of the same sources (a colcon install, a pip install, the
checkout) shares the kernels one of them compiled with the same numba. Where that folder cannot be
written, a
folder under the temporary directory is used; where neither can, nothing is cached.

``$CHARMIE_DYNAMICS_SYSTEM_CACHE`` names a system-wide cache (e.g. /var/cache/charmie_dynamics,
filled at install time by ``sudo CHARMIE_DYNAMICS_SYSTEM_CACHE=... charmie-dynamics compile``):
a user who cannot write it (a service's user, a container with a fresh home) starts from a copy
of its kernels in their own cache (the ones it lacks, each file whole) instead of compiling
them. Compiled code is loaded from it,
so it is used only when it and everything in it belong to root or to this user, nobody else
can write there, and it holds no links; else it is ignored with one warning naming why.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

MIN_NUMBA: tuple[int, int] = (0, 57)     # keep equal to the numba floor in setup.py
_PIP_HINT = f"python3 -m pip install 'numba>={MIN_NUMBA[0]}.{MIN_NUMBA[1]}'"


def _numba_or_reason() -> tuple[ModuleType | None, str]:
    """numba, or why the kernels run as plain Python instead (an older numba than MIN_NUMBA:
    the kernels were not tested on it, and the plain-Python path was)."""
    try:
        import numba
    except ImportError as error:
        return None, f"numba is not importable ({error})"
    found = re.match(r"(\d+)\.(\d+)", getattr(numba, "__version__", ""))
    if found is None or tuple(map(int, found.groups())) < MIN_NUMBA:
        return None, (f"numba {getattr(numba, '__version__', '(no version)')} is installed, "
                      f"{MIN_NUMBA[0]}.{MIN_NUMBA[1]} or newer compiles the kernels")
    return numba, ""


if os.environ.get("CHARMIE_DYNAMICS_JIT", "1") == "0":
    numba, DISABLED_REASON = None, "CHARMIE_DYNAMICS_JIT=0"
else:
    numba, DISABLED_REASON = _numba_or_reason()
    if numba is None:
        logging.getLogger(__name__).warning(
            "charmie_dynamics: %s: the kernels run as plain Python, about a thousand times "
            "slower; to compile them: %s", DISABLED_REASON, _PIP_HINT)

ENABLED: bool = numba is not None


def slow_kernels_refusal() -> str:
    """Why a control path refuses to start on plain-Python kernels, in one line."""
    return (f"the numerical kernels run as plain Python ({DISABLED_REASON}), about a thousand "
            f"times slower than compiled: too slow for a control path; to compile them: "
            f"{_PIP_HINT} (README, ROS 2 Humble), or set allow_slow_kernels:=true to start anyway")

_PACKAGE = Path(__file__).resolve().parent
_NOT_KERNELS = ("ros", "cli", "export")     # folders without kernels: editing them keeps the cache


def _fingerprint() -> str:
    """The core's sources and numpy's version (numba keys a kernel on its own version, not
    numpy's, and copies of the sources in venvs of other numpys now share one cache)."""
    import numpy
    digest = hashlib.sha1(numpy.__version__.encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        relative = path.relative_to(_PACKAGE)
        if relative.parts[0] not in _NOT_KERNELS:
            digest.update(str(relative).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """Where the compiled kernels of this version of the sources are cached."""
    root = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "charmie_dynamics")
    return Path(root) / f"kernels-{_fingerprint()}"


def _private(path: Path) -> bool:
    """True when ``path`` is a folder of this user that nobody else can write (compiled code
    is loaded from the cache, so a folder in a shared place must not be another user's)."""
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        info = path.stat()
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


SYSTEM_CACHE_ENV = "CHARMIE_DYNAMICS_SYSTEM_CACHE"


def _untrusted(root: Path) -> str:
    """Why compiled code under ``root`` must not be loaded ("" when it may: it and all in it
    of root or this user, written by nobody else, no links)."""
    for path in [root, *root.rglob("*")]:
        try:
            info = path.lstat()
        except OSError as exc:
            return f"{path}: {exc.strerror}"
        if path.is_symlink():
            return f"{path} is a link"
        if info.st_uid not in (0, os.getuid()):
            return f"{path} belongs to user {info.st_uid}, expected root or {os.getuid()}"
        if info.st_mode & 0o022:
            return f"{path} can be written by its group or others"
    return ""


def _system_cache(fingerprint: str) -> Path | None:
    """``$CHARMIE_DYNAMICS_SYSTEM_CACHE``'s folder of these sources, when it may be used."""
    root = os.environ.get(SYSTEM_CACHE_ENV)
    if not root:
        return None
    folder = Path(root) / fingerprint
    try:
        # the install step's first compile makes it (root: 0755, as its umask leaves it)
        Path(root).mkdir(mode=0o755, parents=True, exist_ok=True)
    except OSError:
        pass                            # a user who may not: it is checked below
    try:
        problem = _untrusted(Path(root)) if Path(root).is_dir() else f"{root}: no such folder"
    except OSError as exc:
        problem = f"{root}: {exc.strerror}"
    if problem:
        logging.getLogger(__name__).warning(f"{SYSTEM_CACHE_ENV} not used: {problem}")
        return None
    return folder


def _writable_cache() -> str:
    """The cache folder: the system cache where this user may write it, else the user's
    (seeded from the system cache when it lacks these kernels), or one in a private folder
    under the temporary directory where that cannot be written (a read-only home), or ""
    (compile in every process) where none can."""
    preferred = cache_dir()
    system = _system_cache(preferred.name)
    private = Path(tempfile.gettempdir()) / f"charmie_dynamics-{os.getuid()}"
    for path in ([system] if system else []) + [preferred, private / preferred.name]:
        if path.parent == private and not _private(private):
            continue
        try:
            path.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path):
                pass
        except OSError:
            continue
        if system and path != system and system.is_dir():
            _seed(path, system)
        return str(path)
    return ""


def _seed(cache: Path, system: Path) -> None:
    """Copy into ``cache`` the kernels of ``system`` it lacks, each file whole: written beside
    its place and renamed into it (numba reads an index as a whole file; two processes
    seeding at once, or one stopped halfway, leave only whole files)."""
    for source in system.rglob("*"):
        target = cache / source.relative_to(system)
        if source.is_dir():
            target.mkdir(exist_ok=True)
        elif not target.exists():
            part = target.with_name(f".{target.name}.{os.getpid()}.part")
            try:
                shutil.copyfile(source, part)
                os.replace(part, target)
            except OSError:
                part.unlink(missing_ok=True)


_CACHE_DIR = _writable_cache() if ENABLED else ""


def _install_package_locator() -> None:
    """Make numba find the package's kernels by their place in the package, not on disk.

    numba's own locator names a kernel's cache after the absolute path of its source file and
    stamps it with the file's time (numba < 0.60) or content: a copy of the same sources
    elsewhere (a colcon install, a plain ``pip install .``, a second venv on the checkout)
    compiled everything again. Here the cache path is the file's path inside the package,
    under the folder of the core's fingerprint (:func:`cache_dir`), and the stamp is that
    fingerprint: the same sources share their kernels, changed ones never meet them. numba
    still keys each kernel on its own version, the signature and the CPU."""
    from numba.core import caching

    # public names from numba 0.60 (UserProvidedCacheLocator, CacheImpl), private before
    base = getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    fingerprint = Path(_CACHE_DIR).name

    class PackageCacheLocator(base):
        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            inside = Path(py_file).resolve().relative_to(_PACKAGE)
            self._cache_path = os.path.join(_CACHE_DIR, *inside.parent.parts)

        def get_source_stamp(self):
            return fingerprint

        @classmethod
        def from_function(cls, py_func, py_file):
            # a kernel outside the fingerprinted folders is left to numba's own locators
            path = Path(py_file).resolve()
            if not _CACHE_DIR or _PACKAGE not in path.parents or \
                    path.relative_to(_PACKAGE).parts[0] in _NOT_KERNELS:
                return None
            return super().from_function(py_func, py_file)

    impl._locator_classes.insert(0, PackageCacheLocator)


if _CACHE_DIR:
    _install_package_locator()


def kernel(fn: F | None = None, *, inline: bool = False,
           hold_gil: bool = False) -> F | Callable[[F], F]:
    """Compile ``fn`` with numba (nopython, cached, releasing the GIL; division by zero gives
    inf or nan, which the callers check, instead of an exception) when enabled.

    ``@kernel(inline=True)``: numba inlines the function into each kernel that calls it (a
    small function called per body whose tuple results LLVM does not always inline: the
    joint transform, model/joint.py).

    ``@kernel(hold_gil=True)``: the kernel keeps the GIL. Releasing it lets another Python
    thread take it for up to the switch interval before the caller gets it back: a kernel of
    a microsecond on the control path (evaluators/measurements.py) would wait that long while
    the node's monitoring thread works."""
    if fn is None:
        return lambda f: kernel(f, inline=inline, hold_gil=hold_gil)
    if not ENABLED:
        return fn
    saved = numba.config.CACHE_DIR           # numba reads it when the cache is set up
    numba.config.CACHE_DIR = _CACHE_DIR
    try:
        return numba.njit(cache=bool(_CACHE_DIR), nogil=not hold_gil, error_model="numpy",
                          inline="always" if inline else "never")(fn)
    finally:
        numba.config.CACHE_DIR = saved


def fixed_entry(compiled: Callable, *args) -> Callable:
    """``compiled`` (a :func:`kernel`) called once on ``args``, and its entry point for their
    types: a callable that takes arguments of exactly those types and skips numba's dispatch
    (the typing of every argument and the lookup of the overload: 1-3 us for a kernel of 40
    arrays in nested tuples, more than half of a small kernel's own time). Only for a caller
    that owns its arguments' types, e.g. buffers built once and inputs made contiguous
    float64 before each call; the kernel itself when numba is off."""
    compiled(*args)
    if not ENABLED:
        return compiled
    types = tuple(compiled.typeof_pyval(a) for a in args)
    return compiled.overloads[types].entry_point
