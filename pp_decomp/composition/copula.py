"""The components' posterior errors correlated by a Gaussian copula.

Independent component GPs keep each component's own kernel and marginal
posterior; what they miss is that the components err together (on flu the age
groups' attack rates rise and fall with the same epidemic), so a sum of them
is more uncertain than its independent parts say. For one GP of J outputs
with a shared design, kernel ``k`` and output correlation ``C`` (intrinsic
coregionalisation, noise-free), the posterior errors at any ``x`` have
correlation exactly ``C`` (autokrigeability), and the maximum-likelihood ``C``
is the correlation of the whitened outputs ``L⁻¹ y_j`` (``K = L Lᵀ``). The
copula keeps that structure and each component's own ``K_j``:

* whitened residuals ``e_j = L_j⁻¹ (y_j - m_j)`` of each component's fit
  (standardised scale, averaged over its hyperparameter draws), scaled to unit
  mean square, as the columns of ``E (n, J)``;
* ``C = (I + Eᵀ E) / (n + 1)``: the posterior mean of the errors' covariance
  under an inverse-Wishart prior centred on independence (``ν = J + 2``,
  ``Ψ = I``), which keeps ``C`` positive definite and near ``I`` on few data;
* posterior samples ``f_j(x) = μ_j(x) + σ_j(x) (L_C z)_j``, ``z ~ N(0, I_J)``, and
  for a linear ``g`` the variance ``Σ_jk w_j w_k C_jk σ_j σ_k``: both computed in
  :mod:`pp_decomp.composition.core` (:func:`~pp_decomp.composition.core.coupled_normals`,
  :func:`~pp_decomp.composition.core.linear_moments`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def whitened_residuals(component) -> tuple[np.ndarray, np.ndarray]:
    """``L⁻¹ (y - m)`` of one fitted component GP, averaged over its draws (n,), and
    the (scaled) inputs it was fitted at (n, d).

    With ``K`` factorised in the order of the observations, entry ``i`` is the
    standardised one-step-ahead prediction error ``(y_i - μ_i|<i) / σ_i|<i``. A
    fast-path view (:class:`~pp_decomp.loop.updaters.fast_view.FastGPView`) reads them
    from its incremental posterior, which keeps them up to date.
    """
    post = getattr(component, "posterior", None)
    inner = getattr(post, "post", None)
    if inner is not None and hasattr(inner, "z"):  # the fast path's resampled draws
        return inner.z[post.draw_idx].mean(axis=0), inner.X
    if post is None or not hasattr(post, "L_inv"):
        raise TypeError(
            f"the copula needs component GPs fitted on their own data; got "
            f"{type(component).__name__}"
        )
    return np.einsum("sij,j->si", post.L_inv, post.y).mean(axis=0), post.X


def residual_correlation(components: Sequence) -> np.ndarray:
    """``C (J, J)`` of the module docstring, from the components' whitened residuals.

    The components must share their design (every evaluation observes all J,
    as in the loop); a ValueError says so otherwise.
    """
    E, X = zip(*(whitened_residuals(c) for c in components), strict=True)
    if any(x.shape != X[0].shape or not np.array_equal(x, X[0]) for x in X):
        raise ValueError(
            "the copula needs the components observed at the same inputs (a shared "
            f"design); their fits have {[len(x) for x in X]} observations at different inputs"
        )
    E = np.stack(E, axis=1)
    rms = np.sqrt(np.mean(E**2, axis=0))
    E = E / np.where(rms > 0, rms, 1.0)
    S = np.eye(E.shape[1]) + E.T @ E  # ∝ the inverse-Wishart posterior mean
    d = np.sqrt(np.diag(S))  # n + 1, or 1 for a component with no residual at all
    return S / np.outer(d, d)
