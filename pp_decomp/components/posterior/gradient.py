"""Per-draw GP posterior moments and their gradients with respect to the input.

For a stationary kernel ``k_s(x, x') = η_s² ρ(r²)`` with
``r² = Σ_a (x_a - x'_a)² / ℓ_sa²`` (the built-in shorthand kernels), the
derivative of the cross-covariance with a training input ``X_n`` is

* ``∂k_s(X_n, x)/∂x_a = c_sn(x) (x_a - X_na) / ℓ_sa²``, ``c_sn = 2 η_s² ρ'(r²_sn)``

(``ρ'`` from the family's ``gradient``), so for the posterior
``μ_s(x) = k_s(x)ᵀ α_s`` and ``σ_s²(x) = η_s² + c - ‖L_s⁻¹ k_s(x)‖²`` (``c`` the
integrated constant mean's variance, constant in ``x``):

* ``∂μ_s/∂x_a = Σ_n α_sn c_sn (x_a - X_na) / ℓ_sa²``
* ``∂σ_s²/∂x_a = -2 Σ_n w_sn c_sn (x_a - X_na) / ℓ_sa²``,
  ``w_s = K_s⁻¹ k_s(x) = L_s⁻ᵀ L_s⁻¹ k_s(x)``.

Each is one contraction of an ``(S, n, m)`` array with the inputs; no
``(S, n, m, d)`` array is formed. Kernel expressions
(:class:`~pp_decomp.kernels.bound.BoundKernel`) have no input gradient here:
:func:`moments_and_grad` raises :class:`NoInputGradient` and the maximiser takes
finite differences (:func:`~pp_decomp.optim.maximizers.value_and_fd_gradient`).

Example
-------
>>> import numpy as np
>>> from pp_decomp.components.posterior.batched import GPPosterior
>>> from pp_decomp.components.posterior.draws import HyperDraws
>>> X = np.linspace(0, 1, 5)[:, None]
>>> draws = HyperDraws(ls=np.full((1, 1), 0.3), eta=np.ones(1), sigma=np.full(1, 0.1))
>>> post = GPPosterior("matern52", X, np.sin(6 * X[:, 0]), draws)
>>> x, h = np.array([[0.37]]), 1e-6
>>> mean, var, dmean, dvar = post.per_draw_grad(x)
>>> fd = (post.per_draw(x + h)[0] - post.per_draw(x - h)[0]) / (2 * h)
>>> bool(np.allclose(dmean[..., 0], fd, rtol=1e-5))
True
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components.posterior.triangular import lower_times, lower_transposed_times
from pp_decomp.kernels.builtin import FAMILY, correlation_from_sqdist, scaled_sqdist


class NoInputGradient(NotImplementedError):
    """The model has no analytic gradient with respect to its inputs."""


def cross_and_factor(kernel, X: np.ndarray, Xs: np.ndarray, draws) -> tuple[np.ndarray, ...]:
    """``k_s(X, Xs)`` (S, n, m), the factor ``c`` (S, n, m) of its input gradient
    (module docstring) and ``1/ℓ²`` (S, d); :class:`NoInputGradient` for a kernel
    that is not a built-in shorthand name."""
    _check_kernel(kernel)
    ls = np.broadcast_to(np.asarray(draws.ls, dtype=float), (draws.n_draws, X.shape[1]))
    K, c = kernel_and_factor(kernel, scaled_sqdist(X, Xs, ls), draws)
    return K, c, 1.0 / ls**2


def _check_kernel(kernel) -> None:
    if not isinstance(kernel, str) or kernel not in FAMILY:
        raise NoInputGradient(f"no input gradient for kernel {kernel!r}")


def kernel_and_factor(kernel: str, r2: np.ndarray, draws) -> tuple[np.ndarray, np.ndarray]:
    """``k_s = η_s² ρ(r²)`` and the factor ``c_s = 2 η_s² ρ'(r²)`` of its input gradient
    at scaled squared distances ``r2 (S, n, m)``, one draw per leading row: (S, n, m)
    each."""
    alpha = getattr(draws, "alpha", None)
    eta2 = (np.asarray(draws.eta, dtype=float) ** 2)[:, None, None]
    if kernel == "rq":
        a = np.asarray(alpha, dtype=float)[:, None, None]
        drho = FAMILY[kernel].gradient(r2, a)[0]
    else:
        drho = FAMILY[kernel].gradient(r2)[0]
    return correlation_from_sqdist(kernel, r2, alpha) * eta2, 2.0 * eta2 * drho


def contract(coef: np.ndarray, X: np.ndarray, Xs: np.ndarray, inv_ls2: np.ndarray) -> np.ndarray:
    """``Σ_n coef_snm (Xs_ma - X_na) / ℓ_sa²`` for ``coef (S, n, m)``: (S, m, d)."""
    out = Xs[None] * coef.sum(axis=1)[..., None] - np.einsum("snm,nd->smd", coef, X)
    return out * inv_ls2[:, None, :]


def triangular_solves(L_inv: np.ndarray):
    """``K -> (L⁻¹ K, L⁻ᵀ L⁻¹ K)`` batched over the draws of ``L_inv (S, n, n)``, a
    C-ordered float64 array of lower-triangular factors (what is above their
    diagonals is not read: :mod:`~pp_decomp.components.posterior.triangular`)."""

    every, n = np.arange(len(L_inv)), L_inv.shape[-1]

    def solves(K: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        V = lower_times(L_inv, every, n, K)
        return V, lower_transposed_times(L_inv, every, n, V)

    return solves


def moments_and_grad(
    kernel,
    X: np.ndarray,
    Xs: np.ndarray,
    draws,
    solves,
    alpha: np.ndarray,
    prior_var: np.ndarray,
    mean_var: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-draw posterior means and variances at scaled inputs ``Xs (m, d)`` and
    their gradients (module docstring): (S, m), (S, m), (S, m, d), (S, m, d).

    ``solves``: ``K (S, n, m) -> (L_s⁻¹ K_s, L_s⁻ᵀ L_s⁻¹ K_s)`` per draw
    (:func:`triangular_solves`, or a caller's that reads its factors in place);
    ``alpha (S, n)``: ``K_s⁻¹ (y - m)``; ``prior_var``: ``k_s(x, x) + c``, (S, m) or
    (S, 1). Where a variance is clipped at zero its gradient is zero.
    """
    K, c, inv_ls2 = cross_and_factor(kernel, X, Xs, draws)
    if mean_var:
        K = K + mean_var
    V, W = solves(K)
    mean = np.einsum("snm,sn->sm", K, alpha)
    raw = prior_var - np.einsum("snm,snm->sm", V, V)
    dmean = contract(alpha[:, :, None] * c, X, Xs, inv_ls2)
    dvar = -2.0 * contract(W * c, X, Xs, inv_ls2)
    dvar[raw <= 0.0] = 0.0
    return mean, np.maximum(raw, 0.0), dmean, dvar


def paired_moments_and_grad(
    kernel, X: np.ndarray, Xs: np.ndarray, draws, L_inv: np.ndarray, idx, alpha, mean_var=0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`moments_and_grad` with draw ``j`` (``draws``, ``alpha (P, n)``: the draws
    ``idx (P,)`` of the factors ``L_inv``) at its own inputs ``Xs[j] (m, d)``: (P, m),
    (P, m), (P, m, d), (P, m, d) (a network's sample paths)."""
    _check_kernel(kernel)
    diff = Xs[:, None, :, :] - X[None, :, None, :]  # (P, n, m, d)
    inv_ls2 = 1.0 / np.asarray(draws.ls, dtype=float) ** 2
    K, c = kernel_and_factor(kernel, np.einsum("pnmd,pd->pnm", diff**2, inv_ls2), draws)
    K = K + mean_var
    V = lower_times(L_inv, idx, X.shape[0], K)
    W = lower_transposed_times(L_inv, idx, X.shape[0], V)
    mean = np.einsum("pnm,pn->pm", K, alpha)
    prior = (np.asarray(draws.eta, dtype=float) ** 2)[:, None] + mean_var
    raw = prior - np.einsum("pnm,pnm->pm", V, V)
    dmean = np.einsum("pnm,pnmd->pmd", alpha[:, :, None] * c, diff) * inv_ls2[:, None, :]
    dvar = -2.0 * np.einsum("pnm,pnmd->pmd", W * c, diff) * inv_ls2[:, None, :]
    dvar[raw <= 0.0] = 0.0
    return mean, np.maximum(raw, 0.0), dmean, dvar
