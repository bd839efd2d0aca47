"""The fast full-Bayes path carries a learned output warp: each draw's own warped
outputs in the incremental posterior, weights on the outputs' own scale (the warp's
log-slope included), and the warp moved exactly when the standardisation changes
(a warped run on the fast path: tests/loop/test_output_warping.py)."""

from __future__ import annotations

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.components import GPPosterior
from pp_decomp.components.gp.warped import draw_log_likelihood, simulate, warped_data
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.components.posterior.incremental import IncrementalPosterior
from pp_decomp.loop.updaters.fast import rescaled


def _warped_prior_draws(S=6, n=14, seed=3):
    """A warped GP on data of a warped GP, and ``S`` draws of its priors."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    y = simulate(X, rng, skew=2.0, tail=0.8, noise=0.1)
    gp = ppd.ComponentGP("matern32", warp="sinh-arcsinh")
    Xs, u = gp._set_data(X, y)
    return gp, Xs, u, gp.sample_prior(S, rng)


def test_appends_of_warped_outputs_match_a_fresh_posterior_and_weigh_on_the_outputs_scale():
    gp, Xs, u, draws = _warped_prior_draws()
    n0, Xc = 9, np.random.default_rng(0).uniform(size=(40, 2))
    Y0, _ = warped_data(u[:n0], draws)
    inc = IncrementalPosterior(gp.posterior_kernel, Xs[:n0], Y0, draws, Xc, gp.mean_var)
    for i in range(n0, len(u)):
        Yi, slope = warped_data(u[i : i + 1], draws)
        inc.append(Xs[i], Yi[:, 0], slope[:, 0])
    Y, _ = warped_data(u, draws)
    fresh = GPPosterior(gp.posterior_kernel, Xs, Y, draws, JITTER, gp.mean_var)
    mean_s, var_s = fresh.per_draw(Xc)
    np.testing.assert_allclose(inc.mean, mean_s, atol=1e-8)
    np.testing.assert_allclose(inc.at(Xc)[1], var_s, atol=1e-8)
    np.testing.assert_allclose(inc.y, Y)
    # the weights are p(u_10..14 | θ_s, ψ_s, u_1..9) on u's scale, Jacobian included
    expected = draw_log_likelihood(gp, Xs, u, draws) - draw_log_likelihood(
        gp, Xs[:n0], u[:n0], draws
    )
    np.testing.assert_allclose(inc.logw, expected, rtol=1e-8)
    # without the log-slopes the weights would differ: the test sees the Jacobian
    assert np.ptp(warped_data(u[n0:], draws)[1].sum(1)) > 1e-3


def test_a_draws_likelihood_is_the_gaussian_of_its_warped_outputs_times_the_warps_slopes():
    from scipy.stats import multivariate_normal

    from pp_decomp.components.gp.warped import warp_arguments, warp_forward

    gp, Xs, u, draws = _warped_prior_draws(S=3)
    out = draw_log_likelihood(gp, Xs, u, draws)
    post = GPPosterior(
        gp.posterior_kernel, Xs, warped_data(u, draws)[0], draws, JITTER, gp.mean_var
    )
    for s in range(3):
        args = [a[s] for a in warp_arguments(draws, slice(None), ndim=0)]
        z = warp_forward(u, *args)
        h = 1e-6
        slope = (warp_forward(u + h, *args) - warp_forward(u - h, *args)) / (2 * h)
        K = np.linalg.inv(post.L_inv[s]) @ np.linalg.inv(post.L_inv[s]).T
        want = multivariate_normal(np.zeros(len(u)), K).logpdf(z) + np.log(slope).sum()
        assert out[s] == pytest.approx(want, rel=1e-6)


def test_a_new_standardisation_moves_the_warp_exactly_and_nothing_else():
    gp, _, _, draws = _warped_prior_draws()
    y = np.random.default_rng(1).lognormal(size=20)
    old, new = (y[:12].mean(), y[:12].std()), (y.mean(), y.std())
    factor, shift = old[1] / new[1], (old[0] - new[0]) / new[1]
    moved = rescaled(draws, factor, gp, shift)
    z_old, slope_old = warped_data((y - old[0]) / old[1], draws)
    z_new, slope_new = warped_data((y - new[0]) / new[1], moved)
    np.testing.assert_allclose(z_new, z_old, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(slope_new, slope_old - np.log(factor), atol=1e-10)
    for name in ("ls", "eta", "sigma", "warp_skew", "warp_tail"):
        np.testing.assert_array_equal(getattr(moved, name), getattr(draws, name))
