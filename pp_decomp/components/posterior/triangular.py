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

from collections.abc import Sequence

import numba
import numpy as np

from pp_decomp.components.posterior.cython_routines import cython_routine

_dtrmm = cython_routine("blas", "dtrmm", 11)
_dtrmv = cython_routine("blas", "dtrmv", 8)
_RIGHT, _UPPER, _NO, _TRANSPOSE = ord("R"), ord("U"), ord("N"), ord("T")


@numba.njit(nogil=True, cache=True)
def _products(buf, keep, n, K, out, trans):
    """``out[k] = op(buf[keep[k], :n, :n]) @ K[k]``, ``op`` the identity or (``trans``)
    the transpose, by BLAS in place of a copy of ``K[k]``.

    A C-ordered lower ``L`` is Fortran's upper ``U = Lᵀ`` with leading dimension
    ``cap``, and the C-ordered ``(n, m)`` result is Fortran's ``(m, n)`` transpose:
    ``(L K)ᵀ = Kᵀ U`` and ``(Lᵀ K)ᵀ = Kᵀ Uᵀ``, so ``dtrmm`` multiplies from the
    right; one input (``m = 1``) is ``dtrmv``'s ``L k = Uᵀ k``."""
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


def _checked(buf: np.ndarray, keep, n: int, K) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``keep`` and ``K`` as the compiled loop takes them (int64; C-ordered, writable
    float64, so that one compiled version serves every call) and the output, after
    checking every argument by name."""
    if not isinstance(buf, np.ndarray) or buf.dtype != np.float64 or buf.ndim != 3:
        raise ValueError(f"buf must be a float64 (S, cap, cap) array; got {np.shape(buf)}")
    if not buf.flags.c_contiguous or buf.shape[1] != buf.shape[2]:
        raise ValueError(f"buf must be C-ordered with square blocks; got {buf.shape}")
    keep = np.asarray(keep)
    if keep.ndim != 1 or not (keep.size == 0 or np.issubdtype(keep.dtype, np.integer)):
        raise ValueError(f"keep must be a 1-D array of integers; got {keep!r}")
    if len(keep) and (keep.min() < 0 or keep.max() >= len(buf)):
        raise ValueError(f"keep must index buf's {len(buf)} factors; got {keep}")
    K = np.require(K, dtype=np.float64, requirements=["C", "W"])
    if K.ndim != 3 or K.shape[:2] != (len(keep), n) or not 0 <= n <= buf.shape[1]:
        raise ValueError(
            f"K must have shape ({len(keep)}, {n}, m) within {buf.shape}; got {K.shape}"
        )
    return keep.astype(np.int64), K, np.empty(K.shape)


def lower_times(buf: np.ndarray, keep: Sequence[int] | np.ndarray, n: int, K) -> np.ndarray:
    """``L_s K_k`` for ``s = keep[k]``, ``L_s = buf[s, :n, :n]`` lower triangular
    (what is above its diagonal is not read): ``(len(keep), n, m)``."""
    return _multiplied(buf, keep, n, K, False)


def lower_transposed_times(
    buf: np.ndarray, keep: Sequence[int] | np.ndarray, n: int, K
) -> np.ndarray:
    """``L_sᵀ K_k`` for ``s = keep[k]`` (as :func:`lower_times`): ``(len(keep), n, m)``."""
    return _multiplied(buf, keep, n, K, True)


def _multiplied(buf: np.ndarray, keep, n: int, K, trans: bool) -> np.ndarray:
    keep, K, out = _checked(buf, keep, n, K)
    if out.size:  # BLAS refuses zero leading dimensions
        _products(buf, keep, n, K, out, trans)
    return out
