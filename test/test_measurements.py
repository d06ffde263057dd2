"""The compiled checks and store of a measurement (evaluators/measurements.py, through
ros/inputs.CompiledChecks) against their reference in ros/common/inputs.py (JointStateParser.read,
InputLimits.check_arrays, StateAssembler.store, merged_stamp and assemble), message by
message on hostile streams: the same messages pass, the same state is stored to the last bit,
the same merged stamp and inputs come out; where a check fails, the reference refuses the
message. The dynamics node's own use of them is compared with the reference in
test_input_path.py."""
import math

import numpy as np
import pytest

from charmie_dynamics.ros.common.inputs import (CompiledChecks, InputLimits, InputRejected,
                                                JointStateParser, StateAssembler)
from charmie_dynamics.ros.common.joint_map import JointMap

# the two maps the node meets: none, and the robot's names with a scaled actuator
MAPS = {"none": JointMap(),
        "robot": JointMap(hardware={"theta8a": "left_shoulder_joint", "act4": "lift"},
                          scale={"act4": 0.001, "theta8a": -1.0}, offset={"act4": 0.05})}


def hostile_message(rng: np.random.Generator, names: list, limits: InputLimits, strokes: dict):
    """A message near the model's limits and strokes: values inside, at and beyond them,
    non-finite ones, partial, reordered, with foreign names, without velocities."""
    names = list(names)
    if rng.random() < 0.3:
        names = list(rng.permutation(names)[:rng.integers(1, len(names) + 1)])
    if rng.random() < 0.2:
        names.insert(int(rng.integers(0, len(names) + 1)), "wheel_joint")
    position, velocity = [], []
    for n in names:
        lo, hi = strokes.get(n, (limits.lower.get(n, -3.0), limits.upper.get(n, 3.0)))
        span = hi - lo
        position.append(float(rng.uniform(lo - 0.05 * span, hi + 0.05 * span)))
        speed = limits.velocity.get(n, 5.0)
        velocity.append(float(rng.uniform(-1.15 * speed, 1.15 * speed)))
    for values in (position, velocity):
        if rng.random() < 0.05:
            values[int(rng.integers(0, len(values)))] = float(rng.choice(
                [math.nan, math.inf, -math.inf, 2e6, -0.0]))
    if rng.random() < 0.1:
        velocity = []
    return names, np.array(position), np.array(velocity)


@pytest.mark.parametrize("policy", ["merge", "strict"])
@pytest.mark.parametrize("map_name", sorted(MAPS))
def test_compiled_checks_equal_the_reference_message_by_message(charmie, policy, map_name):
    joint_map = MAPS[map_name]
    limits = InputLimits.of(charmie)
    reference, compiled = (StateAssembler(charmie, shown=joint_map.hardware) for _ in range(2))
    checks = CompiledChecks(compiled, limits)
    parser = JointStateParser(joint_map, reference.accepted_names(),
                              reference.required_names(), policy)
    strokes = {joint_map.hardware.get(n, n): tuple(
        (np.array(b) - joint_map.offset.get(n, 0.0)) / joint_map.scale.get(n, 1.0))
        for n, b in reference.strokes.items()}
    hardware_limits = InputLimits(*({joint_map.hardware.get(n, n): v for n, v in d.items()}
                                    for d in (limits.lower, limits.upper, limits.velocity)))
    rng = np.random.default_rng(7)
    outcomes = dict.fromkeys(("passed", "refused", "stale or missing", "merged", "not merged"), 0)
    for k in range(3000):
        names, position, velocity = hostile_message(rng, joint_map.to_hardware(
            reference.accepted_names()), hardware_limits, strokes)
        stamp = 10**9 + int(rng.integers(-50, 50)) * 10**6 + k * 10**6
        tolerance = (0.01, math.inf)[k % 2]
        now = 5.0 + k * 1e-3
        try:
            layout = parser.read_layout(names, position, velocity, ())
        except InputRejected:
            continue                         # the names or lengths: before any value
        passed = checks.check(layout, position, velocity, tolerance, 0.1)
        if layout.rejection is None:
            assert checks.anything_new(layout, stamp) == reference.anything_new(layout.names, stamp)
        try:
            layout, p, v = parser.read(names, position, velocity, ())
            limits.check_arrays(layout.names, p, v, tolerance, 0.1)
            reference.store(layout.names, p, v, now, stamp if policy == "merge" else None)
        except InputRejected as exc:
            assert passed is None, f"message {k}: the reference refused it ({exc})"
            outcomes["refused"] += 1
            continue
        assert passed is not None, f"message {k}: the compiled checks refused what the " \
                                   "reference stored"
        np.testing.assert_array_equal(passed[0], p)
        np.testing.assert_array_equal(passed[1], v)
        checks.store(layout, now, stamp if policy == "merge" else None)
        assert compiled.latest.tobytes() == reference.latest.tobytes(), f"message {k}"
        assert compiled.stamps.tobytes() == reference.stamps.tobytes(), f"message {k}"
        outcomes["passed"] += 1
        max_age_ns, max_age = int(rng.choice([10**6, 2 * 10**7, 5 * 10**7, 10**8])), float(rng.choice([0.01, 10.0]))
        when = now + float(rng.choice([0.0, 0.005, 0.5, -1.0]))     # -1: the clock went back
        gathered = checks.gather(when, max_age, max_age_ns)
        try:
            merged = reference.merged_stamp(max_age_ns)
        except InputRejected:
            merged = None
        assert gathered.stamp == merged, f"message {k}"
        outcomes["merged" if merged is not None else "not merged"] += 1
        try:
            inputs = reference.assemble(when, max_age)
        except InputRejected:
            assert gathered.inputs is None, f"message {k}"
            outcomes["stale or missing"] += 1
        else:
            for got, expected in zip(gathered.inputs, inputs):
                assert got.tobytes() == expected.tobytes(), f"message {k}"
    # the stream reached every outcome often (strict: no joint's stamp is kept)
    if policy == "strict":
        del outcomes["merged"]
    assert min(outcomes.values()) > 100, outcomes


def test_arrays_the_entry_points_cannot_take_are_refused(charmie):
    """The kernels' entry points check neither types nor bounds: a list, a read-only or
    strided array, or another dtype is refused before them."""
    assembler = StateAssembler(charmie)
    checks = CompiledChecks(assembler, InputLimits.of(charmie))
    parser = JointStateParser(JointMap(), assembler.accepted_names(), assembler.required_names())
    names = list(assembler.required_names())
    good = np.zeros(len(names))
    layout = parser.read_layout(names, good, good, ())
    read_only = good.copy()
    read_only.flags.writeable = False
    for bad in (list(good), read_only, np.zeros(2 * len(names))[::2], good.astype(np.float32)):
        with pytest.raises(TypeError, match="writable contiguous float64"):
            checks.check(layout, bad, good, 0.01, 0.1)
        with pytest.raises(TypeError, match="writable contiguous float64"):
            checks.check(layout, good, bad, 0.01, 0.1)
    assert checks.check(layout, good, good, 0.01, 0.1) is not None
