"""The log density of a component GP on sinh-arcsinh-warped outputs, compiled by numba.

The model of :class:`~pp_decomp.components.gp.warped.WarpedGP`: the
standardised outputs ``u`` are warped,

    y = w(u) = sinh(δ arcsinh((u - c) / s) - log κ),

(:func:`~pp_decomp.components.output_warps.sinh_arcsinh` with skew ``ε = log κ``
and tail ``δ``, after the affine map ``v = (u - c) / s``), and ``y ~ N(0, K)``
with the built-in model's ``K`` (:mod:`pp_decomp.components.gp.density`). The
density of ``u`` adds the warp's log-slope (Snelson, Rasmussen & Ghahramani
2004)::

    log p(u | θ, ψ) = log N(w(u); 0, K) + Σ_i log w'(u_i)

so fits under different warps compare on ``u``'s own scale. With ``a_i = δ
arcsinh(v_i) - ε`` and ``α = K⁻¹ y``, ``∂ log N / ∂y = -α``, ``∂y_i/∂ε = -cosh
a_i``, ``∂y_i/∂v_i = δ cosh a_i / √(1 + v_i²)``, and ``log w'(u_i) = log δ + log
cosh a_i - ½ log(1 + v_i²) - log s``.

The sampled vector is ``z = (log θ, log κ, log δ, c, log s)``, ``log θ`` the
built-in model's; ``ψ = (κ, δ, c, s)`` has priors of :meth:`pp_decomp.Prior.encoded`'s
native families (``(4, 3)`` rows ``warp``; ``c``'s a real one), and ``κ = δ = s = 1,
c = 0`` is the identity.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pp_decomp.components.gp.density import log_density_weights
from pp_decomp.components.inference.native import nuts_value
from pp_decomp.prior import log_prior

LOG2 = math.log(2.0)


N_WARP = 4  # log κ, log δ, c, log s


@numba.njit(nogil=True, cache=True)
def warped_outputs(u, w):
    """``y = w(u)`` (n,), its derivatives in ``w = (log κ, log δ, c, log s)`` (4, n),
    the log-slopes ``log w'(u)`` (n,) and their derivatives (4, n)."""
    n = u.shape[0]
    eps, tail, loc, scale = w[0], math.exp(w[1]), w[2], math.exp(w[3])
    y, dy = np.empty(n), np.empty((N_WARP, n))
    slope, ds = np.empty(n), np.empty((N_WARP, n))
    for i in range(n):
        v = (u[i] - loc) / scale
        s = math.asinh(v)
        a = tail * s - eps
        ch, th, m = math.cosh(a), math.tanh(a), abs(a)
        r = 1.0 / math.sqrt(1.0 + v * v)  # ds/dv
        y[i] = math.sinh(a)
        dyv = ch * tail * r  # ∂y/∂v; ∂v/∂c = -1/s, ∂v/∂log s = -v
        dy[0, i], dy[1, i], dy[2, i], dy[3, i] = -ch, tail * s * ch, -dyv / scale, -dyv * v
        # log w' = log δ + log cosh a + log r - log s, log cosh a finite where cosh overflows
        slope[i] = w[1] + m + math.log1p(math.exp(-2.0 * m)) - LOG2 + math.log(r) - w[3]
        dsv = th * tail * r - v * r * r  # ∂ log w' / ∂v
        ds[0, i], ds[1, i] = -th, 1.0 + tail * s * th
        ds[2, i], ds[3, i] = -dsv / scale, -dsv * v - 1.0
    return y, dy, slope, ds


@numba.njit(nogil=True, cache=True)
def warped_log_density(z, X, u, prm, warp, jacobian):
    """``log p(θ, ψ | u)`` up to a constant, and its gradient, in ``z``.

    Parameters
    ----------
    z : (k + 4,) the built-in model's ``log θ`` (k), then ``ψ``'s coordinates
        ``(log κ, log δ, c, log s)``
    X : (n, d) unit-scaled inputs
    u : (n,) standardised outputs
    prm : (13,) :func:`~pp_decomp.components.gp.density.constants`
    warp : (4, 3) the encoded priors of ``κ``, ``δ``, ``c`` (a real family) and ``s``
    jacobian : bool, add the log transforms' Jacobian ``log κ + log δ + log s`` (the
        density NUTS samples); without it the maximum is the posterior mode of
        ``(θ, κ, δ, c, s)``

    Returns
    -------
    (value, gradient (k + 4,)); ``(-inf, 0)`` where ``K`` is not positive definite
    or the warp overflows.
    """
    k = z.shape[0] - N_WARP
    grad = np.zeros(z.shape[0])
    y, dy, slope, ds = warped_outputs(u, z[k:])
    if not np.all(np.isfinite(y)):
        return -np.inf, grad
    value, g, a = log_density_weights(z[:k], X, y, prm, jacobian)
    if not np.isfinite(value):
        return -np.inf, grad
    grad[:k] = g
    value += slope.sum()
    for q in range(N_WARP):
        grad[k + q] = ds[q].sum() - a @ dy[q]
        v, gq = log_prior(int(warp[q, 0]), warp[q, 1], warp[q, 2], z[k + q])
        value += v
        grad[k + q] += gq
        if jacobian and q != 2:  # c is sampled as it is
            value += z[k + q]
            grad[k + q] += 1.0
    return value, grad


@numba.njit(nogil=True, cache=True)
def warped_log_densities(Z, X, u, prm, warp):
    """:func:`warped_log_density`'s value with the Jacobian at each row of ``Z (M, k + 4)``."""
    out = np.empty(Z.shape[0])
    for m in range(Z.shape[0]):
        out[m] = warped_log_density(np.ascontiguousarray(Z[m]), X, u, prm, warp, True)[0]
    return out


@numba.njit(nogil=True, cache=True)
def warped_logp(X, y, prm, warp, grad, z):
    """NUTS's ``(value, grad)`` of :func:`warped_log_density` with the Jacobian at ``z``;
    ``y`` holds the standardised outputs ``u``."""
    value, g = warped_log_density(z, X, y, prm, warp, True)
    return nuts_value(value, g, grad)
