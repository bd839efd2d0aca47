"""The gradient of a Monte Carlo quantile bound, by reparameterisation.

With the step's draws fixed (hyperparameter indices ``s`` and normals ``z``,
common to every ``x``), sample ``k`` of the components is
``F_kj(x) = μ_{s j}(x) + σ_{s j}(x) z_kj`` and of the objective
``h_k(x) = sign · g(F_k(x); x)``. A sample quantile is a fixed combination of
order statistics, ``Q(x) = Σ_i c_i h_(k_i)(x)`` (``np.quantile``'s linear
interpolation; :func:`~pp_decomp.acquisition.ucb.high_quantile`'s normal tail is
linear in two such quantiles), so wherever the order does not change

``∂Q/∂x = Σ_i c_i [Σ_j ∂h/∂F_j (∂μ_j + z_j ∂σ_j) + ∂h/∂x]`` at sample ``k_i``,

with ``∂h/∂F_j`` and ``∂h/∂x`` (``g``'s own, when it reads ``x``) by central
differences of ``g`` at those few samples only. This is the pathwise gradient
BoTorch's Monte Carlo acquisitions take with fixed base samples.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.composition.core import sqrt_grad

_STEP = 1e-6  # relative central-difference step for g's partial derivatives


def quantile_terms(h: np.ndarray, q: float, n_tail: int, scores) -> list[tuple[float, np.ndarray]]:
    """``[(c_i, k_i (m,)), ...]`` with ``Σ_i c_i h[k_i, x]`` the ``q``-quantile of ``h (n, m)``
    along axis 0 as :func:`~pp_decomp.acquisition.ucb.high_quantile` takes it
    (``n_tail``: its ``RESOLVED_TAIL``; ``scores(*qs)``: normal scores)."""
    n = h.shape[0]
    order = np.argsort(h, axis=0, kind="stable")

    def linear(level: float) -> list[tuple[float, np.ndarray]]:
        pos = level * (n - 1)
        lo, frac = int(np.floor(pos)), pos - np.floor(pos)
        return [(1.0 - frac, order[lo]), (frac, order[min(lo + 1, n - 1)])]

    q0 = 1.0 - n_tail / n
    if q <= q0:
        return linear(q)
    q1 = max(1.0 - 10 * n_tail / n, 0.5)
    z, z0, z1 = scores(q, q0, q1)
    slope = (z - z0) / (z0 - z1)
    return [(c * (1 + slope), k) for c, k in linear(q0)] + [(-c * slope, k) for c, k in linear(q1)]


def sample_gradient(model, X: np.ndarray, F: np.ndarray, dF: np.ndarray) -> np.ndarray:
    """``∂h/∂x`` (m, d) of ``h = sign · g(F; x)`` at samples ``F (m, J)`` whose input
    gradients are ``dF (m, J, d)``: ``g``'s partial derivatives by central differences."""
    m, J = F.shape
    grad = np.zeros((m, X.shape[1]))
    for j in range(J):
        step = _STEP * np.maximum(1.0, np.abs(F[:, j]))
        up, down = F.copy(), F.copy()
        up[:, j] += step
        down[:, j] -= step
        dh = (model.h(up, X) - model.h(down, X)) / (2 * step)
        grad += dh[:, None] * dF[:, j]
    for a in range(X.shape[1]):  # g's own dependence on x
        step = _STEP * np.maximum(1.0, np.abs(X[:, a]))
        up, down = X.copy(), X.copy()
        up[:, a] += step
        down[:, a] -= step
        grad[:, a] += (model.h(F, up) - model.h(F, down)) / (2 * step)
    return grad


def samples_and_gradients(per_draw, draw_idx: np.ndarray, z: np.ndarray):
    """Samples ``F (n, m, J)`` and a function ``dF(k (..., m)) -> (..., m, J, d)``: the
    input gradients of sample ``k[..., i]`` at input ``i``, from per-draw moments and their
    gradients (J tuples of (S_j, m), (S_j, m), (S_j, m, d), (S_j, m, d)) and the
    step's draws ``draw_idx (n, J)`` and (coupled) normals ``z (n, J)``."""
    J = len(per_draw)
    idx = [draw_idx[:, j] % per_draw[j][0].shape[0] for j in range(J)]
    sd = [np.sqrt(np.maximum(v, 0.0)) for _, v, _, _ in per_draw]
    F = np.stack([per_draw[j][0][idx[j]] + sd[j][idx[j]] * z[:, j, None] for j in range(J)], -1)

    def dF(k: np.ndarray) -> np.ndarray:
        rows = np.arange(k.shape[-1])
        out = []
        for j, (_, _, dmean, dvar) in enumerate(per_draw):
            s = idx[j][k]
            dsd = sqrt_grad(sd[j][s, rows], dvar[s, rows])
            out.append(dmean[s, rows] + z[k, j][..., None] * dsd)
        return np.stack(out, axis=-2)

    return F, dF


def every_sample_gradient(model, X: np.ndarray, F: np.ndarray, dF) -> np.ndarray:
    """``∂h_k/∂x`` (n, m, d) of every sample ``k`` of ``F (n, m, J)`` at every input of
    ``X (m, d)`` (``dF`` from :func:`samples_and_gradients`): one call of
    :func:`sample_gradient` on all ``n m`` rows."""
    n, m, J = F.shape
    every = np.broadcast_to(np.arange(n)[:, None], (n, m))
    rows = np.broadcast_to(X, (n, *X.shape)).reshape(n * m, -1)
    grad = sample_gradient(model, rows, F.reshape(n * m, J), dF(every).reshape(n * m, J, -1))
    return grad.reshape(n, m, -1)
