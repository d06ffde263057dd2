"""The joint transform (Featherstone's jcalc): the one place that tells joint types apart.

For a joint of type ``jt`` with unit axis ``a`` (in the joint frame, which is also the body
frame's orientation up to the joint's own motion) and joint value ``value`` (rad or m:
multiplier * coordinate + offset), :func:`joint_transform` gives

    R_J  rotation of the joint:     Rot(a, value) (revolute), 1 (prismatic, fixed)
    t_J  translation of the joint:  value a (prismatic), 0 (revolute, fixed)
    s_w, s_v  the motion subspace [s_w; s_v] in the body frame (seed 002 eqs. 11d, 12b):
              [a; 0] (revolute), [0; a] (prismatic), 0 (fixed)

so that, with R_c and B the constant rotation and origin of the body's placement in its
parent (forward kinematics): R^{p}_{i} = R_c R_J, r^{p}_{i} = B + R_c t_J. The axis is
fixed by the joint's own rotation, so the subspace is constant: the model packs it once
(model/packed.py) for the motion pass, the joint efforts, CRBA and ABA; forward kinematics
calls the transform at every state. A continuous joint is a revolute joint without limits.
"""
from __future__ import annotations

from ..jit import kernel
from ..linalg import scale
from .model import JointType
from .rotations import rotation_about

REVOLUTE, PRISMATIC = int(JointType.REVOLUTE), int(JointType.PRISMATIC)


@kernel
def joint_transform(jt, axis, value):
    """(R_J, t_J, s_w, s_v) of a joint (kernel; module docstring): rows and 3-tuples."""
    zero = (0.0, 0.0, 0.0)
    identity = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    if jt == REVOLUTE:
        return rotation_about(axis, value), zero, axis, zero
    if jt == PRISMATIC:
        return identity, scale(value, axis), zero, axis
    return identity, zero, zero, zero
