"""Additive GPs, structure learning and the additive strategies."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pymc as pm
import pytest
from scipy import optimize, stats

from pp_decomp import Optimizer
from pp_decomp.additive import (
    AdditiveDraws,
    AdditiveGP,
    AdditivePosterior,
    AdditiveSettings,
    add_gp_ucb_maximize,
    correct_connections,
    correct_separations,
    g_add_gp_ucb_maximize,
    gibbs_structure,
    graph_groups,
    learn_decomposition,
    log_marginal_likelihood,
)
from pp_decomp.additive.objective import MapObjective
from pp_decomp.additive.posterior import group_cov, group_masks
from pp_decomp.additive.pymc_model import MaskedAdditiveExpQuad
from pp_decomp.additive.structure import swap_climb
from pp_decomp.components import Priors
from pp_decomp.models import get_problem
from pp_decomp.space import Box

D = 4
GROUPS = [(0, 1), (1, 2), (3,)]  # overlapping: dimension 1 is in two groups
LS = np.array([0.3, 0.5, 0.4, 0.7])
ETA = np.array([1.0, 0.7, 0.4])


def _pymc_sum(X1, X2=None):
    """The summed kernel built from PyMC's own ExpQuad with active_dims."""
    return sum(
        e**2 * pm.gp.cov.ExpQuad(D, ls=LS[list(g)], active_dims=list(g)).full(X1, X2).eval()
        for g, e in zip(GROUPS, ETA, strict=True)
    )


def _gp_sample(X, groups, ls, rng, noise=0.05):
    W = group_masks(groups, X.shape[1])
    eta = np.full((1, len(groups)), np.sqrt(1 / len(groups)))
    K = group_cov(X, X, np.full((1, X.shape[1]), ls), eta, W)[0].sum(0)
    f = np.linalg.cholesky(K + 1e-8 * np.eye(len(X))) @ rng.standard_normal(len(X))
    y = f + noise * rng.standard_normal(len(X))
    return (y - y.mean()) / y.std()


def test_masked_kernel_equals_pymc_sum_of_active_dims_kernels(rng):
    X = rng.uniform(size=(12, D))
    K = MaskedAdditiveExpQuad(D, LS, ETA, group_masks(GROUPS, D)).full(X).eval()
    np.testing.assert_allclose(K, _pymc_sum(X), atol=1e-12)


def test_additive_posterior_equals_full_gp_with_summed_kernel(rng):
    X, Xn = rng.uniform(size=(30, D)), rng.uniform(size=(9, D))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + np.cos(4 * X[:, 2]) + X[:, 3] ** 2
    post = AdditivePosterior(X, y, group_masks(GROUPS, D), LS[None], ETA[None], [0.1])
    A = _pymc_sum(X) + (0.1**2 + 1e-6) * np.eye(30)
    Ks = _pymc_sum(Xn, X)
    mean = Ks @ np.linalg.solve(A, y)
    cov = _pymc_sum(Xn) - Ks @ np.linalg.solve(A, Ks.T)
    m, v = post.moments(Xn)
    np.testing.assert_allclose(m, mean, atol=1e-10)
    np.testing.assert_allclose(v, np.diag(cov), atol=1e-10)
    # group posteriors share K⁻¹ and add up to the full mean (Kandasamy eq. 5)
    gm, gv = post.group_moments(Xn)
    np.testing.assert_allclose(gm.sum(0), mean, atol=1e-10)
    for j, g in enumerate(GROUPS):
        kj = pm.gp.cov.ExpQuad(D, ls=LS[list(g)], active_dims=list(g))
        kx = ETA[j] ** 2 * kj.full(Xn, X).eval()
        explained = np.einsum("ma,am->m", kx, np.linalg.solve(A, kx.T))
        np.testing.assert_allclose(gv[j], ETA[j] ** 2 - explained, atol=1e-10)
    assert post.log_marginal_likelihood[0] == pytest.approx(
        stats.multivariate_normal(np.zeros(30), A).logpdf(y)
    )


def test_map_objective_gradient_and_model(rng):
    X, y = rng.uniform(size=(20, D)), rng.standard_normal(20)
    W, p = group_masks(GROUPS, D), Priors()
    obj = MapObjective(X, y, W, p)
    z = rng.normal(-1, 0.5, D + len(GROUPS) + 1)
    assert optimize.check_grad(lambda z: obj(z)[0], lambda z: obj(z)[1], z) < 1e-4

    def scipy_logpost(z):  # the PyMC model's density (up to constants), term by term
        ls, eta, s = np.exp(z[:D]), np.exp(z[D:-1]), np.exp(z[-1])
        K = group_cov(X, X, ls[None], eta[None], W)[0].sum(0) + (s**2 + 1e-6) * np.eye(20)
        return (
            stats.multivariate_normal(np.zeros(20), K).logpdf(y)
            + stats.invgamma(p.ls_alpha, scale=p.ls_beta).logpdf(ls).sum()
            + stats.gamma(p.eta_alpha, scale=1 / (p.eta_beta * np.sqrt(3))).logpdf(eta).sum()
            + stats.gamma(p.sigma_alpha, scale=1 / p.sigma_beta).logpdf(s)
        )

    z2 = z + rng.normal(0, 0.3, z.size)
    assert -(obj(z)[0] - obj(z2)[0]) == pytest.approx(scipy_logpost(z) - scipy_logpost(z2))


def test_shared_map_objective_counts_each_prior_once(rng):
    X, y = rng.uniform(size=(20, D)), rng.standard_normal(20)
    W, p = group_masks(GROUPS, D), Priors()
    obj = MapObjective(X, y, W, p, shared=True)
    z = rng.normal(-1, 0.5, 3)
    assert optimize.check_grad(lambda z: obj(z)[0], lambda z: obj(z)[1], z) < 1e-4

    def scipy_logpost(z):  # one ℓ and one η, each with its prior once
        ls, eta, s = np.exp(z)
        L, E = np.full((1, D), ls), np.full((1, len(GROUPS)), eta)
        K = group_cov(X, X, L, E, W)[0].sum(0) + (s**2 + 1e-6) * np.eye(20)
        return (
            stats.multivariate_normal(np.zeros(20), K).logpdf(y)
            + stats.invgamma(p.ls_alpha, scale=p.ls_beta).logpdf(ls)
            + stats.gamma(p.eta_alpha, scale=1 / (p.eta_beta * np.sqrt(3))).logpdf(eta)
            + stats.gamma(p.sigma_alpha, scale=1 / p.sigma_beta).logpdf(s)
        )

    z2 = z + rng.normal(0, 0.3, 3)
    assert -(obj(z)[0] - obj(z2)[0]) == pytest.approx(scipy_logpost(z) - scipy_logpost(z2))


def test_shared_map_fit_ties_every_lengthscale_and_amplitude(rng):
    X = rng.uniform(size=(30, 3))
    y = np.sin(4 * X[:, 0]) + np.cos(3 * X[:, 1]) + 0.01 * rng.standard_normal(30)
    gp = AdditiveGP([(0,), (1, 2)], 3, shared=True).fit(X, y, "map", seed=0)
    assert gp.draws.ls.shape == (1, 3) and gp.draws.eta.shape == (1, 2)
    assert np.ptp(gp.draws.ls) == 0 and np.ptp(gp.draws.eta) == 0
    untied = AdditiveGP([(0,), (1, 2)], 3).fit(X, y, "map", seed=0)
    assert np.ptp(untied.draws.ls) > 0  # the flag, not the data, ties them


def test_map_fit_finds_the_active_group(rng):
    X = rng.uniform(size=(40, 3))
    y = np.sin(6 * X[:, 0]) + 0.01 * rng.standard_normal(40)  # only group (0,) matters
    gp = AdditiveGP([(0,), (1, 2)], 3, name="a").fit(X, y, "map", seed=0)
    assert gp.draws.eta[0, 0] > 5 * gp.draws.eta[0, 1]
    m, _ = gp.predict(X)
    assert np.sqrt(np.mean((m - y) ** 2)) < 0.05


def _tiny_nuts_fit(gp, rng, **kw):
    """``gp`` fitted by a tiny NUTS run on 15 points of a 2-D additive function."""
    X = rng.uniform(size=(15, 2))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gp.fit(X, y, "nuts", draws=60, tune=60, **kw), X, y


@pytest.mark.slow
def test_nuts_fit_tiny(rng):
    gp, X, _ = _tiny_nuts_fit(AdditiveGP([(0,), (1,)], 2), rng, seed=0)
    assert gp.draws.ls.shape[1] == 2 and gp.draws.eta.shape[1] == 2
    assert gp.diagnostics.inference == "nuts"
    assert np.all(np.isfinite(gp.predict(X)[1]))


@pytest.mark.slow
def test_nuts_fit_tiny_shared(rng):
    gp, X, y = _tiny_nuts_fit(AdditiveGP([(0,), (1,)], 2, shared=True), rng, seed=0, repairs=0)
    assert gp.draws.ls.shape[1] == 2 and np.all(gp.draws.ls[:, 0] == gp.draws.ls[:, 1])
    assert np.all(gp.draws.eta[:, 0] == gp.draws.eta[:, 1])
    assert np.unique(gp.draws.ls[:, 0]).size > 10  # a posterior, not a point
    # warm start from the previous draws goes through the shared parameterisation
    gp.fit(X, y, "nuts", draws=60, tune=60, seed=1, repairs=0, init=gp.draws)
    assert gp.diagnostics.inference == "nuts"


@pytest.mark.slow
def test_nuts_chains_that_fail_their_checks_are_weighed_by_the_additive_density(rng):
    """Chains far too short to meet the ESS threshold are weighed by importance
    sampling from a mixture fitted to them (the component GPs' first repair),
    on the additive model's own density; the weighed draws keep the shared
    parameterisation."""
    from pp_decomp.components.inference.nuts import REWEIGHTED

    gp = AdditiveGP([(0,), (1,)], 2, shared=True)
    gp, X, y = _tiny_nuts_fit(gp, rng, seed=0, chains=4, repairs=1)
    d = gp.diagnostics
    assert d.reweighted and d.converged and d.attempts == 1
    assert d.ess_bulk_min >= 400 and d.pareto_k <= 0.7
    assert REWEIGHTED in gp.idata.children
    assert np.all(gp.draws.ls[:, 0] == gp.draws.ls[:, 1])
    assert np.unique(gp.draws.ls[:, 0]).size > 10


def test_validation():
    with pytest.raises(ValueError, match="outside"):
        AdditiveGP([(0, 5)], 3)
    with pytest.raises(ValueError, match="empty"):
        AdditiveGP([()], 3)
    with pytest.raises(ValueError, match="shared_hyperparameters must be True or False"):
        AdditiveSettings(shared_hyperparameters="yes")
    with pytest.raises(ValueError, match="edge_prob"):
        AdditiveSettings(edge_prob=1.0)
    with pytest.raises(ValueError, match="ls_grid"):
        AdditiveSettings(ls_grid=(0.1, -1.0))
    gp = AdditiveGP([(0, 1), (1, 2)], 3).condition(
        np.random.default_rng(0).uniform(size=(5, 3)),
        np.arange(5.0),
        AdditiveDraws([[0.3] * 3], [[1.0, 1.0]], [0.1]),
    )
    with pytest.raises(ValueError, match="disjoint"):
        add_gp_ucb_maximize(gp, 1.0, Box(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="linear constraints"):
        g_add_gp_ucb_maximize(gp, 1.0, Box(np.zeros(3), np.ones(3), A=[[1, 1, 1]], b=[2]))
    with pytest.raises(ValueError, match="beta must be finite"):
        g_add_gp_ucb_maximize(gp, np.nan, Box(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="beta must be >= 0"):
        g_add_gp_ucb_maximize(gp, -1.0, Box(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="groups must index"):
        gp.predict_groups(np.zeros((1, 3)), groups=[2])
    with pytest.raises(ValueError, match="bounds must be finite with upper > lower"):
        AdditiveGP([(0,)], 2, bounds=[[0, 1], [1, 0]])


def test_structure_learning_validates_its_inputs(rng):
    X, y = rng.uniform(size=(10, 3)), rng.standard_normal(10)
    bad = X.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="X must be finite"):
        gibbs_structure(bad, y, n_evals=5)
    with pytest.raises(ValueError, match=r"y has 5 value\(s\) but X has 10 row\(s\)"):
        learn_decomposition(X, y[:5], 2, [0.3] * 3, 0.1)
    with pytest.raises(ValueError, match="ls must have shape"):
        log_marginal_likelihood(X, y, [(0, 1)], [0.3, 0.3], 0.1)
    with pytest.raises(ValueError, match="groups must be non-empty groups of dimensions"):
        log_marginal_likelihood(X, y, [(0, 3)], [0.3] * 3, 0.1)
    with pytest.raises(ValueError, match="sigma must be a finite number > 0"):
        learn_decomposition(X, y, 2, [0.3] * 3, 0.0)
    with pytest.raises(ValueError, match=r"p must lie in \(0, 1\)"):
        gibbs_structure(X, y, p=1.0)
    with pytest.raises(ValueError, match="edges must join two distinct dimensions"):
        gibbs_structure(X, y, edges=[(0, 5)])
    with pytest.raises(ValueError, match="ls_grid must hold numbers > 0"):
        gibbs_structure(X, y, ls_grid=(0.1, 0.0))


def test_message_passing_maximiser_equals_brute_force_on_the_grid(rng):
    groups = graph_groups([(0, 1), (1, 2), (2, 3), (3, 0)], D)  # a 4-cycle: not chordal
    X = rng.uniform(size=(25, D))
    gp = AdditiveGP(groups, D).condition(
        X, _gp_sample(X, groups, 0.3, rng), AdditiveDraws([[0.3] * D], [[0.5] * 4], [0.1])
    )
    L, beta = 5, 2.0
    x, value = g_add_gp_ucb_maximize(gp, beta, Box(np.zeros(D), np.ones(D)), levels=L)
    grid = np.linspace(0, 1, L)
    pts = np.array(list(itertools.product(grid, repeat=D)))
    mean, var = gp.predict_groups(pts)
    acq = (mean + np.sqrt(beta * var)).sum(0)  # each clique's acquisition counted once
    assert value == pytest.approx(acq.max(), abs=1e-10)
    np.testing.assert_allclose(x, pts[np.argmax(acq)])


def test_group_by_group_maximiser_beats_random_points(rng):
    groups = [(0, 1), (2,), (3,)]
    X = rng.uniform(size=(30, D))
    gp = AdditiveGP(groups, D).condition(
        X, _gp_sample(X, groups, 0.3, rng), AdditiveDraws([[0.3] * D], [[0.6] * 3], [0.1])
    )
    x, value = add_gp_ucb_maximize(gp, 1.0, Box(np.zeros(D), np.ones(D)), seed=0)
    pts = rng.uniform(size=(2000, D))
    mean, var = gp.predict_groups(pts)
    assert value >= (mean + np.sqrt(var)).sum(0).max() - 1e-9
    mean, var = gp.predict_groups(x[None])
    assert value == pytest.approx(float((mean + np.sqrt(var)).sum()), rel=1e-9)


def test_gibbs_recovers_a_small_overlapping_graph():
    rng = np.random.default_rng(0)
    true = [(0, 1), (1, 2)]
    X = rng.uniform(size=(120, D))
    y = _gp_sample(X, graph_groups(true, D), 0.2, rng)
    res = gibbs_structure(X, y, n_evals=300, seed=0)
    assert correct_connections(res.edges, true) == 1.0
    assert correct_separations(res.edges, true, D) == 1.0
    assert res.evaluations <= 300 + 10
    # the disjoint-group sampler cannot express the chain: it merges the three variables
    res = gibbs_structure(X, y, n_evals=300, seed=0, overlap=False)
    assert (0, 1, 2) in res.groups


def test_cc_cs_and_random_decompositions():
    assert correct_connections([(0, 1)], [(0, 1), (1, 2)]) == 0.5
    assert correct_separations([(0, 1), (0, 2)], [(0, 1)], 3) == 0.5
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(80, 6))
    true = [(0, 3), (1, 4), (2, 5)]
    y = _gp_sample(X, true, 0.3, rng, noise=0.02)
    groups, ll = learn_decomposition(X, y, 2, np.full(6, 0.3), 0.05, n_candidates=60, seed=0)
    assert sorted(groups) == true
    assert ll == pytest.approx(log_marginal_likelihood(X, y, true, np.full(6, 0.3), 0.05))


def test_swap_search_climbs_from_the_best_random_partition_to_the_truth():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(80, 6))
    true = [(0, 3), (1, 4), (2, 5)]
    y = _gp_sample(X, true, 0.3, rng, noise=0.02)
    ls = np.full(6, 0.3)
    # one random partition: the paper's search keeps it, the climb repairs it
    random_only, ll_random = learn_decomposition(X, y, 2, ls, 0.05, n_candidates=1, seed=0)
    climbed, ll = learn_decomposition(X, y, 2, ls, 0.05, n_candidates=1, seed=0, search="swap")
    assert sorted(random_only) != true and sorted(climbed) == true and ll > ll_random
    assert ll == pytest.approx(log_marginal_likelihood(X, y, true, ls, 0.05))
    capped, ll_capped = learn_decomposition(
        X, y, 2, ls, 0.05, n_candidates=1, seed=0, search="swap", max_evaluations=2
    )
    assert ll_random < ll_capped <= ll  # one swap tried and taken, then the cap
    score = lambda g: log_marginal_likelihood(X, y, g, ls, 0.05)  # noqa: E731
    assert swap_climb(score, random_only) == (climbed, pytest.approx(ll))  # no budget
    with pytest.raises(ValueError, match="search must be one of"):
        learn_decomposition(X, y, 2, ls, 0.05, search="anneal")
    with pytest.raises(ValueError, match="decomposition_search must be one of"):
        AdditiveSettings(decomposition_search="anneal")


@pytest.mark.parametrize(
    "problem,strategy",
    [
        ("kandasamy-10-3-3", "add-gp-ucb"),
        ("kandasamy-10-3-3", "add-gp-ucb-oracle"),
        ("rolland-star", "g-add-gp-ucb"),
        ("rolland-star", "g-add-gp-ucb-disjoint"),
        ("rolland-star", "g-add-gp-ucb-oracle"),
    ],
)
def test_additive_strategies_run_and_resume_identically(problem, strategy, tmp_path):
    pr = get_problem(problem, seed=0)
    settings = AdditiveSettings(n_cyc=4, levels=9, gibbs_evals=60)
    full = Optimizer(pr, strategy, seed=3, n_init=6, additive_settings=settings).run(14)
    assert "structure" in full and any(full["structure"].values)
    assert np.isfinite(full["acq_value"].values[6:]).all()
    path = tmp_path / "run.nc"
    part = Optimizer(pr, strategy, seed=3, n_init=6, additive_settings=settings, checkpoint=path)
    part.run(9)
    resumed = Optimizer.resume(path, pr).run(14)
    np.testing.assert_array_equal(resumed["x"].values, full["x"].values)


def test_additive_strategies_reject_constrained_or_unknown_structure():
    flu = get_problem("flu")
    with pytest.raises(ValueError, match="Box domain without linear constraints"):
        Optimizer(flu, "add-gp-ucb")
    with pytest.raises(ValueError, match=r"metadata\['edges'\]"):
        Optimizer(get_problem("kandasamy-10-3-3"), "g-add-gp-ucb-oracle")


@pytest.mark.slow
def test_full_bayes_weighs_a_relearning_s_draws_by_the_observations_since(tmp_path):
    """Under NUTS the draws of the last relearning are resampled by the likelihood
    of every observation since (ESS and Pareto k recorded each step) or refit when
    the weights fail; the run resumes with the same choices; reweight=False keeps
    them unweighed."""
    from pp_decomp.loop.updaters.additive import ACQUISITION_DRAWS
    from pp_decomp.models.additive import kandasamy

    pr = kandasamy(0, D=2, d=1, M=2)  # the model of test_nuts_fit_tiny_shared: one compile
    kw = dict(
        seed=3,
        n_init=8,
        inference="nuts",
        nuts_kwargs=dict(draws=60, tune=60, repairs=0),
        additive_settings=AdditiveSettings(n_cyc=6, levels=9),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = Optimizer(pr, "add-gp-ucb-oracle", **kw)
        full = opt.run(16)
        path = tmp_path / "run.nc"
        Optimizer(pr, "add-gp-ucb-oracle", checkpoint=path, **kw).run(12)
        resumed = Optimizer.resume(path, pr).run(16)
        plain = Optimizer(
            pr,
            "add-gp-ucb-oracle",
            **{**kw, "additive_settings": AdditiveSettings(n_cyc=6, levels=9, reweight=False)},
        ).run(16)
    ess = full["ess"].values[:, 0]
    between = ~full["refit"].values[:, 0] & (np.arange(16) > 8)  # steps between fits
    # 240 draws (4 x 60) after a relearning, 256 (max_draws) after a refit between
    assert np.all(np.isfinite(ess[between])) and np.all(ess[between] <= 256)
    assert np.any(ess[between] < 200)  # weighed by new data, not equal weights
    np.testing.assert_array_equal(resumed["x"].values, full["x"].values)
    assert opt.models["additive"].draws.n_draws == ACQUISITION_DRAWS  # a resample of them
    # refits between relearnings: importance sampling around the draws where it passes
    assert np.isfinite(full["fit_pareto_k"].values[9:14, 0]).any()
    assert "ess" not in plain
    assert not np.array_equal(plain["x"].values[9:], full["x"].values[9:])


def test_keep_draws_equals_conditioning_on_the_resampled_draws(rng):
    X, y = rng.uniform(size=(12, 3)), rng.normal(size=12)
    draws = AdditiveDraws(
        rng.uniform(0.2, 1.0, (5, 3)), rng.uniform(0.5, 1.5, (5, 2)), rng.uniform(0.05, 0.2, 5)
    )
    idx = np.array([4, 0, 0, 2])
    kept = AdditiveGP([(0, 1), (2,)], 3).condition(X, y, draws).keep_draws(idx)
    direct = AdditiveGP([(0, 1), (2,)], 3).condition(X, y, draws.subset(idx))
    Xnew = rng.uniform(size=(6, 3))
    for a, b in zip(kept.predict_groups(Xnew), direct.predict_groups(Xnew), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    np.testing.assert_array_equal(kept.draws.ls, draws.ls[idx])
    np.testing.assert_allclose(
        kept.posterior.log_marginal_likelihood, direct.posterior.log_marginal_likelihood
    )


@pytest.mark.parametrize("shared", [False, True])
def test_log_density_is_the_sampler_s_density(rng, shared):
    """``MapObjective.log_density``, the numpy density the importance-sampling
    refreshes weigh by, is PyMC's model log density with the log transforms'
    Jacobian, up to a constant, batched over rows."""
    from pp_decomp.additive.pymc_model import build_additive_model

    X, y = rng.uniform(size=(20, D)), rng.standard_normal(20)
    W, p = group_masks(GROUPS, D), Priors(ls_family="inverse-gamma", sigma_family="gamma")
    obj = MapObjective(X, y, W, p, shared=shared)
    k = 3 if shared else D + len(GROUPS) + 1
    Z = rng.normal(-1, 0.4, (5, k))
    got = obj.log_density(Z)
    want = np.array([-obj(z)[0] + z.sum() for z in Z])
    np.testing.assert_allclose(got - got[0], want - want[0], atol=1e-8)
    model = build_additive_model(len(GROUPS), D, p, n=20, shared=shared)
    with model:
        pm.set_data({"X": X, "y": y, "W": W})
    logp = model.compile_logp()
    shapes = {v.name: model.initial_point()[v.name].shape for v in model.value_vars}
    cuts = np.cumsum([int(np.prod(s)) for s in shapes.values()])[:-1]

    def point(z):
        parts = np.split(z, cuts)
        return {n: v.reshape(s) for (n, s), v in zip(shapes.items(), parts, strict=True)}

    ref = np.array([logp(point(z)) for z in Z])
    np.testing.assert_allclose(got - got[0], ref - ref[0], atol=1e-6)


@pytest.mark.parametrize("shared", [False, True])
def test_the_nuts_model_samples_the_model_s_density(rng, shared):
    """nutpie's model of the additive GP (numba density): its log density is
    ``MapObjective.log_density`` (checked against PyMC's above), its gradient
    that density's, its stored variables the draws' names and shapes; a point
    where ``K`` is not positive definite is rejected, not penalised."""
    from pp_decomp.additive.sampler import AdditiveModel

    X, y = rng.uniform(size=(20, D)), rng.standard_normal(20)
    W, p = group_masks(GROUPS, D), Priors(ls_family="inverse-gamma", sigma_family="gamma")
    cm = AdditiveModel(len(GROUPS), D, p, shared)
    model = cm.nutpie_model.with_data(X=X, y=y, W=W)
    logp = model.make_logp(**model.shared_data)
    obj = MapObjective(X, y, W, p, shared=shared)
    k = 3 if shared else D + len(GROUPS) + 1
    Z = rng.normal(-1, 0.4, (4, k))
    for z in Z:
        value, grad = logp(z)
        assert value == pytest.approx(obj.log_density(z)[0], abs=1e-9)
        h = 1e-6 * np.eye(k)
        numeric = (obj.log_density(z + h) - obj.log_density(z - h)) / 2e-6
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)
    expanded = model.make_expand()(Z[0])
    assert expanded["ls"].shape == (D,) and expanded["eta"].shape == (len(GROUPS),)
    assert expanded["sigma"].shape == ()
    np.testing.assert_allclose(expanded["sigma"], np.exp(Z[0, -1]))
    np.testing.assert_allclose(cm.flatten_rows(cm.unflatten(Z)), Z)
    bad = np.r_[np.full(k - 1, 400.0), -12.0]  # the amplitude overflows: K is not finite
    value, grad = logp(bad)
    assert value == -np.inf and np.all(grad == 0)
