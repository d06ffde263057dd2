"""Model texts from a topic, parsed off the executor thread, the check that the dynamics
node can use a model, and its install/hold/accept policy (pure Python: no rclpy here).

Parsing and validating a model of a few MiB takes seconds of Python; done in a subscription
callback it would stop every timer and subscription of the node for that long (feedforward,
watchdog, diagnostics). :class:`ModelParser` does it on worker threads, newest text first,
a large text checked in a child process before (a hostile text costs the node no GIL time);
the node collects the results on its executor thread and installs them there.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Generic, Optional, Sequence, TypeVar

import numpy as np

from ...documents import bounded
from ...evaluators.evaluator import Evaluator
from ...evaluators.loop_evaluator import LoopEvaluator, assembled_evaluator
from ...model import ModelError
from ...model.isolated import CHILD_CHECK_BYTES
from ...model.model import Model
from ...model.reader import model_hash
from .joint_map import JointMap, JointMapError
from .outputs import base_frame_name, frame_name_clash, turned_base, wrench_bodies, wrench_topic

T = TypeVar("T")


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """The outcome of one text: ``value`` (what the parse function returned) or ``error``."""

    text: str
    value: Optional[T]
    error: Optional[ModelError]


class ModelParser(Generic[T]):
    """Daemon worker threads running ``parse(text)`` on the texts given to :meth:`submit`.

    Two lanes, each a thread keeping only the newest text waiting: texts of at most
    ``large`` characters, and larger ones, which ``check(text)`` (raising
    :class:`ModelError`; e.g. :func:`~charmie_dynamics.model.isolated.check_in_child`) screens
    before ``parse`` sees them. A small text (the model loader's) is thus never queued behind
    a large hostile one. A text replaced before its lane took it, and a valid outcome finished
    after that of a newer valid text, are counted in ``superseded`` and dropped: the newest
    valid text wins (a rejected text supersedes nothing), and a flood of large texts cannot
    pile up in memory. The outcomes of the last ``REMEMBERED`` texts are kept by digest (of a
    large text only a refusal, without the text: a valid large model is held by the node
    alone): a text seen again is answered at once (``repeated``), and a copy of a text being
    parsed or waiting is dropped, so a flood of one text neither costs a parse per message nor
    displaces the text waiting in its lane. ``parse`` raises :class:`ModelError` for a bad
    text; any other exception (a MemoryError, a failure in the evaluator or numba) is
    reported as a :class:`ModelError` too, and the lane goes on with the next text.
    """

    REMEMBERED = 4

    def __init__(self, parse: Callable[[str], T], check: Optional[Callable[[str], None]] = None,
                 large: int = CHILD_CHECK_BYTES) -> None:
        self._parse, self._check, self._large = parse, check, large
        self._cond = threading.Condition()
        self._waiting: list[Optional[tuple[int, str, bytes]]] = [None, None]   # per lane
        self._busy = [False, False]
        self._parsing: list[Optional[bytes]] = [None, None]       # digest of each lane's text
        self._done: list[tuple[int, Parsed[T]]] = []
        self._closed = False
        self._submitted = 0               # sequence number of the newest text
        self._delivered = 0               # of the newest outcome handed out
        self.superseded = 0
        self.repeated = 0
        # digest -> outcome (a large valid text's: a weak reference to its value)
        self._known: OrderedDict[bytes, Parsed[T] | weakref.ref] = OrderedDict()
        self._threads = [threading.Thread(target=self._run, args=(lane,), daemon=True,
                                          name=f"model_parser_{lane}") for lane in (0, 1)]
        for thread in self._threads:
            thread.start()

    def submit(self, text: str) -> None:
        lane = int(self._check is not None and len(text) > self._large)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        with self._cond:
            self._submitted += 1
            known = self._known.get(digest)
            if isinstance(known, weakref.ref):     # a large valid text: while the node has it
                value = known()
                known = None if value is None else Parsed(text, value, None)
            if known is not None:
                self._known.move_to_end(digest)
                self.repeated += 1
                self._done.append((self._submitted, known))
                return
            if digest in self._parsing or any(w is not None and w[2] == digest
                                               for w in self._waiting):
                self.repeated += 1           # its outcome is on the way
                return
            if self._waiting[lane] is not None:
                self.superseded += 1
            self._waiting[lane] = (self._submitted, text, digest)
            self._cond.notify_all()

    def forget(self) -> None:
        """Drop the remembered outcomes (a parameter the parse depends on changed)."""
        with self._cond:
            self._known.clear()

    def results(self) -> list[Parsed[T]]:
        """The outcomes finished since the last call, oldest text first; a valid outcome
        older than a valid one already handed out is dropped (counted in ``superseded``)."""
        with self._cond:
            done, self._done = sorted(self._done, key=lambda d: d[0]), []
            fresh = []
            for seq, outcome in done:
                if outcome.error is None and seq < self._delivered:
                    self.superseded += 1
                    continue
                if outcome.error is None:
                    self._delivered = seq
                fresh.append(outcome)
        return fresh

    def idle(self) -> bool:
        """Nothing waiting, nothing being parsed, no result to collect."""
        with self._cond:
            return self._waiting == [None, None] and not any(self._busy) and not self._done

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for thread in self._threads:      # a parse in progress finishes on its own (daemon)
            thread.join(timeout=1.0)

    def _run(self, lane: int) -> None:
        while True:
            with self._cond:
                while self._waiting[lane] is None and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                (seq, text, digest), self._waiting[lane] = self._waiting[lane], None
                self._busy[lane], self._parsing[lane] = True, digest
            outcome = Parsed(text, None, ModelError("model parser: no outcome"))
            try:
                if lane:
                    self._check(text)
                outcome = Parsed(text, self._parse(text), None)
            except ModelError as exc:
                outcome = Parsed(text, None, exc)
            except Exception as exc:       # noqa: BLE001 - the worker must outlive any text
                outcome = Parsed(text, None, ModelError(bounded(
                    f"model parsing failed: {type(exc).__name__}: {exc}")))
            finally:
                with self._cond:
                    self._done.append((seq, outcome))
                    # a large text's valid outcome (a 10,000-body model: tens of MB) is not
                    # kept beside the node's (a weak reference finds it while the node holds
                    # it); its refusal is kept, without the text
                    if not lane:
                        self._known[digest] = outcome
                    elif outcome.error is None:
                        self._known[digest] = weakref.ref(outcome.value)
                    else:
                        self._known[digest] = Parsed(f"<{len(text)} characters, sha256 "
                                                     f"{digest.hex()[:16]}>", None, outcome.error)
                    while len(self._known) > self.REMEMBERED:
                        self._known.popitem(last=False)
                    self._busy[lane], self._parsing[lane] = False, None


@dataclass(frozen=True)
class PreparedModel:
    """A validated model with what the dynamics node needs to use it, built off the executor
    thread."""

    model: Model
    text: str
    source: str
    joints: list[str]                      # feedforward order
    evaluator: Evaluator | LoopEvaluator
    wrench_bodies: list[str]               # whose joint wrench is published

    @functools.cached_property
    def hash(self) -> str:
        """The text's SHA-256, 16 hex digits: what ``accept_model_hash`` names (computed
        once: diagnostics show it every period)."""
        return model_hash(self.text)


class Decision(enum.Enum):
    """What to do with a parsed model text (:meth:`ModelUpdates.decide`)."""

    # the values: the diagnostics counters (REJECT: a rejection reason)
    REJECT = "bad_model"              # the text is not a valid model: keep the current one
    UNCHANGED = "models_unchanged"    # a text known to give the installed model
    INSTALL = "models_taken"
    HOLD = "models_held"              # a different model under ``once``: pending


class UpdateRefused(Exception):
    """``~/accept_model_update`` installs nothing; the message says why."""


@dataclass
class ModelUpdates:
    """The dynamics node's install/hold/accept policy of models (pure Python).

    The first valid model is installed. Later ones: ``accept: always`` installs each valid
    model; ``once`` holds a different one as ``pending`` until :meth:`accept` is called
    with its hash (``accept_model_hash``: a caller who has not looked at it installs
    nothing). A text known to give the installed model changes nothing."""

    accept: str                                   # "once" or "always"
    pending: Optional[PreparedModel] = None
    _installed: bool = False
    _texts: set[str] = dataclasses.field(default_factory=set)

    def decide(self, outcome: Parsed[PreparedModel]) -> Decision:
        """The decision for one parser outcome; a held model becomes ``pending``."""
        if outcome.error is not None:
            return Decision.REJECT
        if self._installed and outcome.text in self._texts:
            return Decision.UNCHANGED
        if not self._installed or self.accept == "always":
            return Decision.INSTALL
        self.pending = outcome.value
        return Decision.HOLD

    def installed(self, prepared: PreparedModel, *same_texts: str) -> None:
        """``prepared`` is in use; ``same_texts`` give the same model (a URDF model file's
        document, as the model loader publishes it)."""
        self._installed = True
        self._texts = {prepared.text, *same_texts}

    def accept_pending(self, hash_: str) -> PreparedModel:
        """The pending model, taken, if ``hash_`` names it; :class:`UpdateRefused`
        otherwise."""
        if self.pending is None:
            raise UpdateRefused("no model update is pending")
        if hash_ != self.pending.hash:
            raise UpdateRefused("accept_model_hash does not name the pending model: set it to "
                                "model_pending_hash of /diagnostics after checking the model "
                                "(with safety_parameters_read_only, at start-up) and call again")
        prepared, self.pending = self.pending, None
        return prepared


def publisher_problem(publishers: Sequence[tuple[str, str]], allowed: Sequence[str],
                      namespace: str) -> str:
    """Why a model text cannot be taken from a topic whose publishers are ``publishers``
    ((namespace, node name) each) when only the nodes ``allowed`` may publish models, or "".

    An allowed name is a node's name in ``namespace`` (``model_loader``) or a fully qualified
    one (``/robot/model_loader``). A message does not say which publisher sent it (rclpy's
    callback has no sender on Humble), so the topic is refused while any other node publishes
    on it, and while no allowed node does."""
    def qualified(ns: str, name: str) -> str:
        return f"{ns.rstrip('/')}/{name}"

    wanted = {name if name.startswith("/") else qualified(namespace, name) for name in allowed}
    present = sorted({qualified(ns, name) for ns, name in publishers})
    others = [name for name in present if name not in wanted]
    if others:
        return (f"published by {', '.join(others[:5])}{' ...' if len(others) > 5 else ''} too, "
                f"expected only {', '.join(sorted(wanted))}")
    if not present:
        return f"no publisher left on the graph, expected {', '.join(sorted(wanted))}"
    return ""


#: rmw's name of a publisher whose node is not discovered yet (its endpoint is)
UNKNOWN_NODE_NAME = "_NODE_NAME_UNKNOWN_"


def senders_problem(senders: dict, allowed: Sequence[str], namespace: str,
                    named_by_message: bool = False) -> Optional[str]:
    """:func:`publisher_problem` for the publishers a text may have come from (``senders``:
    endpoint gid -> (namespace, node name) now, or None where the graph does not list it):
    None while one of them has no node name yet (rmw knows an endpoint before its node; the
    loader's first, latched text comes then), "" when the text may be taken, else why not.
    Those were the publishers on the topic when the text came, unless ``named_by_message``
    (the message's own sender): an unlisted one then may not be discovered yet (None: wait),
    while one of the topic's publishers gone before its name was known may have sent the
    text (refused)."""
    if any(sender is None for sender in senders.values()):
        if named_by_message:
            return None
        return "a publisher on the topic left before its node's name was known"
    if any(name == UNKNOWN_NODE_NAME for _, name in senders.values()):
        return None
    return publisher_problem(list(senders.values()), allowed, namespace)


def check_node_model(model: Model, source: str, node: str) -> None:
    """ModelError for a model the nodes cannot use: a free-flyer (``node``, e.g. "the dynamics
    node reads", says what the node does with joint_states). Models with loops are taken by
    every node (the dynamics node solves them, the simulator integrates them on their
    independent coordinates, the player plays those)."""
    if model.free_flyers:
        raise ModelError(f"{source}: body {model.body_names[model.free_flyers[0]]!r} has a "
                         f"floating joint (free-flyer): {node} joint_states, "
                         "which carry no free-flyer pose and twist, expected a model without "
                         "floating joints (free-flyer models: the Python API)")


#: Longest ``joint_wrenches/<body>`` topic made for a model: rcl refuses names near 255
#: characters (with the namespace and the DDS prefix), and a failed publisher would end the
#: node; a model naming such a body is refused instead.
MAX_TOPIC_LENGTH = 200


def prepare_model(model: Model, text: str, source: str, feedforward_joints: Sequence[str],
                  wrench_joints: Sequence[str], joint_map: JointMap = JointMap(),
                  max_loop_jump: float = math.inf, frames: tuple[str, str] = ("world", "")
                  ) -> PreparedModel:
    """Check that the node can use ``model`` (no free-flyer, the names of its parameters and
    of ``joint_map``, one topic per wrench body, assembly at the default inputs, or of its
    loops) and build its buffers; raises :class:`ModelError` (thread-safe).
    ``feedforward_joints`` may use the model's or the hardware's names; ``frames``: the
    world and base frame names (no body may have them)."""
    check_node_model(model, source, "the dynamics node reads")
    try:
        joint_map.check(tuple(dict.fromkeys(model.input_names + model.coordinate_names)), source)
    except JointMapError as exc:
        raise ModelError(str(exc)) from None
    # the base body's frame as frame_plan names it (a turned base: base_link by default)
    base_frame = base_frame_name(model, frames[1], joint_map.links) or frames[1]
    clash = frame_name_clash(model, frames[0], base_frame)
    if clash:
        raise ModelError(f"{source}: {clash}")
    try:
        joint_map.check_links(model.body_names, model.base.body if model.base else None,
                              base_frame, frames[0], source,
                              model.base.body if turned_base(model) else None)
    except JointMapError as exc:
        raise ModelError(str(exc)) from None
    # the evaluator's first evaluation compiles (or loads from numba's disk cache) the
    # kernels now, not at the first input, and proves that the model assembles at its
    # default inputs (a model with loops: at its loops' guess, LoopAssemblyError otherwise)
    evaluator = assembled_evaluator(model, source, max_loop_jump)
    inputs = evaluator.input_names
    joints = joint_map.to_model(j for j in feedforward_joints if j) or list(inputs)
    bodies = wrench_bodies(model, wrench_joints)
    # sets: a 10,000-body model is checked in O(n), not O(n^2)
    input_set, body_set = set(inputs), set(model.body_names)
    unknown = [j for j in joints if j not in input_set] + [b for b in bodies if b not in body_set]
    if unknown:
        raise ModelError(f"{source}: feedforward_joints/wrench_joints name(s) "
                         f"{bounded(', '.join(unknown), 200)} not in the model's inputs "
                         f"({bounded(', '.join(inputs), 200)}) and bodies")
    topics: dict[str, str] = {}
    for body in bodies:
        if len(wrench_topic(body)) > MAX_TOPIC_LENGTH:
            raise ModelError(f"{source}: wrench_joints body {bounded(body, 60)!r}: topic "
                             f"{len(wrench_topic(body))} characters long, expected at most "
                             f"{MAX_TOPIC_LENGTH} (a shorter body name)")
        other = topics.setdefault(wrench_topic(body), body)
        if other != body:
            raise ModelError(f"{source}: wrench_joints {other!r} and {body!r} would share the "
                             f"topic {wrench_topic(body)}, expected bodies with distinct topics")
    return PreparedModel(model, text, source, joints, evaluator, list(dict.fromkeys(bodies)))


def model_change(old: Model, new: Model) -> str:
    """What differs between two models, for the log: name, total mass, gravity, bodies."""
    parts = []
    if old.name != new.name:
        parts.append(f"name {old.name!r} -> {new.name!r}")
    if old.total_mass != new.total_mass:
        parts.append(f"total mass {old.total_mass:.6g} -> {new.total_mass:.6g} kg")
    if not np.array_equal(old.gravity, new.gravity):
        parts.append(f"gravity {np.round(old.gravity, 6).tolist()} -> "
                     f"{np.round(new.gravity, 6).tolist()} m/s^2")
    if old.n_bodies != new.n_bodies:
        parts.append(f"bodies {old.n_bodies} -> {new.n_bodies}")
    return ", ".join(parts) or "same name, mass, gravity and body count (other parameters differ)"

