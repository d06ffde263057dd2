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

from ..jit import kernel
from ..kinematics.forward import to_world
from ..layout import (A_BASE, A_BASE_BODY, A_DRIVES, A_END, A_END_BODY, A_SHARING, AXIS, COUPLE,
                      END_FORCE, IN_WORLD, JOINT, JOINT_FORCE, JOINT_TORQUE, M_ITEM, M_SHARES, F, N)
from ..linalg import add, cross3, dot, mat, mat_t_vec, norm, scale, store, sub, vec
from ..model.joint import REVOLUTE


@dataclass(frozen=True)
class LoopLoads:
    """Loads of the actuator-driven joints, child frames, in ``model.actuators`` order.

    ``buffer`` (..., na, 4, 3) holds, in the slots of ``charmie_dynamics.layout``, the
    actuator's wrench on the child (the couple of its pin, then the force at its end: slots
    COUPLE, END_FORCE) and the joint's own share (torque at the joint point, then force:
    JOINT_TORQUE, JOINT_FORCE), torque first as every wrench of the package."""

    actuator_force: np.ndarray     # (..., na) axial force, N; positive pushes the ends apart
    buffer: np.ndarray
    balancer_couple: np.ndarray    # (..., n_balancers) couple about the slide axis, N m

    @property
    def actuator_end_force(self) -> np.ndarray:
        return self.buffer[..., END_FORCE, :]

    @property
    def actuator_couple(self) -> np.ndarray:
        return self.buffer[..., COUPLE, :]

    @property
    def joint_force(self) -> np.ndarray:
        return self.buffer[..., JOINT_FORCE, :]

    @property
    def joint_torque(self) -> np.ndarray:
        return self.buffer[..., JOINT_TORQUE, :]


@kernel
def distribute_sample(pm, rotations, origins, wrenches, axial, loads, balancer_couple) -> None:
    """The split at every actuator-driven joint, one sample (kernel); ``pm``: a
    :class:`~..model.packed.PackedModel` (its mechanism table for the balancers that share a
    joint's couple)."""
    body_int, body_vec, act_int, act_vec, mech_int = pm.body_int, pm.body_vec, pm.act_int, \
        pm.act_vec, pm.mech_int
    balancer_couple[:] = 0.0
    for k in range(act_int.shape[0]):
        i = act_int[k, A_DRIVES]
        a = vec(body_vec, i, AXIS)
        base = to_world(rotations, origins, act_int[k, A_BASE_BODY], vec(act_vec, k, A_BASE))
        r = vec(act_vec, k, A_END)                     # end anchor from the joint point
        end = to_world(rotations, origins, act_int[k, A_END_BODY], r)
        d = mat_t_vec(mat(rotations, i, IN_WORLD), sub(end, base))
        u = scale(1.0 / norm(d), d)                    # actuator direction, child frame
        f_sum, n_sum = vec(wrenches, i, F), vec(wrenches, i, N)
        if body_int[i, JOINT] == REVOLUTE:
            u_perp = sub(u, scale(dot(u, a), a))
            norm_perp = norm(u_perp)
            w = scale(1.0 / norm_perp, u_perp)
            f_w = dot(n_sum, a) / dot(cross3(r, w), a)                       # eq. 36 rows 4-5
            f_end = add(scale(f_w, w), scale(0.5 * dot(f_sum, a), a))        # eq. 36 row 6
            axial[k] = f_w / norm_perp
            residual = sub(n_sum, cross3(r, f_end))
            residual = sub(residual, scale(dot(residual, a), a))   # zero by construction
            store(loads, k, COUPLE, scale(0.5, residual))                    # eq. 38
            store(loads, k, JOINT_TORQUE, scale(0.5, residual))
        else:
            force = dot(f_sum, a) / dot(u, a)                                # eq. 42
            f_end = scale(force, u)
            axial[k] = force
            residual = sub(n_sum, cross3(r, f_end))
            sharing = act_int[k, A_SHARING]
            if sharing > 0:                                                  # eq. 43
                along = dot(residual, a)
                for j in range(mech_int.shape[0]):
                    if mech_int[j, M_SHARES] == k:
                        balancer_couple[mech_int[j, M_ITEM]] = along / sharing
                residual = sub(residual, scale(along, a))
            store(loads, k, COUPLE, (0.0, 0.0, 0.0))
            store(loads, k, JOINT_TORQUE, residual)
        store(loads, k, END_FORCE, f_end)
        store(loads, k, JOINT_FORCE, sub(f_sum, f_end))

