"""Products with the draws' lower-triangular factors, read in place.

The fast path keeps every draw's ``L⁻¹`` (lower triangular) in a buffer with
spare rows (:class:`~pp_decomp.components.posterior.incremental.IncrementalPosterior`),
and an acquisition's every evaluation at new inputs multiplies it by the
kernel's ``(n, m)`` cross-covariances. A general product (``np.matmul``) reads
the whole ``(n, n)`` block and makes ``2n²m`` flops; BLAS's triangular product
``dtrmm`` reads the triangle and makes half of them (figures: docs/performance.md,
"Triangular products, and only the draws a bound uses").

Both functions read rows ``keep`` of a C-ordered ``(S, cap, cap)`` buffer whose
leading ``(n, n)`` block is the factor (the spare rows are skipped by BLAS's
leading dimension, so no block is copied) and write ``(len(keep), n, m)``.

Example
-------
>>> import numpy as np
>>> buf = np.zeros((2, 5, 5))
>>> buf[:, :3, :3] = np.tril(np.arange(1.0, 10.0).reshape(3, 3))
>>> K = np.ones((2, 3, 2))
>>> lower_times(buf, np.array([1]), 3, K[:1]).tolist()
[[[1.0, 1.0], [9.0, 9.0], [24.0, 24.0]]]
>>> np.allclose(lower_transposed_times(buf, np.array([0]), 3, K[:1])[0], buf[0, :3, :3].T @ K[0])
True
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import binding
from numba.extending import get_cython_function_address

# SciPy's Cython BLAS dtrmm (eleven pointer arguments), linked by symbol name so that
# the compiled loop is cached on disk (a ctypes pointer would be this process's address)
binding.add_symbol(
    "pp_decomp_dtrmm", get_cython_function_address("scipy.linalg.cython_blas", "dtrmm")
)
_dtrmm = numba.types.ExternalFunction("pp_decomp_dtrmm", numba.types.void(*[numba.types.intp] * 11))
binding.add_symbol(
    "pp_decomp_dtrmv", get_cython_function_address("scipy.linalg.cython_blas", "dtrmv")
)
_dtrmv = numba.types.ExternalFunction("pp_decomp_dtrmv", numba.types.void(*[numba.types.intp] * 8))
_RIGHT, _UPPER, _NO, _TRANSPOSE = ord("R"), ord("U"), ord("N"), ord("T")


@numba.njit(nogil=True, cache=True)
def _products(buf, keep, n, K, out, trans):
    """``out[k] = op(buf[keep[k], :n, :n]) @ K[k]``, ``op`` the identity or (``trans``)
    the transpose, by BLAS in place of a copy of ``K[k]``.

    A C-ordered lower ``L`` is Fortran's upper ``U = Lᵀ`` with leading dimension
    ``cap``, and the C-ordered ``(n, m)`` result is Fortran's ``(m, n)`` transpose:
    ``(L K)ᵀ = Kᵀ U`` and ``(Lᵀ K)ᵀ = Kᵀ Uᵀ``, so ``dtrmm`` multiplies from the
    right. One input (``m = 1``) is ``dtrmv``'s (``L k = Uᵀ k``), which OpenBLAS
    makes faster than a one-column ``dtrmm``."""
    m = K.shape[2]
    # side, uplo, trans of dtrmm, diag, trans of dtrmv
    flags = np.array(
        [_RIGHT, _UPPER, _TRANSPOSE if trans else _NO, _NO, _NO if trans else _TRANSPOSE],
        dtype=np.uint8,
    )
    sizes = np.array([m, n, buf.shape[2], m, 1], dtype=np.int32)
    one = np.ones(1)
    for k in range(len(keep)):
        out[k] = K[k]
        a, b = buf[keep[k]].ctypes.data, out[k].ctypes.data
        if m == 1:
            _dtrmv(
                flags[1:].ctypes.data,
                flags[4:].ctypes.data,
                flags[3:].ctypes.data,
                sizes[1:].ctypes.data,
                a,
                sizes[2:].ctypes.data,
                b,
                sizes[4:].ctypes.data,
            )
            continue
        _dtrmm(
            flags[0:].ctypes.data,
            flags[1:].ctypes.data,
            flags[2:].ctypes.data,
            flags[3:].ctypes.data,
            sizes[0:].ctypes.data,
            sizes[1:].ctypes.data,
            one.ctypes.data,
            a,
            sizes[2:].ctypes.data,
            b,
            sizes[3:].ctypes.data,
        )


def _checked(buf: np.ndarray, keep, n: int, K: np.ndarray) -> tuple:
    keep = np.ascontiguousarray(keep, dtype=np.int64)
    K = np.ascontiguousarray(K, dtype=float)
    if not buf.flags.c_contiguous or buf.ndim != 3 or buf.shape[1] != buf.shape[2]:
        raise ValueError(f"buf must be a C-ordered (S, cap, cap) array; got {buf.shape}")
    if K.shape[:2] != (len(keep), n) or n > buf.shape[1]:
        raise ValueError(
            f"K must have shape ({len(keep)}, {n}, m) within {buf.shape}; got {K.shape}"
        )
    if len(keep) and (keep.min() < 0 or keep.max() >= len(buf)):
        raise ValueError(f"keep must index buf's {len(buf)} factors; got {keep}")
    return keep, K, np.empty(K.shape)


def lower_times(buf: np.ndarray, keep, n: int, K: np.ndarray) -> np.ndarray:
    """``L_s K_k`` for ``s = keep[k]``, ``L_s = buf[s, :n, :n]`` lower triangular
    (what is above its diagonal is not read): ``(len(keep), n, m)``."""
    keep, K, out = _checked(buf, keep, n, K)
    _products(buf, keep, n, K, out, False)
    return out


def lower_transposed_times(buf: np.ndarray, keep, n: int, K: np.ndarray) -> np.ndarray:
    """``L_sᵀ K_k`` for ``s = keep[k]`` (as :func:`lower_times`): ``(len(keep), n, m)``."""
    keep, K, out = _checked(buf, keep, n, K)
    _products(buf, keep, n, K, out, True)
    return out
