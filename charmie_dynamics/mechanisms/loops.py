"""The closed, over-constrained loops of the actuator-driven joints (seed 000 section 5.2):
how the wrench that the tree recursion requires at a driven joint splits between the joint
and its linear actuator.

The tree pass (dynamics/rnea.py), with springs and balancers applied as known external
forces, gives at each driven joint the total wrench (f, n about the joint point, child frame)
that the joint and the actuator together apply on the child. Its total is exact; the split
uses the paper's simplifying assumptions, generalised from CHARMIE's axes to the joint axis a:

Revolute joint driven by an actuator (body 5 and act5, eqs. 36-38):
  * the pin carries no torque about a: the actuator's force gives all of a.n       (eq. 36 row 4)
  * the actuator's force across a lies along the actuator                          (eq. 36 row 5)
  * the force along a is shared half and half by the pin and the actuator          (eq. 36 row 6)
  * the remaining torque across a is shared half and half                          (eq. 38)
Prismatic joint driven by an actuator (body 4 and act4, eqs. 42-43):
  * the actuator's force lies along the actuator and gives all of the force along a (eq. 42)
  * the joint carries the remaining force and the torque across a                  (eqs. 42-43)
  * the torque about a is shared equally by the balancer halves acting on the joint (eq. 43;
    by the joint itself where no balancer acts on it).
Deviation: eq. 42 takes the actuator force "in the yz-plane"; here it is along the actuator's
line, which is the same for CHARMIE (the actuator lies in the yz-plane) and general otherwise.

By construction the actuator's axial force satisfies virtual work with the joint's
generalized effort: F_act dL/dq = tau_q.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics.rnea import TreeWrenches
from ..kinematics.forward import Placements
from ..linalg import cross, rotate_back
from ..model.model import JointType, Model


@dataclass(frozen=True)
class LoopLoads:
    """Loads of the actuator-driven joints, child frames, in ``model.actuators`` order."""

    actuator_force: np.ndarray     # (..., na) axial force, N; positive pushes the ends apart
    actuator_end_force: np.ndarray  # (..., na, 3) force of the actuator on the child, at its end
    actuator_couple: np.ndarray    # (..., na, 3) couple of the actuator's pin on the child
    joint_force: np.ndarray        # (..., na, 3) share of the joint itself, at the joint point
    joint_torque: np.ndarray       # (..., na, 3)
    balancer_couple: np.ndarray    # (..., n_balancers) couple about the slide axis, N m


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1)[..., None]


def distribute(model: Model, placements: Placements, tree: TreeWrenches) -> LoopLoads:
    lead = tree.force.shape[:-2]
    na = len(model.actuators)
    out = {k: np.zeros(lead + (na, 3)) for k in ("end", "couple", "jf", "jt")}
    axial = np.zeros(lead + (na,))
    bal_couple = np.zeros(lead + (len(model.balancers),))
    for k, act in enumerate(model.actuators):
        i = act.drives
        a = model.axis[i]
        Rc = placements.rotation_world[..., i, :, :]
        base = placements.to_world(act.base.body, act.base.local)
        end = placements.to_world(act.end.body, act.end.local)
        u = rotate_back(Rc, _unit(end - base))        # actuator direction, child frame
        r = np.broadcast_to(act.end.local, u.shape)   # end anchor from the joint point
        f_sum, n_sum = tree.force[..., i, :], tree.torque[..., i, :]
        if model.joint_type[i] == JointType.REVOLUTE:
            u_perp = u - (u @ a)[..., None] * a
            norm_perp = np.linalg.norm(u_perp, axis=-1)
            w = u_perp / norm_perp[..., None]
            f_w = (n_sum @ a) / (cross(r, w) @ a)                        # eq. 36 rows 4-5
            f_end = f_w[..., None] * w + 0.5 * (f_sum @ a)[..., None] * a   # eq. 36 row 6
            axial[..., k] = f_w / norm_perp
            residual = n_sum - cross(r, f_end)
            residual = residual - (residual @ a)[..., None] * a   # zero by construction
            out["couple"][..., k, :] = 0.5 * residual                   # eq. 38
            out["jt"][..., k, :] = 0.5 * residual
        else:
            F = (f_sum @ a) / (u @ a)                                   # eq. 42
            f_end = F[..., None] * u
            axial[..., k] = F
            residual = n_sum - cross(r, f_end)
            along = residual @ a
            sharing = [b for b, bal in enumerate(model.balancers)
                       if bal.hanger.body == i and bal.pivot.body == model.parent[i]]
            if sharing:                                                 # eq. 43
                for b in sharing:
                    bal_couple[..., b] = along / len(sharing)
                residual = residual - along[..., None] * a
            out["jt"][..., k, :] = residual
        out["end"][..., k, :] = f_end
        out["jf"][..., k, :] = f_sum - f_end
    return LoopLoads(axial, out["end"], out["couple"], out["jf"], out["jt"], bal_couple)
