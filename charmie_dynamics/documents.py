"""One guard for everything read from outside: files, topic strings, service replies and
command-line documents.

Every boundary of the package reads through these functions and nothing else:

- :func:`read_bytes` opens a path without blocking, refuses anything but a regular file (a
  FIFO would hang the reader, ``/dev/zero`` would fill the memory) and refuses more than
  ``max_bytes`` before reading it whole; :func:`read_text` decodes its bytes as strict UTF-8;
- :func:`check_size` caps a text that arrived in a message, before it is parsed;
- :func:`parse_yaml` and :func:`parse_json` run the parser inside one guard that turns every
  exception a parser can raise on hostile text (its own errors, ``ValueError`` for an
  impossible date or a 5,000-digit integer, ``RecursionError`` for deep nesting,
  ``MemoryError``, ``OverflowError``, ``UnicodeError``...) into the caller's error type with a
  bounded message that names the source.

The error type is the caller's (``ModelError`` for a model, ``InputError`` for a CLI input...),
so each layer keeps one exception to catch; :class:`DocumentError` is the default.
"""
from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any, Callable, Type

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

#: Largest document read or parsed by default (a model file is about 20 kB): 4 MiB.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
#: Longest parser message repeated in an error (hostile text can make them huge).
MAX_MESSAGE = 300

try:
    from yaml._yaml import CParser                      # libyaml's parser (C)
except ImportError:                                     # PyYAML built without libyaml
    CParser = None

MERGE_TAG = "tag:yaml.org,2002:merge"


class _NoMerge(SafeConstructor):
    """Refuses YAML merge keys (``<<``): each merge copies the merged mapping's entries, so
    a few hundred bytes of nested merges expand to billions of entries (measured: 568 bytes,
    78 s and 1.8 GB). No model needs them; plain aliases (shared objects) stay allowed."""

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                raise ConstructorError(None, None, "merge keys (<<) are not accepted, expected "
                                       "the entries written out", key_node.start_mark)
        super().flatten_mapping(node)


if CParser is not None:
    class SafeLoader(Composer, CParser, _NoMerge, Resolver):
        """PyYAML's safe loader (plain data only) on libyaml's parser, with the pure-Python
        composer: libyaml's own composer recurses in C without a depth check and crashes the
        process (SIGSEGV, measured at 50,000 nested ``[``); the Python one raises
        ``RecursionError``, which :func:`parse_yaml` reports. Merge keys are refused."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            _NoMerge.__init__(self)
            Resolver.__init__(self)
else:
    class SafeLoader(yaml.SafeLoader, _NoMerge):        # pure Python: depth checked as well
        """PyYAML's pure-Python safe loader, merge keys refused."""


# What a parser may raise on hostile text besides its own error type.
_PARSER_FAILURES = (ValueError, TypeError, OverflowError, RecursionError, MemoryError,
                    UnicodeError, AttributeError, KeyError, IndexError)


class DocumentError(ValueError):
    """A document that cannot be read or parsed; the message names the source and why."""


def bounded(text: Any, limit: int = MAX_MESSAGE) -> str:
    """``str(text)`` on one line, cut to ``limit`` characters."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[:limit - 3] + "..."


def _size(n: int) -> str:
    return f"{n / 1048576:.1f} MiB" if n >= 1048576 else f"{n} bytes"


def read_bytes(path: str | Path, what: str = "file", max_bytes: int = DEFAULT_MAX_BYTES,
               error: Type[Exception] = DocumentError) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` long.

    Raises ``error`` naming the path for a missing or unreadable file, a directory, FIFO,
    socket or device, or a file larger than ``max_bytes``.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: "
                    f"{exc.strerror or errno.errorcode.get(exc.errno, exc)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{path}: cannot read the {what}: not a regular file (a directory, "
                        "FIFO, socket or device), expected a file")
        if info.st_size > max_bytes:
            raise error(f"{path}: the {what} is {_size(info.st_size)}, expected at most "
                        f"{_size(max_bytes)}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:                       # grew while we read it
        raise error(f"{path}: the {what} is larger than {_size(max_bytes)}, expected at most "
                    f"{_size(max_bytes)}")
    return data


def read_text(path: str | Path, what: str = "file", max_bytes: int = DEFAULT_MAX_BYTES,
              error: Type[Exception] = DocumentError) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``max_bytes`` long.

    Raises ``error`` naming the path for a missing or unreadable file, a directory, FIFO,
    socket or device, a file larger than ``max_bytes``, or bytes that are not UTF-8.
    """
    data = read_bytes(path, what, max_bytes, error)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: the {what} is not UTF-8 text (byte {exc.start}: "
                    f"{data[exc.start:exc.start + 1]!r}), expected a text file") from None


def check_size(text: str, source: str, max_bytes: int = DEFAULT_MAX_BYTES,
               error: Type[Exception] = DocumentError) -> None:
    """Refuse a text longer than ``max_bytes`` (UTF-8) before anything parses it."""
    # len(text) <= bytes <= 4 len(text): encode only when the length alone cannot decide
    if len(text) > max_bytes or (4 * len(text) > max_bytes
                                 and len(text.encode("utf-8", "surrogatepass")) > max_bytes):
        raise error(f"{source}: {_size(len(text.encode('utf-8', 'surrogatepass')))} of text, "
                    f"expected at most {_size(max_bytes)}")


def _guarded_parse(parse: Callable[[str], Any], syntax_error: Type[Exception], kind: str,
                   text: str, source: str, error: Type[Exception]) -> Any:
    """``parse(text)``, with every failure as one ``error`` naming ``source`` and the ``kind``
    of document: its syntax error, too deep a nesting, too large a document, or another
    failure of the parser."""
    try:
        return parse(text)
    except syntax_error as exc:
        raise error(f"{source}: not valid {kind}: {bounded(exc)}") from None
    except RecursionError:
        raise error(f"{source}: not usable {kind}: nested too deeply") from None
    except MemoryError:
        raise error(f"{source}: not usable {kind}: too large to hold in memory") from None
    except _PARSER_FAILURES as exc:
        raise error(f"{source}: not usable {kind}: {type(exc).__name__}: {bounded(exc)}") from None


def _safe_load(text: str) -> Any:
    return yaml.load(text, Loader=SafeLoader)


def parse_yaml(text: str, source: str, error: Type[Exception] = DocumentError) -> Any:
    """The document of ``text`` by PyYAML's safe loader (plain data only, no Python objects)."""
    return _guarded_parse(_safe_load, yaml.YAMLError, "YAML", text, source, error)


def compose_yaml(text: str, source: str, error: Type[Exception] = DocumentError) -> Any:
    """The node tree of ``text`` (every node with its line and column: for editing a
    document in place), under the same guard and loader as :func:`parse_yaml`."""
    return _guarded_parse(lambda t: yaml.compose(t, Loader=SafeLoader), yaml.YAMLError, "YAML",
                          text, source, error)


def parse_json(text: str, source: str, error: Type[Exception] = DocumentError) -> Any:
    """The document of ``text`` by the standard JSON parser."""
    return _guarded_parse(json.loads, json.JSONDecodeError, "JSON", text, source, error)
