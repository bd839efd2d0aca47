"""The composition core: the mathematics every composition and UCB acquisition
shares, written once, the copula that couples the components and the linear
composition ``f(x) = Σ_j g_j(x) f_j(x)`` (Wang Alg. 2, :class:`LinearComposition`).

* :func:`linear_moments`: the posterior of a linear composition
  ``g(f; x) = Σ_j w_j(x) f_j(x) + b(x)`` under one hyperparameter draw, for
  independent components, components whose errors a copula correlates, or
  components with a full covariance;
* :func:`coupled_normals` and :func:`draw_samples`: pointwise samples
  ``μ_j + σ_j z_j`` of the components, one hyperparameter draw per sample and
  normals correlated across components by a copula's Cholesky factor;
* :func:`ucb_radius`, :func:`ucb`, :func:`integrated_ucb`, :func:`ucb_level`: the
  upper confidence bound ``μ + √β σ`` of a mean and a spread, its average over
  hyperparameter draws, and its nominal level ``Φ(√β)``;
* :func:`residual_correlation`: the copula's correlation ``C`` (below), and
  :func:`correlation_of_residuals`, its estimate from the residuals;
* :class:`LinearComposition`: the posterior of a linear ``g`` as an xarray
  Dataset and its samples, for the user and ``predict``.

The callers draw their own random numbers and pass them in, so that a run's
numbers do not depend on which of them computes.

The copula
----------
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
  :func:`coupled_normals` and :func:`linear_moments`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import xarray as xr
from scipy.stats import norm

from pp_decomp.components.correlated.view import shared_joint
from pp_decomp.components.posterior.batched import mixture_moments
from pp_decomp.optim.maximizers import FD_STEP
from pp_decomp.validate import SeedLike, as_generator, check_finite, check_positive_int, check_X


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
      residual correlation ``C = corr`` (:mod:`pp_decomp.composition.core`), or
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


def linear_moments_grad(
    mean: np.ndarray,
    var: np.ndarray,
    dmean: np.ndarray,
    dvar: np.ndarray,
    weights: tuple[np.ndarray, np.ndarray],
    offset: tuple[np.ndarray, np.ndarray],
    corr: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """:func:`linear_moments` of independent or copula-coupled components and their
    gradients with respect to the input, by the product rule:

    * ``∂μ = Σ_j (w_j ∂μ_j + μ_j ∂w_j) + ∂b``;
    * ``∂σ² = Σ_j (w_j² ∂σ_j² + 2 w_j σ_j² ∂w_j)`` for independent components, and
      ``2 Σ_jk C_jk s_j ∂s_k`` with ``s_j = w_j σ_j`` under a copula.

    Parameters
    ----------
    mean, var : (S, m, J) arrays, per-draw component moments
    dmean, dvar : (S, m, J, d) arrays, their gradients
    weights : ``(w (m, J), ∂w (m, J, d))``
    offset : ``(b (m,), ∂b (m, d))``
    corr : (J, J) array, optional, the copula's ``C``

    Returns
    -------
    mean, var : (S, m); dmean, dvar : (S, m, d)
    """
    w, dw = weights
    out_mean, out_var = linear_moments(mean, var, w, offset[0], corr)
    dm = np.einsum("smjd,mj->smd", dmean, w) + np.einsum("smj,mjd->smd", mean, dw) + offset[1]
    if corr is None:
        dv = np.einsum("smjd,mj->smd", dvar, w**2) + 2 * np.einsum("smj,mjd->smd", var * w, dw)
    else:
        sd = np.sqrt(np.maximum(var, 0.0))
        dsd = sqrt_grad(sd, dvar)
        ds = dw * sd[..., None] + w[..., None] * dsd  # (S, m, J, d)
        dv = 2 * np.einsum("smj,jk,smkd->smd", w * sd, np.asarray(corr, dtype=float), ds)
    return out_mean, out_var, dm, dv


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


def sqrt_grad(root: np.ndarray, dsquare: np.ndarray) -> np.ndarray:
    """The input gradient of ``root = √v`` from ``root (...)`` and ``∂v (..., d)``:
    ``∂v / 2√v``, and 0 where ``root`` is 0 (a variance clipped at zero is flat there).

    Examples
    --------
    >>> import numpy as np
    >>> sqrt_grad(np.array([2.0, 0.0]), np.array([[4.0], [3.0]]))
    array([[1.],
           [0.]])
    """
    safe = np.where(root > 0, root, 1.0)[..., None]
    return np.where(root[..., None] > 0, dsquare / (2 * safe), 0.0)


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


def integrated_ucb_grad(
    mean_s: np.ndarray, var_s: np.ndarray, dmean_s: np.ndarray, dvar_s: np.ndarray, beta: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`integrated_ucb` ``(m,)`` and its gradient ``(m, d)`` from per-draw moments
    ``(S, m)`` and their gradients ``(S, m, d)``:
    ``(1/S) Σ_s (∂μ_s + √β ∂σ_s² / (2 σ_s))``, zero where ``σ_s = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> v, g = integrated_ucb_grad(
    ...     np.array([[0.0]]), np.array([[4.0]]), np.array([[[1.0]]]), np.array([[[2.0]]]), 1.0
    ... )
    >>> v, g
    (array([2.]), array([[1.5]]))
    """
    dsd = sqrt_grad(np.sqrt(np.maximum(var_s, 0.0)), dvar_s)
    grad = (dmean_s + np.sqrt(beta) * dsd).mean(axis=0)
    return integrated_ucb(mean_s, var_s, beta), grad


def ucb_level(beta: float) -> float:
    """``Φ(√β)``: the probability a Gaussian lies below its bound ``μ + √β σ``.

    Examples
    --------
    >>> round(ucb_level(4.0), 4)
    0.9772
    """
    return float(norm.cdf(np.sqrt(beta)))


def whitened_residuals(component) -> tuple[np.ndarray, np.ndarray]:
    """``L⁻¹ (y - m)`` of one fitted component GP, averaged over its draws (n,) (a warped
    GP's on its warped scale, each draw's data warped by its own warp), and
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
    y = np.broadcast_to(post.y, post.L_inv.shape[:2])  # a warped GP's: per draw (S, n)
    return np.einsum("sij,sj->si", post.L_inv, y).mean(axis=0), post.X


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
    return correlation_of_residuals(np.stack(E, axis=1))


def correlation_of_residuals(E: np.ndarray) -> np.ndarray:
    """``C (J, J)`` of the module docstring from whitened residuals ``E (n, J)``, one
    column per component in the order of the shared observations: each column
    scaled to unit mean square, then ``(I + Eᵀ E) / (n + 1)`` as a correlation.

    >>> E = np.array([[1.0, 1.0], [-1.0, -1.0], [2.0, 2.0]])
    >>> correlation_of_residuals(E).round(2)
    array([[1.  , 0.75],
           [0.75, 1.  ]])
    """
    rms = np.sqrt(np.mean(E**2, axis=0))
    E = E / np.where(rms > 0, rms, 1.0)
    S = np.eye(E.shape[1]) + E.T @ E  # ∝ the inverse-Wishart posterior mean
    d = np.sqrt(np.diag(S))  # n + 1, or 1 for a component with no residual at all
    return S / np.outer(d, d)


class LinearComposition:
    """Known weights ``g_j(x)`` and known term ``b(x)`` of a linear decomposition
    ``f(x) = b(x) + Σ_j g_j(x) f_j(x)``.

    With independent component posteriors ``f_j(x) ~ (μ_j, σ_j²)`` the composed
    posterior has

    * mean ``μ(x) = b(x) + Σ_j g_j(x) μ_j(x)``
    * variance ``σ²(x) = Σ_j g_j(x)² σ_j²(x)``

    which is exact for the mixture moments too (components are independent a
    posteriori, each with its own hyperparameter posterior).

    Parameters
    ----------
    weights : (J,) array or callable
        Constant weights, or a function ``X (m, d) -> (m, J)``.
    n_components : int, optional
        Required when ``weights`` is a callable, to check its output.
    offset : callable, optional
        The known term ``b``: ``X (m, d) -> (m,)``; default none (``b ≡ 0``). A part of
        ``f`` known exactly belongs here, not in a component: a GP would have to learn it.
    grad : callable, optional
        ``X (m, d) -> (∂g/∂x (m, J, d), ∂b/∂x (m, d))``, the gradients of callable
        weights and offset (:meth:`weights_and_grad`); default forward differences.

    Examples
    --------
    >>> import numpy as np
    >>> lin = LinearComposition([2.0, 1.0], offset=lambda X: X[:, 0])
    >>> lin.combine(np.array([[1.0, 3.0]]), np.array([[10.0]]))
    array([15.])
    """

    def __init__(
        self,
        weights: np.ndarray | Callable,
        n_components: int | None = None,
        offset: Callable | None = None,
        grad: Callable | None = None,
    ):
        if offset is not None and not callable(offset):
            raise TypeError(f"offset must be a callable X (m, d) -> (m,); got {offset!r}")
        if grad is not None and not callable(grad):
            raise TypeError(
                f"grad (a Problem's weights_grad) must be a callable X (m, d) -> (dg, db); "
                f"got {grad!r}"
            )
        self.offset, self.grad = offset, grad
        if callable(weights):
            if n_components is None:
                raise ValueError("n_components is required when weights is a callable")
            self.n_components = check_positive_int(n_components, "n_components")
            self._fn = weights
            self._const = None
        else:
            w = check_finite(np.atleast_1d(np.asarray(weights, dtype=float)), "weights")
            if w.ndim != 1:
                raise ValueError(f"weights must have shape (J,); got shape {w.shape}")
            if n_components is not None and w.shape[0] != n_components:
                raise ValueError(
                    f"weights has {w.shape[0]} entries but n_components is {n_components}"
                )
            self.n_components = w.shape[0]
            self._fn = None
            self._const = w

    @property
    def constant_weights(self) -> np.ndarray | None:
        """The weights ``(J,)`` when they do not depend on ``x``, else ``None``."""
        return self._const

    @classmethod
    def ones(cls, n_components: int) -> LinearComposition:
        """``f = Σ_j f_j``."""
        return cls(np.ones(check_positive_int(n_components, "n_components")))

    def scaled(self, c: float) -> LinearComposition:
        """The composition ``c · f`` (weights ``c · g_j``, known term ``c · b``)."""
        c = float(check_finite(np.asarray(c, dtype=float), "c"))
        b, grad = self.offset, self.grad
        offset = None if b is None else (lambda X: c * np.asarray(b(X), dtype=float))
        if self._const is not None:
            return LinearComposition(c * self._const, offset=offset)
        fn = self._fn
        scaled_grad = (
            None if grad is None else (lambda X: tuple(c * np.asarray(a) for a in grad(X)))
        )
        return LinearComposition(
            lambda X: c * np.asarray(fn(X), dtype=float),
            self.n_components,
            offset=offset,
            grad=scaled_grad,
        )

    def offset_at(self, X) -> np.ndarray:
        """The known term ``b(x)`` at each row of ``X (m, d)``: (m,), zeros without one."""
        X = check_X(X, "X", min_rows=0)
        if self.offset is None:
            return np.zeros(X.shape[0])
        b = np.asarray(self.offset(X), dtype=float)
        if b.shape != (X.shape[0],):
            raise ValueError(f"offset(X) must return shape ({X.shape[0]},); got {b.shape}")
        return check_finite(b, "offset(X)")

    def offset_nd(self, X) -> np.ndarray:
        """``b(x)`` for ``X (..., d)`` with any leading axes: (...)."""
        X = np.asarray(X, dtype=float)
        return self.offset_at(X.reshape(-1, X.shape[-1])).reshape(X.shape[:-1])

    def weights(self, X) -> np.ndarray:
        """``g_j(x)`` at each row of ``X``: (m, J)."""
        X = check_X(X, "X", min_rows=0)
        if self._const is not None:
            return np.broadcast_to(self._const, (X.shape[0], self.n_components))
        G = np.asarray(self._fn(X), dtype=float)
        if G.shape != (X.shape[0], self.n_components):
            raise ValueError(
                f"weights(X) must return shape ({X.shape[0]}, {self.n_components}); got {G.shape}"
            )
        return check_finite(G, "weights(X)")

    def weights_and_grad(self, X) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """``(g(X) (m, J), ∂g/∂x (m, J, d))`` and ``(b(X) (m,), ∂b/∂x (m, d))``.

        Constant weights have zero gradient; ``grad`` gives those of weights and a
        known term given as functions. Without it they are differentiated by forward
        differences on them alone (the GPs' gradients are analytic): one call of
        each on the ``m (d + 1)`` inputs
        ``x`` and ``x + h_a e_a``, ``h_a = sqrt(eps) max(1, |x_a|)`` (every step taken
        backwards where a forward one leaves the weights' domain: a non-finite value).
        """
        X = check_X(X, "X", min_rows=0)
        m, d = X.shape
        if self._fn is None and self.offset is None:
            w = self.weights(X)
            return (w, np.zeros((m, self.n_components, d))), (np.zeros(m), np.zeros((m, d)))
        if self.grad is not None:
            dw, db = (np.asarray(a, dtype=float) for a in self.grad(X))
            J = self.n_components
            if dw.shape != (m, J, d) or db.shape != (m, d):
                raise ValueError(
                    f"weights_grad(X) must return shapes ({m}, {J}, {d}) and ({m}, {d}); "
                    f"got {dw.shape} and {db.shape}"
                )
            check_finite(dw, "weights_grad(X)'s dg")
            check_finite(db, "weights_grad(X)'s db")
            return (self.weights(X), dw), (self.offset_at(X), db)
        h = FD_STEP * np.maximum(1.0, np.abs(X))  # (m, d)
        H = h[:, :, None] * np.eye(d)  # (m, d, d): row a of block i is h_ia e_a

        def values(sign: float) -> np.ndarray:  # (m (d + 1), J + 1)
            P = np.vstack([X, (X[:, None, :] + sign * H).reshape(m * d, d)])
            return np.column_stack([self.weights(P), self.offset_at(P)])

        try:
            V, sign = values(1.0), 1.0
        except ValueError:  # not finite a step ahead: the edge of the weights' domain
            V, sign = values(-1.0), -1.0
        base, ahead = V[:m], V[m:].reshape(m, d, -1)
        grad = np.moveaxis((ahead - base[:, None, :]) / (sign * h[:, :, None]), 1, 2)
        return (base[:, :-1], grad[:, :-1]), (base[:, -1], grad[:, -1])

    def weights_nd(self, X) -> np.ndarray:
        """``g_j(x)`` for ``X (..., d)`` with any leading axes: (..., J)."""
        X = np.asarray(X, dtype=float)
        lead = X.shape[:-1]
        G = self.weights(X.reshape(-1, X.shape[-1]))
        return np.asarray(G).reshape(lead + (self.n_components,))

    def combine(self, Y, X) -> np.ndarray:
        """The composed observation ``y = b(x) + Σ_j g_j(x) y_j`` for rows of ``Y (n, J)``: (n,)."""
        G = self.weights(X)
        return np.einsum("nj,nj->n", G, np.asarray(Y, dtype=float)) + self.offset_at(X)

    def _check_components(self, components: Sequence) -> None:
        if len(components) != self.n_components:
            raise ValueError(
                f"components has {len(components)} GP(s) but the composition has "
                f"{self.n_components} weight(s)"
            )

    def posterior(self, components: Sequence, Xnew) -> xr.Dataset:
        """Analytic composed posterior at ``Xnew (m, d)``.

        Independent components: ``b + Σ_j g_j μ_j`` and ``Σ_j g_j² σ_j²``; the views of
        one :class:`~pp_decomp.CorrelatedComponents`: per joint hyperparameter
        draw ``b + gᵀ μ_s`` and ``gᵀ Σ_s g``, mixed over the draws
        (:func:`~pp_decomp.composition.core.linear_moments`).

        Returns
        -------
        xarray.Dataset with ``mean(point)``, ``variance(point)``,
        ``component_mean(point, component)``, ``component_variance(point, component)``
        and ``weight(point, component)``.
        """
        self._check_components(components)
        Xnew = check_X(Xnew, "Xnew")
        G = self.weights(Xnew)
        joint = shared_joint(components)
        if joint is None:
            moments = [c.predict(Xnew) for c in components]
            mu = np.stack([m for m, _ in moments], axis=1)
            var = np.stack([v for _, v in moments], axis=1)
            mean, variance = linear_moments(mu, var, G)
        else:  # correlated components: per joint draw gᵀ μ_s and gᵀ Σ_s g, mixed
            mean_s, cov_s = joint.moments_per_draw(Xnew)
            mu, var = mixture_moments(mean_s, np.diagonal(cov_s, axis1=-2, axis2=-1))
            mean, variance = mixture_moments(*linear_moments(mean_s, cov_s, G))
        mean = mean + self.offset_at(Xnew)
        names = [getattr(c, "name", f"f{j}") for j, c in enumerate(components)]
        dims = ("point", "component")
        return xr.Dataset(
            {
                "mean": ("point", mean),
                "variance": ("point", variance),
                "component_mean": (dims, mu),
                "component_variance": (dims, var),
                "weight": (dims, np.array(G)),
            },
            coords={"component": names},
            attrs={"composition": "linear", "method": "analytic"},
        )

    def sample(self, components: Sequence, Xnew, n_samples: int, seed: SeedLike = None):
        """Monte Carlo samples of ``f = b + Σ g_j f_j`` at ``Xnew``: DataArray (sample, point).

        Component samples are independent across components (jointly sampled
        when they are the views of one :class:`~pp_decomp.CorrelatedComponents`)
        and span each component's hyperparameter posterior.
        """
        self._check_components(components)
        Xnew = check_X(Xnew, "Xnew")
        rng = as_generator(seed)
        G = self.weights(Xnew)
        n_samples = check_positive_int(n_samples, "n_samples")
        joint = shared_joint(components)
        if joint is not None:  # correlated components: sampled jointly at each point
            total = np.einsum("nmj,mj->nm", joint.sample(Xnew, n_samples, rng), G)
            return xr.DataArray(total + self.offset_at(Xnew), dims=("sample", "point"), name="f")
        total = np.broadcast_to(self.offset_at(Xnew), (n_samples, Xnew.shape[0])).copy()
        for j, c in enumerate(components):
            total += G[:, j] * c.sample(Xnew, n_samples, seed=rng)
        return xr.DataArray(total, dims=("sample", "point"), name="f")
