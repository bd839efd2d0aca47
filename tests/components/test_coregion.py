"""Correlated components (intrinsic coregionalisation): the Kronecker-factored
density is the PyMC model's, the joint posterior a dense GP's on the stacked
outputs, and bad input is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp.components import Priors
from pp_decomp.components.correlated.density import (
    CoregionDensity,
    _correlation_terms,
    build_model,
    correlation_cholesky,
)
from pp_decomp.components.correlated.model import CorrelatedComponents
from pp_decomp.components.correlated.posterior import CoregionDraws
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.kernels import kernel_matrix

J, D = 3, 2


def _data(n=10, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, D))
    base = np.sin(4 * X[:, 0]) + X[:, 1] ** 2
    Y = np.stack([(1 + 0.3 * j) * base + 0.2 * j * X[:, 1] for j in range(J)], 1)
    Y = Y + 0.05 * rng.standard_normal(Y.shape)
    return X, (Y - Y.mean(0)) / Y.std(0)


def _point(seed=1):
    rng = np.random.default_rng(seed)
    return (
        rng.normal(0.0, 0.5, D + 2 * J + J * (J - 1) // 2)
        + np.r_[np.zeros(D), -2 * np.ones(J), np.zeros(J + 3)]
    )


@pytest.mark.parametrize(
    "kernel,priors", [("se", Priors()), ("matern52", Priors(ls_family="inverse-gamma"))]
)
def test_density_differences_and_gradient_match_the_pymc_model(kernel, priors):
    X, Y = _data()
    f = CoregionDensity(kernel, X, Y, priors, priors.mean_var)
    model = build_model(kernel, D, J, priors)
    model["X"].set_value(X)
    model["Y"].set_value(Y)
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")

    def pymc_at(z):
        zl, zs, ze, y = f.split(z)
        L = correlation_cholesky(np.ascontiguousarray(y), J)[0]
        point = {"ls_log__": zl, "sigma_log__": zs, "eta_log__": ze}
        name = [v.name for v in model.value_vars if v.name.startswith("C")][0]
        # PyMC's LKJCorr is the density of C's Cholesky factor: less its Jacobian
        to_corr = np.sum((J - np.arange(1, J + 1)) * np.log(np.diag(L)))
        return logp({**point, name: _lkj_value(model, name, L)}) - to_corr

    z0, z1 = _point(1), _point(2)
    # constants (the priors' and LKJ's normalisers) differ: compare differences
    assert f(z1)[0] - f(z0)[0] == pytest.approx(pymc_at(z1) - pymc_at(z0), rel=1e-6, abs=1e-6)
    value, grad = f(z0)
    h = 1e-5
    numeric = [(f(z0 + h * e)[0] - f(z0 - h * e)[0]) / (2 * h) for e in np.eye(len(z0))]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("jacobian", [False, True])
def test_the_correlations_derivatives_match_central_differences(jacobian):
    n_comp = 5
    y = np.random.default_rng(3).normal(0.0, 1.2, n_comp * (n_comp - 1) // 2)
    y[0] = 0.0  # tanh(y) = 0: the derivative of L_im must not divide by it
    y[1], y[2] = 4.0, -4.0  # the MAP search's walls, where tanh saturates

    def at(v):
        L, log_lkj, log_jac = correlation_cholesky(v, n_comp)
        return L @ L.T, log_lkj + (log_jac if jacobian else 0.0)

    C, value, dC, dv = _correlation_terms(y, n_comp, jacobian)
    np.testing.assert_allclose(C, at(y)[0], rtol=1e-14, atol=1e-15)
    assert value == pytest.approx(at(y)[1], rel=1e-14)
    h = 1e-6
    for k, e in enumerate(np.eye(len(y))):
        (C1, v1), (C0, v0) = at(y + h * e), at(y - h * e)
        np.testing.assert_allclose(dC[k], (C1 - C0) / (2 * h), atol=1e-7)
        assert dv[k] == pytest.approx((v1 - v0) / (2 * h), abs=1e-6)


def _lkj_value(model, name, value):
    """The value variable of ``C`` at ``value``, its Cholesky factor (the transform's inverse)."""
    rv = model.rvs_to_values
    var = next(r for r, v in rv.items() if v.name == name)
    transform = model.rvs_to_transforms[var]
    if transform is None:
        return value
    return transform.forward(value, *var.owner.inputs).eval()


def test_the_transform_gives_a_correlation_and_lkj_two_components():
    # J = 2: C's one correlation r has LKJ(η) density ∝ (1 - r²)^(η - 1)
    L, log_lkj, log_jac = correlation_cholesky(np.array([0.4]), 2)
    r = np.tanh(0.4)
    np.testing.assert_allclose(L @ L.T, [[1, r], [r, 1]])
    assert log_lkj == pytest.approx(np.log(1 - r**2))  # η = 2
    assert log_jac == pytest.approx(np.log(1 - r**2))  # dr/dy


def _dense_posterior(X, Y, Xs, draws):
    """The posterior of the stacked outputs by one dense (nJ × nJ) solve."""
    B = draws.covariance()[0]
    K = kernel_matrix("se", X, X, draws.ls, np.ones(1))[0] + 1.0
    Ks = kernel_matrix("se", Xs, X, draws.ls, np.ones(1))[0] + 1.0
    Kss = kernel_matrix("se", Xs, Xs, draws.ls, np.ones(1))[0] + 1.0
    n = len(X)
    cov = np.kron(B, K) + np.kron(np.diag(draws.sigma[0] ** 2 + JITTER), np.eye(n))
    cross = np.kron(B, Ks)  # (mJ, nJ)
    mean = cross @ np.linalg.solve(cov, Y.T.ravel())
    post = np.kron(B, Kss) - cross @ np.linalg.solve(cov, cross.T)
    return mean.reshape(J, -1).T, post


def test_joint_posterior_matches_a_dense_gp_on_the_stacked_outputs():
    X, Y = _data()
    Xs = np.random.default_rng(3).uniform(size=(4, D))
    C = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, -0.2], [0.3, -0.2, 1.0]])
    draws = CoregionDraws(
        ls=[[0.3, 0.5]], sigma=[[0.1, 0.05, 0.2]], eta=[[1.0, 1.2, 0.8]], corr=C[None]
    )
    m = CorrelatedComponents("se", D, ["a", "b", "c"], bounds=[[0, 0], [1, 1]])
    m.condition(X, Y, draws)
    mean_ref, cov_ref = _dense_posterior(X, (Y - m.y_mean) / m.y_std, Xs, draws)
    mean, cov = m.posterior.moments(Xs)
    np.testing.assert_allclose(mean[0], mean_ref, atol=1e-8)
    idx = np.arange(len(Xs))
    for i in range(J):
        for k in range(J):
            np.testing.assert_allclose(
                cov[0][:, i, k], cov_ref[i * 4 + idx, k * 4 + idx], atol=1e-8
            )
    joint_mean, joint_cov = m.posterior.joint(Xs, 0)
    np.testing.assert_allclose(joint_mean, mean_ref, atol=1e-8)
    np.testing.assert_allclose(joint_cov, cov_ref, atol=1e-8)


def test_map_fit_finds_the_correlation_and_covers_a_sum():
    X, Y = _data(n=25)
    m = CorrelatedComponents("se", D, ["a", "b", "c"], bounds=[[0, 0], [1, 1]]).fit(X, Y, seed=0)
    assert m.draws.corr[0, 0, 1] > 0.8  # the components are one function, scaled
    mean, cov = m.moments_per_draw(X[:3])
    assert np.all(np.linalg.eigvalsh(cov[0]) > -1e-10)
    samples = m.sample(X[:3], 4000, seed=1)
    np.testing.assert_allclose(
        np.cov(samples[:, 0, :].T), cov[0, 0], atol=0.2 * np.abs(cov[0, 0]).max()
    )


def test_nuts_fit_runs_and_reports_diagnostics():
    X, Y = _data(n=8)
    m = CorrelatedComponents("se", D, ["a", "b", "c"], bounds=[[0, 0], [1, 1]], max_draws=50)
    m.fit(X, Y, "nuts", draws=60, tune=60, chains=2, seed=0)
    assert m.n_draws == 50 and m.diagnostics.inference == "nuts"
    assert np.isfinite(m.diagnostics.rhat_max)


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="at least 2 components"):
        CorrelatedComponents("se", D, ["only"])
    with pytest.raises(ValueError, match="kernel"):
        CorrelatedComponents("rq", D, ["a", "b"])
    X, Y = _data()
    Y[3, 1] = np.nan  # component 1 not observed at row 3: no shared design
    m = CorrelatedComponents("se", D, ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"component 1 has no finite value at rows \[3\]"):
        m.fit(X, Y)
    with pytest.raises(ValueError, match=r"Y must be \(n, J\)"):
        m.fit(X, Y[:, :2])


def test_thinned_and_picked_draws_predict_as_the_full_model():
    X, Y = _data()
    C = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.1], [0.2, 0.1, 1.0]])
    draws = CoregionDraws(
        ls=[[0.3, 0.5], [0.4, 0.4], [0.6, 0.2]],
        sigma=np.full((3, J), 0.1),
        eta=np.ones((3, J)),
        corr=np.stack([C, np.eye(J), C]),
    )
    m = CorrelatedComponents("se", D, ["a", "b", "c"]).condition(X, Y, draws)
    Xs = X[:4] + 0.01
    mean, cov = m.moments_per_draw(Xs)
    thin_mean, thin_cov = m.thinned(2).moments_per_draw(Xs)
    np.testing.assert_allclose(thin_mean, mean[[0, 2]])
    np.testing.assert_allclose(thin_cov, cov[[0, 2]])
    z = np.random.default_rng(0).standard_normal((3, J))
    got = m.marginal_samples(Xs, np.array([2, 5, 0]), z)  # 5 is draw 2, modulo S
    root = np.linalg.cholesky(cov + 1e-6 * np.eye(J) * np.abs(cov).max())
    want = mean[[2, 2, 0]] + np.einsum("nmjk,nk->nmj", root[[2, 2, 0]], z)
    np.testing.assert_allclose(got, want, atol=1e-6 * np.abs(want).max())


def test_the_linear_composition_of_the_views_adds_their_covariance():
    from pp_decomp.composition import LinearComposition

    X, Y = _data()
    C = np.array([[1.0, 0.8, 0.7], [0.8, 1.0, 0.6], [0.7, 0.6, 1.0]])
    draws = CoregionDraws(ls=[[0.3, 0.5]], sigma=[[0.1] * J], eta=[[1.0] * J], corr=C[None])
    m = CorrelatedComponents("se", D, ["a", "b", "c"]).condition(X, Y, draws)
    Xs = np.random.default_rng(4).uniform(size=(6, D))
    lin = LinearComposition(np.array([1.0, 2.0, -0.5]))
    post = lin.posterior(m.components, Xs)
    _, cov = m.moments_per_draw(Xs)
    w = np.array([1.0, 2.0, -0.5])
    np.testing.assert_allclose(post["variance"], np.einsum("mjk,j,k->m", cov[0], w, w))
    assert np.all(post["variance"] > np.einsum("mj,j->m", np.diagonal(cov[0], 0, 1, 2), w**2))
    samples = lin.sample(m.components, Xs, 20000, seed=0).values
    np.testing.assert_allclose(samples.var(0), post["variance"], rtol=0.05)


def test_pathwise_joint_samples_have_the_dense_posterior_moments():
    X, Y = _data()
    C = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, -0.2], [0.3, -0.2, 1.0]])
    draws = CoregionDraws(
        ls=[[0.3, 0.5]], sigma=[[0.1, 0.05, 0.2]], eta=[[1.0, 1.2, 0.8]], corr=C[None]
    )
    m = CorrelatedComponents("se", D, ["a", "b", "c"], bounds=[[0, 0], [1, 1]])
    m.condition(X, Y, draws)
    Xs = np.random.default_rng(3).uniform(size=(3, D))
    mean, cov = m.posterior.joint(Xs, 0)
    rng = np.random.default_rng(1)
    F = np.stack([m.posterior.pathwise_sample(Xs, 0, rng).T.ravel() for _ in range(20000)])
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_allclose(F.mean(0), mean.T.ravel(), atol=4 * sd.max() / np.sqrt(20000))
    np.testing.assert_allclose(np.cov(F.T), cov, atol=0.05 * np.abs(cov).max())


class _Gaussian:
    """A stand-in density: the standard normal in ``k`` dimensions."""

    def __call__(self, z):
        return -0.5 * float(z @ z), -z


def test_chains_that_fail_their_checks_are_weighed_or_marked_not_converged():
    from pp_decomp.components.correlated.view import weigh_failed_chains
    from pp_decomp.components.diagnostics import FitDiagnostics

    rng = np.random.default_rng(0)
    failed = FitDiagnostics("nuts", 800, rhat_max=1.4, ess_bulk_min=30.0, ess_tail_min=30.0)
    chains = rng.standard_normal((2, 400, 3)) + np.array([0.3, -0.3])[:, None, None]
    draws, diag = weigh_failed_chains(_Gaussian(), chains, failed, seed=1)
    assert diag.reweighted and diag.converged and diag.pareto_k < 0.7
    assert draws.shape == (800, 3) and np.all(np.abs(draws.mean(0)) < 0.15)
    stuck = np.full((2, 400, 3), 5.0) + 1e-3 * rng.standard_normal((2, 400, 3))
    draws, diag = weigh_failed_chains(_Gaussian(), stuck, failed, seed=1)
    assert not diag.converged and not diag.reweighted and draws.shape == (800, 3)


def test_views_and_draws_that_would_combine_wrongly_are_refused():
    from pp_decomp.components.correlated.view import shared_joint
    from pp_decomp.composition import LinearComposition

    X, Y = _data()
    m = CorrelatedComponents("se", D, ["a", "b", "c"]).fit(X, Y, seed=0)
    a, b, c = m.components
    assert shared_joint([a, b, c]) is m
    lin = LinearComposition(np.ones(3))
    for wrong in ([b, a, c], [a, a, c]):
        with pytest.raises(ValueError, match="in its order"):
            lin.posterior(wrong, X[:2])
    with pytest.raises(ValueError, match="correlation matrices"):
        CoregionDraws(
            ls=[[0.3, 0.3]], sigma=[[0.1] * J], eta=[[1.0] * J], corr=[np.full((J, J), 1.5)]
        )
    with pytest.raises(ValueError, match="joint=True"):
        a.sample(X[:2], 2, seed=0, joint=True, pred_noise=True)
    with pytest.raises(ValueError, match="draws"):
        m.fit(X, Y, "nuts", draws=0)


def test_the_posterior_gives_each_draws_likelihood_and_subsets_keep_it():
    from scipy.stats import multivariate_normal

    X, Y = _data()
    C = np.array([[1.0, 0.6, 0.3], [0.6, 1.0, -0.2], [0.3, -0.2, 1.0]])
    draws = CoregionDraws(
        ls=[[0.3, 0.5], [0.6, 0.2]],
        sigma=[[0.1, 0.05, 0.2]] * 2,
        eta=[[1.0, 1.2, 0.8]] * 2,
        corr=np.stack([C, np.eye(J)]),
    )
    m = CorrelatedComponents("se", D, ["a", "b", "c"]).condition(X, Y, draws)
    Ys = (Y - m.y_mean) / m.y_std
    want = []
    for s in range(2):
        K = kernel_matrix("se", X, X, draws.ls[s : s + 1], np.ones(1))[0] + 1.0
        noise = np.diag(draws.sigma[s] ** 2 + JITTER)
        cov = np.kron(draws.covariance()[s], K) + np.kron(noise, np.eye(len(X)))
        want.append(multivariate_normal(np.zeros(len(cov)), cov).logpdf(Ys.T.ravel()))
    np.testing.assert_allclose(m.posterior.log_likelihoods(), want, rtol=1e-10)
    sub = m.subset([1, 1, 0])
    np.testing.assert_allclose(sub.posterior.log_likelihoods(), np.array(want)[[1, 1, 0]])
    np.testing.assert_array_equal(sub.draws.ls, draws.ls[[1, 1, 0]])


def test_bad_arguments_are_named_before_any_fit():
    X, Y = _data()
    m = CorrelatedComponents("se", D, ["a", "b", "c"])
    with pytest.raises(TypeError, match="priors must be a pp_decomp.Priors"):
        CorrelatedComponents("se", D, ["a", "b"], priors="default")
    with pytest.raises(TypeError, match="init must be a CoregionDraws"):
        m.fit(X, Y, init="previous")
    m.fit(X, Y, seed=0)
    with pytest.raises(ValueError, match="n_samples"):
        m.sample(X[:2], 0)
    with pytest.raises(ValueError, match="n_samples"):
        m.components[0].sample(X[:2], -1)
    with pytest.raises(ValueError, match="k must be"):
        m.thinned(0)
    with pytest.raises(ValueError, match=r"scale must be \(mean, sd\) of shape \(3,\)"):
        m.condition(X, Y, m.draws, scale=(np.zeros(2), np.ones(2)))
    with pytest.raises(ValueError, match="scale sd must be finite and > 0"):
        m.condition(X, Y, m.draws, scale=(np.zeros(J), np.zeros(J)))
