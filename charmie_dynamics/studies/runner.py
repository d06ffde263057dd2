"""Designs evaluated in batches: in this process, on several cores (joblib) or on a Dask
cluster (``dask.distributed.Client(address)``); the same outcomes in the same order.

The problem (model document, sampled motions) travels once per batch of designs, not once per
design; joblib and dask are imported only when used.
"""
from __future__ import annotations

import socket
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .evaluation import DesignProblem, Outcome

#: Batches per worker: small enough to balance uneven designs, large enough to send the
#: problem rarely.
BATCHES_PER_WORKER = 4
#: The address schemes of dask.distributed's communications.
DASK_SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")


class RunnerError(RuntimeError):
    """joblib or dask.distributed is missing, or the Dask scheduler cannot be reached."""


def evaluate_batch(problem: DesignProblem, designs: Sequence[Sequence[float]]) -> list[Outcome]:
    """A batch of designs in one worker."""
    return [problem.evaluate(tuple(d)) for d in designs]


def address_problem(address: str, wait_s: float = 3.0) -> Optional[str]:
    """Why a TCP or TLS scheduler ``address`` ([SCHEME://]HOST:PORT) cannot be one, found
    before Dask's client waits its 10 s on it: its form, an unknown host, a refused port;
    None when something answers there (or for schemes Dask alone can check)."""
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp", "tls"):
        return None if scheme in DASK_SCHEMES else (
            f"scheme {scheme!r} is not one of {', '.join(DASK_SCHEMES)}")
    host, _, port_text = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or "[" in host or "]" in host or not port_text.isdigit() \
            or not 1 <= int(port_text) <= 65535:
        return "not HOST:PORT with a port from 1 to 65535"
    try:
        socket.getaddrinfo(host, int(port_text), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        return f"host {host!r} is unknown"
    try:
        socket.create_connection((host, int(port_text)), timeout=wait_s).close()
    except ConnectionRefusedError:
        return f"nothing listens on {host} port {port_text} (connection refused)"
    except OSError as exc:
        return f"no answer from {host} port {port_text} in {wait_s:g} s ({exc.strerror or exc})"
    return None


class Runner:
    """Evaluates designs with ``jobs`` local processes (joblib) or on the Dask scheduler at
    ``scheduler``; ``progress(n)`` is called as batches of n designs finish."""

    def __init__(self, jobs: int = 1, scheduler: Optional[str] = None,
                 progress: Optional[Callable[[int], None]] = None):
        self.jobs = jobs
        self.progress = progress
        self.client: Any = None
        if scheduler is not None:
            try:
                from dask.distributed import Client
            except ImportError:
                raise RunnerError("--scheduler needs dask.distributed: pip install "
                                     "'charmie_dynamics[cluster]' (or 'dask[distributed]')"
                                     ) from None
            problem = address_problem(scheduler)
            if problem:
                raise RunnerError(f"--scheduler {scheduler}: {problem}, expected a reachable "
                                  "Dask scheduler (tcp://HOST:8786)")
            try:
                self.client = Client(scheduler, timeout="10s")
            # any failure (a bad scheme, a missing port, no answer) is the address's
            except Exception as exc:
                why = " ".join(str(exc).split()) or type(exc).__name__
                raise RunnerError(f"--scheduler {scheduler}: cannot connect: {why}, expected "
                                  "a reachable Dask scheduler (tcp://HOST:8786)") from None

    @property
    def workers(self) -> int:
        if self.client is not None:
            return max(1, sum(self.client.ncores().values()))
        return self.jobs

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def evaluate(self, problem: DesignProblem, designs: np.ndarray) -> list[Outcome]:
        """Each row of ``designs`` (parameter values) evaluated, in order."""
        designs = np.asarray(designs, dtype=float).reshape(len(designs), -1)
        if self.workers == 1 and self.client is None:
            out = []
            for row in designs:
                out.append(problem.evaluate(tuple(row)))
                if self.progress:
                    self.progress(1)
            return out
        n = max(1, min(len(designs), self.workers * BATCHES_PER_WORKER))
        batches = [b.tolist() for b in np.array_split(designs, n) if len(b)]
        if self.client is not None:
            return self._dask(problem, batches)
        return self._joblib(problem, batches)

    def _joblib(self, problem: DesignProblem, batches: list[list]) -> list[Outcome]:
        try:
            from joblib import Parallel, delayed
        except ImportError:
            raise RunnerError("--jobs needs joblib >= 1.3: pip install joblib") from None
        out: list[Outcome] = []
        # no more processes than batches (--jobs 16 on 2 designs started 18)
        results = Parallel(n_jobs=max(1, min(self.jobs, len(batches))), return_as="generator")(
            delayed(evaluate_batch)(problem, batch) for batch in batches)
        for result in results:
            out += result
            if self.progress:
                self.progress(len(result))
        return out

    def _dask(self, problem: DesignProblem, batches: list[list]) -> list[Outcome]:
        from dask.distributed import as_completed

        # a key of its own each call (hash=False): with the problem's hash as its key, an
        # optimisation's next call scattered the same key while the scheduler released it
        # for the last call's futures, and its tasks were cancelled ("lost dependencies")
        shared = self.client.scatter(problem, broadcast=True, hash=False)
        futures = [self.client.submit(evaluate_batch, shared, batch, pure=False)
                   for batch in batches]
        if self.progress:
            for future in as_completed(futures):
                self.progress(len(future.result()))
        return [o for result in self.client.gather(futures) for o in result]
