"""The shared mathematics of :mod:`pp_decomp.composition.core`, each function against
the formula written out in numpy, and its callers against it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from pp_decomp import ComponentGP, HyperDraws, LinearComposition
from pp_decomp.acquisition.surrogate import CopulaSurrogate, DecomposedSurrogate
from pp_decomp.composition.core import (
    coupled_normals,
    draw_samples,
    integrated_ucb,
    linear_moments,
    ucb,
    ucb_level,
    ucb_radius,
)
from pp_decomp.problem import Problem
from pp_decomp.space import Box

S, M, J = 4, 7, 3


def _correlation(rng, J: int) -> np.ndarray:
    A = rng.normal(size=(J, J + 2))
    cov = A @ A.T
    d = np.sqrt(np.diag(cov))
    return cov / np.outer(d, d)


@pytest.fixture
def moments(rng):
    mean = rng.normal(size=(S, M, J))
    var = rng.uniform(0.1, 2.0, size=(S, M, J))
    w = rng.normal(size=(M, J))
    b = rng.normal(size=M)
    return mean, var, w, b


def test_independent_components_add_their_weighted_variances(moments):
    mean, var, w, b = moments
    got_mean, got_var = linear_moments(mean, var, w, b)
    np.testing.assert_allclose(got_mean, (mean * w).sum(-1) + b, rtol=1e-14)
    np.testing.assert_allclose(got_var, (var * w**2).sum(-1), rtol=1e-14)
    # no offset, and any leading axes (the mixture moments (m, J) of one draw)
    np.testing.assert_allclose(linear_moments(mean[0], var[0], w)[0], (mean[0] * w).sum(-1))


def test_the_copula_weighs_each_pair_by_its_correlation(rng, moments):
    mean, var, w, b = moments
    C = _correlation(rng, J)
    got_mean, got_var = linear_moments(mean, var, w, b, corr=C)
    want = np.empty((S, M))
    for s in range(S):
        for i in range(M):
            d = w[i] * np.sqrt(var[s, i])
            want[s, i] = d @ C @ d
    np.testing.assert_allclose(got_var, want, rtol=1e-13)
    np.testing.assert_allclose(got_mean, (mean * w).sum(-1) + b, rtol=1e-14)
    # C = I is independence; positive correlations of same-signed terms add variance
    indep = linear_moments(mean, var, w, corr=np.eye(J))[1]
    np.testing.assert_allclose(indep, linear_moments(mean, var, w)[1], rtol=1e-14)
    ones = np.abs(w)
    assert np.all(
        linear_moments(mean, var, ones, corr=np.full((J, J), 0.5) + 0.5 * np.eye(J))[1]
        > linear_moments(mean, var, ones)[1]
    )


def test_a_full_covariance_gives_w_sigma_w(rng, moments):
    mean, _, w, b = moments
    A = rng.normal(size=(S, M, J, J))
    cov = A @ A.transpose(0, 1, 3, 2)
    got_mean, got_var = linear_moments(mean, cov, w, b)
    want = np.array([[w[i] @ cov[s, i] @ w[i] for i in range(M)] for s in range(S)])
    np.testing.assert_allclose(got_var, want, rtol=1e-13)
    np.testing.assert_allclose(got_mean, (mean * w).sum(-1) + b, rtol=1e-14)
    # a diagonal covariance is independence
    var = np.diagonal(cov, axis1=-2, axis2=-1)
    diag = var[..., None] * np.eye(J)
    np.testing.assert_allclose(linear_moments(mean, diag, w)[1], linear_moments(mean, var, w)[1])


def test_coupled_normals_have_the_correlation(rng):
    C = _correlation(rng, J)
    L = np.linalg.cholesky(C)
    z = rng.standard_normal((200_000, J))
    u = coupled_normals(z, L)
    np.testing.assert_array_equal(u, z @ L.T)
    np.testing.assert_allclose(np.cov(u.T), C, atol=0.01)


def test_draw_samples_pick_each_samples_draw(rng):
    per_draw = [(rng.normal(size=(s, M)), rng.uniform(0.1, 1.0, (s, M))) for s in (1, 3, 5)]
    n = 11
    draw_idx = rng.integers(0, 2**31 - 1, (n, J))
    for z in (rng.standard_normal((n, J)), rng.standard_normal((n, M, J))):
        got = draw_samples(per_draw, draw_idx, z)
        assert got.shape == (J, n, M)
        for j, (mean_s, var_s) in enumerate(per_draw):
            s = draw_idx[:, j] % len(mean_s)
            zj = z[:, j, None] if z.ndim == 2 else z[..., j]
            np.testing.assert_array_equal(got[j], mean_s[s] + np.sqrt(var_s[s]) * zj)
        # written into (n, m, J) storage through a transposed view: the same numbers
        out = np.empty((n, M, J))
        draw_samples(per_draw, draw_idx, z, out=out.transpose(2, 0, 1))
        np.testing.assert_array_equal(out, got.transpose(1, 2, 0))


def test_the_ucb_its_average_over_draws_and_its_level(rng):
    mean, var = rng.normal(size=(S, M)), rng.uniform(0.0, 2.0, (S, M))
    beta = 2.7
    want = mean + np.sqrt(beta) * np.sqrt(var)
    np.testing.assert_allclose(ucb(mean, beta, var=var), want, rtol=1e-14)
    np.testing.assert_allclose(ucb(mean, beta, sd=np.sqrt(var)), want, rtol=1e-14)
    np.testing.assert_allclose(integrated_ucb(mean, var, beta), want.mean(0), rtol=1e-14)
    np.testing.assert_array_equal(ucb_radius(np.array([-1e-17, 0.0]), beta), [0.0, 0.0])
    assert ucb_level(beta) == pytest.approx(norm.cdf(np.sqrt(beta)), rel=1e-15)
    with pytest.raises(TypeError, match="exactly one"):
        ucb(mean, beta)
    with pytest.raises(TypeError, match="exactly one"):
        ucb(mean, beta, var=var, sd=var)


def _fitted(rng, X: np.ndarray, n_draws: tuple[int, ...]) -> list[ComponentGP]:
    comps = []
    for j, s in enumerate(n_draws):
        draws = HyperDraws(
            ls=rng.uniform(0.2, 0.8, (s, X.shape[1])),
            eta=rng.uniform(0.5, 2.0, s),
            sigma=rng.uniform(0.01, 0.2, s),
        )
        y = np.sin(3 * X[:, 0] + j) + 0.1 * rng.normal(size=len(X))
        comps.append(ComponentGP("se", X.shape[1], name=f"f{j}").condition(X, y, draws))
    return comps


def test_the_composition_and_the_surrogates_agree_with_the_core(rng):
    X, Xnew = rng.uniform(size=(12, 2)), rng.uniform(size=(5, 2))
    comps = _fitted(rng, X, (3, 2, 1))

    def weights(Z):
        return np.stack([1.0 + Z[:, 0], -2.0 + 0 * Z[:, 1], 0.5 + Z[:, 1]], axis=1)

    def b(Z):
        return Z[:, 0] - Z[:, 1]

    lin = LinearComposition(weights, J, offset=b)
    post = lin.posterior(comps, Xnew)
    mu = np.stack([c.predict(Xnew)[0] for c in comps], 1)
    var = np.stack([c.predict(Xnew)[1] for c in comps], 1)
    G = weights(Xnew)
    mean, variance = linear_moments(mu, var, G, b(Xnew))
    np.testing.assert_allclose(post["mean"], mean, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(post["variance"], variance, rtol=1e-14)
    # the surrogate of the minimised problem: h = -f per joint draw, draws repeated cyclically
    problem = Problem(
        Box([0, 0], [1, 1]), n_components=J, weights=weights, offset=b, maximize=False
    )
    pairs = [c.predict_per_draw(Xnew) for c in comps]
    mean_s = np.stack([np.resize(m, (3, len(Xnew))) for m, _ in pairs], -1)
    var_s = np.stack([np.resize(v, (3, len(Xnew))) for _, v in pairs], -1)
    C = _correlation(rng, J)
    for surrogate, corr in (
        (DecomposedSurrogate(comps, problem), None),
        (CopulaSurrogate(comps, problem, C), C),
    ):
        got = surrogate.linear_per_draw(Xnew)
        want = linear_moments(mean_s, var_s, -G, -b(Xnew), corr)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
