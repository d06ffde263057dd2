"""The immutable model: its parameters (parameters.py) and the constants the algorithms
derive from them (compiled.py), built once and held.

Like Pinocchio's ``Model``, a :class:`Model` is never changed by an algorithm; every
algorithm is a function ``f(model, ...)`` returning its own results, or writing them into a
``Data`` object of that model (``f(model, ..., data=data)``).
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from .compiled import CompiledModel
from .kinds import Balancer, Spring, TorsionSpring  # noqa: F401
from .parameters import (Actuator, Body, Friction, JointLimits, JointType,  # noqa: F401
                         ModelParameters, PlanarBase, PointRef, SpringParams)


class Model(ModelParameters):
    """A validated multibody model in SI units (the fields: :class:`ModelParameters`).
    Models compare and hash by identity."""

    @cached_property
    def compiled(self) -> CompiledModel:
        """The kernels' arrays, spatial inertias, motion subspaces, indirect joints and
        actuator space, built on first use and held for the model's life: constructing a
        model (the loader's validation) stays cheap."""
        return CompiledModel.build(self)

    def in_input_order(self, per_coordinate: np.ndarray, per_actuator: np.ndarray) -> np.ndarray:
        """(..., n_inputs) in ``input_names`` order from per-coordinate values (..., n) and
        per-actuator values (..., n_actuators): each actuator's value in the slot of the
        coordinate it drives (efforts: its axial force; rates: its length's rate). A copy."""
        out = np.array(per_coordinate, dtype=float)
        for k, name in enumerate(self.actuator_names):
            out[..., self.input_names.index(name)] = per_actuator[..., k]
        return out
