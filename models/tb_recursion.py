"""The TB model's fragmentation weights and their policy gradient, compiled: one
policy at a time, the recursion's rows kept in ``(3, n)`` buffers.

Both follow :class:`~pp_decomp.models.tuberculosis.TBModel`'s formulas (its
``weights_batch`` and ``yearly_weights_grad`` docstrings). Rows ``r_j = 1_Iᵀ (I + M +
... + M^(j-1))`` advance as ``r_{j+1} = 1_I + (r_j P) A(v)``; ``P`` ages each
compartment (``(zP)_i = (1 - age_i) z_i + age_i z_{i+1}``) and ``A(v)`` is
diagonal per block, so a step is O(n). A whole batch of policies in numpy held
every row of every policy, ``(T + 1, m, 3, n)``: 70 MB at 1024 policies of
``tuberculosis-110``, read several times per call.

Example
-------
>>> import numpy as np
>>> from pp_decomp.models.tuberculosis import TBModel
>>> model = TBModel()
>>> V = np.full((2, model.n), 0.1)
>>> bool(np.allclose(model.weights_batch(V)[0], model.weights(V[0])))
True
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _times_P(z, age, out):  # noqa: N802 (the ageing matrix P)
    """``out = z P`` for a row ``z (3, n)``."""
    n = z.shape[1]
    for c in range(3):
        for i in range(n):
            value = z[c, i] * (1.0 - age[i])
            if i < n - 1:
                value += z[c, i + 1] * age[i]
            out[c, i] = value


@numba.njit(cache=True)
def _next_row(rp, v, mu, alpha, d, r):
    """``r = (r P) A(v) + 1_I`` from ``rp = r P``."""
    for i in range(rp.shape[1]):
        S, E, act = rp[0, i], rp[1, i], rp[2, i]
        r[0, i] = S * (1.0 - mu[i])
        r[1, i] = E * (1.0 - mu[i]) * (1.0 - alpha[i]) + act * alpha[i]
        r[2, i] = (1.0 - d) * (S * v[i] + act * (1.0 - v[i])) + 1.0


@numba.njit(cache=True)
def weights(V, age, mu, alpha, d, x1, Pc, T):
    """``(w_0, w_{1,1..n}, ..., w_{T-1,1..n})`` per row of ``V (m, n)``: (m, 1 + (T-1) n).

    ``w_0 = r_T · x_1 + Σ_{0<j<T} r_j · Pc`` and ``w_{t,i} = (r_{T-t} P)_{E,i} -
    (r_{T-t} P)_{S,i}``; ``x1``, ``Pc`` are ``(3, n)``."""
    m, n = V.shape
    out = np.empty((m, 1 + (T - 1) * n))
    r, rp = np.empty((3, n)), np.empty((3, n))
    for p in range(m):
        r[:] = 0.0
        w0 = 0.0
        for j in range(T):
            _times_P(r, age, rp)
            if j > 0:
                start = 1 + (T - j - 1) * n  # year t = T - j
                for i in range(n):
                    out[p, start + i] = rp[1, i] - rp[0, i]
                w0 += np.sum(r * Pc)
            _next_row(rp, V[p], mu, alpha, d, r)
        out[p, 0] = w0 + np.sum(r * x1)
    return out


@numba.njit(cache=True)
def _M_times(y, v, age, mu, alpha, d, z, out):  # noqa: N802 (the matrix M)
    """``out = M(v) y = P A(v) y`` for a column ``y (3, n)`` (``z``: a buffer)."""
    n = y.shape[1]
    for i in range(n):
        S, E, act = y[0, i], y[1, i], y[2, i]
        z[0, i] = (1.0 - mu[i]) * S + (1.0 - d) * v[i] * act
        z[1, i] = (1.0 - mu[i]) * (1.0 - alpha[i]) * E
        z[2, i] = alpha[i] * E + (1.0 - d) * (1.0 - v[i]) * act
    for c in range(3):
        for i in range(n):
            value = z[c, i] * (1.0 - age[i])
            if i > 0:
                value += z[c, i - 1] * age[i - 1]
            out[c, i] = value


@numba.njit(cache=True)
def yearly_weights_grad(V, age, mu, alpha, d, cols, T):
    """Gradients of the mean yearly weights ``s (m, T - 2)`` and of ``w_0 (m,)`` in
    ``V (m, n)``: (m, T - 2, n), (m, n).

    ``cols (3, 3, n)`` holds ``P B 1 / n``, ``x_1`` and ``Pc``; with ``D_j = (r_j
    P)_S - (r_j P)_I`` and ``C_l = (M^l y)_I``, ``∂(r_k · y)/∂v = (1 - d) Σ_{j<k}
    D_j C_{k-1-j}``: ``s_t`` is ``k = T - t`` on the first column, ``w_0`` is
    ``k = T`` on the second plus ``k = 1..T-1`` on the third."""
    m, n = V.shape
    ds, dw0 = np.zeros((m, T - 2, n)), np.zeros((m, n))
    D, C = np.empty((T, n)), np.empty((T, 3, n))
    r, rp = np.empty((3, n)), np.empty((3, n))
    Y, Ynext, z = np.empty((3, 3, n)), np.empty((3, n)), np.empty((3, n))
    for p in range(m):
        v = V[p]
        r[:] = 0.0
        Y[:] = cols
        for j in range(T):
            _times_P(r, age, rp)
            for i in range(n):
                D[j, i] = rp[0, i] - rp[2, i]
            _next_row(rp, v, mu, alpha, d, r)
            for c in range(3):
                C[j, c] = Y[c, 2]
                _M_times(Y[c], v, age, mu, alpha, d, z, Ynext)
                Y[c] = Ynext
        for k in range(1, T + 1):
            for i in range(n):
                g0, g1, g2 = 0.0, 0.0, 0.0
                for j in range(k):
                    g0 += D[j, i] * C[k - 1 - j, 0, i]
                    g1 += D[j, i] * C[k - 1 - j, 1, i]
                    g2 += D[j, i] * C[k - 1 - j, 2, i]
                if 2 <= k <= T - 1:  # s_t for t = T - k in 1..T-2
                    ds[p, T - k - 1, i] = (1.0 - d) * g0
                if k == T:
                    dw0[p, i] += (1.0 - d) * g1
                else:
                    dw0[p, i] += (1.0 - d) * g2
    return ds, dw0
