import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pp_decomp import ComponentGP, EntireGP, HyperDraws, LinearComposition
from pp_decomp.kernels import KERNELS


def _components(rng, J, d, kinds, X, Y, standardize=False):
    comps = []
    for j in range(J):
        kernel = kinds[j % len(kinds)]
        draws = HyperDraws(
            ls=rng.uniform(0.05, 1.0, (1, d)),
            eta=rng.uniform(0.3, 2.0, 1),
            sigma=rng.uniform(0.01, 0.5, 1),
            alpha=rng.uniform(0.5, 4.0, 1) if kernel == "rq" else None,
        )
        gp = ComponentGP(kernel, d, standardize=standardize, name=f"f{j}")
        comps.append(gp.condition(X, Y[:, j], draws))
    return comps


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    J=st.integers(1, 5),
    d=st.integers(1, 3),
    n=st.integers(2, 25),
    kinds=st.lists(st.sampled_from(KERNELS), min_size=1, max_size=3),
    standardize=st.booleans(),
)
def test_theorem6_decomposed_variance_never_exceeds_entire(seed, J, d, n, kinds, standardize):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    Y = rng.normal(size=(n, J)) * rng.uniform(0.1, 5, J)
    w = rng.normal(size=(J, d + 1))
    comp = LinearComposition(lambda Z: np.c_[Z, np.ones(len(Z))] @ w.T, n_components=J)
    comps = _components(rng, J, d, kinds, X, Y, standardize)
    Xnew = np.vstack([rng.uniform(-0.2, 1.2, size=(40, d)), X])
    dec = comp.posterior(comps, Xnew)
    ent = EntireGP(comps, comp).condition(X, Y).to_dataset(Xnew)
    scale = 1.0 + ent["variance"].values.max()
    assert np.all(dec["variance"].values <= ent["variance"].values + 1e-9 * scale)


def test_entire_gp_equals_direct_formula(rng):
    J, n, d = 3, 12, 2
    X, Y = rng.uniform(size=(n, d)), rng.normal(size=(n, J))
    comps = _components(rng, J, d, ["se", "matern52", "rq"], X, Y, standardize=True)
    G = rng.normal(size=J)
    comp = LinearComposition(G)
    Xnew = rng.uniform(size=(5, d))
    mean, var = EntireGP(comps, comp).condition(X, Y).predict(Xnew)
    # Alg. 1 written out: one GP with kernel Σ g_j k_j g_j and prior mean Σ g_j m_j.
    K = sum(g**2 * c.prior_cov(X, X)[0] for g, c in zip(G, comps, strict=True))
    K += np.diag(np.full(n, sum(g**2 * c.noise_var[0] for g, c in zip(G, comps, strict=True))))
    Ks = sum(g**2 * c.prior_cov(X, Xnew)[0] for g, c in zip(G, comps, strict=True))
    Kss = sum(g**2 * c.prior_cov(Xnew, Xnew)[0] for g, c in zip(G, comps, strict=True))
    m0 = sum(g * c.y_mean for g, c in zip(G, comps, strict=True))
    y = Y @ G
    expected_mean = m0 + Ks.T @ np.linalg.solve(K, y - m0)
    expected_var = np.diag(Kss - Ks.T @ np.linalg.solve(K, Ks))
    np.testing.assert_allclose(mean, expected_mean, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(var, expected_var, rtol=1e-7, atol=1e-9)


def test_linear_composition_analytic_matches_monte_carlo(rng):
    J, n = 3, 10
    X, Y = rng.uniform(size=(n, 1)), rng.normal(size=(n, J))
    comps = []
    for j in range(J):  # several hyperparameter draws each: the mixture case
        draws = HyperDraws(
            ls=rng.uniform(0.1, 0.6, (4, 1)), eta=rng.uniform(0.5, 2, 4), sigma=np.full(4, 0.1)
        )
        comps.append(ComponentGP("se", 1, name=f"f{j}").condition(X, Y[:, j], draws))
    comp = LinearComposition(
        lambda Z: np.c_[np.ones(len(Z)), Z[:, 0], -2 * Z[:, 0]], n_components=J
    )
    Xnew = np.linspace(0, 1.2, 7)[:, None]
    ana = comp.posterior(comps, Xnew)
    mc = comp.sample(comps, Xnew, 200_000, seed=9)
    assert mc.dims == ("sample", "point")
    sd = np.sqrt(ana["variance"].values)
    assert np.all(np.abs(mc.mean("sample").values - ana["mean"].values) < 5 * sd / np.sqrt(2e5))
    np.testing.assert_allclose(mc.var("sample").values, ana["variance"].values, rtol=0.03)


def test_composition_dataset_has_named_dims(rng):
    X, Y = rng.uniform(size=(5, 1)), rng.normal(size=(5, 2))
    comps = _components(rng, 2, 1, ["se"], X, Y)
    ds = LinearComposition.ones(2).posterior(comps, rng.uniform(size=(4, 1)))
    assert ds["component_mean"].dims == ("point", "component")
    assert list(ds["component"].values) == ["f0", "f1"]
    np.testing.assert_allclose(ds["mean"], ds["component_mean"].sum("component"))
    with pytest.raises(ValueError, match=r"components has 2 GP\(s\) but the composition has 3"):
        LinearComposition.ones(3).posterior(comps, X)


def test_a_known_term_shifts_every_mean_and_no_variance(rng):
    """``f = b(x) + Σ g_j f_j``: the decomposed and entire posteriors, samples and the
    surrogate's per-draw moments move by ``b`` exactly; the variances do not."""
    from pp_decomp.acquisition import DecomposedSurrogate
    from pp_decomp.problem import Problem
    from pp_decomp.space import Box

    J, n, d = 2, 10, 2
    X, Y = rng.uniform(size=(n, d)), rng.normal(size=(n, J))
    comps = _components(rng, J, d, ["se", "matern52"], X, Y, standardize=True)

    def weights(Z):
        return np.stack([1.0 + Z[:, 0], -2.0 + 0 * Z[:, 1]], axis=1)

    def b(Z):
        return 10.0 * Z[:, 0] - Z[:, 1] ** 2

    plain, shifted = LinearComposition(weights, J), LinearComposition(weights, J, offset=b)
    Xnew = rng.uniform(size=(6, d))
    p0, p1 = plain.posterior(comps, Xnew), shifted.posterior(comps, Xnew)
    np.testing.assert_allclose(p1["mean"] - p0["mean"], b(Xnew), atol=1e-12)
    np.testing.assert_allclose(p1["variance"], p0["variance"], atol=0)
    s0, s1 = plain.sample(comps, Xnew, 4, seed=1), shifted.sample(comps, Xnew, 4, seed=1)
    np.testing.assert_allclose(s1 - s0, np.broadcast_to(b(Xnew), (4, 6)), atol=1e-12)
    np.testing.assert_allclose(shifted.combine(Y, X) - plain.combine(Y, X), b(X), atol=1e-12)
    # the entire GP sees y = b + Σ g_j y_j and knows b: the same posterior, shifted
    e0 = EntireGP(comps, plain).condition(X, Y).predict(Xnew)
    e1 = EntireGP(comps, shifted).condition(X, Y).predict(Xnew)
    np.testing.assert_allclose(e1[0] - e0[0], b(Xnew), atol=1e-9)
    np.testing.assert_allclose(e1[1], e0[1], rtol=1e-12)
    # what the strategies maximise: h = sign · f, minimised here
    box = Box(np.zeros(d), np.ones(d))
    probs = [
        Problem(box, n_components=J, weights=weights, offset=off, maximize=False)
        for off in (None, b)
    ]
    m0, v0 = DecomposedSurrogate(comps, probs[0]).linear_per_draw(Xnew)
    m1, v1 = DecomposedSurrogate(comps, probs[1]).linear_per_draw(Xnew)
    np.testing.assert_allclose(m1 - m0, -b(Xnew)[None], atol=1e-12)
    np.testing.assert_allclose(v1, v0, atol=0)
    F = rng.normal(size=(3, 6, J))
    shift = probs[1].compose(F, Xnew) - probs[0].compose(F, Xnew)
    np.testing.assert_allclose(shift, np.broadcast_to(b(Xnew), (3, 6)), atol=1e-12)
    with pytest.raises(ValueError, match="give weights too"):
        Problem(box, n_components=J, g=lambda F: F.sum(-1), offset=b)
    with pytest.raises(TypeError, match="offset must be a callable"):
        LinearComposition([1.0, 2.0], offset=3.0)
