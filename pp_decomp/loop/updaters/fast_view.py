"""A fast-path GP at one step, through the GP model interface.

:meth:`FastGPView.predict` gives the importance-weighted mixture moments;
per-draw predictions and samples use an equal-weight systematic resample of
the draws, fixed for the step. On a candidate set the per-draw arrays at every
candidate are kept up to date by the appends and read by row; on a box they
are computed at the inputs asked for.

On a box, :meth:`FastGPView.thinned` gives the same GP on fewer of the step's
draws, for an acquisition maximiser's screening of many random inputs
(:func:`~pp_decomp.optim.maximizers.maximize_box`).
"""

from __future__ import annotations

import copy

import numpy as np

from pp_decomp.components.criticism import LooData
from pp_decomp.components.gp.scaling import gradients_in_units
from pp_decomp.components.posterior.batched import (
    JITTER,
    DrawPosterior,
    mixture_moments,
    mixture_moments_grad,
)
from pp_decomp.components.posterior.gradient import NoInputGradient
from pp_decomp.components.posterior.incremental import IncrementalPosterior, factors_within
from pp_decomp.validate import as_generator

# a screen's factors read by one evaluation, per GP: 16 draws up to 512 points,
# then fewer (8 at 724, 4 from 1000 on): reading the (n, n) factors is its cost
SCREEN_BYTES = 2**25
MIN_SCREEN = 4


class FastPosterior(DrawPosterior):
    """The resampled draws ``draw_idx`` of an incremental posterior (standardised units).

    ``scale_X`` maps inputs to the model scale; ``index`` (candidate row bytes to
    row number) is given on a candidate set, whose rows are then read, not computed.
    """

    def __init__(self, post: IncrementalPosterior, draw_idx, scale_X, index=None):
        self.post, self.draw_idx, self.scale_X, self.index = post, draw_idx, scale_X, index
        # the likelihood's noise, jitter included, as ComponentGP.noise_var
        self.noise_var = post.draws.sigma[draw_idx] ** 2 + JITTER
        self.n_draws = len(draw_idx)
        if index is not None:
            self._mean, self._var = post.per_draw(draw_idx)

    def rows(self, X) -> np.ndarray:
        """Candidate indices of the rows of ``X``."""
        X = np.ascontiguousarray(X, dtype=float)
        try:
            return np.fromiter((self.index[row.tobytes()] for row in X), int, len(X))
        except KeyError as err:
            raise ValueError("the fast path predicts only at the problem's candidates") from err

    def per_draw(self, Xnew):
        """Per-draw means and variances (standardised) at ``Xnew``: (S, m) each."""
        if self.index is not None:
            i = self.rows(Xnew)
            return self._mean[:, i], self._var[:, i]
        return self.post.at(self.scale_X(Xnew), self.draw_idx)

    def joint_per_draw(self, Xnew, idx=None):
        """Per-draw joint means and covariances (standardised) at ``Xnew``."""
        idx = np.arange(self.n_draws) if idx is None else np.asarray(idx)
        draws = self.draw_idx[idx]
        if self.index is not None:
            return self.post.joint(draws, rows=self.rows(Xnew))
        return self.post.joint(draws, Xs=self.scale_X(Xnew))


class FastGPView:
    """A fast-path GP at one step, in the component's units
    (:class:`~pp_decomp.components.gp.protocol.GPModel`)."""

    def __init__(self, comp, index, rng: np.random.Generator):
        self.comp, self.name = comp, comp.gp.name
        self.y_mean, self.y_std = comp.gp.y_mean, comp.gp.y_std
        self.posterior = FastPosterior(comp.post, comp.post.resample(rng), comp.gp.scale_X, index)
        self._moments = comp.post.moments() if index is not None else None
        self._weighted = True  # predict mixes all draws by their weights

    def thinned(self, k: int) -> FastGPView:
        """This GP on ``k`` of the step's resampled draws, evenly spaced (a coarser
        systematic resample), mixed with equal weights; itself on a candidate set,
        whose moments are read, not computed, or when it has at most ``k`` draws.
        On ``n`` observations ``k`` is at most ``SCREEN_BYTES / 8n²`` (the draws'
        factors one evaluation reads), and at least :data:`MIN_SCREEN`.

        Every mixture moment costs ``O(S n²)`` per input on a box: screening 1024
        random inputs with all 128 draws was 60% of a flu step's acquisition time.
        """
        S, n = self.n_draws, len(self.comp.post.X)
        k = min(k, max(MIN_SCREEN, factors_within(SCREEN_BYTES, n)))
        if self._moments is not None or S <= k:
            return self
        view = copy.copy(self)
        keep = self.posterior.draw_idx[((np.arange(k) + 0.5) * S / k).astype(int)]
        view.posterior = FastPosterior(self.comp.post, keep, self.comp.gp.scale_X)
        view._weighted = False
        return view

    def loo_data(self):
        """The step's factors, standardised data and draw weights
        (:class:`~pp_decomp.components.criticism.LooData`), for
        :func:`~pp_decomp.components.criticism.criticise`."""
        post = self.comp.post
        y = self.y_mean + self.y_std * post.y
        return LooData(post.L_inv, post.y, post.logw, -np.log(self.y_std), y)

    @property
    def n_draws(self) -> int:
        """Draws in the step's resample."""
        return self.posterior.n_draws

    def predict(self, X, pred_noise: bool = False):
        """Weighted mixture mean and variance at ``X``: (m,) each."""
        if self._moments is not None:
            i = self.posterior.rows(X)
            mean, var = self._moments[0][i], self._moments[1][i]
        elif not self._weighted:
            mean, var = mixture_moments(*self.posterior.per_draw(np.asarray(X, dtype=float)))
        else:
            mean, var = self.comp.post.moments(self.comp.gp.scale_X(np.asarray(X, dtype=float)))
        if pred_noise and self._weighted:
            var = var + float(self.comp.post.weights @ self.comp.post.draws.sigma**2) + JITTER
        elif pred_noise:
            var = var + float(self.posterior.noise_var.mean())
        return self.y_mean + self.y_std * mean, self.y_std**2 * var

    def predict_per_draw(self, X, pred_noise: bool = False):
        """Per-draw means and variances at ``X``: (S, m) each."""
        mean, var = self.posterior.per_draw(X)
        if pred_noise:
            var = var + self.posterior.noise_var[:, None]
        return self.y_mean + self.y_std * mean, self.y_std**2 * var

    def predict_draws(self, X: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict_per_draw` (latent ``f``) of the step's draws ``idx`` only
        (positions in its resample, as ``predict_per_draw``'s rows): (len(idx), m) each,
        the same numbers at the cost of their factors alone on a box."""
        idx = np.asarray(idx)
        if self.posterior.index is not None:
            mean, var = self.posterior.per_draw(X)
            mean, var = mean[idx], var[idx]
        else:
            gp = self.comp.gp
            draws = self.posterior.draw_idx[idx]
            mean, var = self.comp.post.at(gp.scale_X(np.asarray(X, dtype=float)), draws)
        return self.y_mean + self.y_std * mean, self.y_std**2 * var

    def predict_draws_grad(self, X: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, ...]:
        """:meth:`predict_per_draw_grad` of the step's draws ``idx`` only (as
        :meth:`predict_draws`)."""
        return self._grad_of(X, self.posterior.draw_idx[np.asarray(idx)])

    def predict_per_draw_grad(self, X) -> tuple[np.ndarray, ...]:
        """:meth:`predict_per_draw` (latent ``f``) and its gradients with respect to
        ``X (m, d)`` on a box: (S, m), (S, m), (S, m, d), (S, m, d). On a candidate
        set, whose rows are read, there is none (``NoInputGradient``)."""
        return self._grad_of(X, self.posterior.draw_idx)

    def predict_grad(self, X) -> tuple[np.ndarray, ...]:
        """:meth:`predict` (latent ``f``) and its gradients with respect to ``X (m, d)`` on a
        box: (m,), (m,), (m, d), (m, d); every draw mixed by its weight as :meth:`predict`
        mixes them (``NoInputGradient`` on a candidate set)."""
        if not self._weighted:
            return mixture_moments_grad(*self.predict_per_draw_grad(X))
        post = self.comp.post
        return mixture_moments_grad(*self._grad_of(X, np.arange(len(post.logw))), post.weights)

    def _grad_of(self, X, idx) -> tuple[np.ndarray, ...]:
        """Draws ``idx``'s moments at ``X`` and their gradients, in the component's units."""
        if self.posterior.index is not None:
            raise NoInputGradient("the fast path reads candidates' rows: no input gradient")
        gp = self.comp.gp
        moments = self.comp.post.at_grad(gp.scale_X(np.asarray(X, dtype=float)), idx)
        return gradients_in_units(moments, self.y_mean, self.y_std, gp.bounds)

    def joint_predict_per_draw(self, X, idx=None):
        """Per-draw joint means (S', m) and covariances (S', m, m) at ``X``."""
        mean, cov = self.posterior.joint_per_draw(np.asarray(X, dtype=float), idx)
        return self.y_mean + self.y_std * mean, self.y_std**2 * cov

    def sample(self, X, n_samples: int, seed=None, joint: bool = False, pred_noise: bool = False):
        """Posterior samples at ``X``: (n_samples, m)."""
        X = np.asarray(X, dtype=float)
        z = self.posterior.sample(X, n_samples, as_generator(seed), joint, pred_noise)
        return self.y_mean + self.y_std * z


def candidate_index(Xc: np.ndarray) -> dict:
    """Row bytes → row index of the candidate set."""
    Xc = np.ascontiguousarray(Xc, dtype=float)
    return {row.tobytes(): i for i, row in enumerate(Xc)}
