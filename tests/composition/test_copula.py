"""The Gaussian copula over independent component GPs (:mod:`pp_decomp.composition.core`)."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp import ComponentGP, HyperDraws, Optimizer
from pp_decomp.acquisition.surrogate import CopulaSurrogate, decomposed_surrogate, hallucinate
from pp_decomp.apps.bench import BenchSpec
from pp_decomp.composition.core import residual_correlation
from pp_decomp.models import get_problem

DRAWS = HyperDraws(ls=[[0.3]], eta=[1.0], sigma=[0.05])


def _fitted(Y: np.ndarray, X: np.ndarray) -> list[ComponentGP]:
    return [
        ComponentGP("se", 1, standardize=False).condition(X, Y[:, j], DRAWS)
        for j in range(Y.shape[1])
    ]


def test_the_correlation_of_coregionalised_outputs_is_recovered():
    """Outputs ``Y = L_K Z L_Bᵀ`` (one kernel ``K = L_K L_Kᵀ``, iid normal ``Z``):
    whitened by ``K`` their rows are iid N(0, B), so ``C`` estimates ``B`` (shrunk
    towards ``I`` by ``1/(n+1)``)."""
    rng = np.random.default_rng(0)
    X = np.linspace(0, 1, 80)[:, None]
    B = np.array([[1.0, 0.9, -0.5], [0.9, 1.0, -0.3], [-0.5, -0.3, 1.0]])
    probe = ComponentGP("se", 1, standardize=False).condition(X, np.zeros(len(X)), DRAWS)
    L_K = np.linalg.inv(probe.posterior.L_inv[0])
    Y = L_K @ rng.standard_normal((len(X), 3)) @ np.linalg.cholesky(B).T
    C = residual_correlation(_fitted(Y, X))
    np.testing.assert_allclose(np.diag(C), 1.0)
    np.testing.assert_allclose(C, B, atol=0.2)
    assert np.all(np.linalg.eigvalsh(C) > 0)
    # two points: close to the identity, whatever the residuals
    C2 = residual_correlation(_fitted(Y[:2], X[:2]))
    assert np.all(np.abs(C2 - np.eye(3)) <= 2 / 3 + 1e-12)


def test_components_at_different_inputs_are_refused():
    X = np.linspace(0, 1, 8)[:, None]
    a = ComponentGP("se", 1, standardize=False).condition(X, np.sin(6 * X[:, 0]), DRAWS)
    b = ComponentGP("se", 1, standardize=False).condition(X[:7], np.cos(6 * X[:7, 0]), DRAWS)
    with pytest.raises(ValueError, match="same inputs"):
        residual_correlation([a, b])


@pytest.fixture(scope="module")
def run():
    p = get_problem("synthetic", seed=2, n_components=3, n_points=120)
    opt = Optimizer(p, "d-gpucb", n_init=5, seed=0, copula=True)
    opt.run(9)
    opt.ask()
    return p, opt


def test_samples_and_the_linear_variance_carry_the_correlation(run):
    p, opt = run
    comps = [opt.models[n] for n in p.component_names]
    s = decomposed_surrogate(comps, p, copula=True)
    assert isinstance(s, CopulaSurrogate)
    C = residual_correlation(comps)
    np.testing.assert_allclose(s.correlation, C)
    X = p.domain.X[:6]
    rng = np.random.default_rng(1)
    z = rng.standard_normal((40000, 3))
    F = s.marginal_samples(X, np.zeros((40000, 3), int), z)
    # each component keeps its marginal posterior ...
    mean, var = s.moments(X)
    np.testing.assert_allclose(F.mean(0), mean, atol=0.03 * np.sqrt(var).max())
    np.testing.assert_allclose(F.var(0), var, rtol=0.05)
    # ... and the components' errors are correlated by C at every input
    for i in range(len(X)):
        np.testing.assert_allclose(np.corrcoef(F[:, i].T), C, atol=0.03)
    # the linear composition's variance is Σ w_j w_k C_jk σ_j σ_k, that of the samples
    m_lin, v_lin = s.linear_per_draw(X)
    h = s.h(F, X)
    np.testing.assert_allclose(h.var(0), v_lin[0], rtol=0.05)
    indep = decomposed_surrogate(comps, p).linear_per_draw(X)[1]
    assert not np.allclose(v_lin, indep)
    # blocks, thinning and hallucination keep C
    blocks = np.concatenate(
        [b for _, b in s.marginal_sample_blocks(X, np.zeros((50, 3), int), z[:50], 2)], 1
    )
    np.testing.assert_allclose(blocks, s.marginal_samples(X, np.zeros((50, 3), int), z[:50]))
    h2 = hallucinate(s, p.domain.X[10:11])
    assert isinstance(h2, CopulaSurrogate) and h2.correlation is s.correlation


def test_joint_samples_are_correlated_across_components(run):
    p, opt = run
    s = decomposed_surrogate([opt.models[n] for n in p.component_names], p, copula=True)
    X = p.domain.X[:3]
    rng = np.random.default_rng(3)
    F = np.stack([s.joint_sample(X, rng) for _ in range(3000)])  # (n, m, J)
    _, var = s.moments(X)
    np.testing.assert_allclose(F.var(0), var, rtol=0.1)
    # correlated by C, attenuated where the components' posteriors differ in shape
    R, C = np.corrcoef(F[:, 0].T), s.correlation
    strong = np.abs(C) > 0.3
    assert np.all(np.sign(R[strong]) == np.sign(C[strong]))
    assert np.all(np.abs(R) <= np.abs(C) + 0.05)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(strategy="gp-ucb"), "strategy 'gp-ucb' models 'composed'"),
        (dict(correlated=True), "choose one"),
        (dict(copula="yes"), "copula must be True, False or None"),
    ],
)
def test_settings_that_cannot_take_a_copula_are_refused(kw, match):
    p = get_problem("synthetic", seed=2, n_components=3, n_points=120)
    strategy = kw.pop("strategy", "d-gpucb")
    kw.setdefault("copula", True)
    with pytest.raises((ValueError, TypeError), match=match):
        Optimizer(p, strategy, **kw)


def test_the_copula_is_on_by_default_wherever_it_applies():
    p = get_problem("synthetic", seed=2, n_components=3, n_points=120)
    on = {
        (s, inference, corr): Optimizer(
            p, s, inference=inference, correlated=corr
        ).settings.model.copula
        for s, inference, corr in [
            ("d-gpucb", "map", False),
            ("d-gpucb-mc", "nuts", False),
            ("d-gpucb", "map", True),  # one coregionalised GP correlates them already
            ("d-gpucb", "fixed", False),  # the papers' known, independent kernels
            ("d-gpucb-lipschitz", "map", False),  # bounds each marginal
            ("gp-ucb", "map", False),  # no components
        ]
    }
    assert list(on.values()) == [True, True, False, False, False, False], on
    one = get_problem("synthetic", seed=2, n_components=1, n_points=120)
    assert not Optimizer(one, "d-gpucb").settings.model.copula
    assert not Optimizer(p, "d-gpucb", copula=False).settings.model.copula
    tasks = BenchSpec(problems=["synthetic"], strategies=["d-gpucb", "gp-ucb"], trials=1).tasks()
    assert {t.strategy: t.copula for t in tasks} == {"d-gpucb": True, "gp-ucb": False}


def test_a_copula_run_resumes_with_the_same_choices(tmp_path):
    p = get_problem("synthetic", seed=4, n_components=3, n_points=120)
    full = Optimizer(p, "d-gpucb-mc", n_init=4, seed=1, copula=True).run(8)
    part = Optimizer(p, "d-gpucb-mc", n_init=4, seed=1, copula=True, checkpoint=tmp_path / "r.nc")
    part.run(6)
    resumed = Optimizer.resume(tmp_path / "r.nc", p)
    assert resumed.settings.model.copula
    np.testing.assert_array_equal(resumed.run(8)["x"].values, full["x"].values)


def test_calibration_scores_the_copula_samples(run):
    from pp_decomp.loop.step_bound import component_samples

    p, opt = run
    comps = [opt.models[n] for n in p.component_names]
    X = p.domain.X[:2]
    F = component_samples(comps, X, 30000, np.random.default_rng(0), copula=True)
    np.testing.assert_allclose(np.corrcoef(F[:, 1].T), residual_correlation(comps), atol=0.03)
    F0 = component_samples(comps, X, 30000, np.random.default_rng(0))
    assert np.abs(np.corrcoef(F0[:, 1].T) - np.eye(3)).max() < 0.03


def test_the_fast_full_bayes_path_reads_its_prediction_errors():
    """Fast-path views keep one-step-ahead errors in their incremental posterior."""
    from pp_decomp.loop import FastSettings

    p = get_problem("synthetic", seed=5, n_components=2, n_points=80)
    fs = FastSettings(draws=60, tune=80, chains=2, max_age=3, lag=2, kept_draws=32, prior_draws=0)
    opt = Optimizer(p, "d-gpucb", n_init=4, seed=0, inference="nuts", fast_settings=fs, copula=True)
    opt.run(7)
    opt.ask()
    comps = [opt.models[n] for n in p.component_names]
    assert type(comps[0]).__name__ == "FastGPView"
    C = residual_correlation(comps)
    assert C.shape == (2, 2) and np.all(np.linalg.eigvalsh(C) > 0)


def test_a_bound_of_the_marginals_refuses_the_copula():
    p = get_problem("synthetic", seed=2, n_components=3, n_points=120)
    for strategy in ("d-gpucb-lipschitz", "d-gpucb-local"):
        with pytest.raises(ValueError, match="marginal only"):
            Optimizer(p, strategy, copula=True)


def test_joint_samples_do_not_depend_on_the_order_of_the_inputs(run):
    p, opt = run
    s = decomposed_surrogate([opt.models[n] for n in p.component_names], p, copula=True)
    X = p.domain.X[:4]
    a = s.joint_sample(X, np.random.default_rng(7))
    b = s.joint_sample(X[::-1], np.random.default_rng(7))
    # the same normals give other values, but the same distribution: compare moments
    A = np.stack([s.joint_sample(X, np.random.default_rng(k)) for k in range(2000)])
    B = np.stack([s.joint_sample(X[::-1], np.random.default_rng(k)) for k in range(2000)])[:, ::-1]
    assert a.shape == b.shape == (4, 3)
    for i in range(4):
        np.testing.assert_allclose(np.corrcoef(A[:, i].T), np.corrcoef(B[:, i].T), atol=0.1)
