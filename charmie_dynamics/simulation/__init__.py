"""Simulation in joint coordinates: the integrators with the joint stops and the mechanical
energy (integrate.py), and the simulator's step compiled whole for held actuator efforts
(actuated_step.py); both use the forward dynamics of ``dynamics``."""
from .integrate import (Energy, Simulation, coordinate_limits, mechanical_energy, simulate,
                        stop_at_limits)

__all__ = ["Energy", "Simulation", "coordinate_limits", "mechanical_energy", "simulate",
           "stop_at_limits"]
