"""Monotone output warps ``z = w(u; ψ)``: the map, its inverse and its log-slope.

A warped GP (Snelson, Rasmussen & Ghahramani 2004) regresses ``z = w(y)`` with a
GP and adds ``Σ_i log w'(y_i)`` to the log likelihood, so that fits under
different warps are compared on ``y``'s own scale. Quantiles map exactly back
through a monotone warp: the ``q``-quantile of ``y`` is ``w⁻¹`` of ``z``'s.

The sinh-arcsinh warp (Jones & Pewsey 2009; as a GP warp, Rios & Tobar 2019) acts
on standardised ``u``::

    w(u; ε, δ) = sinh(δ · arcsinh(u) − ε),      δ > 0

``(ε, δ) = (0, 1)`` is the identity. For large ``u > 0``, ``w ≈ ½ (2u)^δ e^{−ε}``,
and for large ``u < 0``, ``w ≈ −½ (2|u|)^δ e^{ε}``: ``δ`` sets how fast both tails
grow (``δ < 1`` pulls heavy tails in), and ``ε > 0`` pulls the right tail in and
stretches the left (a right-skewed ``u`` is made symmetric). Its inverse is
``u = sinh((arcsinh(z) + ε) / δ)`` and its log-slope
``log δ + log cosh(δ arcsinh(u) − ε) − ½ log(1 + u²)``.

The Box-Cox warp (Box & Cox 1964) acts on positive ``r`` (``y`` over its geometric
mean, say)::

    w(r; λ) = (r^λ − 1) / λ,      w(r; 0) = log r

``λ = 1`` is a shift of the identity and ``λ = 0`` the log. Its log-slope is
``(λ − 1) log r``; its inverse ``(1 + λ z)^{1/λ}`` exists for ``1 + λ z > 0``
and is taken as ``0`` (``λ > 0``) or ``+∞`` (``λ < 0``) beyond, the image's edge.

The functions broadcast over their arguments (``skew`` and ``tail`` of shape
``(S, 1)`` against ``u (n,)`` give one row per hyperparameter draw). The warps
and their log-slopes take ``math=pytensor.tensor`` to build the same expression
in a PyMC model; the inverses are numpy's.

Example
-------
>>> import numpy as np
>>> u = np.array([-2.0, 0.0, 3.0])
>>> z = sinh_arcsinh(u, skew=0.5, tail=0.8)
>>> bool(np.allclose(sinh_arcsinh_inverse(z, skew=0.5, tail=0.8), u))
True
>>> float(sinh_arcsinh_log_slope(0.0, skew=0.0, tail=1.0))
0.0
>>> float(box_cox(np.e, 0.0)), float(box_cox_inverse(1.0, 0.0))
(1.0, 2.718281828459045)
"""

from __future__ import annotations

import numpy as np

LOG2 = float(np.log(2.0))


def sinh_arcsinh(u, skew, tail, math=np):
    """``w(u) = sinh(tail · arcsinh(u) − skew)``, broadcast over the arguments."""
    return math.sinh(tail * math.arcsinh(u) - skew)


def sinh_arcsinh_inverse(z, skew, tail):
    """``w⁻¹(z) = sinh((arcsinh(z) + skew) / tail)``, broadcast over the arguments."""
    return np.sinh((np.arcsinh(z) + skew) / tail)


def sinh_arcsinh_log_slope(u, skew, tail, math=np):
    """``log w'(u) = log tail + log cosh(tail · arcsinh(u) − skew) − ½ log(1 + u²)``.

    ``log cosh a`` is taken as ``|a| + log1p(e^{−2|a|}) − log 2`` and
    ``½ log(1 + u²)`` as ``log m + ½ log(m⁻² + (u/m)²)`` with ``m = max(|u|, 1)``,
    finite where ``cosh a`` or ``u²`` overflows."""
    a = math.abs(tail * math.arcsinh(u) - skew)
    m = math.maximum(math.abs(u), 1.0)
    half_log_1pu2 = math.log(m) + 0.5 * math.log((1.0 / m) ** 2 + (u / m) ** 2)
    return math.log(tail) + a + math.log1p(math.exp(-2.0 * a)) - LOG2 - half_log_1pu2


def _ratio(top, a, math, series):
    # top(a) / a, by its series to a² where |a| < 1e-8, finite in value and first
    # and second derivatives at a = 0, where w's λ → 0 limit is the log
    small = math.abs(a) < 1e-8
    return math.where(small, series(a), top(math.where(small, 1.0, a)) / math.where(small, 1.0, a))


def box_cox(r, lam, math=np):
    """``w(r) = (r^λ − 1) / λ = log r · expm1(λ log r) / (λ log r)``, ``r > 0``."""
    log_r = math.log(r)
    return log_r * _ratio(math.expm1, lam * log_r, math, lambda a: 1.0 + a / 2.0 + a * a / 6.0)


def box_cox_inverse(z, lam):
    """``w⁻¹(z) = (1 + λ z)^{1/λ} = exp(z · log1p(λ z) / (λ z))``; ``0`` (``λ > 0``) or
    ``+∞`` (``λ < 0``) where ``1 + λ z ≤ 0``, the edge of the warp's image."""
    z, lam = np.asarray(z, dtype=float), np.asarray(lam, dtype=float)
    b = lam * z
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inside = np.exp(z * _ratio(np.log1p, b, np, lambda a: 1.0 - a / 2.0 + a * a / 3.0))
    return np.where(1.0 + b > 0, inside, np.where(lam > 0, 0.0, np.inf))


def box_cox_log_slope(r, lam, math=np):
    """``log w'(r) = (λ − 1) log r``."""
    return (lam - 1.0) * math.log(r)
