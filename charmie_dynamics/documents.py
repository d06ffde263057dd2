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

import codecs
import contextlib
import errno
import functools
import gc
import json
import operator
import os
import stat
import threading
from collections.abc import Hashable
from pathlib import Path
from typing import Any, Callable, Iterator, Type

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import (DocumentEndEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                         SequenceEndEvent, SequenceStartEvent, StreamEndEvent)
from yaml.resolver import Resolver

#: Largest document read or parsed by default (a model file is about 20 kB): 4 MiB.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
#: Longest parser message repeated in an error (hostile text can make them huge).
MAX_MESSAGE = 300

try:
    from yaml._yaml import CParser  # libyaml's parser and composer (C)
except ImportError:                                     # PyYAML built without libyaml
    CParser = None

#: Largest nesting bound (:func:`nesting_bound`) given to libyaml's own composer: it recurses
#: in C without a depth check, 250-500 bytes of stack a level (measured: a 1 MiB stack
#: crashes between 2,000 and 4,000 nested ``[`` or ``{``, 4 MiB between 8,000 and 16,000).
C_MAX_NESTING = 32_768
#: Stack given to the thread that runs libyaml's composer, per level of the bound: four
#: times the most measured, so the bound's deepest document stays far from a crash.
C_STACK_PER_LEVEL = 2048
C_STACK_MIN = 1 << 20
_STACK_LOCK = threading.Lock()         # threading.stack_size is process-wide

MERGE_TAG = "tag:yaml.org,2002:merge"


#: Deepest nesting of collections accepted (a model nests 5 levels; the pure-Python
#: composer alone would stop near Python's recursion limit, about 490 levels).
MAX_NESTING = 256


class _NotPlain(Exception):
    """A document that :meth:`_Guarded.plain` leaves to PyYAML's own construction."""


_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
#: Scalar tags that ``plain`` builds with the safe constructor's own function, called directly
_PLAIN_SCALARS = tuple(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float"))
#: Keys that PyYAML's ``flatten_mapping`` rewrites (merge keys, refused; ``=``, a string)
_SPECIAL_KEYS = (MERGE_TAG, "tag:yaml.org,2002:value")


class _Guarded(SafeConstructor):
    """PyYAML's safe constructor that refuses collections nested more than ``MAX_NESTING``
    levels deep (before constructing anything) and YAML merge keys (``<<``): each merge
    copies the merged mapping's entries, so a few hundred bytes of nested merges expand to
    billions of entries (measured: 568 bytes, 78 s and 1.8 GB). No model needs them; plain
    aliases (shared objects) stay allowed.

    A document of plain data only (maps, sequences, strings, null, booleans, integers,
    floats; aliases not recursive) is built by :meth:`plain`, PyYAML's construction without
    its per-node generators (about three times faster); any other takes PyYAML's way."""

    def construct_document(self, node: yaml.Node) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            check_expansion(node)
        try:
            return self.plain(node, 0, {})
        except _NotPlain:
            pass
        check_nesting(node)
        return super().construct_document(node)

    def scalar(self, node: yaml.ScalarNode) -> Any:
        """What PyYAML's safe construction makes of a plain scalar (its constructors);
        raises :class:`_NotPlain` for any other. A float whose text Python's ``float``
        reads is that number: PyYAML's constructor calls ``float`` on the text less its
        underscores and sign, the same number wherever ``float`` reads the whole text
        (``.inf``, ``1:30`` and the like it does not: the constructor's way). A decimal
        int without a leading 0 (YAML 1.1's octal) is ``int`` of its text alike."""
        tag, text = node.tag, node.value
        if tag == _STR:
            return text
        if tag == _FLOAT:
            try:
                return float(text)
            except ValueError:
                pass
        elif tag == _INT and text.isascii() and text.isdigit() and (text[0] != "0"
                                                                   or len(text) == 1):
            return int(text)
        if tag in _PLAIN_SCALARS:
            return self.yaml_constructors[tag](self, node)
        raise _NotPlain

    def plain(self, node: yaml.Node, depth: int, built: dict[int, Any]) -> Any:
        """What PyYAML's safe construction makes of ``node`` (its constructors, the same
        errors), for plain data; raises :class:`_NotPlain` for anything else. ``built``:
        the collections made so far by node id (aliases share them)."""
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        key = id(node)
        if key in built:
            if built[key] is _NotPlain:           # an alias inside its own anchor: recursive
                raise _NotPlain
            return built[key]
        if depth >= MAX_NESTING:
            raise _too_deep(node)
        built[key] = _NotPlain
        scalar, ScalarNode = self.scalar, yaml.ScalarNode
        if tag == _SEQ and isinstance(node, yaml.SequenceNode):
            value: Any = [scalar(child) if isinstance(child, ScalarNode)
                          else self.plain(child, depth + 1, built) for child in node.value]
        elif tag == _MAP and isinstance(node, yaml.MappingNode):
            if any(key_node.tag in _SPECIAL_KEYS for key_node, _ in node.value):
                self.flatten_mapping(node)
            value = {}
            for key_node, value_node in node.value:
                k = scalar(key_node) if isinstance(key_node, ScalarNode) else \
                    self.plain(key_node, depth + 1, built)
                if not isinstance(k, Hashable):
                    raise ConstructorError("while constructing a mapping", node.start_mark,
                                           "found unhashable key", key_node.start_mark)
                if k in value:
                    raise _duplicate_key(node, key_node, k)
                value[k] = scalar(value_node) if isinstance(value_node, ScalarNode) else \
                    self.plain(value_node, depth + 1, built)
        else:
            raise _NotPlain
        built[key] = value
        return value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        """PyYAML's, refusing a key given twice (PyYAML keeps the last without a word)."""
        seen: set = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                k = self.construct_object(key_node)
                if isinstance(k, Hashable):
                    if k in seen:
                        raise _duplicate_key(node, key_node, k)
                    seen.add(k)
        return super().construct_mapping(node, deep)

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                raise ConstructorError(None, None, "merge keys (<<) are not accepted, expected "
                                       "the entries written out", key_node.start_mark)
        super().flatten_mapping(node)


def _duplicate_key(node: yaml.Node, key_node: yaml.Node, key: Any) -> ConstructorError:
    return ConstructorError("while constructing a mapping", node.start_mark,
                            f"found the key {bounded(repr(key), 80)} twice, expected each key "
                            "once", key_node.start_mark)


class NestedTooDeeply(RecursionError):
    """Collections nested beyond ``MAX_NESTING``: reported as the pure-Python composer's
    ``RecursionError`` is ("nested too deeply"), whichever route parsed the text."""


def _too_deep(node: yaml.Node) -> NestedTooDeeply:
    return NestedTooDeeply(f"collections nested more than {MAX_NESTING} levels deep "
                           f"({node.start_mark})")


class AliasesTooLarge(ValueError):
    """A document whose aliases repeat collections into more than ``MAX_EXPANDED_NODES``
    entries: built, it is small (aliases share one object), but every reader that walks it
    (a study's parameters, a model's validation) walks each repeat: a few hundred bytes of
    nested aliases are billions of entries."""


#: Most collection entries of a document counted through its aliases (each repeat of an
#: anchored collection counted again); a 10,000-body model has about a million
MAX_EXPANDED_NODES = 10_000_000


def check_expansion(root: yaml.Node) -> None:
    """Raise :class:`AliasesTooLarge` where the composed document ``root`` has more than
    ``MAX_EXPANDED_NODES`` collection entries counted through its aliases. Each node is
    counted once (its size remembered), without recursion; a recursive alias counts its
    cycle once."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        children = node.value if isinstance(node, yaml.SequenceNode) else \
            [item for pair in node.value for item in pair]
        collections = [c for c in children if not isinstance(c, yaml.ScalarNode)]
        if done:
            total = len(children) + sum(size[id(c)] for c in collections)
            if total > MAX_EXPANDED_NODES:
                raise AliasesTooLarge(f"aliases repeat collections into more than "
                                      f"{MAX_EXPANDED_NODES} entries ({node.start_mark})")
            size[id(node)] = total
        elif id(node) not in size:
            size[id(node)] = 0                   # in progress: a cycle back here counts 0
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(collections) if id(c) not in size)
    return None


def check_nesting(root: yaml.Node) -> None:
    """Raise :class:`NestedTooDeeply` where a collection of the composed document ``root`` lies
    deeper than ``MAX_NESTING``. Walked in document order, without recursion; an alias's
    node is visited once, at its anchor (which comes first in the document)."""
    seen: set[int] = set()
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen or isinstance(node, yaml.ScalarNode):
            continue
        seen.add(id(node))
        if depth >= MAX_NESTING:
            raise _too_deep(node)
        children = node.value if isinstance(node, yaml.SequenceNode) else \
            [item for pair in node.value for item in pair]
        stack.extend((child, depth + 1) for child in reversed(children))


_RESOLVER = Resolver()


class _CachedResolver(Resolver):
    """PyYAML's resolver, with the tag of each (kind, scalar text, implicit flags)
    remembered for the document: the safe loader has no path resolvers, so the tag depends
    on these alone, and a model repeats most of its scalars (keys, 0, small numbers). The
    composer calls ``resolve``, ``descend_resolver`` and ``ascend_resolver`` for every node;
    without path resolvers the last two do nothing (PyYAML's return at once), so all three
    are C callables here, not Python methods: ``functools.lru_cache`` over a resolver of
    the class, ``operator.is_`` and ``tuple`` (called for nothing)."""

    descend_resolver = staticmethod(operator.is_)       # (parent, index): nothing
    ascend_resolver = staticmethod(tuple)               # (): nothing

    def __init__(self) -> None:
        super().__init__()
        self.resolve = functools.lru_cache(maxsize=None)(_RESOLVER.resolve)


if CParser is not None:
    class CSafeLoader(CParser, _Guarded, _CachedResolver):
        """The safe loader with libyaml's parser and composer (C), merge keys refused: only
        for documents whose :func:`nesting_bound` is at most ``C_MAX_NESTING``, on a thread
        with ``C_STACK_PER_LEVEL`` bytes of stack a level (:func:`parse_yaml`)."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _Guarded.__init__(self)
            _CachedResolver.__init__(self)

    class SafeLoader(Composer, CParser, _Guarded, _CachedResolver):
        """PyYAML's safe loader (plain data only) on libyaml's parser, with the pure-Python
        composer: libyaml's own composer recurses in C without a depth check and crashes the
        process (SIGSEGV, measured at 50,000 nested ``[``); the Python one raises
        ``RecursionError``, which :func:`parse_yaml` reports. Merge keys are refused."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            _Guarded.__init__(self)
            _CachedResolver.__init__(self)
else:
    CSafeLoader = None

    class SafeLoader(yaml.SafeLoader, _Guarded):        # pure Python: depth checked as well
        """PyYAML's pure-Python safe loader, deep nesting and merge keys refused."""


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
    """The UTF-8 text of the regular file ``path``, at most ``max_bytes`` long (see
    :func:`decode_text`).

    Raises ``error`` naming the path for a missing or unreadable file, a directory, FIFO,
    socket or device, a file larger than ``max_bytes``, or bytes that are not UTF-8.
    """
    return decode_text(read_bytes(path, what, max_bytes, error), path, what, error)


def decode_text(data: bytes, path: str | Path, what: str = "file",
                error: Type[Exception] = DocumentError) -> str:
    """``data`` as UTF-8 text without the byte-order mark a spreadsheet may put first (a
    CSV's header read "\ufefftime"); ``error`` naming the path and the first byte that is
    not UTF-8, counted from the file's start."""
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = skip + exc.start
        raise error(f"{path}: the {what} is not UTF-8 text (byte {at}: "
                    f"{data[at:at + 1]!r}), expected a text file") from None


def check_size(text: str, source: str, max_bytes: int = DEFAULT_MAX_BYTES,
               error: Type[Exception] = DocumentError) -> None:
    """Refuse a text longer than ``max_bytes`` (UTF-8) before anything parses it."""
    # len(text) <= bytes <= 4 len(text): encode only when the length alone cannot decide
    if len(text) > max_bytes or (4 * len(text) > max_bytes
                                 and len(text.encode("utf-8", "surrogatepass")) > max_bytes):
        raise error(f"{source}: {_size(len(text.encode('utf-8', 'surrogatepass')))} of text, "
                    f"expected at most {_size(max_bytes)}")


#: The reason given for a document nested too deeply, whichever layer stopped it: this
#: package's ``MAX_NESTING``, libyaml's own depth limit (the libyaml in PyYAML 6.0.4's
#: wheels stops at 1,000 levels with a syntax error in its own words), the pure-Python
#: composer's or ``json``'s ``RecursionError``.
TOO_DEEP = "nested too deeply"


def _nesting_limit(exc: Exception) -> bool:
    """Whether a parser's syntax error is its own depth limit rather than invalid text."""
    return "nesting depth" in str(getattr(exc, "problem", ""))


def _guarded_parse(parse: Callable[[str], Any], syntax_error: Type[Exception], kind: str,
                   text: str, source: str, error: Type[Exception]) -> Any:
    """``parse(text)``, with every failure as one ``error`` naming ``source`` and the ``kind``
    of document: its syntax error, too deep a nesting, too large a document, or another
    failure of the parser."""
    try:
        return parse(text)
    except syntax_error as exc:
        if not _nesting_limit(exc):
            raise error(f"{source}: not valid {kind}: {bounded(exc)}") from None
        raise error(f"{source}: not usable {kind}: {TOO_DEEP}") from None
    except RecursionError:
        raise error(f"{source}: not usable {kind}: {TOO_DEEP}") from None
    except MemoryError:
        raise error(f"{source}: not usable {kind}: too large to hold in memory") from None
    except AliasesTooLarge as exc:
        raise error(f"{source}: not usable {kind}: {exc}") from None
    except _PARSER_FAILURES as exc:
        raise error(f"{source}: not usable {kind}: {type(exc).__name__}: {bounded(exc)}") from None


def nesting_bound(text: str) -> int:
    """An upper bound on the nesting depth of the YAML document ``text``, from its characters
    alone: every flow level opens with a ``[`` or ``{`` (quoted or not, each counted), and
    every block level needs a column of indentation or a compact indicator (``- - x``) on
    its line, so block nesting is below the longest line's length (lines split at ``\\n``
    only: YAML's other line breaks make them shorter, not longer)."""
    longest = max(map(len, text.split("\n")), default=0)
    return text.count("[") + text.count("{") + longest + 2


_NO_THREAD = object()


def _load_on_own_stack(text: str, stack: int) -> Any:
    """``yaml.load(text, Loader=CSafeLoader)`` on a thread with ``stack`` bytes of stack, its
    exception raised here; ``_NO_THREAD`` where no such thread can be made (a platform
    without ``threading.stack_size``, or no memory for the stack)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = yaml.load(text, Loader=CSafeLoader)
        except BaseException as exc:         # noqa: BLE001 - raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="charmie_dynamics-yaml", daemon=True)
    with _STACK_LOCK:
        try:
            previous = threading.stack_size(stack)
        except (ValueError, RuntimeError):
            return _NO_THREAD
        try:
            thread.start()
        except RuntimeError:                 # "can't start new thread"
            return _NO_THREAD
        finally:
            threading.stack_size(previous)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused, then restored as it was. A parse makes a
    node, two marks and a value per scalar: the collector, started every 700 new objects,
    walks the ones made so far each time, about half the parse of a large model (measured:
    1,000 bodies, 175 -> 88 ms of CPU). Reference counting still frees what the parse drops;
    only cycles (a recursive alias) wait for the next collection. The switch is the
    process's: other threads go without the collector for the parse's duration."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _plain_document(text: str) -> Any:
    """The document of ``text`` built straight from libyaml's parser events, for plain data
    written out: mappings, sequences and the scalars :meth:`_Guarded.scalar` builds, with no
    anchor, alias or tag (other than the non-specific ``!``), one document, collections
    nested less than ``MAX_NESTING`` deep. It is what PyYAML's safe loader makes of such a
    document (the same resolver and scalar construction; a mapping's entries in order; a
    repeated key left to the loaders, which refuse it) without a node object per value (about half
    the parse of a
    large model) and without recursion (libyaml's parser keeps its own stack). Raises
    :class:`_NotPlain` for any other document, and the parser's or a constructor's error for
    invalid text: the loaders of :func:`_safe_load` then construct or refuse it as before."""
    get = CParser(text).get_event
    get()                                            # StreamStartEvent
    if type(get()) is StreamEndEvent:                # no document (empty, or comments only)
        return None
    constructor = _Guarded()
    plain: dict[str, Any] = {}                       # plain scalar text -> its value
    stack: list[tuple[list[Any], bool]] = []         # the open collections: items, mapping
    items: list[Any] = []                            # a mapping's: key, value, key, value...
    mapping = False
    add = items.append
    while True:
        event = get()
        kind = type(event)
        if kind is ScalarEvent:
            if event.anchor is not None or event.tag not in (None, "!"):
                raise _NotPlain
            scalar, implicit = event.value, event.implicit
            value = plain.get(scalar, _NotPlain) if implicit[0] else _NotPlain
            if value is _NotPlain:
                value = constructor.scalar(yaml.ScalarNode(
                    _RESOLVER.resolve(yaml.ScalarNode, scalar, implicit), scalar))
                if implicit[0]:
                    plain[scalar] = value
            add(value)
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            if mapping:
                pairs = iter(items)
                value = dict(zip(pairs, pairs))      # TypeError for an unhashable key
                if 2 * len(value) != len(items):     # a key twice: the loaders below say so
                    raise _NotPlain
            else:
                value = items
            items, mapping = stack.pop()
            add = items.append
            add(value)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if (event.anchor is not None or event.tag not in (None, "!")
                    or len(stack) >= MAX_NESTING):   # len(stack): this collection's depth
                raise _NotPlain
            stack.append((items, mapping))
            items, mapping = [], kind is MappingStartEvent
            add = items.append
        elif kind is DocumentEndEvent:
            break
        else:                                        # an alias
            raise _NotPlain
    if type(get()) is not StreamEndEvent:            # a second document
        raise _NotPlain
    return items[0]


def _safe_load(text: str) -> Any:
    """:func:`_plain_document` when the text is plain data; otherwise all C (libyaml's
    composer on a thread with a stack sized from the nesting bound) when the bound allows
    it, or libyaml's parser with the pure-Python composer, whose ``RecursionError`` on deep
    nesting the guard reports. Without the cyclic collector."""
    with _cyclic_gc_paused():
        if CSafeLoader is not None:
            try:
                return _plain_document(text)
            except (_NotPlain, yaml.YAMLError, *_PARSER_FAILURES):
                pass                        # the loaders below construct it or say what fails
            bound = nesting_bound(text)
            if bound <= C_MAX_NESTING:
                value = _load_on_own_stack(text, max(C_STACK_MIN, bound * C_STACK_PER_LEVEL))
                if value is not _NO_THREAD:
                    return value
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
