"""Linear composition ``f(x) = Σ_j g_j(x) f_j(x)`` of independent component GPs (Wang Alg. 2)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import xarray as xr

from pp_decomp.components.correlated.view import shared_joint
from pp_decomp.components.posterior.batched import mixture_moments
from pp_decomp.composition.core import linear_moments
from pp_decomp.rng import SeedLike, as_generator
from pp_decomp.validate import check_finite, check_positive_int, check_X


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
    ):
        if offset is not None and not callable(offset):
            raise TypeError(f"offset must be a callable X (m, d) -> (m,); got {offset!r}")
        self.offset = offset
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
        b = self.offset
        offset = None if b is None else (lambda X: c * np.asarray(b(X), dtype=float))
        if self._const is not None:
            return LinearComposition(c * self._const, offset=offset)
        fn = self._fn
        return LinearComposition(
            lambda X: c * np.asarray(fn(X), dtype=float), self.n_components, offset=offset
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
