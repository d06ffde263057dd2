"""Estimates of the dynamic parameters from input efforts u = Y pi + noise.

* :func:`ordinary`: OLS on the base parameters, beta = argmin |Y_b beta - u|^2, with the
  covariance sigma^2 (Y_b^T Y_b)^-1, sigma^2 the residual's variance (dof = rows - r).
* :func:`weighted`: weighted least squares, each input's rows divided by its noise level,
  estimated from the OLS residual of that input (the two-step method of Gautier and Poignet,
  2001); the covariance is (Y_w^T Y_w)^-1 times the weighted residual's variance.
* :func:`consistent`: the full parameters pi of a physically consistent model, as a
  semidefinite program (the LMI formulation of Wensing, Kim and Slotine 2017): each body's
  pseudo-inertia

      J = [[S, h], [h^T, m]],  S = tr(I_O)/2 1 - I_O   (linear in the body's 10 parameters)

  positive definite, which is exactly m > 0, an inertia about the centre of mass positive
  definite and its principal moments obeying the triangle inequalities; springs' stiffness
  and friction coefficients >= 0. The objective

      |W (Y pi - u)|^2 + w |D (pi - pi_prior)|^2 = (pi - pi_r)^T H (pi - pi_r) + constant

  (pi_r the unconstrained optimum, ridge regression towards the prior) is convex, so the
  problem has one optimum, found by ADMM (Boyd et al. 2011, section 5: a linear solve with
  one Cholesky factor, then the projection on the constraints, i.e. each pseudo-inertia's
  eigenvalues raised to a floor), then the best point of the segment from the prior to
  ADMM's (both consistent: a safeguard where ADMM stops early; on a 4 s log of CHARMIE it
  took the fit from 2.4x to 1.01x the OLS residual). The second term keeps the directions
  the data leaves undetermined at the prior (the current model): D_j is the RMS of column j
  of the weighted regressor (floored at 1e-3 of the median), so w is the number of samples'
  worth of weight the prior gets (``--prior-weight``).

  Why the LMI and ADMM rather than log-Cholesky with scipy.optimize: the LMI problem is
  convex (the log-Cholesky one is not), so its optimum is the global one; scipy has no SDP solver
  (cvxpy with a solver would be two more
  dependencies) but ADMM needs only numpy and scipy.linalg. Both were tried here on CHARMIE
  (298 parameters): scipy's least_squares on log-Cholesky took 5 minutes (an SVD per
  iteration, 500 iterations), a Levenberg-Marquardt on it 200 iterations that on a weakly
  exciting log ended with a fit worse than the prior's; ADMM takes seconds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .regressor import ParameterLayout, inertia_matrix

#: Noise levels below this fraction of the largest are floored (an input whose efforts the
#: model reproduces exactly, e.g. one that never moves, must not get an infinite weight).
SIGMA_FLOOR = 1e-6
#: ADMM of the consistent estimate: most iterations, and the relative primal and dual
#: residuals at which it stops
MAX_ITERATIONS, ADMM_TOLERANCE, RELAXATION = 4000, 1e-6, 1.6
#: Smallest eigenvalue of an estimated pseudo-inertia, relative to the trace of the prior's:
#: the estimate is strictly inside the consistent set (a positive mass, a positive definite
#: inertia about the com, strict triangle inequalities)
EIGENVALUE_FLOOR = 1e-9


@dataclass(frozen=True)
class Estimate:
    """Base parameters with their covariance, and the residual per input."""

    beta: np.ndarray             # (r,)
    covariance: np.ndarray       # (r, r)
    residual_rms: np.ndarray     # (n_inputs,) of u - Y_b beta
    sigma: np.ndarray            # (n_inputs,) the noise level the weights used (1 for OLS)

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.diag(self.covariance))


def _solve(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least squares of A x = b and (A^T A)^-1, by QR."""
    Q, R = np.linalg.qr(A)
    x = np.linalg.solve(R, Q.T @ b)
    Rinv = np.linalg.inv(R)
    return x, Rinv @ Rinv.T


def _fit(Yb: np.ndarray, u: np.ndarray, sigma: np.ndarray) -> Estimate:
    S, n, r = Yb.shape
    A = (Yb / sigma[:, None]).reshape(-1, r)
    b = (u / sigma).ravel()
    beta, inverse = _solve(A, b)
    residual = u - Yb @ beta
    weighted = (residual / sigma).ravel()
    variance = weighted @ weighted / max(A.shape[0] - r, 1)
    return Estimate(beta, variance * inverse, np.sqrt(np.mean(residual ** 2, axis=0)), sigma)


def ordinary(Yb: np.ndarray, u: np.ndarray) -> Estimate:
    """OLS of u (samples, n_inputs) = Yb (samples, n_inputs, r) beta."""
    return _fit(Yb, u, np.ones(u.shape[-1]))


def noise_levels(estimate: Estimate, samples: int, rank: int) -> np.ndarray:
    """Each input's noise level from a fit's residual RMS (dof-corrected), floored."""
    n = len(estimate.residual_rms)
    sigma = estimate.residual_rms * np.sqrt(samples * n / max(samples * n - rank, 1))
    return np.maximum(sigma, SIGMA_FLOOR * max(sigma.max(), np.finfo(float).tiny))


def weighted(Yb: np.ndarray, u: np.ndarray) -> Estimate:
    """Two-step weighted least squares (module docstring)."""
    first = ordinary(Yb, u)
    return _fit(Yb, u, noise_levels(first, u.shape[0], Yb.shape[-1]))


# --- physically consistent estimate --------------------------------------------------------

def pseudo_inertia(params: np.ndarray) -> np.ndarray:
    """J (4, 4) of a body's 10 parameters (m, h, I_O entries)."""
    I = inertia_matrix(params[4:])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = params[1:4]
    J[3, 3] = params[0]
    return J


_UPPER = np.triu_indices(4)
#: svec's weights: sqrt(2) off the diagonal, so that |svec(J)| is J's Frobenius norm
_WEIGHTS = np.where(_UPPER[0] == _UPPER[1], 1.0, np.sqrt(2.0))


def _svec(J: np.ndarray) -> np.ndarray:
    return J[..., _UPPER[0], _UPPER[1]] * _WEIGHTS


def _smat(v: np.ndarray) -> np.ndarray:
    J = np.zeros(v.shape[:-1] + (4, 4))
    J[..., _UPPER[0], _UPPER[1]] = v / _WEIGHTS
    J[..., _UPPER[1], _UPPER[0]] = v / _WEIGHTS
    return J


#: svec(J) = PSEUDO pi_body: the pseudo-inertia as a linear map of a body's parameters
PSEUDO = np.column_stack([_svec(pseudo_inertia(e)) for e in np.eye(10)])


def is_consistent(params: np.ndarray) -> bool:
    """A positive definite pseudo-inertia: positive mass, positive definite inertia about
    the centre of mass, strict triangle inequalities (Wensing, Kim and Slotine 2017)."""
    return bool(np.linalg.eigvalsh(pseudo_inertia(params)).min() > 0.0)


def prior_scale(A: np.ndarray) -> np.ndarray:
    """D of the module docstring: column RMS of the weighted regressor, floored."""
    rms = np.sqrt(np.mean(A ** 2, axis=0))
    return np.maximum(rms, 1e-3 * np.median(rms[rms > 0]) if np.any(rms > 0) else 1.0)


@dataclass(frozen=True)
class ConsistentEstimate:
    pi: np.ndarray                 # (p,) full parameters
    residual_rms: np.ndarray       # (n_inputs,)
    iterations: int
    converged: bool


def consistent(layout: ParameterLayout, Y: np.ndarray, u: np.ndarray, sigma: np.ndarray,
               prior: np.ndarray, prior_weight: float) -> ConsistentEstimate:
    """The physically consistent estimate near ``prior`` (module docstring). The prior's
    bodies must be physically consistent (the model loader checks it)."""
    S, n, p = Y.shape
    A = (Y / sigma[:, None]).reshape(-1, p)
    b = (u / sigma).ravel()
    D = np.sqrt(prior_weight) * prior_scale(A)
    # the objective: 1/2 (pi - pi_r)^T H (pi - pi_r) + constant
    H = A.T @ A + np.diag(D * D)
    ridge = np.linalg.solve(H, A.T @ b + D * D * prior)
    nbody = len(layout.bodies)
    # ADMM (Boyd et al. 2011, sections 4.3 and 5) with the quadratic preconditioned by its
    # diagonal, x = pi / P, and z = T pi in the constraint set: per body beta_b svec(J_b),
    # the pseudo-inertia in the PSD cone, the other parameters divided by P (the cone and
    # the orthant are the same at any positive scale, so the scales are free: chosen for
    # columns of T P of unit size)
    P = 1.0 / np.sqrt(np.diag(H))
    T = np.diag(1.0 / P)
    floors = np.empty(nbody)
    for k in range(nbody):
        block = slice(10 * k, 10 * k + 10)
        beta = np.sqrt(10.0) / np.linalg.norm(PSEUDO * P[block][None, :])
        T[block, block] = beta * PSEUDO
        floors[k] = EIGENVALUE_FLOOR * beta * np.trace(pseudo_inertia(prior[block]))
    nonnegative = np.zeros(p, dtype=bool)
    nonnegative[[layout.spring_start + 2 * k for k in range(len(layout.springs))]] = True
    nonnegative[layout.friction_start:] = True

    def project(v: np.ndarray) -> np.ndarray:
        out = v.copy()
        values, vectors = np.linalg.eigh(_smat(v[:10 * nbody].reshape(nbody, 10)))
        values = np.maximum(values, floors[:, None])
        out[:10 * nbody] = _svec(np.einsum("bij,bj,bkj->bik", vectors, values, vectors)).ravel()
        out[nonnegative] = np.maximum(out[nonnegative], 0.0)
        return out

    Hs, Ts = P[:, None] * H * P[None, :], T * P[None, :]
    target = Hs @ (ridge / P)
    z = project(T @ ridge)
    w = np.zeros(p)
    rho = 1.0
    factor = cho_factor(Hs + rho * Ts.T @ Ts)
    converged, iterations = False, 0
    while iterations < MAX_ITERATIONS:
        iterations += 1
        x = cho_solve(factor, target + rho * Ts.T @ (z - w))
        Tx = Ts @ x
        relaxed = RELAXATION * Tx + (1.0 - RELAXATION) * z      # over-relaxation (4.3)
        z_old = z
        z = project(relaxed + w)
        w += relaxed - z
        primal = np.linalg.norm(Tx - z) / max(np.linalg.norm(Tx), np.linalg.norm(z), 1e-300)
        dual = rho * np.linalg.norm(Ts.T @ (z - z_old)) / max(
            rho * np.linalg.norm(Ts.T @ w), 1e-300)
        if primal < ADMM_TOLERANCE and dual < ADMM_TOLERANCE:
            converged = True
            break
        if iterations % 10 == 0 and max(primal, dual) > 5 * min(primal, dual):
            change = 2.0 if primal > dual else 0.5
            rho *= change
            w /= change
            factor = cho_factor(Hs + rho * Ts.T @ Ts)
    pi = np.linalg.solve(T, z)                 # from the constraint set: consistent
    # safeguard: ADMM's residuals are relative, and on a weakly exciting log (H ill
    # conditioned) it can stop far from the optimum; the segment from the prior (consistent)
    # to its point is consistent (a convex set), so its best point is at least as good as both
    d = pi - prior
    curvature = d @ H @ d
    if curvature > 0:
        pi = prior + np.clip(d @ H @ (ridge - prior) / curvature, 0.0, 1.0) * d
    return ConsistentEstimate(pi, np.sqrt(np.mean((u - Y @ pi) ** 2, axis=0)), iterations,
                              converged)
