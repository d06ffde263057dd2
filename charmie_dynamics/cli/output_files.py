"""The commands' output folders: every file written into a temporary folder beside ``--out``,
then moved into it, so that a failed or interrupted run leaves nothing partial there."""
from __future__ import annotations

import contextlib
import csv
import os
import secrets
import shutil
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

try:
    from tqdm import tqdm
except ImportError:          # optional (the `plots` extra): no progress bar then
    tqdm = None

from ..errors import InputError


def write_csv(path: Path, table: tuple[str, list[str], np.ndarray]) -> None:
    """A table (name, header, rows) as CSV, the rows at full precision."""
    _, header, rows = table
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows.tolist())


def check_output(out: Path) -> None:
    """Refuse, before any work, an ``--out`` that cannot be a directory: something other than
    a directory, a dangling symbolic link, or a path under a file."""
    for path in (out, *out.parents):
        if path.is_symlink() and not path.exists():
            raise InputError(f"--out {out}: {path} is a dangling symbolic link, expected a "
                             "directory (created when missing)")
        if path.exists():
            if not path.is_dir():
                where = "" if path == out else f"{path} "
                raise InputError(f"--out {out}: {where}exists and is not a directory, expected "
                                 "a directory (created when missing)")
            return


def check_targets(out: Path, names: Iterable[str], overwrite: bool) -> None:
    """Refuse, before anything is moved into ``out``, an output's name that is a folder there,
    and, unless ``overwrite``, one that exists at all (the user's file, or an earlier run's):
    a run replaces nothing it was not told to."""
    if not out.is_dir():
        return
    taken = [name for name in names if (out / name).exists() or (out / name).is_symlink()]
    folders = [name for name in taken if (out / name).is_dir() and not (out / name).is_symlink()]
    if folders:
        raise InputError(f"--out {out}: {', '.join(folders)} is a folder there, where this run "
                         "writes a file; nothing was written")
    if taken and not overwrite:
        shown = ", ".join(taken[:8]) + (f" and {len(taken) - 8} more" if len(taken) > 8 else "")
        raise InputError(f"--out {out} already holds {shown}: give --overwrite to replace "
                         "them, or another --out; nothing was written")


def check_file_target(path: Path, overwrite: bool) -> None:
    """Refuse, before any work, an ``--out`` file that is a folder or lies under a file, and,
    unless ``overwrite``, one that exists (the user's, or an earlier run's)."""
    check_output(path.parent)
    if path.is_dir() and not path.is_symlink():
        raise InputError(f"--out {path}: is a folder, expected the path of a file to write")
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise InputError(f"--out {path} exists: give --overwrite to replace it, or another "
                         "--out; nothing was written")


def write_file(path: Path, write: Callable[[Path], None], overwrite: bool) -> None:
    """``write(tmp)`` to a file beside ``path`` (its suffix kept: writers choose the format
    by it), then renamed over ``path`` once checked again (:func:`check_file_target`); a
    failure or Ctrl-C leaves no partial file. Raises :class:`InputError` where it cannot be
    written."""
    tmp = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.partial{path.suffix}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        check_file_target(path, overwrite)
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"--out {path}: cannot write there: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def write_all(out: Path, steps: list[tuple[str, Callable[[Path], None]]],
              overwrite: bool = False) -> None:
    """Write every file (``step(path)``) into a new folder beside ``out``, then move them into
    ``out`` (renamed into place when ``out`` does not exist yet) once every target is checked
    (:func:`check_targets`); the folder is removed whatever happens, so a failure (or Ctrl-C)
    leaves nothing partial in ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    # beside out: the same file system, so that the moves are renames
    tmp = out.parent / f".{out.name}.{secrets.token_hex(4)}.partial"
    tmp.mkdir()
    try:
        # a bar on stderr while the files are written (plots take seconds); none when piped
        with (tqdm(steps, desc="writing", unit="file", disable=None, leave=False) if tqdm
              else contextlib.nullcontext(steps)) as bar:
            for name, write in bar:
                if tqdm:
                    bar.set_postfix_str(name)
                write(tmp / name)
        check_output(out)
        check_targets(out, [name for name, _ in steps], overwrite)
        if out.is_dir():
            for name, _ in steps:
                os.replace(tmp / name, out / name)
        else:
            os.rename(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
