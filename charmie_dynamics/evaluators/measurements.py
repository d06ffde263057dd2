"""A measurement merged into the latest values of a model's inputs by small compiled calls:
the value checks, the store and the inputs' gathering of the dynamics node's joint_states and
actuator_states (issue 37).

``ros/common/inputs.py`` holds the reference:
:class:`~charmie_dynamics.ros.common.inputs.JointStateParser`
(finite values, the joint map's conversion), ``InputLimits.check_arrays`` (plausible values,
position and speed limits) and ``StateAssembler.store`` (actuator strokes, the per-joint
stamps of the merge policy), each on numpy arrays and with the rejection's text. These kernels
make the same comparisons in the same order on one message (:func:`check_measurement`, which
stores nothing and returns which check failed first) and store it (:func:`store_measurement`);
where a check fails, the caller runs the reference on the same message for the rejection's
text. :func:`gather_inputs` and :func:`anything_newer` do the same for the assembler's
``merged_stamp``, ``assemble`` and ``anything_new``. test/test_measurements.py checks the two
equal, message by message, on hostile streams. :func:`take_joint_state` runs them all on a
JointState's serialized bytes in one call (the dynamics node's steady path;
test/test_input_path.py).

Arrays by slot: the assembler keeps one slot per name it accepts; a message's kept entries
are given as (message index, slot) pairs, worked out once per order of names.
"""
from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..kinematics.limits import PLAUSIBLE

#: What :func:`check_measurement` returns: every check passed, or the first that failed
PASSED, NON_FINITE, NON_FINITE_CONVERTED, BEYOND_LIMITS, OUT_OF_STROKE = range(5)
#: What :func:`gather_inputs` finds, of the merged stamp and of the inputs
MISSING, TOO_OLD, STALE = 1, 2, 3
#: Rows of the bounds array, one column per slot
LOWER, UPPER, SPEED, STROKE_LO, STROKE_HI = range(5)
#: Rows of the latest values array, one column per slot
POSITION, VELOCITY, RECEIVED, HAS_VALUE = range(4)


@kernel(hold_gil=True)
def check_measurement(position: np.ndarray, velocity: np.ndarray, entries: np.ndarray,
                      factors: np.ndarray, bounds: np.ndarray, checks: np.ndarray,
                      kept: np.ndarray) -> int:
    """Check one message's kept values (module docstring); nothing is stored.

    ``position`` (n,) and ``velocity`` (n,) or (0,) (not measured: at rest): the message's
    arrays; ``entries`` (2, k) int64: each kept value's index in the message and its slot;
    ``factors`` (2, k): the joint map's scale and offset of each, or (2, 0) where none is
    converted; ``bounds`` (5, S): each slot's position limits, speed limit (inf: none) and
    actuator stroke (+-inf: not an actuator); ``checks`` (2,): the position tolerance (inf:
    positions unchecked) and the velocity tolerance (a fraction). ``kept`` (2, k) receives
    the kept positions and velocities in the model's units.
    """
    k = entries.shape[1]
    measured = velocity.shape[0] > 0
    for j in range(k):                           # non_finite before any conversion
        m = entries[0, j]
        kept[0, j] = position[m]
        kept[1, j] = velocity[m] if measured else 0.0
        if not (np.isfinite(kept[0, j]) and np.isfinite(kept[1, j])):
            return NON_FINITE
    if factors.shape[1] > 0:
        for j in range(k):
            kept[0, j] = factors[0, j] * kept[0, j] + factors[1, j]
            kept[1, j] = factors[0, j] * kept[1, j]
            if not (np.isfinite(kept[0, j]) and np.isfinite(kept[1, j])):
                return NON_FINITE_CONVERTED
    position_tolerance, velocity_tolerance = checks[0], checks[1]
    for j in range(k):
        s, p, v = entries[1, j], kept[0, j], kept[1, j]
        # the comparisons of InputLimits.violation
        if not (abs(p) <= PLAUSIBLE and abs(v) <= PLAUSIBLE
                and abs(v) <= bounds[SPEED, s] * (1.0 + velocity_tolerance)):
            return BEYOND_LIMITS
        if np.isfinite(position_tolerance) and not (
                bounds[LOWER, s] - position_tolerance <= p
                and p <= bounds[UPPER, s] + position_tolerance):
            return BEYOND_LIMITS
    for j in range(k):
        s, p = entries[1, j], kept[0, j]
        if not (bounds[STROKE_LO, s] <= p and p <= bounds[STROKE_HI, s]):
            return OUT_OF_STROKE
    return PASSED


@kernel(hold_gil=True)
def store_measurement(entries: np.ndarray, kept: np.ndarray, latest: np.ndarray,
                      stamps: np.ndarray, stamp: np.ndarray, received: float) -> None:
    """Store values :func:`check_measurement` passed (``entries`` and ``kept`` as it left
    them) received at ``received`` (s): ``latest`` (4, S): each slot's position, velocity,
    arrival time and 1.0 once it has a value; ``stamps`` (2, S) int64: each slot's header
    stamp (ns) and 1 once stamped; ``stamp`` (2,) int64: the message's stamp and 1 where it
    is kept per joint (merge policy: a value older than the one kept does not replace it)."""
    for j in range(entries.shape[1]):
        s = entries[1, j]
        if stamp[1]:
            if stamps[1, s] and stamps[0, s] > stamp[0]:
                continue                         # a newer value is kept for this joint
            stamps[0, s] = stamp[0]
            stamps[1, s] = 1
        latest[POSITION, s] = kept[0, j]
        latest[VELOCITY, s] = kept[1, j]
        latest[RECEIVED, s] = received
        latest[HAS_VALUE, s] = 1.0


@kernel(hold_gil=True)
def gather_inputs(latest: np.ndarray, stamps: np.ndarray, inputs: np.ndarray,
                  required: np.ndarray, times: np.ndarray, merge: np.ndarray,
                  codes: np.ndarray, x: np.ndarray, xd: np.ndarray) -> None:
    """The checks of ``StateAssembler.merged_stamp`` and ``StateAssembler.assemble`` (its
    reference, ros/common/inputs.py) at once, and the inputs' latest values; nothing is stored.

    ``inputs`` (n,) and ``required`` (r,): the slots of the evaluated inputs and of the joints
    whose stamps are merged; ``times`` (2,): now and the largest age of a value (s);
    ``merge`` (2,) int64: the largest age of a joint's stamp behind the newest (ns), and
    where the newest required stamp is written (0 for none). ``codes`` (2,) receives the
    merged stamp's (``PASSED``, ``MISSING``, ``TOO_OLD``) and the inputs' (``PASSED``,
    ``MISSING``, ``STALE``); ``x`` and ``xd`` (n,) the inputs' positions and velocities.
    """
    newest = 0
    codes[0] = PASSED
    for j in range(required.shape[0]):
        s = required[j]
        if not stamps[1, s]:
            codes[0] = MISSING
        elif j == 0 or stamps[0, s] > newest:
            newest = stamps[0, s]
    if codes[0] == PASSED:
        for j in range(required.shape[0]):
            if newest - stamps[0, required[j]] > merge[0]:
                codes[0] = TOO_OLD
    merge[1] = newest
    codes[1] = PASSED
    for j in range(inputs.shape[0]):
        s = inputs[j]
        if latest[HAS_VALUE, s] == 0.0:
            codes[1] = MISSING
            return
    for j in range(inputs.shape[0]):
        s = inputs[j]
        age = times[0] - latest[RECEIVED, s]
        if not (0.0 <= age and age <= times[1]):  # NaN too: as the reference
            codes[1] = STALE
        x[j] = latest[POSITION, s]
        xd[j] = latest[VELOCITY, s]


@kernel(hold_gil=True)
def anything_newer(entries: np.ndarray, stamps: np.ndarray, stamp: np.ndarray) -> bool:
    """``StateAssembler.anything_new`` (the reference): whether a message stamped ``stamp[0]``
    brings a value (``entries`` as :func:`check_measurement` takes them) no older than the one
    kept for its slot, or for a slot without a stamp yet."""
    for j in range(entries.shape[1]):
        s = entries[1, j]
        if not stamps[1, s] or stamps[0, s] <= stamp[0]:
            return True
    return False


#: What :func:`take_joint_state` returns: the message taken (checked, stored, gathered),
#: left to the caller's reference path (nothing rejected here: the reference finds out why),
#: or not of the given names block (another block may be its)
TAKEN, LEFT, OTHER_BLOCK = 0, 1, 2
#: Entries of its ``clock`` array (``CLOCK_SIZE`` of them): the node clock (ns, 0: none
#: yet), the largest stamp lead (ns), 1 for the strict policy (the stamp no older than the
#: last evaluated one, else left), the last evaluated stamp and 1 where there is one; the
#: kernel writes the message's stamp and the merged one (merge policy) after them
NOW, MAX_LEAD, STRICT, LAST, HAS_LAST, STAMP, MERGED = range(7)
CLOCK_SIZE = 7
#: XCDR1's encapsulation header, before the fields (cdr.py, the ROS layer's reader)
CDR_HEADER = 4


@kernel(inline=True)
def _u32(data: np.ndarray, at: int) -> int:
    """The little-endian uint32 of ``data`` (uint8) at ``at``, as a signed integer (an
    unsigned one would make numba's arithmetic with signed ones float)."""
    return np.int64(data[at]) | np.int64(data[at + 1]) << 8 | np.int64(data[at + 2]) << 16 \
        | np.int64(data[at + 3]) << 24


@kernel(inline=True)
def _aligned(at: int, size: int) -> int:
    """``at`` moved up to a multiple of ``size`` counted from the CDR header's end."""
    return CDR_HEADER + (at - CDR_HEADER + size - 1) // size * size


@kernel(inline=True)
def _doubles_at(data: np.ndarray, at: int) -> tuple[int, int]:
    """A float64 sequence's count and where its values start (-1: beyond the end)."""
    at = _aligned(at, 4)
    if at + 4 > data.shape[0]:
        return 0, -1
    count = _u32(data, at)
    at += 4
    if count:
        at = _aligned(at, 8)
    if at + 8 * count > data.shape[0]:
        return 0, -1
    return count, at


@kernel(hold_gil=True)
def take_joint_state(data: np.ndarray, block: np.ndarray, layout: tuple, limits: tuple,
                     store: tuple, gather: tuple, clock: np.ndarray) -> int:
    """One sensor_msgs/JointState from its serialized bytes to the inputs' latest values, in
    one call, for a message whose names block (``block``: the names' count and strings, as
    the message holds them) was seen before and read by the reference; ``TAKEN``,
    ``OTHER_BLOCK`` (nothing done) or ``LEFT`` with nothing stored but values the reference
    path stores alike (it runs next, on the same message at the same node time, and finds
    the rejection).

    ``data`` (uint8): the message's XCDR1 bytes (little-endian; else ``LEFT``); ``layout``
    = (entries, factors, kept, values): :func:`check_measurement`'s three for the block, and
    ``values`` (2 n,) which receives the message's n positions (n: the block's names), then
    its velocities (as the bytes hold them: a little-endian host, as x86_64 and aarch64
    are); ``limits`` = (bounds, checks), ``store`` = (latest, stamps, stamp) and ``gather``
    = (inputs, required, times, merge, codes, x, xd): the other kernels' arguments. Then the
    reference path's checks (a message any of them fails is left; their order here matters
    only in that nothing is stored before the last of them): the stamp's ``nanosec`` below
    1e9, the lengths (positions as many as the names, velocities and efforts as many or
    none), the stamp's lead on the node clock (``clock``'s entries; ``StampGuard``'s lead),
    the strict policy's order (its ``check``, which raises nothing then), then
    :func:`check_measurement` and the merge policy's :func:`anything_newer`; then
    :func:`store_measurement` at ``times[0]`` and :func:`gather_inputs` (both of its codes
    ``PASSED``). ``stamp`` (2,) receives the message's stamp and 1 under merge (per-joint
    stamps), the other arrays are those kernels'.
    """
    entries, factors, kept, values = layout
    bounds, checks = limits
    latest, stamps, stamp = store
    inputs, required, times, merge, codes, x, xd = gather
    size = data.shape[0]
    if size < CDR_HEADER + 16 or data[0] != 0 or data[1] != 1:
        return LEFT
    sec = _u32(data, CDR_HEADER)
    if sec >= 2 ** 31:                            # int32, two's complement
        sec -= 2 ** 32
    nanosec = _u32(data, CDR_HEADER + 4)
    if nanosec >= 1_000_000_000:
        return LEFT
    at = _aligned(CDR_HEADER + 12 + _u32(data, CDR_HEADER + 8), 4)
    if at + block.shape[0] > size:
        return OTHER_BLOCK
    for k in range(block.shape[0]):
        if data[at + k] != block[k]:
            return OTHER_BLOCK
    n = values.shape[0] // 2
    n_position, at_position = _doubles_at(data, at + block.shape[0])
    if at_position < 0 or n_position != n:
        return LEFT
    n_velocity, at_velocity = _doubles_at(data, at_position + 8 * n)
    if at_velocity < 0 or not (n_velocity == 0 or n_velocity == n):
        return LEFT
    n_effort, at_effort = _doubles_at(data, at_velocity + 8 * n_velocity)
    if at_effort < 0 or not (n_effort == 0 or n_effort == n):
        return LEFT
    raw = values.view(np.uint8)                   # the doubles' bytes, copied as they are
    for k in range(8 * n):
        raw[k] = data[at_position + k]
    for k in range(8 * n_velocity):
        raw[8 * n + k] = data[at_velocity + k]
    stamp_ns = sec * 1_000_000_000 + nanosec
    clock[STAMP] = stamp_ns
    now = clock[NOW]
    if now > 0 and stamp_ns - now > clock[MAX_LEAD]:
        return LEFT
    if clock[STRICT] and clock[HAS_LAST] and stamp_ns < clock[LAST]:
        return LEFT
    if check_measurement(values[:n], values[n:n + n_velocity], entries, factors, bounds, checks,
                         kept) != PASSED:
        return LEFT
    stamp[0], stamp[1] = (0, 0) if clock[STRICT] else (stamp_ns, 1)
    if not clock[STRICT] and not anything_newer(entries, stamps, stamp):
        return LEFT
    store_measurement(entries, kept, latest, stamps, stamp, times[0])
    gather_inputs(latest, stamps, inputs, required, times, merge, codes, x, xd)
    if codes[1] != PASSED or (not clock[STRICT] and codes[0] != PASSED):
        return LEFT
    clock[MERGED] = merge[1]
    return TAKEN
