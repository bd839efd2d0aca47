"""The kernel families, named as ``pm.gp.cov`` names them.

Each is written once: its correlation and gradient here serve the numba
densities (NUTS, MAP, importance weights), the numpy predictions, the
coregionalised and additive models, and :meth:`~pp_decomp.kernels.base.Family.pymc_cov`
gives PyMC's own class, against which the tests compare. The Matérn kernels
use ``r = sqrt(r² + 1e-12)``, as PyMC's do.

Example
-------
>>> from pp_decomp import kernels as K
>>> k = K.Matern52() + K.Periodic(period=1.0, active_dims=[0])
>>> [leaf.__class__.__name__ for leaf in k.leaves()]
['Matern52', 'Periodic']
"""

from __future__ import annotations

import math

import numpy as np

from pp_decomp.kernels.base import SQRT3, SQRT5, Family, Param, Stationary
from pp_decomp.prior import Prior


class ExpQuad(Stationary):
    """Squared exponential, ``k = η² exp(-r²/2)`` (``pm.gp.cov.ExpQuad``)."""

    pymc_name = "ExpQuad"

    @staticmethod
    def correlation(r2):
        return np.exp(-0.5 * r2)

    @staticmethod
    def gradient(r2):
        return (-0.5 * np.exp(-0.5 * r2),)


class Matern12(Stationary):
    """Matérn 1/2 (exponential), ``k = η² exp(-r)`` (``pm.gp.cov.Matern12``): rough,
    continuous but nowhere differentiable."""

    pymc_name = "Matern12"

    @staticmethod
    def correlation(r2):
        return np.exp(-np.sqrt(r2 + 1e-12))

    @staticmethod
    def gradient(r2):
        r = np.sqrt(r2 + 1e-12)
        return (-0.5 * np.exp(-r) / r,)


class Matern32(Stationary):
    """Matérn 3/2, ``k = η² (1 + √3 r) exp(-√3 r)`` (``pm.gp.cov.Matern32``)."""

    pymc_name = "Matern32"

    @staticmethod
    def correlation(r2):
        r = np.sqrt(r2 + 1e-12)
        return (1.0 + SQRT3 * r) * np.exp(-SQRT3 * r)

    @staticmethod
    def gradient(r2):
        r = np.sqrt(r2 + 1e-12)
        return (-1.5 * np.exp(-SQRT3 * r),)


class Matern52(Stationary):
    """Matérn 5/2, ``k = η² (1 + √5 r + 5r²/3) exp(-√5 r)`` (``pm.gp.cov.Matern52``)."""

    pymc_name = "Matern52"

    @staticmethod
    def correlation(r2):
        r = np.sqrt(r2 + 1e-12)
        return (1.0 + SQRT5 * r + 5.0 / 3.0 * r2) * np.exp(-SQRT5 * r)

    @staticmethod
    def gradient(r2):
        r = np.sqrt(r2 + 1e-12)
        return (-5.0 / 6.0 * (1.0 + SQRT5 * r) * np.exp(-SQRT5 * r),)


class RatQuad(Stationary):
    """Rational quadratic, ``k = η² (1 + r²/(2α))^(-α)`` (``pm.gp.cov.RatQuad``),
    ``α ~ Gamma(2, 1)`` by default."""

    pymc_name = "RatQuad"
    params = (*Stationary.params, Param("alpha", default=Prior("Gamma", alpha=2.0, beta=1.0)))

    @staticmethod
    def correlation(r2, alpha):
        return (1.0 + r2 / (2.0 * alpha)) ** (-alpha)

    @staticmethod
    def gradient(r2, alpha):
        u = r2 / (2.0 * alpha)
        c = (1.0 + u) ** (-alpha)
        return -0.5 * c / (1.0 + u), c * (u / (1.0 + u) - np.log1p(u))


class Periodic(Family):
    """Periodic, ``k = η² exp(-½ Σ_d sin²(π (x_d - x'_d) / T) / ℓ_d²)``
    (``pm.gp.cov.Periodic``). ``period`` ``T`` is in the problem's input units
    (default prior ``LogNormal(0, 1)`` there)."""

    params = (
        Param("ls", default=Prior("LogNormal", mu=0.0, sigma=1.0), ard=True),
        Param("period", default=Prior("LogNormal", mu=0.0, sigma=1.0), input_units=True),
    )

    @staticmethod
    def pair(x1, x2, dims, th, g):
        nd = dims.shape[0]
        T = th[nd]
        r2 = 0.0
        for k in range(nd):
            s = math.sin(math.pi * (x1[dims[k]] - x2[dims[k]]) / T) / th[k]
            r2 += s * s
        c = math.exp(-0.5 * r2)
        dT = 0.0
        for k in range(nd):
            u = math.pi * (x1[dims[k]] - x2[dims[k]]) / T
            s = math.sin(u) / th[k]
            g[k] = c * s * s / th[k]
            # ∂(s²)/∂T = 2 s cos(u)/ℓ · (-u/T)
            dT += s * math.cos(u) / th[k] * (-u / T)
        g[nd] = -c * dT
        return c

    def pymc_cov(self, input_dim, active_dims, values):
        import pymc as pm

        return pm.gp.cov.Periodic(
            input_dim, period=values["period"], ls=values["ls"], active_dims=active_dims
        )


class Linear(Family):
    """Linear, ``k = η² Σ_d (x_d - c)(x'_d - c)`` (``pm.gp.cov.Linear``), ``c``
    fixed (on the unit-scaled inputs, default 0)."""

    params = (Param("c", default=0.0, positive=False),)

    @staticmethod
    def pair(x1, x2, dims, th, g):
        c = th[0]
        k, s = 0.0, 0.0
        for i in range(dims.shape[0]):
            a, b = x1[dims[i]] - c, x2[dims[i]] - c
            k += a * b
            s -= a + b
        g[0] = s
        return k

    def pymc_cov(self, input_dim, active_dims, values):
        import pymc as pm

        return pm.gp.cov.Linear(input_dim, c=values["c"], active_dims=active_dims)


class Constant(Family):
    """Constant, ``k = η²`` (``pm.gp.cov.Constant(η²)``): an offset shared by all inputs."""

    @staticmethod
    def pair(x1, x2, dims, th, g):
        return 1.0

    def pymc_cov(self, input_dim, active_dims, values):
        import pymc as pm

        return pm.gp.cov.Constant(values["eta"] ** 2)
