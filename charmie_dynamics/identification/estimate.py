"""Estimates of the dynamic parameters from input efforts u = Y pi + noise.

* :func:`ordinary`: OLS on the base parameters, beta = argmin |Y_b beta - u|^2, with the
  covariance sigma^2 (Y_b^T Y_b)^-1, sigma^2 the residual's variance (dof = rows - r).
* :func:`weighted`: weighted least squares, each input's rows divided by its noise level,
  estimated from the OLS residual of that input (the two-step method of Gautier and Poignet,
  2001); the covariance is (Y_w^T Y_w)^-1 times the weighted residual's variance.
* :func:`consistent`: the full parameters pi of a physically consistent model, by the
  log-Cholesky parametrisation of each body's pseudo-inertia (Rucker and Wensing 2022,
  eqs. 7-10): with U = e^a [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3],
  [0, 0, 0, 1]], the pseudo-inertia

      J = U U^T = [[S, h], [h^T, m]],  S = tr(I_O)/2 1 - I_O,

  is positive definite for every real theta = (a, d, s, t), which is exactly m > 0, an
  inertia about the centre of mass positive definite and its principal moments obeying the
  triangle inequalities (Wensing, Kim and Slotine 2017). Springs' stiffness and friction
  coefficients are bounded below by 0. The problem

      min_theta |W (Y pi(theta) - u)|^2 + w |D (pi(theta) - pi_prior)|^2

  is quadratic in pi, 1/2 (pi - pi_r)^T H (pi - pi_r) + constant: its unconstrained optimum
  pi_r (ridge regression towards the prior) is the answer where it is consistent; else
  Levenberg-Marquardt (analytic Jacobian, bounds kept by projection) iterates in theta from
  pi_r's projection on the consistent set (each pseudo-inertia's eigenvalues floored). The second term keeps the
  directions the data leaves undetermined at the prior (the current model): D_j is the RMS of
  column j of the weighted regressor (floored at 1e-3 of the median), so w is the number of
  samples' worth of weight the prior gets ("--prior-weight").

  Why log-Cholesky rather than an LMI/SDP: scipy has no semidefinite solver (an SDP would add
  cvxpy and a solver as dependencies); the parametrisation turns the constraints into an
  unconstrained smooth problem that a Gauss-Newton method solves with an analytic Jacobian,
  and every iterate, not only the solution, is a physical body. (scipy's least_squares was
  tried: its bounded trust-region method took an SVD per iteration and 500 iterations, 5
  minutes on CHARMIE's 298 parameters, where this takes seconds.)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .regressor import ParameterLayout, inertia_matrix

#: Noise levels below this fraction of the largest are floored (an input whose efforts the
#: model reproduces exactly, e.g. one that never moves, must not get an infinite weight).
SIGMA_FLOOR = 1e-6
#: Levenberg-Marquardt of the consistent estimate: most iterations, and the relative decrease
#: of the cost below which it stops
MAX_ITERATIONS, RELATIVE_DECREASE = 200, 1e-8
#: Relative rounding tolerance of :func:`is_consistent`
CONSISTENCY_TOLERANCE = 1e-12
#: Smallest eigenvalue, relative to the largest, of a pseudo-inertia projected on the
#: consistent set to start the iterations
PROJECTION_FLOOR = 1e-6


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


def _params_of_pseudo(J: np.ndarray) -> np.ndarray:
    """The inverse of :func:`pseudo_inertia` (linear in J, so it maps derivatives too)."""
    S = J[:3, :3]
    I = np.trace(S) * np.eye(3) - S
    return np.array([J[3, 3], J[0, 3], J[1, 3], J[2, 3],
                     I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


# positions in U of theta's entries after a and d: s12, s23, s13, t1, t2, t3
_OFF_DIAGONAL = ((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))


def _upper(theta: np.ndarray) -> np.ndarray:
    U = np.zeros((4, 4))
    U[3, 3] = 1.0
    for k in range(3):
        U[k, k] = np.exp(theta[1 + k])
    for value, (r, c) in zip(theta[4:], _OFF_DIAGONAL):
        U[r, c] = value
    return np.exp(theta[0]) * U


def body_parameters(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A body's 10 parameters of log-Cholesky theta (10,), and their Jacobian (10, 10)."""
    U = _upper(theta)
    jac = np.empty((10, 10))
    for k in range(10):
        dU = np.zeros((4, 4))
        if k == 0:
            dU = U
        elif k < 4:
            dU[k - 1, k - 1] = U[k - 1, k - 1]
        else:
            r, c = _OFF_DIAGONAL[k - 4]
            dU[r, c] = np.exp(theta[0])
        jac[:, k] = _params_of_pseudo(dU @ U.T + U @ dU.T)
    return _params_of_pseudo(U @ U.T), jac


def log_cholesky(params: np.ndarray) -> np.ndarray:
    """theta of a body whose pseudo-inertia is positive definite (the inverse map)."""
    J = pseudo_inertia(params)
    flip = np.linalg.cholesky(J[::-1, ::-1])[::-1, ::-1]     # J = U U^T, U upper triangular
    a = np.log(flip[3, 3])
    U = flip / flip[3, 3]
    return np.concatenate([[a], np.log(np.diag(U)[:3]), [U[r, c] for r, c in _OFF_DIAGONAL]])


def _nearest_consistent(params: np.ndarray) -> np.ndarray:
    """The body parameters whose pseudo-inertia is the nearest (Frobenius) positive definite
    one: eigenvalues raised to PROJECTION_FLOOR times the largest."""
    values, vectors = np.linalg.eigh(pseudo_inertia(params))
    floor = PROJECTION_FLOOR * max(values.max(), np.finfo(float).tiny)
    return _params_of_pseudo((vectors * np.maximum(values, floor)) @ vectors.T)


def is_consistent(params: np.ndarray, tolerance: float = CONSISTENCY_TOLERANCE) -> bool:
    """Positive mass and a positive semi-definite pseudo-inertia: its smallest eigenvalue
    at least -tolerance times its largest (rounding of U U^T near the boundary)."""
    values = np.linalg.eigvalsh(pseudo_inertia(params))
    return bool(params[0] > 0 and values.min() >= -tolerance * values.max())


def prior_scale(A: np.ndarray) -> np.ndarray:
    """D of the module docstring: column RMS of the weighted regressor, floored."""
    rms = np.sqrt(np.mean(A ** 2, axis=0))
    return np.maximum(rms, 1e-3 * np.median(rms[rms > 0]) if np.any(rms > 0) else 1.0)


@dataclass(frozen=True)
class ConsistentEstimate:
    pi: np.ndarray                 # (p,) full parameters
    residual_rms: np.ndarray       # (n_inputs,)
    cost: float                    # the objective at the solution
    iterations: int


def consistent(layout: ParameterLayout, Y: np.ndarray, u: np.ndarray, sigma: np.ndarray,
               prior: np.ndarray, prior_weight: float) -> ConsistentEstimate:
    """The physically consistent estimate near ``prior`` (module docstring). The prior's
    bodies must be physically consistent (the model loader checks it)."""
    S, n, p = Y.shape
    A = (Y / sigma[:, None]).reshape(-1, p)
    b = (u / sigma).ravel()
    D = np.sqrt(prior_weight) * prior_scale(A)
    # the objective is quadratic in pi: 1/2 (pi - pi_r)^T H (pi - pi_r) + constant, with
    # pi_r its unconstrained optimum (ridge regression towards the prior)
    H = A.T @ A + np.diag(D * D)
    ridge = np.linalg.solve(H, A.T @ b + D * D * prior)
    nbody = len(layout.bodies)
    rest = slice(layout.n_inertial, p)
    nonnegative = np.zeros(p, dtype=bool)
    nonnegative[[layout.spring_start + 2 * k for k in range(len(layout.springs))]] = True
    nonnegative[layout.friction_start:] = True

    def result(pi: np.ndarray, iterations: int) -> ConsistentEstimate:
        d = pi - ridge
        return ConsistentEstimate(pi, np.sqrt(np.mean((u - Y @ pi) ** 2, axis=0)),
                                  float(0.5 * d @ H @ d), iterations)

    if all(is_consistent(ridge[10 * k:10 * k + 10]) for k in range(nbody)) \
            and np.all(ridge[nonnegative] >= 0.0):
        return result(ridge, 0)

    def parameters(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pi = np.empty(p)
        jac = np.zeros((p, p))
        for k in range(nbody):
            block = slice(10 * k, 10 * k + 10)
            pi[block], jac[block, block] = body_parameters(x[block])
        pi[rest] = x[rest]
        jac[rest, rest] = np.eye(p - layout.n_inertial)
        return pi, jac

    # Levenberg-Marquardt from the ridge solution projected on the consistent set, the
    # bounds kept by projecting each step on them
    x = ridge.copy()
    for k in range(nbody):
        x[10 * k:10 * k + 10] = log_cholesky(_nearest_consistent(ridge[10 * k:10 * k + 10]))
    x[nonnegative] = np.maximum(x[nonnegative], 0.0)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        pi, jac = parameters(x)
        d = pi - ridge
        return float(0.5 * d @ H @ d), jac.T @ (H @ d), jac

    with np.errstate(over="ignore", invalid="ignore"):
        cost, gradient, jac = objective(x)
        damping, iterations = 1e-3, 0
        while iterations < MAX_ITERATIONS:
            iterations += 1
            G = jac.T @ H @ jac
            diagonal = np.diag(G) + 1e-12 * np.max(np.diag(G))
            step = np.linalg.solve(G + damping * np.diag(diagonal), -gradient)
            trial = x + step
            trial[nonnegative] = np.maximum(trial[nonnegative], 0.0)
            trial_cost, trial_gradient, trial_jac = objective(trial)
            if np.isfinite(trial_cost) and trial_cost < cost:
                done = cost - trial_cost <= RELATIVE_DECREASE * cost
                x, cost, gradient, jac = trial, trial_cost, trial_gradient, trial_jac
                damping = max(damping / 3.0, 1e-12)
                if done:
                    break
            else:
                damping *= 4.0
                if damping > 1e12:
                    break
    return result(parameters(x)[0], iterations)
