"""The immutable model: its parameters (parameters.py) and the constants the algorithms
derive from them (compiled.py), built once and held.

Like Pinocchio's ``Model``, a :class:`Model` is never changed by an algorithm; every
algorithm is a function ``f(model, ...)`` returning its own results, or writing them into a
``Data`` object of that model (``f(model, ..., data=data)``).
"""
from __future__ import annotations

from functools import cached_property

from .compiled import CompiledModel
from .parameters import (Actuator, Balancer, Body, Friction, JointLimits, JointType,  # noqa: F401
                         ModelParameters, PointRef, Spring, SpringParams)


class Model(ModelParameters):
    """A validated multibody model in SI units (the fields: :class:`ModelParameters`).
    Models compare and hash by identity."""

    @cached_property
    def compiled(self) -> CompiledModel:
        """The kernels' arrays, spatial inertias, motion subspaces, indirect joints and
        actuator space, built on first use and held for the model's life: constructing a
        model (the loader's validation) stays cheap."""
        return CompiledModel.build(self)
