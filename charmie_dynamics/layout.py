"""Every column and slot index the kernels read, defined once: the packed model's arrays
(model/packed.py builds them; the Model side of Model/Data) and the result buffers the kernels
fill (the Data side).

Each layout is an IntEnum, documented where it is defined. The kernels read the members as
plain module-level ints generated below from the same definitions (``from ..layout import
COORD``): every numba version folds those as compile-time constants, while numba 0.57, the
floor, refuses an IntEnum member as an array index (0.68 accepts it; both compile to the same
constant: benchmarks/bench_named_arguments.py).

**The packed model.** Per body: ``body_int`` (nb, 6) int64 columns :class:`BodyInt`,
``body_vec`` (nb, 7, 3) 3-vector slots :class:`BodyVec` (the SCALARS slot's entries
:class:`BodyScalar`), ``body_mat`` (nb, 2, 3, 3) :class:`BodyMat`; per actuator ``act_int``
:class:`ActInt`, ``act_vec`` :class:`ActVec`; the mechanisms as one table with a kind column
(:class:`MechKind`): ``mech_int`` :class:`MechInt`, ``mech_vec`` with the law in slot
:class:`MechVec` and each kind's own slots after it (:class:`SpringVec`, :class:`BalVec`,
:class:`TorsionVec`); a closed chain's constraint rows :class:`RowInt`, :class:`RowVec` and
settings :class:`LoopSetting` (mechanisms/closed_chains/compiled.py).

**The result buffers** (the dataclasses that hold them name the slots). The package's one
spatial-vector convention (seed 002 section 2.1, dynamics/spatial.py): a twist is [omega; v]
(angular velocity first, then the velocity of the body origin) and a wrench is [n; f] (torque
about the body origin first, then force), both in the body's own frame unless named world.
Every wrench buffer keeps that order, so that a body's two wrench slots read as one 6-vector
(``buffer.reshape(..., nb, 6)`` of a (..., nb, 2, 3) buffer) are the force vector of
dynamics/spatial.py's CRBA and ABA. Public results keep their meaning under their names
(``joint_force``, CSV columns ``force_x``, ROS ``geometry_msgs/Wrench``'s force and torque);
a free-flyer's efforts are Pinocchio's (force, torque) (model/joint.py).
"""
from __future__ import annotations

from enum import IntEnum


class BodyInt(IntEnum):
    """body_int columns. COORD: the joint's (first) velocity coordinate, CONFIG: its
    (first) configuration entry (they differ after a free-flyer: parameters.py), -1 for a
    fixed joint; DRIVEN_BY: the actuator that drives the joint, or -1; KIND: the kind of
    joint transform (model/joint.py)."""

    PARENT = 0
    JOINT = 1
    COORD = 2
    DRIVEN_BY = 3
    KIND = 4
    CONFIG = 5


class BodyVec(IntEnum):
    """body_vec slots (3-vectors): the unit joint axis, the placement's origin B, the centre
    of mass, the motion subspace [S_W; S_V] (joint.py; adjacent: read as one 6-vector),
    SCALARS (:class:`BodyScalar`) and PITCH = (pitch, 0, 0): a helical joint's slide per
    radian (m/rad), 0 otherwise. AXIS and PITCH are the joint's parameter row
    (packed.joint_parameters)."""

    AXIS = 0
    ORIGIN = 1
    COM = 2
    S_W = 3
    S_V = 4
    SCALARS = 5
    PITCH = 6


class BodyScalar(IntEnum):
    """The entries of body_vec's SCALARS slot: joint value = MULTIPLIER * coordinate +
    OFFSET; the body's MASS."""

    MULTIPLIER = 0
    MASS = 1
    OFFSET = 2


class BodyMat(IntEnum):
    """body_mat slots: the placement's constant rotation R_c in the parent, the inertia
    about the centre of mass."""

    ROTATION = 0
    INERTIA = 1


class ActInt(IntEnum):
    """act_int columns."""

    A_DRIVES = 0
    A_BASE_BODY = 1
    A_END_BODY = 2
    A_BRANCH = 3
    A_SHARING = 4


class ActVec(IntEnum):
    """act_vec slots: anchors in their bodies' frames; SOLVE = (c0, alpha, beta) and
    PERP2 = (perp2, 0, 0) of the indirect joint's solution; STROKE = (shortest, longest, 0);
    JOINT_BASE: the base anchor in the driven joint's frame (p of actuator_geometry.py)."""

    A_BASE = 0
    A_END = 1
    A_SOLVE = 2
    A_PERP2 = 3
    A_STROKE = 4
    A_JOINT_BASE = 5


class MechKind(IntEnum):
    """The kinds of mechanism of the mech table, in the order of its rows (each kind's rows
    follow the previous kind's): linear springs, balancer halves, torsion springs, cables (a
    spring's slots, SpringVec)."""

    SPRING = 0
    BALANCER = 1
    TORSION_SPRING = 2
    CABLE = 3


class MechInt(IntEnum):
    """mech_int columns: the kind (MechKind), the two bodies it joins (a spring's or a torsion
    spring's start and end, a balancer's pivot and hanger body), ITEM its index among its
    kind's (a balancer's in ``model.balancers``: hanger_force, balancer_couple), and a
    balancer's SIDE and SHARES (the actuator whose joint's couple it shares, -1: none; -1 for
    the other kinds)."""

    M_KIND = 0
    M_BODY_A = 1
    M_BODY_B = 2
    M_ITEM = 3
    M_SIDE = 4
    M_SHARES = 5


class MechVec(IntEnum):
    """mech_vec slot shared by every kind: LAW = (stiffness, free value, preload) of its
    linear law (mechanisms/forces.py); the kinds' own slots follow (SpringVec, BalVec,
    TorsionVec)."""

    M_LAW = 0


class SpringVec(IntEnum):
    """A spring's mech_vec slots: its end points in their bodies' frames."""

    S_START = 1
    S_END = 2


class BalVec(IntEnum):
    """A balancer's mech_vec slots: points in their bodies' frames; SIZES = (lever, hanger,
    spring attach)."""

    B_PIVOT = 1
    B_HANGER = 2
    B_ANCHOR = 3
    B_SIZES = 4


class TorsionVec(IntEnum):
    """A torsion spring's mech_vec slots: its axis and reference direction in the start
    body's frame, the end body's reference direction in its frame."""

    T_AXIS = 1
    T_START_REFERENCE = 2
    T_END_REFERENCE = 3


class FrameSlot(IntEnum):
    """Placements.rotations (..., nb, 2, 3, 3) and .origins (..., nb, 2, 3)
    (kinematics/forward.py): the placement in the parent's frame (R^{p}_{i}, r^{p}_{i}), then
    in the world frame (R^0_i, O_i)."""

    IN_PARENT = 0
    IN_WORLD = 1


class MotionSlot(IntEnum):
    """BodyMotion.buffer (..., nb, 6, 3): angular velocity and acceleration, origin velocity
    and acceleration, com velocity and acceleration, body frame (the twist is [W; V])."""

    W = 0
    DW = 1
    V = 2
    A = 3
    VC = 4
    AC = 5


class WrenchSlot(IntEnum):
    """Wrench buffers (TreeWrenches.buffer, PassiveForces.external, Loads.applied): torque
    about the body origin, then force: [n; f]."""

    N = 0
    F = 1


class JointWrenchSlot(IntEnum):
    """Loads.joint_wrenches: [n; f] in the child frame (:class:`WrenchSlot`), then [n; f] in
    the world frame."""

    N = 0
    F = 1
    N_WORLD = 2
    F_WORLD = 3


class LoopSlot(IntEnum):
    """LoopLoads.buffer: the actuator's wrench on the child, [couple of the actuator's pin;
    force at its end], then the joint's own share, [torque; force]."""

    COUPLE = 0
    END_FORCE = 1
    JOINT_TORQUE = 2
    JOINT_FORCE = 3


class LoadSlot(IntEnum):
    """The applied-load rows (dynamics/inverse.py; a payload or an external wrench each):
    the point in its body's frame, the world torque and force, (mass, 0, 0)."""

    LOAD_POINT = 0
    LOAD_TORQUE = 1
    LOAD_FORCE = 2
    LOAD_MASS = 3


class RowInt(IntEnum):
    """A closed chain's row_int columns (mechanisms/closed_chains/compiled.py): the
    constraint row's kind (0 position, 1 orientation), its cut's bodies A and B, the cut's
    index."""

    ROW_KIND = 0
    ROW_A = 1
    ROW_B = 2
    ROW_CUT = 3


class RowVec(IntEnum):
    """A closed chain's row_vec slots: the cut's origins on A and B (their frames), e or u
    (A's frame), w (B's)."""

    ROW_ORIGIN_A = 0
    ROW_ORIGIN_B = 1
    ROW_U = 2
    ROW_W = 3


class LoopSetting(IntEnum):
    """A closed chain's settings entries: the Newton tolerance, its iteration limit, the
    condition limit, a continuation's step and its number of steps at most."""

    SET_TOLERANCE = 0
    SET_MAX_ITERATIONS = 1
    SET_CONDITION_LIMIT = 2
    SET_STEP = 3
    SET_STEPS = 4


class CutFrameSlot(IntEnum):
    """The frame Jacobians of one cut (the compiled embedding's ``frames`` buffer, (4, 3,
    n)): angular and linear of body A, then of body B."""

    FRAME_WA = 0
    FRAME_VA = 1
    FRAME_WB = 2
    FRAME_VB = 3


#: the model's layouts, then the result buffers' (the page docs/architecture.md tabulates)
MODEL_LAYOUTS = (BodyInt, BodyVec, BodyScalar, BodyMat, ActInt, ActVec, MechKind, MechInt,
                 MechVec, SpringVec, BalVec, TorsionVec, RowInt, RowVec, LoopSetting)
RESULT_LAYOUTS = (FrameSlot, MotionSlot, WrenchSlot, JointWrenchSlot, LoopSlot, LoadSlot,
                  CutFrameSlot)


def _plain_ints() -> dict[str, int]:
    """Every member's value under its name; a name in two layouts has one value."""
    out: dict[str, int] = {}
    for layout in MODEL_LAYOUTS + RESULT_LAYOUTS:
        for member in layout:
            if out.setdefault(member.name, int(member)) != int(member):
                raise ValueError(f"layout.py: {member.name} is {out[member.name]} and "
                                 f"{int(member)}, expected one value")
    return out


globals().update(_plain_ints())
#: a mech_vec row's slots: the law and the most slots of any kind
MECH_SLOTS = 1 + max(len(SpringVec), len(BalVec), len(TorsionVec))
