"""The log density of a component GP and its gradient, compiled by numba.

One implementation of :func:`pp_decomp.components.gp.pymc_model.build_model`'s density
serves both fits: the MAP search (without the log transform's Jacobian) and
NUTS (with it; :mod:`pp_decomp.components.inference.native`). Compiled once per machine
(numba's disk cache), where PyTensor took 15-40 s per model structure; and
about three times cheaper per gradient than the PyTensor graph at ``n = 100``:
one LAPACK ``potrf`` + ``potri`` and one pass over the lower triangle. The PyMC
model stays the definition; the tests check this density against its compiled
log density.

The model: ``y ~ N(0, K)``, ``K = η² c(r²) + m + (σ² + jitter) I`` with
``r² = Σ_d Δ²_d / ℓ_d²`` and ``m`` the integrated constant mean's variance.
With ``α = K⁻¹ y``, ``B = ααᵀ - K⁻¹`` and ``∂ log p(y) / ∂θ = ½ tr(B ∂K/∂θ)``:

* ``∂K/∂log η = 2 η² c``, ``∂K/∂log σ = 2 σ² I``;
* ``∂K/∂log ℓ_d = -2 η² c'(r²) Δ²_d / ℓ_d²``;
* ``∂K/∂log α = η² α ∂c/∂α`` (``rq``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.components.posterior.cython_routines import cython_routine
from pp_decomp.components.posterior.likelihood import cholesky_in_place, log_normal_of_factor
from pp_decomp.kernels.families import ExpQuad, Matern32, Matern52, RatQuad

KERNELS = ("se", "matern52", "matern32", "rq")
LOG_2PI = math.log(2.0 * math.pi)


# a C-ordered matrix is Fortran's transpose: its lower triangle is Fortran's upper
_dpotri = cython_routine("lapack", "dpotri", 5)
_UPPER = ord("U")

# the constants vector ``prm`` (see :func:`constants`)
P_KERNEL, P_LS_FAMILY, P_LS_A, P_LS_B = 0, 1, 2, 3
P_ETA_A, P_ETA_B, P_SIGMA_FAMILY, P_SIGMA_A, P_SIGMA_B = 4, 5, 6, 7, 8
P_ALPHA_A, P_ALPHA_B, P_MEAN_VAR, P_JITTER, N_CONSTANTS = 9, 10, 11, 12, 13


def constants(kernel: str, input_dim: int, priors: Priors, mean_var: float) -> np.ndarray:
    """The density's constants: kernel, prior families and parameters, ``m``: (13,).

    Families: ``ℓ`` lognormal ``(μ + ½ log d, s)`` (0) or inverse gamma ``(a, b)``
    (1); ``σ`` gamma ``(a, rate b)`` (0) or lognormal ``(μ, s)`` (1).
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}; got {kernel!r}")
    p = priors
    lognormal_ls = p.ls_family == "lognormal"
    ls = (
        (p.ls_loc + 0.5 * np.log(input_dim), p.ls_scale)
        if lognormal_ls
        else (p.ls_alpha, p.ls_beta)
    )
    gamma_sigma = p.sigma_family == "gamma"
    sigma = (p.sigma_alpha, p.sigma_beta) if gamma_sigma else (p.sigma_loc, p.sigma_scale)
    return np.array(
        [KERNELS.index(kernel), 0.0 if lognormal_ls else 1.0, *ls, p.eta_alpha, p.eta_beta]
        + [0.0 if gamma_sigma else 1.0, *sigma, p.alpha_alpha, p.alpha_beta, mean_var, JITTER],
        dtype=float,
    )


@numba.njit(nogil=True, cache=True, inline="always")
def _lapack_call(routine, K, info):
    """``routine`` (``_dpotri``) on the C-ordered ``K`` (n, n) in
    place, its lower triangle as Fortran's upper; LAPACK's status in ``info[0]``."""
    uplo = np.full(1, _UPPER, dtype=np.uint8)
    size = np.full(1, K.shape[0], dtype=np.int32)
    routine(uplo.ctypes.data, size.ctypes.data, K.ctypes.data, size.ctypes.data, info.ctypes.data)


@numba.njit(nogil=True, cache=True)
def _chol_inverse(K):
    """``K⁻¹`` in place of the C-ordered symmetric ``K`` (n, n), and ``log |K|``;
    ``(False, 0)`` where ``K`` is not numerically positive definite."""
    n = K.shape[0]
    if not cholesky_in_place(K):
        return False, 0.0
    logdet = 0.0
    for i in range(n):
        logdet += 2.0 * math.log(K[i, i])
    info = np.zeros(1, dtype=np.int32)
    _lapack_call(_dpotri, K, info)
    if info[0] != 0:
        return False, 0.0
    for i in range(n):
        for j in range(i):
            K[j, i] = K[i, j]
    return True, logdet


def _compiled(fn):
    return numba.njit(nogil=True, cache=True, inline="always")(fn)


# the families' one definition (pp_decomp.kernels.families), compiled for scalars
_SE, _SE_G = _compiled(ExpQuad.correlation), _compiled(ExpQuad.gradient)
_M52, _M52_G = _compiled(Matern52.correlation), _compiled(Matern52.gradient)
_M32, _M32_G = _compiled(Matern32.correlation), _compiled(Matern32.gradient)
_RQ, _RQ_G = _compiled(RatQuad.correlation), _compiled(RatQuad.gradient)


@numba.njit(nogil=True, cache=True, inline="always")
def _corr(kernel, r2, alpha):
    """Unit-amplitude correlation ``c(r²)``, ``∂c/∂r²`` and (``rq``) ``∂c/∂log α``."""
    if kernel == 0:
        return _SE(r2), _SE_G(r2)[0], 0.0
    if kernel == 1:
        return _M52(r2), _M52_G(r2)[0], 0.0
    if kernel == 2:
        return _M32(r2), _M32_G(r2)[0], 0.0
    slope, dalpha = _RQ_G(r2, alpha)
    return _RQ(r2, alpha), slope, alpha * dalpha


@numba.njit(nogil=True, cache=True, inline="always")
def _value(kernel, r2, alpha):
    """Unit-amplitude correlation ``c(r²)`` alone."""
    if kernel == 0:
        return _SE(r2)
    if kernel == 1:
        return _M52(r2)
    if kernel == 2:
        return _M32(r2)
    return _RQ(r2, alpha)


@numba.njit(nogil=True, cache=True, inline="always")
def _gamma(z, a, b):
    """``log Gamma(e^z; a, rate b)`` and its derivative in ``z``."""
    x = math.exp(z)
    return a * math.log(b) - math.lgamma(a) + (a - 1.0) * z - b * x, (a - 1.0) - b * x


@numba.njit(nogil=True, cache=True, inline="always")
def _lognormal(z, mu, s):
    """``log LogNormal(e^z; mu, s)`` and its derivative in ``z``."""
    t = (z - mu) / s
    return -z - math.log(s) - 0.5 * LOG_2PI - 0.5 * t * t, -1.0 - t / s


@numba.njit(nogil=True, cache=True)
def _log_prior(z, d, prm, grad):
    """``Σ log p(θ)`` at ``θ = e^z``, its gradient in ``z`` added to ``grad``."""
    total = 0.0
    for k in range(d):
        if prm[P_LS_FAMILY] == 0.0:
            v, g = _lognormal(z[k], prm[P_LS_A], prm[P_LS_B])
        else:  # inverse gamma
            a, b = prm[P_LS_A], prm[P_LS_B]
            v = a * math.log(b) - math.lgamma(a) - (a + 1.0) * z[k] - b * math.exp(-z[k])
            g = -(a + 1.0) + b * math.exp(-z[k])
        total += v
        grad[k] += g
    v, g = _gamma(z[d], prm[P_ETA_A], prm[P_ETA_B])
    total += v
    grad[d] += g
    if prm[P_SIGMA_FAMILY] == 0.0:
        v, g = _gamma(z[d + 1], prm[P_SIGMA_A], prm[P_SIGMA_B])
    else:
        v, g = _lognormal(z[d + 1], prm[P_SIGMA_A], prm[P_SIGMA_B])
    total += v
    grad[d + 1] += g
    if prm[P_KERNEL] == 3.0:
        v, g = _gamma(z[d + 2], prm[P_ALPHA_A], prm[P_ALPHA_B])
        total += v
        grad[d + 2] += g
    return total


@numba.njit(nogil=True, cache=True, inline="always")
def _hyperparameters(z, d, kernel):
    """``1/ℓ (d,)``, ``η²``, ``σ²`` and ``α`` (1 but for ``rq``) from the log-space ``z``."""
    alpha = math.exp(z[d + 2]) if kernel == 3 else 1.0
    return np.exp(-z[:d]), math.exp(2.0 * z[d]), math.exp(2.0 * z[d + 1]), alpha


@numba.njit(nogil=True, cache=True, inline="always")
def _scaled_sqdist(X, i, j, inv_ls):
    """``r² = Σ_k ((X_ik − X_jk) / ℓ_k)²``."""
    r2 = 0.0
    for k in range(X.shape[1]):
        t = (X[i, k] - X[j, k]) * inv_ls[k]
        r2 += t * t
    return r2


@numba.njit(nogil=True, cache=True)
def _kernel_matrices(z, X, prm):
    """``K`` (n, n) and, on its lower triangle, ``c``, ``∂c/∂r²`` and ``∂c/∂log α``."""
    n = X.shape[0]
    kernel = int(prm[P_KERNEL])
    inv_ls, eta2, s2, alpha = _hyperparameters(z, X.shape[1], kernel)
    c, slope, dalpha, K = np.empty((n, n)), np.empty((n, n)), np.empty((n, n)), np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            r2 = _scaled_sqdist(X, i, j, inv_ls)
            c[i, j], slope[i, j], dalpha[i, j] = _corr(kernel, r2, alpha)
            K[i, j] = eta2 * c[i, j] + prm[P_MEAN_VAR]
            K[j, i] = K[i, j]
        K[i, i] += s2 + prm[P_JITTER]
    return K, c, slope, dalpha


@numba.njit(nogil=True, cache=True)
def _kernel_lower(z, X, prm):
    """``K`` (n, n) on and below its diagonal only (above it: zeros), without the
    gradient's terms of :func:`_kernel_matrices`: what a Cholesky factor of ``K``
    reads, one triangle written where that writes three more and ``K``'s upper one."""
    n = X.shape[0]
    kernel = int(prm[P_KERNEL])
    inv_ls, eta2, s2, alpha = _hyperparameters(z, X.shape[1], kernel)
    K = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            r2 = _scaled_sqdist(X, i, j, inv_ls)
            K[i, j] = eta2 * _value(kernel, r2, alpha) + prm[P_MEAN_VAR]
        K[i, i] += s2 + prm[P_JITTER]
    return K


@numba.njit(nogil=True, cache=True)
def _likelihood_gradient(z, X, prm, a, K_inv, c, slope, dalpha, grad):
    """``½ tr(B ∂K/∂z)`` with ``B = ααᵀ - K⁻¹``, added to ``grad``; sums over the
    lower triangle of the symmetric ``B``."""
    n, d = X.shape
    inv_ls = np.exp(-z[:d])
    g_ls = np.zeros(d)
    g_eta, g_sigma, g_alpha = 0.0, 0.0, 0.0
    for i in range(n):
        for j in range(i + 1):
            b = a[i] * a[j] - K_inv[i, j]
            if j < i:
                b *= 2.0  # the upper triangle's share
            else:
                g_sigma += b
            g_eta += b * c[i, j]
            g_alpha += b * dalpha[i, j]
            bs = b * slope[i, j]
            for k in range(d):
                t = (X[i, k] - X[j, k]) * inv_ls[k]
                g_ls[k] -= bs * t * t
    eta2 = math.exp(2.0 * z[d])
    for k in range(d):
        grad[k] += eta2 * g_ls[k]
    grad[d] += eta2 * g_eta
    grad[d + 1] += math.exp(2.0 * z[d + 1]) * g_sigma
    if prm[P_KERNEL] == 3.0:
        grad[d + 2] += 0.5 * eta2 * g_alpha


@numba.njit(nogil=True, cache=True)
def log_density(z, X, y, prm, jacobian):
    """``log p(θ | y)`` up to a constant, and its gradient, in ``z = log θ``.

    Parameters
    ----------
    z : (k,) ``(log ℓ (d), log η, log σ[, log α])``, ``k = d + 2 (+ 1 for rq)``
    X : (n, d) unit-scaled inputs
    y : (n,) standardised outputs
    prm : (13,) :func:`constants`
    jacobian : bool, add ``log |∂θ/∂z| = Σ z`` (the density NUTS samples in ``z``);
        without it the maximum is the posterior mode of ``θ``

    Returns
    -------
    (value, gradient (k,)); ``(-inf, 0)`` where ``K`` is not positive definite.
    """
    value, grad, _ = log_density_weights(z, X, y, prm, jacobian)
    return value, grad


@numba.njit(nogil=True, cache=True)
def log_density_weights(z, X, y, prm, jacobian):
    """:func:`log_density` and the weights ``α = K⁻¹ y`` (n,) it computes on the way,
    ``∂ log N(y; 0, K) / ∂y = -α`` (:mod:`pp_decomp.components.gp.warped_density`)."""
    n, d = X.shape
    grad = np.zeros(z.shape[0])
    K, c, slope, dalpha = _kernel_matrices(z, X, prm)
    ok, logdet = _chol_inverse(K)  # K now holds K⁻¹
    if not ok:
        return -np.inf, grad, np.zeros(n)
    a = K @ y
    value = -0.5 * (y @ a) - 0.5 * logdet - 0.5 * n * LOG_2PI
    _likelihood_gradient(z, X, prm, a, K, c, slope, dalpha, grad)
    value += _log_prior(z, d, prm, grad)
    if jacobian:
        for k in range(z.shape[0]):
            value += z[k]
            grad[k] += 1.0
    return value, grad, a


@numba.njit(nogil=True, cache=True)
def _log_value(z, X, y, prm):
    """:func:`log_density` with the Jacobian, without the gradient: one Cholesky
    factor and one triangular solve instead of the inverse."""
    d = X.shape[1]
    K = _kernel_lower(z, X, prm)
    if not cholesky_in_place(K):
        return -np.inf
    value = log_normal_of_factor(K, y)
    value += _log_prior(z, d, prm, np.zeros(z.shape[0]))
    for k in range(z.shape[0]):
        value += z[k]
    return value


@numba.njit(nogil=True, cache=True)
def log_densities(Z, X, y, prm):
    """:func:`log_density`'s value with the Jacobian at every row of ``Z (M, k)``: (M,).

    The sampler's log density in its unconstrained space, for importance
    weights (:mod:`pp_decomp.components.inference.reweight`).
    """
    out = np.empty(Z.shape[0])
    for m in range(Z.shape[0]):
        out[m] = _log_value(Z[m], X, y, prm)
    return out
