"""A model text validated in a child process: bounded in time, and off the caller's GIL.

Validating a large model text costs seconds of Python (a 2 MiB document of 10,000 bodies:
about 1.2 s to parse and validate here); on a thread of a node it competes with the node's
callbacks for the GIL, and a hostile text could cost more. :func:`check_in_child` runs
:func:`~charmie_dynamics.model.reader.model_from_text` in a new interpreter (``python -m
charmie_dynamics.model.isolated``: the text on stdin, one line back on stdout), kills it
after ``timeout`` seconds, and raises :class:`ModelError` for a text the child refused, one
it could not finish and a child that died. Only a text the child accepted needs to be
parsed in the caller's process.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

from ..documents import bounded
from .validation import ModelError

#: Texts above this size are checked in a child process first (CHARMIE's model: 15 kB).
CHILD_CHECK_BYTES = 128 * 1024
#: Longest a child may take: the 10,000-body model (the loader's limit) takes 1-2 s.
CHILD_TIMEOUT = 30.0
_OK = "ok"


def check_in_child(text: str, source: str, max_bytes: int, overlay: Optional[str | Path] = None,
                   timeout: float = CHILD_TIMEOUT) -> None:
    """Raise :class:`ModelError` unless ``text`` is a valid model (as ``model_from_text(text,
    source, max_bytes, overlay=overlay)`` decides), checked in a child process killed after
    ``timeout`` seconds."""
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p))
    request = json.dumps({"source": source, "max_bytes": max_bytes,
                          "overlay": None if overlay is None else str(overlay)})
    try:
        done = subprocess.run([sys.executable, "-m", __name__, request],
                              input=text.encode("utf-8", "surrogatepass"), capture_output=True,
                              timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:        # run() has killed the child
        raise ModelError(f"{source}: validating the model took longer than {timeout:g} s "
                         "(in a child process), expected a model that validates in time") from None
    except OSError as exc:
        raise ModelError(f"{source}: cannot start the model check process: {exc}") from None
    answer = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode != 0 or not answer:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise ModelError(bounded(f"{source}: the model check process ended with status "
                                 f"{done.returncode}: {tail[0]}"))
    if answer != _OK:
        raise ModelError(bounded(answer))


def _child(request: str) -> int:
    from .reader import model_from_text  # the child's only work: one validation
    args = json.loads(request)
    text = sys.stdin.buffer.read().decode("utf-8", "surrogatepass")
    try:
        model_from_text(text, args["source"], args["max_bytes"], overlay=args["overlay"])
    except ModelError as exc:
        print(str(exc).replace("\n", " "))
        return 0
    print(_OK)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1]))
