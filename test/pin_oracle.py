"""Pinocchio as an oracle for the open tree of a charmie_dynamics model.

The oracle takes the model's parameters (placements, axes, inertias) but none of its
algorithms: one Pinocchio joint per body, in the same order (a helical joint is
JointModelHelicalUnaligned); a fixed joint becomes a revolute joint held at 0, a coupled
joint gets q_pin = multiplier * coordinate. Body frame i of the model is Pinocchio's joint
frame i+1 (0 is Pinocchio's universe).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from charmie_dynamics.model import JointType, Model


def pinocchio_model(model: Model) -> pin.Model:
    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(model.gravity), np.zeros(3))
    for i, body in enumerate(model.bodies):
        parent = int(model.parent[i]) + 1
        placement = pin.SE3(np.asarray(model.rotation[i]), np.asarray(model.origin[i]))
        axis = np.asarray(model.axis[i]) if body.joint_type != JointType.FIXED else np.array([1.0, 0, 0])
        if body.joint_type == JointType.PRISMATIC:
            joint = pin.JointModelPrismaticUnaligned(axis)
        elif body.joint_type == JointType.HELICAL:
            joint = pin.JointModelHelicalUnaligned(axis, float(body.pitch))
        else:
            joint = pin.JointModelRevoluteUnaligned(axis)
        jid = pm.addJoint(parent, joint, placement, body.name)
        inertia = pin.Inertia(float(body.mass), np.asarray(body.com), np.asarray(body.inertia))
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
    return pm


def pin_joint_vector(model: Model, q: np.ndarray) -> np.ndarray:
    """Per-body joint values (0 for fixed joints) from coordinates: Pinocchio's q, v or a."""
    out = np.zeros(model.n_bodies)
    moving = model.coordinate_index >= 0
    out[moving] = np.asarray(q)[model.coordinate_index[moving]] * model.multiplier[moving]
    return out
