"""The log density of a component GP on any kernel expression, compiled by numba.

The model of :func:`pp_decomp.components.gp.pymc_model.build_model` with the kernel
``k_θ`` of a :class:`~pp_decomp.kernels.bound.BoundKernel`:
``y ~ N(0, K)``, ``K = k_θ(X, X) + m + (σ² + jitter) I``. With ``α = K⁻¹ y`` and
``B = ααᵀ - K⁻¹``, ``∂ log p(y) / ∂θ_p = ½ tr(B ∂K/∂θ_p)``, where ``∂K/∂θ``
comes from the kernel's own gradient (``kfun``), one pass over the lower
triangle. The sampled vector ``z`` holds the free parameters (``log θ`` for a
positive one, ``θ`` for a real one) and ``log σ`` last; their priors are
evaluated by :func:`pp_decomp.prior.log_prior`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pp_decomp.components.gp.density import LOG_2PI, _chol_inverse
from pp_decomp.components.inference.native import nuts_value
from pp_decomp.components.posterior.likelihood import cholesky_in_place, log_normal_of_factor
from pp_decomp.prior import log_prior

_DENSITIES: dict = {}


@numba.njit(nogil=True, cache=True)
def theta_of(z, th0, slots, positive):
    """``θ (P,)``: ``th0`` with the sampled coordinates ``z[:F]`` put at ``slots``
    (``e^z`` where ``positive``)."""
    th = th0.copy()
    for q in range(slots.shape[0]):
        th[slots[q]] = math.exp(z[q]) if positive[q] else z[q]
    return th


@numba.njit(nogil=True, cache=True)
def prior_and_jacobian(z, positive, priors, jacobian, grad):
    """``Σ log p`` of the coordinates whose prior numba knows (``priors (F + 1, 3)``,
    code ``-1`` for the others), plus the log transforms' Jacobian if asked; the
    gradient is added to ``grad``. ``z[F]`` is ``log σ``."""
    F = positive.shape[0]
    value = 0.0
    for q in range(F + 1):
        if priors[q, 0] >= 0.0:
            v, g = log_prior(int(priors[q, 0]), priors[q, 1], priors[q, 2], z[q])
            value += v
            grad[q] += g
        if jacobian and (q == F or positive[q]):
            value += z[q]
            grad[q] += 1.0
    return value


def densities(kfun):
    """``(log_density, log_values, logp)`` for kernel ``kfun``, compiled once per kernel.

    * ``log_density(z, X, y, th0, slots, positive, priors, mean_var, jitter,
      jacobian) -> (value, gradient)``;
    * ``log_values(Z (M, k), X, y, ...) -> (M,)``, the density NUTS samples
      (Jacobian included) at each row;
    * ``logp(X, y, th0, slots, positive, priors, mean_var, jitter, grad, z)``:
      NUTS's ``(value, grad)``, ``-inf`` and a zero gradient where not finite.
    """
    if kfun not in _DENSITIES:
        log_density = _make_log_density(kfun)
        _DENSITIES[kfun] = (log_density, _make_log_values(kfun), _make_logp(log_density))
    return _DENSITIES[kfun]


def _make_log_density(kfun):
    @numba.njit(nogil=True)
    def log_density(z, X, y, th0, slots, positive, priors, mean_var, jitter, jacobian):
        n = X.shape[0]
        F, P = slots.shape[0], th0.shape[0]
        grad = np.zeros(F + 1)
        th = theta_of(z, th0, slots, positive)
        s2 = math.exp(2.0 * z[F])
        K = np.empty((n, n))
        dK = np.empty((n * (n + 1) // 2, P))
        g = np.empty(P)
        m = 0
        for i in range(n):
            for j in range(i + 1):
                k = kfun(X[i], X[j], th, g) + mean_var
                K[i, j] = k
                K[j, i] = k
                dK[m, :] = g
                m += 1
            K[i, i] += s2 + jitter
        ok, logdet = _chol_inverse(K)  # K now holds K⁻¹
        if not ok:
            return -np.inf, grad
        a = K @ y
        value = -0.5 * (y @ a) - 0.5 * logdet - 0.5 * n * LOG_2PI
        g_th = np.zeros(P)
        g_sigma = 0.0
        m = 0
        for i in range(n):
            for j in range(i + 1):
                b = a[i] * a[j] - K[i, j]
                if j < i:
                    b *= 2.0  # the upper triangle's share
                else:
                    g_sigma += b
                for p in range(P):
                    g_th[p] += b * dK[m, p]
                m += 1
        for q in range(F):
            scale = th[slots[q]] if positive[q] else 1.0
            grad[q] = 0.5 * g_th[slots[q]] * scale
        grad[F] = s2 * g_sigma
        value += prior_and_jacobian(z, positive, priors, jacobian, grad)
        return value, grad

    return log_density


def _make_log_values(kfun):
    @numba.njit(nogil=True)
    def log_values(Z, X, y, th0, slots, positive, priors, mean_var, jitter):
        n = X.shape[0]
        F = slots.shape[0]
        out = np.empty(Z.shape[0])
        g = np.empty(th0.shape[0])
        for r in range(Z.shape[0]):
            z = Z[r]
            th = theta_of(z, th0, slots, positive)
            s2 = math.exp(2.0 * z[F])
            K = np.empty((n, n))
            for i in range(n):
                for j in range(i + 1):
                    K[i, j] = kfun(X[i], X[j], th, g) + mean_var
                    K[j, i] = K[i, j]
                K[i, i] += s2 + jitter
            if not cholesky_in_place(K):
                out[r] = -np.inf
                continue
            value = log_normal_of_factor(K, y)  # K's lower triangle holds L
            value += prior_and_jacobian(z, positive, priors, True, np.zeros(F + 1))
            out[r] = value
        return out

    return log_values


def _make_logp(log_density):
    @numba.njit(nogil=True)
    def logp(X, y, th0, slots, positive, priors, mean_var, jitter, grad, z):
        value, g = log_density(z, X, y, th0, slots, positive, priors, mean_var, jitter, True)
        return nuts_value(value, g, grad)

    return logp
