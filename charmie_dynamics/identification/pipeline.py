"""Identification from measured states and efforts, end to end: the regressor along the
samples, the base parameters that these samples identify (base.py's pivoted QR on the log's
own regressor: a motion that excites too little identifies fewer combinations than the
structural base parameters of random states), OLS and weighted LS on them, and the physically
consistent estimate near the prior (which keeps what the log leaves undetermined at the prior).
An input whose efforts the log does not hold (NaN in every sample: the base's, where its
pose comes from odometry) is left out of the fit: its rows of the regressor are not used.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kinematics.state import JointSpaceState
from ..model.model import Model
from .base import BaseParameters, base_of, base_parameters
from .estimate import ConsistentEstimate, Estimate, consistent, is_consistent, ordinary, weighted
from .regressor import ParameterLayout, model_parameters, parameter_layout, regressor

#: Random states of the base-parameter split (base.py)
BASE_SAMPLES = 2000


@dataclass(frozen=True)
class Identification:
    """The estimates of one identification (module docstring)."""

    layout: ParameterLayout
    base: BaseParameters              # identified by the samples
    structural_rank: int              # of the base parameters of random states
    prior: np.ndarray                 # (p,) the model's parameters
    ols: Estimate
    wls: Estimate
    consistent: ConsistentEstimate
    samples: int
    measured: np.ndarray              # (n_inputs,) bool: the inputs fitted (efforts logged)

    def per_input(self, values: np.ndarray) -> np.ndarray:
        """Values over the measured inputs (an estimate's residual RMS) spread over every
        input, NaN for the unmeasured ones."""
        full = np.full(len(self.measured), np.nan)
        full[self.measured] = values
        return full

    def bodies_consistent(self) -> bool:
        """Every body of the consistent estimate checked physically consistent."""
        pi = self.consistent.pi
        return all(is_consistent(pi[10 * k:10 * k + 10]) for k in range(len(self.layout.bodies)))


def identify(model: Model, state: JointSpaceState, effort: np.ndarray, prior_weight: float
             ) -> Identification:
    """Estimates from ``effort`` (samples, n_inputs) measured at ``state`` (samples, ...);
    the inputs whose efforts are NaN in every sample are left out."""
    layout = parameter_layout(model)
    structural = base_parameters(model, layout.names, BASE_SAMPLES)
    measured = measured_inputs(effort)
    Y = regressor(model, state)
    if not measured.all():               # a mask copies: only where an input is left out
        Y, effort = Y[:, measured], effort[:, measured]
    base = base_of(Y.reshape(-1, len(layout)), layout.names)
    Yb = base.columns(Y)
    wls = weighted(Yb, effort)
    prior = model_parameters(model)
    return Identification(layout, base, structural.rank, prior, ordinary(Yb, effort), wls,
                          consistent(layout, Y, effort, wls.sigma, prior, prior_weight),
                          len(effort), measured)


def measured_inputs(effort: np.ndarray) -> np.ndarray:
    """(n_inputs,) bool: the inputs whose efforts are logged; an input's efforts are NaN in
    every sample or in none (the readers make them so)."""
    missing = np.isnan(effort)
    measured = ~missing.all(axis=0)
    if missing[:, measured].any():
        raise ValueError("efforts NaN in some samples of an input only: expected an input's "
                         "efforts logged in every sample or in none")
    return measured


def residual_rms(model: Model, pi: np.ndarray, state: JointSpaceState, effort: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Predicted efforts Y pi at ``state`` and the RMS of effort - prediction per input (NaN
    for an input whose efforts are not logged)."""
    predicted = regressor(model, state) @ pi
    return predicted, np.sqrt(np.mean((effort - predicted) ** 2, axis=0))
