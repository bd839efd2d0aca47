"""``CorrelatedComponents``: J components as one intrinsic-coregionalisation GP.

Independent component GPs understate the variance of a composition whose
components err together (the flu model's age groups). Observed at a shared
design, the components here share one kernel ``c_ℓ`` and are correlated by an
LKJ-distributed ``C`` (:mod:`pp_decomp.components.correlated.density` for the
model and its Kronecker-factored likelihood; the PyMC definition, a dense
``MvNormal`` of the stacked outputs, is
:func:`~pp_decomp.components.correlated.density.build_model`).
"""

from __future__ import annotations

import time

import numpy as np

from pp_decomp.choices import FITTED_INFERENCE
from pp_decomp.components.correlated.density import (
    CORRELATED_KERNELS,
    CoregionDensity,
    correlation_cholesky,
    n_correlations,
)
from pp_decomp.components.correlated.posterior import CoregionDraws, CoregionPosterior
from pp_decomp.components.correlated.view import CorrelatedComponent, coregion_nuts
from pp_decomp.components.diagnostics import FitDiagnostics, warn_if_bad
from pp_decomp.components.gp.priors import Priors, as_priors
from pp_decomp.components.gp.scaling import unit_scale
from pp_decomp.components.inference.compiled import SEARCH_BOX, map_search, penalty
from pp_decomp.components.posterior.batched import JITTER, mixture_moments
from pp_decomp.components.posterior.draws import evenly_spaced
from pp_decomp.kernels import DEFAULT_KERNEL, canonical_kernel
from pp_decomp.validate import (
    SeedLike,
    as_generator,
    check_bounds,
    check_choice,
    check_finite,
    check_positive_int,
    check_X,
)

CORRELATION_BOX = (-4.0, 4.0)  # partial correlations within ±tanh(4) = ±0.9993


def check_shared_design(X, Y, n_components: int) -> tuple[np.ndarray, np.ndarray]:
    """``Y (n, J)`` with every component observed at every row of ``X``, or a clear error."""
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2 or Y.shape != (X.shape[0], n_components):
        raise ValueError(
            f"Y must be (n, J) = ({X.shape[0]}, {n_components}), one column per component "
            f"observed at every row of X; got shape {Y.shape}"
        )
    missing = ~np.isfinite(Y)
    if missing.any():
        j = int(np.argmax(missing.any(0)))
        rows = np.flatnonzero(missing[:, j])[:5].tolist()
        raise ValueError(
            f"correlated components need every component observed at every input (a "
            f"shared design); component {j} has no finite value at rows {rows} of Y"
        )
    return X, Y


def log_point(draws: CoregionDraws) -> np.ndarray:
    """The mean of ``draws`` in :class:`CoregionDensity`'s log space (the
    correlations those of the draws' mean ``C``): a warm start."""
    C = draws.corr.mean(0)
    L = np.linalg.cholesky(C + 1e-9 * np.eye(len(C)))
    y = []
    for i in range(1, len(C)):  # invert correlation_cholesky row by row
        left = 1.0
        for j in range(i):
            y.append(np.arctanh(np.clip(L[i, j] / np.sqrt(left), -0.999, 0.999)))
            left -= L[i, j] ** 2
    logs = [np.log(a).mean(0) for a in (draws.ls, draws.sigma, draws.eta)]
    return np.concatenate([*logs, np.clip(y, *CORRELATION_BOX)])


def map_starts(priors: Priors, d: int, J: int, restarts: int, rng, init) -> list[np.ndarray]:
    """MAP's starts in :class:`CoregionDensity`'s log space: ``init``'s mean (a
    warm start) or the priors' centre, then ``restarts - 1`` draws of the priors
    (independent components as the centre, correlations near it)."""
    p = priors
    centre = np.concatenate(
        [
            np.full(d, p.ls_log_center(d)),
            np.full(J, p.sigma_log_center()),
            np.full(J, np.log(p.eta_alpha / p.eta_beta)),
            np.zeros(n_correlations(J)),
        ]
    )
    starts = [centre if init is None else log_point(init)]
    for _ in range(restarts - 1):
        z = centre.copy()
        z[:d] = p.sample_log_ls(rng, d)
        z[d : d + J] = p.sample_log_sigma(rng, J)
        z[d + 2 * J :] = rng.normal(0.0, 0.3, n_correlations(J))
        starts.append(z)
    return starts


def search_bounds(d: int, J: int) -> list[tuple[float, float]]:
    """MAP's search box in the log space
    (:data:`~pp_decomp.components.inference.compiled.SEARCH_BOX`)."""
    box = SEARCH_BOX
    return (
        [box["ls_log__"]] * d
        + [box["sigma_log__"]] * J
        + [box["eta_log__"]] * J
        + [CORRELATION_BOX] * n_correlations(J)
    )


def checked_structure(kernel: str, names) -> tuple[str, list[str]]:
    """The canonical kernel and the component names, or a ValueError naming the bad one."""
    canonical = canonical_kernel(kernel)
    if canonical not in CORRELATED_KERNELS:
        raise ValueError(
            f"correlated components need kernel in {CORRELATED_KERNELS}; got {kernel!r}"
        )
    names = [str(n) for n in names]
    if len(names) < 2:
        raise ValueError(
            f"correlated components need at least 2 components; got names={names!r} "
            "(J = 1 has nothing to correlate: use ComponentGP)"
        )
    return canonical, names


def checked_scale(scale, J: int) -> tuple[np.ndarray, np.ndarray]:
    """``scale = (mean, sd)``, each finite of shape (J,), ``sd > 0``, or a ValueError."""
    try:
        mean, sd = (np.asarray(v, dtype=float) for v in scale)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"scale must be (mean, sd), two arrays of shape ({J},); got {scale!r}"
        ) from err
    if mean.shape != (J,) or sd.shape != (J,):
        raise ValueError(f"scale must be (mean, sd) of shape ({J},); got {mean.shape}, {sd.shape}")
    check_finite(mean, "scale mean")
    if not np.all(np.isfinite(sd) & (sd > 0)):
        raise ValueError(f"scale sd must be finite and > 0; got {sd.tolist()}")
    return mean, sd


def draws_from_log(Z: np.ndarray, d: int, J: int) -> CoregionDraws:
    """Rows ``Z (S, k)`` of :class:`CoregionDensity`'s log space as draws."""
    corr = []
    for y in Z[:, d + 2 * J :]:
        L = correlation_cholesky(np.ascontiguousarray(y), J)[0]
        corr.append(L @ L.T)
    return CoregionDraws(
        ls=np.exp(Z[:, :d]),
        sigma=np.exp(Z[:, d : d + J]),
        eta=np.exp(Z[:, d + J : d + 2 * J]),
        corr=np.array(corr),
    )


class CorrelatedComponents:
    """``J ≥ 2`` components of one system as a multi-output GP with correlated outputs.

    ``vec(Y) ~ N(0, B ⊗ (c_ℓ(X, X) + m) + diag(σ² + jitter) ⊗ I)``,
    ``B = diag(η) C diag(η)``, ``C ~ LKJ(2)``; ``ℓ``, ``η_j`` and ``σ_j`` have the
    priors of :class:`~pp_decomp.Priors` (on unit-scaled inputs and each
    component's standardised outputs). With ``C = I`` and one kernel this is
    independent component GPs sharing their lengthscales.

    Parameters
    ----------
    kernel : {"se", "matern52", "matern32"}, default "matern32"
    input_dim : int
    names : sequence of str, one per component (at least two)
    priors, bounds, max_draws : as :class:`~pp_decomp.ComponentGP`

    Attributes
    ----------
    draws : CoregionDraws
    diagnostics : FitDiagnostics
    """

    label = "correlated components"

    def __init__(
        self,
        kernel: str = DEFAULT_KERNEL,
        input_dim: int = 1,
        names=("f0", "f1"),
        *,
        priors: Priors | None = None,
        bounds=None,
        max_draws: int = 256,
    ):
        self.kernel, self.names = checked_structure(kernel, names)
        self.input_dim = check_positive_int(input_dim, "input_dim")
        self.priors = as_priors(priors)
        self.bounds = None if bounds is None else check_bounds(bounds, self.input_dim)
        self.max_draws = check_positive_int(max_draws, "max_draws")
        self.draws: CoregionDraws | None = None
        self.log_draws: np.ndarray | None = None  # the draws as log-space rows (S, k)
        self.diagnostics: FitDiagnostics | None = None
        self.idata = None
        self._posterior: CoregionPosterior | None = None

    @property
    def n_components(self) -> int:
        """J, the number of components."""
        return len(self.names)

    # ------------------------------------------------------------------ data
    def _set_data(self, X, Y, scale=None):
        X = check_X(X, "X", input_dim=self.input_dim, min_rows=2)
        X, Y = check_shared_design(X, Y, self.n_components)
        self.X_train, self.Y_train = X, Y
        if scale is None:
            scale = (Y.mean(0), np.where(Y.std(0) > 0, Y.std(0), 1.0))
        self.y_mean, self.y_std = checked_scale(scale, self.n_components)
        return unit_scale(X, self.bounds), (Y - self.y_mean) / self.y_std

    @property
    def scale(self) -> tuple[np.ndarray, np.ndarray]:
        """The outputs' standardisation ``(mean, sd)`` per component: (J,), (J,)."""
        return self.y_mean, self.y_std

    def _density(self, Xs, Ys, jacobian: bool) -> CoregionDensity:
        p = self.priors
        return CoregionDensity(self.kernel, Xs, Ys, p, p.mean_var, jacobian=jacobian)

    def to_draws(self, Z: np.ndarray) -> CoregionDraws:
        """Flat log-space rows ``Z (S, k)`` (:class:`CoregionDensity`'s ``z``) as draws."""
        return draws_from_log(np.atleast_2d(Z), self.input_dim, self.n_components)

    # --------------------------------------------------------------- fitting
    def fit(
        self,
        X,
        Y,
        inference: str = "map",
        *,
        restarts: int = 3,
        draws: int = 300,
        tune: int = 300,
        chains: int = 2,
        seed: SeedLike = None,
        init: CoregionDraws | None = None,
    ) -> CorrelatedComponents:
        """Infer the hyperparameters from ``X (n, d)`` and ``Y (n, J)`` and condition on them.

        ``"map"``: the posterior mode by L-BFGS-B from ``restarts`` starts (the
        first at ``init``'s mean if given, else the priors' centre).
        ``"nuts"``: nutpie on the Kronecker-factored density (``chains`` ×
        ``draws`` after ``tune``), warm-started at ``init``.
        """
        check_choice(inference, "inference", FITTED_INFERENCE)
        if init is not None and not isinstance(init, CoregionDraws):
            raise TypeError(f"init must be a CoregionDraws or None; got {type(init).__name__}")
        restarts = check_positive_int(restarts, "restarts")
        for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
            check_positive_int(value, name)
        Xs, Ys = self._set_data(X, Y)
        rng = as_generator(seed)
        start = time.perf_counter()
        if inference == "map":
            objective = self._density(Xs, Ys, jacobian=False)

            def f(z):
                value, grad = objective(z)
                return penalty(z) if not np.isfinite(value) else (-value, -grad)

            d, J = self.input_dim, self.n_components
            starts = map_starts(self.priors, d, J, restarts, rng, init)
            # full memory: near-noise-free data leave the mode ill-conditioned, where 10
            # corrections crawl (docs/performance.md, "Correlated components under MAP")
            memory = max(10, objective.size)
            best = map_search(f, starts, search_bounds(d, J), self.label, memory=memory)
            self.log_draws = best.x[None]
            self.draws = self.to_draws(self.log_draws)
            self.idata = None
            self.diagnostics = FitDiagnostics("map", 1, seconds=time.perf_counter() - start)
        else:
            density = self._density(Xs, Ys, jacobian=True)
            z0 = map_starts(self.priors, self.input_dim, self.n_components, 1, rng, init)[0]
            self.idata, Z, self.diagnostics = coregion_nuts(
                density, z0, draws, tune, chains, int(rng.integers(2**31 - 1))
            )
            self.log_draws = Z[evenly_spaced(len(Z), self.max_draws)]
            self.draws = self.to_draws(self.log_draws)
            warn_if_bad(self.diagnostics, self.label)
        self._posterior = CoregionPosterior(self.kernel, Xs, Ys, self.draws, self.priors.mean_var)
        return self

    def condition(self, X, Y, draws: CoregionDraws, scale=None) -> CorrelatedComponents:
        """Condition on ``(X, Y)`` with given draws (no inference); ``scale``, the
        outputs' ``(mean, sd)`` the draws were fitted under, else ``Y``'s own."""
        if not isinstance(draws, CoregionDraws):
            raise TypeError(f"draws must be a CoregionDraws; got {type(draws).__name__}")
        Xs, Ys = self._set_data(X, Y, scale)
        if draws.ls.shape[1] != self.input_dim or draws.sigma.shape[1] != self.n_components:
            raise ValueError(
                f"draws are for d={draws.ls.shape[1]}, J={draws.sigma.shape[1]}; the model "
                f"has d={self.input_dim}, J={self.n_components}"
            )
        self.draws, self.idata = draws, None
        self.diagnostics = FitDiagnostics("fixed", draws.n_draws)
        self._posterior = CoregionPosterior(self.kernel, Xs, Ys, draws, self.priors.mean_var)
        return self

    # ------------------------------------------------------------ prediction
    @property
    def posterior(self) -> CoregionPosterior:
        if self._posterior is None:
            raise RuntimeError(f"{self.label} are not fitted; call fit() first")
        return self._posterior

    @property
    def n_draws(self) -> int:
        return self.posterior.n_draws

    def _Xs(self, Xnew) -> np.ndarray:
        return unit_scale(check_X(Xnew, "Xnew", input_dim=self.input_dim), self.bounds)

    def moments_per_draw(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means (S, m, J) and covariances across components (S, m, J, J)
        of ``f`` at ``Xnew``, in original units."""
        mean, cov = self.posterior.moments(self._Xs(Xnew))
        s = self.y_std
        return self.y_mean + s * mean, cov * s[:, None] * s[None, :]

    @property
    def noise_var(self) -> np.ndarray:
        """Observation-noise variance per draw and component, original units: (S, J)."""
        return self.posterior.noise * self.y_std**2

    def predict(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Mixture means and variances of every component: (m, J), (m, J)."""
        mean, cov = self.moments_per_draw(Xnew)
        return mixture_moments(mean, np.diagonal(cov, axis1=-2, axis2=-1))

    def thinned(self, k: int) -> CorrelatedComponents:
        """The same model on at most ``k`` of its draws, evenly spaced (itself if it has
        no more): what an acquisition's screening of many inputs uses."""
        S, k = self.n_draws, check_positive_int(k, "k")
        if S <= k:
            return self
        return self.subset(evenly_spaced(S, k))

    def marginal_samples(self, Xnew, draw_idx: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Samples of the components at each input, correlated across components: (n, m, J).

        ``draw_idx (n,)`` picks a hyperparameter draw per sample (modulo ``S``),
        ``z (n, J)`` standard normals, reused for every input (common random numbers).
        Only the draws picked are predicted.
        """
        used, inverse = np.unique(np.asarray(draw_idx) % self.n_draws, return_inverse=True)
        model = self if len(used) == self.n_draws else self.subset(used)
        mean, cov = model.moments_per_draw(Xnew)
        J = cov.shape[-1]
        root = np.linalg.cholesky(cov + JITTER * np.eye(J) * np.abs(cov).max())
        return mean[inverse] + np.einsum("nmjk,nk->nmj", root[inverse], z)

    def subset(self, idx) -> CorrelatedComponents:
        """The same model on the draws at positions ``idx``, nothing recomputed."""
        out = object.__new__(CorrelatedComponents)
        out.__dict__.update(self.__dict__)
        out.draws, out._posterior = self.draws.subset(idx), self.posterior.subset(idx)
        if self.log_draws is not None:
            out.log_draws = self.log_draws[idx]
        return out

    def sample(self, Xnew, n_samples: int, seed: SeedLike = None) -> np.ndarray:
        """Samples at each input of ``Xnew``, correlated across components: (n, m, J)."""
        n_samples = check_positive_int(n_samples, "n_samples")
        rng = as_generator(seed)
        idx = rng.integers(0, self.n_draws, n_samples)
        return self.marginal_samples(Xnew, idx, rng.standard_normal((n_samples, self.n_components)))

    def joint_sample(self, Xnew, rng: np.random.Generator) -> np.ndarray:
        """One sample of every component jointly over the rows of ``Xnew``: (m, J)."""
        s = int(rng.integers(self.n_draws))
        f = self.posterior.pathwise_sample(self._Xs(Xnew), s, rng)
        return self.y_mean + self.y_std * f

    @property
    def components(self) -> list[CorrelatedComponent]:
        """One view per component, usable wherever a ``ComponentGP`` is predicted from."""
        return [CorrelatedComponent(self, j) for j in range(self.n_components)]

    def __repr__(self) -> str:
        fitted = "unfitted" if self._posterior is None else f"S={self.n_draws}"
        return (
            f"CorrelatedComponents({self.names!r}, kernel={self.kernel!r}, "
            f"d={self.input_dim}, {fitted})"
        )
