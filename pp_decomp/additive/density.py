"""The additive GP's log posterior and its gradient, compiled by numba for NUTS.

The same density as :class:`~pp_decomp.additive.gp.MapObjective` (numpy, for
MAP) and the PyMC model (:func:`~pp_decomp.additive.pymc_model.build_additive_model`),
as a function of the log-scale parameters ``z``, without the transform's
Jacobian. With ``K = Σ_j K_j + (σ² + jitter) I``, ``α = K⁻¹ y`` and
``B = ααᵀ - K⁻¹``, ``∂ log p(y) / ∂θ = ½ tr(B ∂K/∂θ)``:

* shared (one ``ℓ``, one ``η``; ``G_j`` group ``j``'s squared distances ``(n, n)``,
  ``K_j = η² exp(-G_j / 2ℓ²)``): ``∂/∂ log ℓ = ½ Σ_ab B_ab Σ_j K_j,ab G_j,ab / ℓ²``,
  ``∂/∂ log η = Σ_ab B_ab Σ_j K_j,ab``;
* ARD (``ℓ (D,)``, ``η (M,)``, masks ``W (M, D)``): ``∂/∂ log ℓ_d = ½ Σ_ab B_ab
  Σ_j W_jd K_j,ab Δ²_abd / ℓ_d²``, ``∂/∂ log η_j = Σ_ab B_ab K_j,ab``;
* ``∂/∂ log σ = σ² tr(B)``;

plus the priors' (``ℓ ~ InverseGamma``, ``η ~ Gamma`` with its rate scaled by
``sqrt(M)``, ``σ ~ Gamma``; constants in :func:`prior_constants`). The
functions release the GIL, so nutpie's chains run in parallel, and cost
``O(M n² + n³)`` (shared) or ``O(M D n² + n³)`` (ARD) per call with no
temporaries of size ``n² D``.
"""

from __future__ import annotations

import numba
import numpy as np

from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.components.posterior.likelihood import log_normal_of_factor
from pp_decomp.kernels.families import ExpQuad

_SE = numba.njit(nogil=True, cache=True, inline="always")(ExpQuad.correlation)

_LOG_2PI = float(np.log(2.0 * np.pi))


def prior_constants(priors: Priors, n_groups: int) -> np.ndarray:
    """``(ls_alpha, ls_beta, eta_alpha, eta_rate, sigma_alpha, sigma_beta, jitter)``,
    the amplitude's rate scaled by ``sqrt(M)``: (7,)."""
    p = priors
    rate = p.eta_beta * np.sqrt(n_groups)
    return np.array(
        [p.ls_alpha, p.ls_beta, p.eta_alpha, rate, p.sigma_alpha, p.sigma_beta, JITTER],
        dtype=float,
    )


@numba.njit(nogil=True, cache=True)
def _noisy_cholesky(K, noise):
    """``(K + noise I, its Cholesky factor, True)`` for the noise-free kernel ``K``
    (left as it is), or ``(.., .., False)`` where that matrix is not finite or not
    positive definite."""
    n = K.shape[0]
    Kn = K.copy()
    for a in range(n):
        Kn[a, a] += noise
        for b in range(n):
            if not np.isfinite(Kn[a, b]):
                return Kn, Kn, False
    try:
        L = np.linalg.cholesky(Kn)
    except Exception:  # noqa: BLE001 (numba raises a generic error for a non-PD matrix)
        return Kn, Kn, False
    return Kn, L, True


@numba.njit(nogil=True, cache=True)
def _likelihood_terms(K, y, noise):
    """``(log N(y; 0, K + noise I), B = ααᵀ - (K + noise I)⁻¹)``, or ``(-inf, B)``
    where that matrix is not positive definite or not finite."""
    n = len(y)
    B = np.zeros((n, n))
    Kn, L, ok = _noisy_cholesky(K, noise)
    if not ok:
        return -np.inf, B
    # LAPACK's inverse (LU) is 1.7x the speed of inverting L by a solve and
    # multiplying out (n = 190); the Cholesky factor gives the determinant
    K_inv = np.linalg.inv(Kn)
    alpha = K_inv @ y
    value = -0.5 * (y @ alpha) - 0.5 * n * _LOG_2PI
    for a in range(n):
        value -= np.log(L[a, a])
    for a in range(n):
        for b in range(n):
            B[a, b] = alpha[a] * alpha[b] - K_inv[a, b]
    return value, B


@numba.njit(nogil=True, cache=True)
def _prior(ls, eta, sigma, prm):
    """Log prior of the free ``ls``, ``eta`` (1-D) and ``sigma``, and its gradient in
    their logs, ``(value, g_ls, g_eta, g_sigma)``."""
    a_ls, b_ls, a_eta, r_eta, a_s, b_s = prm[0], prm[1], prm[2], prm[3], prm[4], prm[5]
    value = (a_s - 1.0) * np.log(sigma) - b_s * sigma
    g_ls, g_eta = np.empty(len(ls)), np.empty(len(eta))
    for d in range(len(ls)):
        value += -(a_ls + 1.0) * np.log(ls[d]) - b_ls / ls[d]
        g_ls[d] = -(a_ls + 1.0) + b_ls / ls[d]
    for j in range(len(eta)):
        value += (a_eta - 1.0) * np.log(eta[j]) - r_eta * eta[j]
        g_eta[j] = (a_eta - 1.0) - r_eta * eta[j]
    return value, g_ls, g_eta, (a_s - 1.0) - b_s * sigma


@numba.njit(nogil=True, cache=True)
def _shared_kernel(ls, eta, G):
    """``(K, S)``: the noise-free kernel ``Σ_j η² exp(-G_j / 2ℓ²)`` and ``Σ_j K_j ∘ G_j``."""
    M, n = G.shape[0], G.shape[1]
    inv2 = 1.0 / ls**2
    K, S = np.zeros((n, n)), np.zeros((n, n))
    for j in range(M):
        for a in range(n):
            for b in range(a + 1):
                e = eta**2 * _SE(G[j, a, b] * inv2)
                K[a, b] += e
                S[a, b] += e * G[j, a, b]
    for a in range(n):
        for b in range(a):
            K[b, a], S[b, a] = K[a, b], S[a, b]
    return K, S


@numba.njit(nogil=True, cache=True)
def shared_log_posterior(z, G, y, prm):
    """Log posterior (no Jacobian) and its gradient at ``z = (log ℓ, log η, log σ)``;
    ``G (M, n, n)`` the groups' squared distances. ``-inf`` where ``K`` fails."""
    ls, eta, sigma = np.exp(z[0]), np.exp(z[1]), np.exp(z[2])
    n = len(y)
    K, S = _shared_kernel(ls, eta, G)
    loglik, B = _likelihood_terms(K, y, sigma**2 + prm[6])
    grad = np.zeros(3)
    if not np.isfinite(loglik):
        return -np.inf, grad
    g_ls = g_eta = tr = 0.0
    for a in range(n):
        tr += B[a, a]
        for b in range(n):
            g_ls += B[a, b] * S[a, b]
            g_eta += B[a, b] * K[a, b]
    value, p_ls, p_eta, p_sigma = _prior(np.array([ls]), np.array([eta]), sigma, prm)
    grad[0] = 0.5 * g_ls / ls**2 + p_ls[0]
    grad[1] = g_eta + p_eta[0]
    grad[2] = sigma**2 * tr + p_sigma
    return loglik + value, grad


@numba.njit(nogil=True, cache=True)
def _ard_kernel(ls, eta, d2, W):
    """``(K, K_j)``: the noise-free kernel ``Σ_j K_j`` and each group's ``(M, n, n)``."""
    M, D = W.shape
    n = d2.shape[0]
    inv2 = 1.0 / ls**2
    Kj = np.zeros((M, n, n))
    K = np.zeros((n, n))
    for a in range(n):
        for b in range(a + 1):
            for j in range(M):
                r = 0.0
                for d in range(D):
                    if W[j, d] != 0.0:
                        r += W[j, d] * d2[a, b, d] * inv2[d]
                e = eta[j] ** 2 * _SE(r)
                Kj[j, a, b] = Kj[j, b, a] = e
                K[a, b] += e
            K[b, a] = K[a, b]
    return K, Kj


@numba.njit(nogil=True, cache=True)
def ard_log_posterior(z, d2, W, y, prm):
    """Log posterior (no Jacobian) and its gradient at ``z = (log ℓ (D), log η (M),
    log σ)``; ``d2 (n, n, D)`` squared differences, ``W (M, D)`` the group masks."""
    M, D = W.shape
    n = len(y)
    ls, eta, sigma = np.exp(z[:D]), np.exp(z[D : D + M]), np.exp(z[-1])
    inv2 = 1.0 / ls**2
    K, Kj = _ard_kernel(ls, eta, d2, W)
    loglik, B = _likelihood_terms(K, y, sigma**2 + prm[6])
    grad = np.zeros(D + M + 1)
    if not np.isfinite(loglik):
        return -np.inf, grad
    g_ls, g_eta = np.zeros(D), np.zeros(M)
    tr = 0.0
    for a in range(n):
        tr += B[a, a]
        for b in range(n):
            for j in range(M):
                bk = B[a, b] * Kj[j, a, b]
                g_eta[j] += bk
                for d in range(D):
                    if W[j, d] != 0.0:
                        g_ls[d] += bk * W[j, d] * d2[a, b, d]
    value, p_ls, p_eta, p_sigma = _prior(ls, eta, sigma, prm)
    for d in range(D):
        grad[d] = 0.5 * g_ls[d] * inv2[d] + p_ls[d]
    for j in range(M):
        grad[D + j] = g_eta[j] + p_eta[j]
    grad[-1] = sigma**2 * tr + p_sigma
    return loglik + value, grad


@numba.njit(nogil=True, cache=True)
def _log_normal(K, y, noise):
    """``log N(y; 0, K + noise I)`` by one Cholesky factor and one forward solve,
    ``-inf`` where the matrix is not positive definite or not finite."""
    _, L, ok = _noisy_cholesky(K, noise)
    if not ok:
        return -np.inf
    return log_normal_of_factor(L, y)


@numba.njit(nogil=True, cache=True)
def shared_log_density_rows(Z, G, y, prm):
    """The density NUTS samples (log posterior plus the Jacobian ``Σ z``) at the rows
    of ``Z (S, 3)``, value only: (S,)."""
    out = np.empty(len(Z))
    for s in range(len(Z)):
        z = Z[s]
        ls, eta, sigma = np.exp(z[0]), np.exp(z[1]), np.exp(z[2])
        K, _ = _shared_kernel(ls, eta, G)
        prior = _prior(np.array([ls]), np.array([eta]), sigma, prm)[0]
        out[s] = _log_normal(K, y, sigma**2 + prm[6]) + prior + z.sum()
    return out


@numba.njit(nogil=True, cache=True)
def ard_log_density_rows(Z, d2, W, y, prm):
    """The density NUTS samples at the rows of ``Z (S, D + M + 1)``, value only: (S,)."""
    M, D = W.shape
    out = np.empty(len(Z))
    for s in range(len(Z)):
        z = Z[s]
        ls, eta, sigma = np.exp(z[:D]), np.exp(z[D : D + M]), np.exp(z[-1])
        K, _ = _ard_kernel(ls, eta, d2, W)
        prior = _prior(ls, eta, sigma, prm)[0]
        out[s] = _log_normal(K, y, sigma**2 + prm[6]) + prior + z.sum()
    return out
