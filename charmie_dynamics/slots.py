"""Slot indices of the result buffers the kernels fill (the Data side of Model/Data).

A buffer of 3-vectors per body is laid out (..., nb, slots, 3); the dataclasses that hold
the buffers (BodyMotion, TreeWrenches, PassiveForces, LoopLoads, Loads) name the slots.
"""
# BodyMotion.buffer: angular velocity and acceleration, origin velocity and acceleration,
# com velocity and acceleration, body frame
W, DW, V, A, VC, AC = 0, 1, 2, 3, 4, 5
# wrench buffers (TreeWrenches, PassiveForces.external): force and torque
F, N = 0, 1
# Loads.joint_wrenches: force and torque in the child frame, then in the world frame
F_WORLD, N_WORLD = 2, 3
# LoopLoads.buffer: the actuator's force on the child at its end, the actuator pin's couple,
# the joint's own force and torque
END_FORCE, COUPLE, JOINT_FORCE, JOINT_TORQUE = 0, 1, 2, 3
