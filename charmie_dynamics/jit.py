"""Compilation of the numerical kernels with numba, when it is available.

The recursions are written once, as plain Python loops over float scalars, 3-tuples and
preallocated arrays, in the subset of Python that numba compiles. With numba installed (a
dependency on every supported platform: PyPI wheels for x86_64 and aarch64) each kernel is
compiled on first use and cached on disk (``__pycache__`` beside the module, or numba's
user-wide cache where the install is read-only), so only the first run on a machine pays
the compilation. Without numba, or with ``CHARMIE_DYNAMICS_JIT=0``, the same functions run
as plain Python: the same results, about a thousand times slower.
"""
from __future__ import annotations

import os
from typing import Callable, TypeVar

try:
    import numba
except ImportError:                                      # pragma: no cover - numba is a dependency
    numba = None

F = TypeVar("F", bound=Callable)

ENABLED: bool = numba is not None and os.environ.get("CHARMIE_DYNAMICS_JIT", "1") != "0"


def kernel(fn: F) -> F:
    """Compile ``fn`` with numba (nopython, cached, releasing the GIL) when enabled."""
    if not ENABLED:
        return fn
    return numba.njit(cache=True, nogil=True, error_model="numpy")(fn)

