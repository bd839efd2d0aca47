"""The Gaussian log likelihood of many covariance matrices, compiled.

For each ``K_s = L_s L_sᵀ`` (S, n, n) and residuals ``r`` (n,)

``log N(r; 0, K_s) = -½ ‖L_s⁻¹ r‖² - Σ_i log (L_s)_ii - n/2 log 2π``,

``-inf`` where ``K_s`` is not numerically positive definite. It weighs prior
draws (tens of thousands of matrices on a few points) and proposal draws.
numpy's batched ``cholesky`` and ``solve`` spend most of their time on each
small matrix's call overhead, and ``solve`` factorises the triangle again
(LU); here one compiled loop calls LAPACK's ``dpotrf`` per matrix and solves
by forward substitution (figures: docs/performance.md, "Prior and proposal
weights in one compiled loop").

Example
-------
>>> import numpy as np
>>> from scipy.stats import multivariate_normal
>>> K = np.stack([np.eye(3) + 0.5, -np.eye(3)])
>>> r = np.array([0.3, -1.0, 2.0])
>>> out = gaussian_log_likelihoods(K, r)
>>> bool(np.isclose(out[0], multivariate_normal(np.zeros(3), K[0]).logpdf(r))), float(out[1])
(True, -inf)
"""

from __future__ import annotations

import math

import numba
import numpy as np

from pp_decomp.components.posterior.cython_routines import cython_routine

_dpotrf = cython_routine("lapack", "dpotrf", 5)
_UPPER = ord("U")  # a C-ordered lower triangle is Fortran's upper one
_LOG_2PI = math.log(2.0 * math.pi)


@numba.njit(nogil=True, cache=True)
def cholesky_in_place(K) -> bool:
    """``L`` (``K = L Lᵀ``) in place of the lower triangle of the C-ordered
    symmetric ``K`` (n, n), the only part read (LAPACK's ``dpotrf``); ``False``
    where ``K`` is not numerically positive definite."""
    uplo = np.full(1, _UPPER, dtype=np.uint8)
    size = np.full(1, K.shape[0], dtype=np.int32)
    info = np.zeros(1, dtype=np.int32)
    _dpotrf(uplo.ctypes.data, size.ctypes.data, K.ctypes.data, size.ctypes.data,
            info.ctypes.data)  # fmt: skip
    return info[0] == 0


@numba.njit(nogil=True, cache=True)
def log_normal_of_factor(L, r) -> float:
    """``log N(r; 0, L Lᵀ)`` from the lower triangle of ``L`` (n, n), by forward
    substitution: ``-½ ‖L⁻¹ r‖² - Σ_i log L_ii - n/2 log 2π``."""
    n = L.shape[0]
    z = np.empty(n)
    value = -0.5 * n * _LOG_2PI
    for i in range(n):
        acc = r[i]
        for j in range(i):
            acc -= L[i, j] * z[j]
        z[i] = acc / L[i, i]
        value -= 0.5 * z[i] * z[i] + math.log(L[i, i])
    return value


@numba.njit(nogil=True, cache=True)
def _log_likelihoods(K, R, out):
    """``out[s] = log N(R[s]; 0, K[s])``, each ``K[s]`` overwritten by its factor."""
    for s in range(K.shape[0]):
        out[s] = log_normal_of_factor(K[s], R[s]) if cholesky_in_place(K[s]) else -np.inf


def gaussian_log_likelihoods(K: np.ndarray, r: np.ndarray, overwrite_K: bool = False) -> np.ndarray:
    """``log N(r; 0, K_s)`` for every matrix of ``K`` (S, n, n): (S,), ``-inf``
    where ``K_s`` is not positive definite, NaN where it or ``r`` holds NaN
    (module docstring). ``r`` is (n,), or (S, n) where each matrix has residuals
    of its own (an output warp's draws).

    ``overwrite_K``: factorise ``K`` in place where it is already a C-ordered,
    writeable float64 array (its lower triangles then hold the factors); by
    default, or otherwise, a copy.
    """
    K = np.asarray(K)
    r = np.ascontiguousarray(r, dtype=np.float64)
    shapes = (K.shape[1:2], K.shape[:2])
    if K.ndim != 3 or K.shape[1] != K.shape[2] or r.shape not in shapes:
        raise ValueError(
            f"K must be (S, n, n) and r (n,) or (S, n); got K {K.shape} and r {r.shape}"
        )
    R = np.ascontiguousarray(np.broadcast_to(r, K.shape[:2]))
    if overwrite_K:
        K = np.require(K, dtype=np.float64, requirements=["C", "W"])
    else:
        K = np.array(K, dtype=np.float64, order="C")
    out = np.empty(len(K))
    if K.shape[1] == 0:  # LAPACK refuses a zero leading dimension
        out[:] = 0.0
    elif len(K):
        _log_likelihoods(K, R, out)
    return out
