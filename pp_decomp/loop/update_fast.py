"""The fast full-Bayes path on finite candidate sets.

Two costs dominate a full-Bayes loop: re-sampling the hyperparameter posterior
of every component at every step, and predicting at every candidate for every
draw. Between full NUTS refits this updater keeps each GP's draws in an
:class:`~pp_decomp.components.incremental.IncrementalPosterior` (exact
reweighting and rank-one appends) and refits, warm-started at the current
posterior mean, once the effective sample size of the reweighted draws drops
below ``ess_min · S`` or the draws are ``max_age`` steps old. The
standardisation of ``y`` is frozen between refits so that reweighting is exact.
"""

from __future__ import annotations

import numpy as np

from pp_decomp._progress import status
from pp_decomp.components import ComponentGP, HyperDraws
from pp_decomp.components.incremental import IncrementalPosterior
from pp_decomp.components.posterior import DrawPosterior
from pp_decomp.loop.records import fit_summary
from pp_decomp.loop.updaters import Updater
from pp_decomp.rng import as_generator


class FastComponent:
    """One GP on the fast path: NUTS refits plus incremental reweighted updates."""

    def __init__(self, name, kernel, dim, priors, bounds, Xc, settings):
        self.gp = ComponentGP(
            kernel, dim, priors=priors, bounds=bounds, name=name, max_draws=2 * settings.draws
        )
        self.Xc_scaled = self.gp.scale_X(Xc)
        self.settings = settings
        self.post: IncrementalPosterior | None = None
        self.n_at_refit = 0

    def _standardise(self, y):
        return (np.asarray(y, dtype=float) - self.gp.y_mean) / self.gp.y_std

    def needs_refit(self, n: int) -> bool:
        """Whether a NUTS refit is due at ``n`` observations.

        True before the first fit, when the effective sample size of the reweighted
        draws falls below ``ess_min`` times their number, or when the draws are
        ``max_age`` observations old.
        """
        if self.post is None:
            return True
        s = self.settings
        return self.post.ess < s.ess_min * len(self.post.logw) or n - self.n_at_refit >= s.max_age

    def refit(self, X, y, rng) -> None:
        """Warm-started NUTS refit on ``(X, y)``; the new draws replace the reweighted ones."""
        init = self.gp.draws if self.post is not None else None
        s = self.settings
        self.gp.fit(X, y, "nuts", draws=s.draws, tune=s.tune, chains=2, seed=rng, init=init)
        self.rebuild(X, y, self.gp.draws)

    def rebuild(self, X, y, draws: HyperDraws, y_mean=None, y_std=None) -> None:
        """Posterior from ``draws`` on all of ``(X, y)``, standardisation frozen from now on."""
        if y_mean is not None:
            self.gp.y_mean, self.gp.y_std = y_mean, y_std
        self.gp.draws = draws  # the next refit warm-starts from these
        self.post = IncrementalPosterior(
            self.gp.kernel, self.gp.scale_X(X), self._standardise(y), draws, self.Xc_scaled
        )
        self.n_at_refit = len(X)

    def update(self, X, y) -> None:
        """Append the observations beyond those already conditioned on."""
        for i in range(len(self.post.X), len(X)):
            self.post.append(self.gp.scale_X(X[i : i + 1])[0], self._standardise(y[i]))

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance at every candidate, in the component's units, each ``(N,)``."""
        mean, var = self.post.moments()
        return self.gp.y_mean + self.gp.y_std * mean, self.gp.y_std**2 * var


class CandidatePosterior(DrawPosterior):
    """An equal-weight resample of a fast component's draws, at the candidates only.

    Rows of ``X`` passed in are candidates (original units), mapped back to their
    indices; per-draw arrays at every candidate are computed once.
    """

    def __init__(self, post: IncrementalPosterior, index: dict, draw_idx: np.ndarray):
        self.post, self.index, self.draw_idx = post, index, draw_idx
        self._mean, self._var = post.per_draw(draw_idx)
        self.noise_var = post.draws.sigma[draw_idx] ** 2
        self.n_draws = len(draw_idx)

    def rows(self, X) -> np.ndarray:
        """Candidate indices of the rows of ``X``."""
        X = np.ascontiguousarray(X, dtype=float)
        try:
            return np.fromiter((self.index[row.tobytes()] for row in X), int, len(X))
        except KeyError as err:
            raise ValueError("the fast path predicts only at the problem's candidates") from err

    def per_draw(self, Xnew):
        """Per-draw means and variances (standardised) at candidate rows ``Xnew``: (S, m)."""
        i = self.rows(Xnew)
        return self._mean[:, i], self._var[:, i]

    def joint_per_draw(self, Xnew, idx=None):
        """Per-draw joint means and covariances (standardised) at candidate rows ``Xnew``."""
        idx = np.arange(self.n_draws) if idx is None else np.asarray(idx)
        return self.post.joint(self.draw_idx[idx], self.rows(Xnew))


class FastGPView:
    """A :class:`FastComponent` at one step, through the GP model interface
    (:class:`~pp_decomp.components.protocol.GPModel`), in the component's units.

    :meth:`predict` gives the importance-weighted moments; :meth:`predict_per_draw`
    and :meth:`sample` an equal-weight resample of the draws (fixed for the step).
    """

    def __init__(self, comp: FastComponent, index: dict, rng: np.random.Generator):
        self.comp, self.name = comp, comp.gp.name
        self.posterior = CandidatePosterior(comp.post, index, comp.post.resample(rng))
        self._moments = comp.moments()
        self.y_mean, self.y_std = comp.gp.y_mean, comp.gp.y_std

    @property
    def n_draws(self) -> int:
        """Draws in the step's resample."""
        return self.posterior.n_draws

    def predict(self, X, pred_noise: bool = False):
        """Weighted mixture mean and variance at candidate rows ``X``: (m,) each."""
        i = self.posterior.rows(X)
        mean, var = self._moments[0][i], self._moments[1][i]
        if pred_noise:
            w = self.comp.post.weights
            var = var + self.y_std**2 * float(w @ self.comp.post.draws.sigma**2)
        return mean, var

    def predict_per_draw(self, X, pred_noise: bool = False):
        """Per-draw means and variances at candidate rows ``X``: (S, m) each."""
        mean, var = self.posterior.per_draw(X)
        if pred_noise:
            var = var + self.posterior.noise_var[:, None]
        return self.y_mean + self.y_std * mean, self.y_std**2 * var

    def sample(self, X, n_samples: int, seed=None, joint: bool = False, pred_noise: bool = False):
        """Posterior samples at candidate rows ``X``: (n_samples, m)."""
        X = np.asarray(X, dtype=float)
        z = self.posterior.sample(X, n_samples, as_generator(seed), joint, pred_noise)
        return self.y_mean + self.y_std * z


def candidate_index(Xc: np.ndarray) -> dict:
    """Row bytes → row index of the candidate set."""
    Xc = np.ascontiguousarray(Xc, dtype=float)
    return {row.tobytes(): i for i, row in enumerate(Xc)}


class FastUpdater(Updater):
    """The fast path as a model updater (see the module docstring)."""

    def __init__(self, settings, problem):
        self.settings, self.problem = settings, problem
        self.components: dict[str, FastComponent] = {}
        self.index = candidate_index(problem.domain.X)

    def _component(self, name: str) -> FastComponent:
        if name not in self.components:
            s, p = self.settings, self.problem
            self.components[name] = FastComponent(
                name, s.kernel, p.dim, s.priors, p.domain.bounds, p.domain.X, s.fast_settings
            )
        return self.components[name]

    def update(self, data, t, rng, rec):
        views, rec["ess"] = {}, {}
        for name, y in data.targets.items():
            fc = self._component(name)
            if fc.post is not None:
                fc.update(data.X, y)  # reweight first: a collapsed ESS refits this very step
            if fc.needs_refit(data.n):
                status(f"refitting {name} (NUTS)")
                fc.refit(data.X, y, rng)
                rec["refit"][name] = fit_summary(fc.gp)
            rec["ess"][name] = fc.post.ess
            views[name] = FastGPView(fc, self.index, rng)
        return views

    def state(self) -> dict:
        return {
            name: {
                "draws": fc.gp.draws.as_dict(),
                "y_mean": fc.gp.y_mean,
                "y_std": fc.gp.y_std,
                "n_at_refit": fc.n_at_refit,
                "n_conditioned": len(fc.post.X),
            }
            for name, fc in self.components.items()
        }

    def restore(self, state, data) -> None:
        for name, f in state.items():
            fc, y = self._component(name), data.targets[name]
            a, b = f["n_at_refit"], f["n_conditioned"]
            draws = HyperDraws.from_dict(f["draws"])
            fc.rebuild(data.X[:a], y[:a], draws, f["y_mean"], f["y_std"])
            fc.update(data.X[:b], y[:b])  # the same appends, in the same order, as the run
