"""The batched numpy posterior against PyMC's own ``Marginal.conditional``."""

import numpy as np
import pymc as pm
import pytest

from pp_decomp import ComponentGP, HyperDraws
from pp_decomp.components import GPPosterior, mixture_moments
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.kernels import KERNELS, kernel_matrix, pymc_cov


def _pymc_conditional(kernel, X, y, ls, eta, sigma, alpha, Xnew):
    """Mean and covariance of PyMC's conditional distribution at ``Xnew``."""
    with pm.Model():
        gp = pm.gp.Marginal(cov_func=pymc_cov(kernel, X.shape[1], ls, eta, alpha))
        gp.marginal_likelihood("y", X=X, y=y, sigma=sigma)
        fnew = gp.conditional("fnew", Xnew)
    mvn = fnew.owner.inputs
    mu, cov = mvn[-2].eval(), mvn[-1].eval()
    return mu, cov - 1e-6 * np.eye(len(Xnew))  # conditional adds its jitter for sampling


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernels_match_pymc(kernel, rng):
    X1, X2 = rng.uniform(size=(7, 3)), rng.uniform(size=(5, 3))
    ls, eta, alpha = np.array([0.3, 0.7, 1.4]), 1.7, 2.5
    ours = kernel_matrix(kernel, X1, X2, ls[None], np.array([eta]), np.array([alpha]))[0]
    theirs = pymc_cov(kernel, 3, ls, eta, alpha)(X1, X2).eval()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kernel", KERNELS)
def test_batched_posterior_matches_pymc_conditional(kernel, rng):
    X = rng.uniform(size=(15, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    Xnew = rng.uniform(size=(9, 2))
    draws = HyperDraws(
        ls=[[0.3, 0.5], [0.8, 0.2], [0.25, 1.1]],
        eta=[1.0, 0.6, 1.8],
        sigma=[0.05, 0.2, 0.01],
        alpha=[2.0, 0.7, 5.0] if kernel == "rq" else None,
    )
    post = GPPosterior(kernel, X, y, draws)
    mean_s, var_s = post.per_draw(Xnew)
    mean_j, cov_j = post.joint_per_draw(Xnew)
    for s in range(draws.n_draws):
        alpha = None if draws.alpha is None else draws.alpha[s]
        mu, cov = _pymc_conditional(
            kernel, X, y, draws.ls[s], draws.eta[s], draws.sigma[s], alpha, Xnew
        )
        np.testing.assert_allclose(mean_s[s], mu, atol=1e-8, rtol=0)
        np.testing.assert_allclose(var_s[s], np.diag(cov), atol=1e-8, rtol=0)
        np.testing.assert_allclose(mean_j[s], mu, atol=1e-8, rtol=0)
        np.testing.assert_allclose(cov_j[s], cov, atol=1e-8, rtol=0)


def test_chunking_does_not_change_results(rng, monkeypatch):
    import pp_decomp.components.posterior.batched as posterior

    X, y, Xnew = rng.uniform(size=(12, 1)), rng.normal(size=12), rng.uniform(size=(50, 1))
    draws = HyperDraws(ls=rng.uniform(0.1, 1, (4, 1)), eta=np.ones(4), sigma=np.full(4, 0.1))
    whole = GPPosterior("matern32", X, y, draws).per_draw(Xnew)
    monkeypatch.setattr(posterior, "_MAX_BYTES", 8 * 4 * 12 * 3 * 7)  # 7 points per chunk
    chunked = GPPosterior("matern32", X, y, draws).per_draw(Xnew)
    np.testing.assert_allclose(whole[0], chunked[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(whole[1], chunked[1], rtol=1e-12, atol=1e-14)


def _random_posterior(kernel: str, rng, n: int, S: int) -> GPPosterior:
    """A posterior on ``n`` random points in 2-D with ``S`` random draws and a mean's variance."""
    draws = HyperDraws(
        ls=rng.uniform(0.3, 1.0, (S, 2)),
        eta=rng.uniform(0.5, 2.0, S),
        sigma=np.full(S, 0.1),
        alpha=rng.uniform(0.5, 3.0, S) if kernel == "rq" else None,
    )
    return GPPosterior(kernel, rng.uniform(size=(n, 2)), rng.normal(size=n), draws, mean_var=0.2)


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_draw_at_its_own_inputs_matches_that_draw_alone(kernel, rng, monkeypatch):
    import pp_decomp.components.posterior.batched as posterior

    post = _random_posterior(kernel, rng, n=11, S=5)
    idx = np.array([3, 0, 3, 4, 1, 1])  # a draw may serve several paths
    Xnew = rng.uniform(size=(len(idx), 9, 2))
    want = [post.per_draw_of(Xnew[j], [s]) for j, s in enumerate(idx)]
    monkeypatch.setattr(posterior, "_MAX_BYTES", 8 * 6 * 11 * 3 * 4)  # chunks of 4 inputs
    mean, var = post.paired_of(Xnew, idx)
    np.testing.assert_allclose(mean, np.concatenate([m for m, _ in want]), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(var, np.concatenate([v for _, v in want]), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_draws_gradient_at_its_own_inputs_is_that_of_its_moments(kernel, rng, monkeypatch):
    import pp_decomp.components.posterior.batched as posterior

    post = _random_posterior(kernel, rng, n=9, S=4)
    idx = np.array([2, 2, 0, 3])
    Xnew = rng.uniform(size=(4, 5, 2))
    monkeypatch.setattr(posterior, "_MAX_BYTES", 8 * 4 * 9 * 3 * 2)  # chunks of 2 inputs
    mean, var, dmean, dvar = post.paired_grad(Xnew, idx)
    np.testing.assert_allclose(mean, post.paired_of(Xnew, idx)[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(var, post.paired_of(Xnew, idx)[1], rtol=1e-8, atol=1e-12)
    h = 1e-6
    for a in range(2):
        e = np.zeros(2)
        e[a] = h
        up, down = post.paired_of(Xnew + e, idx), post.paired_of(Xnew - e, idx)
        np.testing.assert_allclose(dmean[..., a], (up[0] - down[0]) / (2 * h), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(dvar[..., a], (up[1] - down[1]) / (2 * h), rtol=1e-4, atol=1e-7)


def test_mixture_moments_match_samples(rng):
    X = rng.uniform(size=(10, 1))
    y = np.cos(6 * X[:, 0])
    draws = HyperDraws(ls=[[0.1], [0.5]], eta=[1.0, 2.0], sigma=[0.1, 0.3])
    gp = ComponentGP("se", 1, standardize=False).condition(X, y, draws)
    Xnew = np.array([[0.05], [0.5], [2.0]])
    mean, var = gp.predict(Xnew)
    mean_s, var_s = gp.predict_per_draw(Xnew)
    np.testing.assert_allclose((mean, var), mixture_moments(mean_s, var_s))
    # The mixture variance exceeds the average within-draw variance when the means differ.
    assert np.all(var >= var_s.mean(0) - 1e-15)
    for joint in (False, True):
        z = gp.sample(Xnew, 200_000, seed=1, joint=joint)
        se_mean = np.sqrt(var / z.shape[0])
        assert np.all(np.abs(z.mean(0) - mean) < 5 * se_mean)
        np.testing.assert_allclose(z.var(0), var, rtol=0.03)


def test_joint_samples_have_posterior_covariance(rng):
    X = rng.uniform(size=(6, 1))
    y = rng.normal(size=6)
    draws = HyperDraws(ls=[[0.3]], eta=[1.0], sigma=[0.1])
    gp = ComponentGP("se", 1, standardize=False).condition(X, y, draws)
    Xnew = np.array([[0.2], [0.25], [0.9]])
    z = gp.sample(Xnew, 100_000, seed=3, joint=True)
    _, cov = gp.posterior.joint_per_draw(Xnew)
    np.testing.assert_allclose(np.cov(z.T), cov[0], atol=0.01)


def test_pred_noise_adds_noise_variance(rng):
    X, y = rng.uniform(size=(8, 1)), rng.normal(size=8)
    gp = ComponentGP("se", 1, standardize=False).condition(X, y, HyperDraws([[0.3]], [1.0], [0.2]))
    _, v = gp.predict([[0.5]])
    _, vn = gp.predict([[0.5]], pred_noise=True)
    np.testing.assert_allclose(vn - v, 0.04 + JITTER)  # the likelihood's noise, jitter included


def test_joint_noisy_samples_count_the_jitter_once(rng):
    from pp_decomp.acquisition.surrogate import HallucinatedGP

    # σ² equal to the jitter, at the observed inputs: the latent variance is of the
    # same order, so a jitter counted twice shows as a third more variance
    X = rng.uniform(size=(6, 1))
    y = np.sin(5 * X[:, 0])
    draws = HyperDraws(ls=[[0.4]], eta=[1.0], sigma=[np.sqrt(JITTER)])
    post = GPPosterior("se", X, y, draws)
    var_f = post.per_draw(X[:2])[1][0]
    expected = var_f + post.noise_var[0]
    draws_y = post.sample(X[:2], 40_000, np.random.default_rng(0), joint=True, noise=True)
    np.testing.assert_allclose(draws_y.var(axis=0), expected, rtol=0.04)

    gp = ComponentGP("se", 1).condition(X, y, draws)
    hall = HallucinatedGP(gp, rng.uniform(size=(1, 1)))
    Xq = X[2:4]
    expected = hall.predict_per_draw(Xq, pred_noise=True)[1][0]
    samples = hall.sample(Xq, 40_000, seed=1, joint=True, pred_noise=True)
    np.testing.assert_allclose(samples.var(axis=0), expected, rtol=0.04)


def test_nearly_equal_weights_need_no_refit_whatever_their_k_hat():
    from pp_decomp.components.posterior.incremental import ess, pareto_k, weights_degraded
    from pp_decomp.loop import FastSettings

    s, S = FastSettings(), 32
    rng = np.random.default_rng(0)
    flat = [rng.normal(0.0, 1e-4, S) for _ in range(200)]
    k_max = s.k_threshold(S)
    noisy = np.mean([pareto_k(w) > k_max for w in flat])
    assert noisy > 0.15  # k̂ of so flat a tail: noise (about a quarter above the threshold)
    assert not any(weights_degraded(ess(w), pareto_k(w), S, s.ess_refit, k_max) for w in flat)
    heavy = np.r_[np.zeros(S - 1), 3.0]  # one draw 20 times the others: ESS about 8
    assert weights_degraded(ess(heavy), pareto_k(heavy), S, s.ess_refit, k_max)
    tail = np.log(rng.pareto(1.5, S) + 1.0)  # ESS above half, a heavy tail
    e = ess(tail)
    assert e >= s.ess_refit * S and pareto_k(tail) > k_max
    assert weights_degraded(e, pareto_k(tail), S, s.ess_refit, k_max) == (e < 0.95 * S)
