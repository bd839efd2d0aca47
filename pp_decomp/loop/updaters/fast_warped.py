"""A fast-path GP with a learned output warp, at one step.

The incremental posterior of a :class:`~pp_decomp.components.gp.warped.WarpedGP`
holds each draw's own warped outputs, ``z_s = w_s(u)``, and its weights count
each new observation on ``u``'s scale, the warp's log-slope included
(:meth:`~pp_decomp.components.posterior.incremental.IncrementalPosterior.append`).
Each draw is Gaussian on its warped scale, so this view gives what the warped GP
gives (:class:`~pp_decomp.components.gp.warped.WarpedGP`): the per-draw moments
there (``latent_per_draw``) and the map of each value to the outputs by its
draw's warp (``from_latent``), from the step's equal-weight resample of the
draws; its predictions and samples are in the outputs' units.

Example
-------
>>> import numpy as np
>>> import pp_decomp as ppd
>>> problem = ppd.Problem(
...     domain=ppd.Box([0.0], [1.0]),
...     components=lambda X: np.c_[np.exp(3 * X[:, 0]), np.sin(5 * X[:, 0])],
...     n_components=2,
...     g=lambda F: F[..., 0] - F[..., 1],
... )
>>> opt = ppd.Optimizer(problem, inference="nuts", output_warp="sinh-arcsinh", seed=0)
>>> opt.settings.inference.fast  # the warped GPs refit in the background
True
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components.criticism import LooData
from pp_decomp.components.gp.scaling import gradients_in_units
from pp_decomp.components.gp.warped import warped_data
from pp_decomp.components.posterior.gradient import NoInputGradient
from pp_decomp.loop.updaters.fast_view import FastGPView
from pp_decomp.validate import as_generator


class FastWarpedGPView(FastGPView):
    """:class:`~pp_decomp.loop.updaters.fast_view.FastGPView` of a warped GP: Gaussian
    per draw on the warped scale, mapped to the outputs by each draw's warp (module
    docstring). Draw positions ``s`` are those of the step's resample."""

    def _draws(self, s) -> np.ndarray:
        """The incremental posterior's draws at the resample's positions ``s``."""
        return self.posterior.draw_idx[np.asarray(s)]

    def latent_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw means and variances ``(S, m)`` on the warped scale at ``Xnew``."""
        mean, var = self.posterior.per_draw(np.asarray(Xnew, dtype=float))
        if pred_noise:
            var = var + self.posterior.noise_var[:, None]
        return mean, var

    def latent_per_draw_grad(self, Xnew) -> tuple[np.ndarray, ...]:
        """:meth:`latent_per_draw` and its gradients in ``Xnew (m, d)`` on a box."""
        if self.posterior.index is not None:
            raise NoInputGradient("the fast path reads candidates' rows: no input gradient")
        gp = self.comp.gp
        Xs = gp.scale_X(np.asarray(Xnew, dtype=float))
        moments = self.comp.post.at_grad(Xs, self.posterior.draw_idx)
        return gradients_in_units(moments, 0.0, 1.0, gp.bounds)

    def latent_joint_per_draw(self, Xnew, idx=None):
        """Per-draw joint means (S', m) and covariances (S', m, m) on the warped scale."""
        return self.posterior.joint_per_draw(np.asarray(Xnew, dtype=float), idx)

    def from_latent(self, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Warped-scale values ``Z`` in the outputs' units under the draws ``s``."""
        return self.comp.gp.from_latent(Z, self._draws(s))

    def from_latent_slope(self, Z: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``∂ from_latent / ∂Z`` under the draws ``s``."""
        return self.comp.gp.from_latent_slope(Z, self._draws(s))

    def output_moments(self, mean: np.ndarray, sd: np.ndarray):
        """Mean and variance ``(m,)`` in the outputs' units of the equal mixture of the
        step's draws, Gaussian ``(S, m)`` on the warped scale (the warped GP's quadrature)."""
        return self.comp.gp.output_moments(mean, sd, self.posterior.draw_idx)

    def predict(self, X, pred_noise: bool = False):
        """Mixture mean and variance at ``X`` in the outputs' units: (m,) each."""
        mean, var = self.latent_per_draw(X, pred_noise)
        return self.output_moments(mean, np.sqrt(var))

    def sample(self, X, n_samples: int, seed=None, joint: bool = False, pred_noise: bool = False):
        """Samples at ``X`` in the outputs' units, each mapped by its own draw's warp."""
        X = np.asarray(X, dtype=float)
        rng = as_generator(seed)
        z, s = self.posterior.sample_with_draws(X, n_samples, rng, joint, pred_noise)
        return self.from_latent(z, s)

    def loo_data(self) -> LooData:
        """The step's factors and each draw's warped data, with the Jacobian from the
        outputs to them (``log w_s'(u) - log s_y``), so that ``elpd_loo`` is on the
        outputs' scale, as the warped GP's."""
        post, u = self.comp.post, self.comp.u
        _, slope = warped_data(u, post.draws)
        y = self.y_mean + self.y_std * u
        return LooData(post.L_inv, post.y, post.logw, slope - np.log(self.y_std), y)

    def quantiles(self, Xnew, q, pred_noise: bool = False) -> np.ndarray:
        """The ``q``-quantiles of the step's equal mixture at ``Xnew`` in the outputs'
        units, exact through each draw's warp: (len(q), m)."""
        mean, var = self.latent_per_draw(Xnew, pred_noise)
        return self.comp.gp.mixture_quantiles(mean, np.sqrt(var), q, self.posterior.draw_idx)

    def _latent_only(self, *args, **kwargs):
        """Refused: a warped GP's per-draw Gaussian moments are on its warped scale
        (``latent_per_draw``); its outputs' are ``predict``'s, ``quantiles``' or
        ``sample``'s."""
        raise NotImplementedError(self.comp.gp._latent_only)

    predict_per_draw = predict_draws = predict_draws_grad = _latent_only
    predict_per_draw_grad = predict_grad = joint_predict_per_draw = _latent_only
