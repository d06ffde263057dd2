"""Slot indices of the result buffers the kernels fill (the Data side of Model/Data).

A buffer of 3-vectors per body is laid out (..., nb, slots, 3); the dataclasses that hold
the buffers (BodyMotion, TreeWrenches, PassiveForces, LoopLoads, Loads) name the slots.

The package's one spatial-vector convention (seed 002 section 2.1, dynamics/spatial.py):
a twist is [omega; v] (angular velocity first, then the velocity of the body origin) and a
wrench is [n; f] (torque about the body origin first, then force), both in the body's own
frame unless named world. Every wrench buffer below keeps that order, so that a body's two
wrench slots read as one 6-vector (``buffer.reshape(..., nb, 6)`` of a (..., nb, 2, 3)
buffer) are the force vector of dynamics/spatial.py's CRBA and ABA. Public results keep
their meaning under their names (``joint_force``, CSV columns ``force_x``, ROS
``geometry_msgs/Wrench``'s force and torque); a free-flyer's efforts are Pinocchio's
(force, torque) (model/joint.py).
"""
# BodyMotion.buffer: angular velocity and acceleration, origin velocity and acceleration,
# com velocity and acceleration, body frame (the twist is [W; V])
W, DW, V, A, VC, AC = 0, 1, 2, 3, 4, 5
# wrench buffers (TreeWrenches.buffer, PassiveForces.external, Loads.applied): torque about
# the body origin, then force: [n; f]
N, F = 0, 1
# Loads.joint_wrenches: [n; f] in the child frame (N, F above), then [n; f] in the world frame
N_WORLD, F_WORLD = 2, 3
# LoopLoads.buffer: the actuator's wrench on the child, [couple of the actuator's pin; force
# at its end], then the joint's own share, [torque; force]
COUPLE, END_FORCE, JOINT_TORQUE, JOINT_FORCE = 0, 1, 2, 3
