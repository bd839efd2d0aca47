"""The mathematics every composition and UCB acquisition shares, written once.

* :func:`linear_moments`: the posterior of a linear composition
  ``g(f; x) = Σ_j w_j(x) f_j(x) + b(x)`` under one hyperparameter draw, for
  independent components, components whose errors a copula correlates, or
  components with a full covariance;
* :func:`coupled_normals` and :func:`draw_samples`: pointwise samples
  ``μ_j + σ_j z_j`` of the components, one hyperparameter draw per sample and
  normals correlated across components by a copula's Cholesky factor;
* :func:`ucb_radius`, :func:`ucb`, :func:`integrated_ucb`, :func:`ucb_level`: the
  upper confidence bound ``μ + √β σ`` of a mean and a spread, its average over
  hyperparameter draws, and its nominal level ``Φ(√β)``.

The callers draw their own random numbers and pass them in, so that a run's
numbers do not depend on which of them computes.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def linear_moments(
    mean: np.ndarray,
    var: np.ndarray,
    weights: np.ndarray,
    offset: np.ndarray | None = None,
    corr: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``g = Σ_j w_j f_j + b`` from the components' moments.

    * mean ``Σ_j w_j μ_j + b``;
    * variance ``Σ_j w_j² σ_j²`` for independent components (``var`` of shape
      ``(..., m, J)``, no ``corr``), ``Σ_jk w_j w_k C_jk σ_j σ_k`` with the copula's
      residual correlation ``C = corr`` (:mod:`pp_decomp.composition.copula`), or
      ``wᵀ Σ w`` with the components' covariance ``Σ`` (``var`` of shape
      ``(..., m, J, J)``).

    Parameters
    ----------
    mean : (..., m, J) array
        Component means, e.g. per hyperparameter draw ``(S, m, J)``.
    var : (..., m, J) or (..., m, J, J) array
        Component variances, or their covariance at each input.
    weights : (m, J) array
        ``w_j(x)``.
    offset : (m,) array, optional
        The known term ``b(x)``; default none.
    corr : (J, J) array, optional
        ``C``, with variances only; default none (independent components).

    Returns
    -------
    mean, var : (..., m) arrays

    Examples
    --------
    >>> import numpy as np
    >>> mean, var = np.array([[[1.0, 2.0]]]), np.array([[[4.0, 1.0]]])
    >>> w = np.array([[1.0, 3.0]])
    >>> linear_moments(mean, var, w, offset=np.array([0.5]))
    (array([[7.5]]), array([[13.]]))
    >>> linear_moments(mean, var, w, corr=np.array([[1.0, 0.5], [0.5, 1.0]]))[1]
    array([[19.]])
    """
    weights = np.asarray(weights, dtype=float)
    if var.ndim == mean.ndim + 1:  # a covariance: contracted as one product
        out_mean = np.einsum("...mj,mj->...m", mean, weights)
        out_var = np.einsum("...mjk,mj,mk->...m", var, weights, weights)
    else:  # a sum over j, in the order the loop's stored runs were made with
        J = mean.shape[-1]
        out_mean = sum(weights[:, j] * mean[..., j] for j in range(J))
        if corr is None:
            out_var = sum(weights[:, j] ** 2 * var[..., j] for j in range(J))
        else:
            sd = weights * np.sqrt(var)
            out_var = np.einsum("...j,jk,...k->...", sd, np.asarray(corr, dtype=float), sd)
    if offset is not None:
        out_mean = out_mean + offset
    return out_mean, out_var


def coupled_normals(z: np.ndarray, chol: np.ndarray) -> np.ndarray:
    """Standard normals ``z (..., J)`` correlated across their last axis by ``C = L Lᵀ``:
    ``z Lᵀ``, of the same shape, with ``L = chol`` the Cholesky factor of ``C``.

    Examples
    --------
    >>> import numpy as np
    >>> L = np.linalg.cholesky(np.array([[1.0, 0.6], [0.6, 1.0]]))
    >>> coupled_normals(np.array([[1.0, 0.0], [0.0, 1.0]]), L)
    array([[1. , 0.6],
           [0. , 0.8]])
    """
    return z @ chol.T


def draw_samples(
    per_draw: list[tuple[np.ndarray, np.ndarray]],
    draw_idx: np.ndarray,
    z: np.ndarray,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Pointwise posterior samples ``μ_{s j}(x) + σ_{s j}(x) z_j`` of every component.

    Sample ``i`` of component ``j`` uses its hyperparameter draw
    ``s = draw_idx[i, j] mod S_j`` (one joint draw per sample when a column is
    repeated) and the normal ``z[i, j]``, the same at every input (common random
    numbers), or ``z[i, x, j]`` per input; correlated normals
    (:func:`coupled_normals`) make the components' errors correlated.

    Parameters
    ----------
    per_draw : J pairs of (S_j, m) arrays
        Each component's per-draw means and variances.
    draw_idx : (n, J) int array
    z : (n, J) or (n, m, J) array
    out : (J, n, m) array, optional
        Where to write; may be a transposed view of ``(n, m, J)`` storage.

    Returns
    -------
    (J, n, m) array: ``out`` where given.

    Examples
    --------
    >>> import numpy as np
    >>> per_draw = [(np.array([[0.0], [10.0]]), np.array([[1.0], [4.0]]))]
    >>> draw_samples(per_draw, np.array([[0], [1]]), np.array([[1.0], [1.0]]))
    array([[[ 1.],
            [12.]]])
    """
    J, m = len(per_draw), per_draw[0][0].shape[1]
    if out is None:
        out = np.empty((J, len(z), m))
    for j, (mean_s, var_s) in enumerate(per_draw):
        sd_s = np.sqrt(var_s)  # (S, m): before the gather, not on (n, m)
        if mean_s.shape[0] == 1:  # MAP or fixed: broadcast, no gather
            mean, sd = mean_s[0], sd_s[0]
        else:
            s = draw_idx[:, j] % mean_s.shape[0]
            mean, sd = mean_s[s], sd_s[s]
        np.multiply(sd, z[:, j : j + 1] if z.ndim == 2 else z[..., j], out=out[j])
        np.add(mean, out[j], out=out[j])
    return out


def ucb_radius(var: np.ndarray, beta: float) -> np.ndarray:
    """``√β σ``: the half-width of the credible interval ``[μ - √β σ, μ + √β σ]``,
    from variances ``var`` (any shape; a negative rounding error counts as zero).

    Examples
    --------
    >>> import numpy as np
    >>> ucb_radius(np.array([4.0, -1e-18]), 2.25)
    array([3., 0.])
    """
    return np.sqrt(beta * np.maximum(var, 0.0))


def ucb(
    mean: np.ndarray, beta: float, *, var: np.ndarray | None = None, sd: np.ndarray | None = None
) -> np.ndarray:
    """The upper confidence bound ``μ + √β σ`` from a mean and either its variance
    ``var`` (:func:`ucb_radius`) or its standard deviation ``sd``; same shape.

    Examples
    --------
    >>> import numpy as np
    >>> ucb(np.array([1.0]), 4.0, var=np.array([9.0]))
    array([7.])
    >>> ucb(np.array([1.0]), 4.0, sd=np.array([3.0]))
    array([7.])
    """
    if (var is None) == (sd is None):
        raise TypeError("ucb needs exactly one of var and sd")
    if sd is None:
        return mean + ucb_radius(var, beta)
    return mean + np.sqrt(beta) * sd


def integrated_ucb(mean_s: np.ndarray, var_s: np.ndarray, beta: float) -> np.ndarray:
    """``(1/S) Σ_s (μ_s + √β σ_s)``: the UCB averaged over hyperparameter draws, from
    per-draw means and variances ``(S, m)``: ``(m,)``.

    Examples
    --------
    >>> import numpy as np
    >>> integrated_ucb(np.array([[0.0], [2.0]]), np.array([[1.0], [9.0]]), 1.0)
    array([3.])
    """
    return ucb(mean_s, beta, var=var_s).mean(axis=0)


def ucb_level(beta: float) -> float:
    """``Φ(√β)``: the probability a Gaussian lies below its bound ``μ + √β σ``.

    Examples
    --------
    >>> round(ucb_level(4.0), 4)
    0.9772
    """
    return float(norm.cdf(np.sqrt(beta)))
