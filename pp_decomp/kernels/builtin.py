"""The four built-in kernels by their shorthand names, batched over hyperparameter
draws (the default models' fast numpy path); each calls its family's one
definition in :mod:`pp_decomp.kernels.families`.

The numpy kernels mirror PyMC's ``pm.gp.cov`` classes exactly (same distance
formulas, including PyMC's ``sqrt(r² + 1e-12)`` for Matérn) so that the batched
numpy posterior agrees with PyMC's ``conditional`` to rounding.

With scaled squared distance ``r² = Σ_d (x_d - x'_d)² / ℓ_d²`` and amplitude ``η``:

* ``se``:        ``k = η² exp(-r²/2)``                               (``pm.gp.cov.ExpQuad``)
* ``matern52``:  ``k = η² (1 + √5 r + 5r²/3) exp(-√5 r)``            (``pm.gp.cov.Matern52``)
* ``matern32``:  ``k = η² (1 + √3 r) exp(-√3 r)``                    (``pm.gp.cov.Matern32``)
* ``rq``:        ``k = η² (1 + r²/(2α))^(-α)``                        (``pm.gp.cov.RatQuad``)
"""

from __future__ import annotations

import numpy as np

from pp_decomp.choices import KERNEL_ALIASES, KERNELS
from pp_decomp.kernels.families import ExpQuad, Matern32, Matern52, RatQuad

ALIASES = KERNEL_ALIASES
FAMILY = {"se": ExpQuad, "matern52": Matern52, "matern32": Matern32, "rq": RatQuad}


def canonical_kernel(name: str) -> str:
    """Return the canonical kernel name for ``name`` (accepts aliases) or raise."""
    key = ALIASES.get(str(name).lower(), str(name).lower())
    if key not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS + tuple(ALIASES)}; got {name!r}")
    return key


def scaled_sqdist(X1: np.ndarray, X2: np.ndarray, ls: np.ndarray) -> np.ndarray:
    """Squared distances scaled by ARD lengthscales, batched over draws.

    Parameters
    ----------
    X1 : (n1, d) array
    X2 : (n2, d) array
    ls : (S, d) array of lengthscales

    Returns
    -------
    (S, n1, n2) array of ``Σ_d (X1_d - X2_d)² / ls_d²``.

    One matrix product of the inverse squared lengthscales (S, d) with the
    squared differences (n1 n2, d), which do not depend on the draw: 1.5-30
    times faster than scaling the inputs per draw and expanding
    ``|a|² + |b|² - 2 a·b``, and without that expansion's cancellation.
    """
    X1, X2 = np.asarray(X1, dtype=float), np.asarray(X2, dtype=float)
    diff2 = (X1[:, None, :] - X2[None, :, :]) ** 2  # (n1, n2, d)
    n1, n2, d = diff2.shape
    inv_ls2 = 1.0 / np.asarray(ls, dtype=float) ** 2
    return (inv_ls2 @ diff2.reshape(n1 * n2, d).T).reshape(len(inv_ls2), n1, n2)


# the Matérn correlations' numpy expressions make five (S, n, n) temporaries around a
# square root: compiled as a ufunc they take one pass (docs/design.md, "Calibrated
# defaults"); ExpQuad's one vectorised exp is faster as it is
ONE_PASS = (Matern32, Matern52)
_UFUNCS: dict[type, object] = {}


def _one_pass(family):
    """``family.correlation`` as a numba ufunc of ``r²``, compiled once (disk-cached)."""
    if family not in _UFUNCS:
        import numba

        _UFUNCS[family] = numba.vectorize(["float64(float64)"], cache=True)(family.correlation)
    return _UFUNCS[family]


def compile_kernels() -> None:
    """Build the one-pass correlations (:data:`ONE_PASS`) now: numba's import and the
    ufuncs' load from its disk cache, once per process (the first time after an
    install compiles them). A run calls this when it is built
    (:func:`~pp_decomp.loop.updaters.factory.make_updater`), so that its first fit,
    inside the first ask, does not pay it (figures: docs/performance.md)."""
    for family in ONE_PASS:
        _one_pass(family)


def correlation_from_sqdist(kernel: str, r2: np.ndarray, alpha: np.ndarray | None = None):
    """Unit-amplitude correlation ``k/η²`` from scaled squared distances ``r2`` (S, ...),
    by the family's one definition (:mod:`pp_decomp.kernels.families`)."""
    family = FAMILY.get(kernel)
    if family is None:
        raise ValueError(f"unknown kernel {kernel!r}")
    if family in ONE_PASS:
        return _one_pass(family)(r2)
    if kernel == "rq":
        if alpha is None:
            raise ValueError("kernel 'rq' needs alpha")
        a = np.asarray(alpha, dtype=float).reshape((-1,) + (1,) * (r2.ndim - 1))
        return family.correlation(r2, a)
    return family.correlation(r2)


def kernel_matrix(kernel, X1, X2, ls, eta, alpha=None) -> np.ndarray:
    """Covariance matrices ``k(X1, X2)`` for each of S hyperparameter draws.

    Parameters
    ----------
    kernel : str
        One of :data:`KERNELS`.
    X1, X2 : (n1, d), (n2, d) arrays
    ls : (S, d) lengthscales
    eta : (S,) amplitudes
    alpha : (S,) rational-quadratic shape, only for ``"rq"``

    Returns
    -------
    (S, n1, n2) array.
    """
    k = correlation_from_sqdist(kernel, scaled_sqdist(X1, X2, ls), alpha)  # a new array
    k *= (np.asarray(eta, dtype=float) ** 2)[:, None, None]
    return k


def pymc_cov(kernel: str, input_dim: int, ls, eta, alpha=None):
    """The PyMC covariance ``η² k(ℓ)`` matching :func:`kernel_matrix`."""
    family = FAMILY.get(kernel)
    if family is None:
        raise ValueError(f"unknown kernel {kernel!r}")
    values = {"ls": ls, "alpha": alpha} if kernel == "rq" else {"ls": ls}
    return eta**2 * family().pymc_cov(input_dim, None, values)


def shorthand(name: str):
    """The kernel object a shorthand string names (``"matern52"`` is ``Matern52()``)."""
    return FAMILY[canonical_kernel(name)]()
