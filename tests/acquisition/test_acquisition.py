import itertools
import warnings

import numpy as np
import pytest

from pp_decomp import Box, CandidateSet, ComponentGP, HyperDraws, Problem
from pp_decomp import acquisition as acq
from pp_decomp.acquisition.ucb import BetaContinuous, BetaDiscrete, BetaKandasamy, BetaRolland
from pp_decomp.optim import maximize_box, maximize_candidates


def _fitted(problem, X, rng, draws_per=1):
    Y = problem.evaluate(X, seed=rng)
    comps = []
    for j in range(problem.n_components):
        d = HyperDraws(
            ls=rng.uniform(0.15, 0.4, (draws_per, problem.dim)),
            eta=rng.uniform(0.7, 1.3, draws_per),
            sigma=np.full(draws_per, 0.05),
        )
        comps.append(ComponentGP("se", problem.dim, name=f"f{j}").condition(X, Y[:, j], d))
    return acq.DecomposedSurrogate(comps, problem)


def _grid_problem(g=None, weights=None, maximize=True):
    grid = np.linspace(0, 1, 200)[:, None]
    return Problem(
        CandidateSet(grid),
        lambda X: np.c_[np.sin(6 * X[:, 0]), np.cos(4 * X[:, 0]), X[:, 0] ** 2],
        3,
        g=g,
        weights=weights,
        maximize=maximize,
        noise_sd=0.01,
    )


@pytest.mark.parametrize(("draws_per", "tol"), [(1, 0.03), (4, 0.004)])
def test_mc_ucb_agrees_with_dgpucb_for_linear_g(rng, draws_per, tol):
    # with several hyperparameter draws both integrate the bound over the draws
    # (a quantile of the mixture of the draws sits 1-2% of the range above it);
    # averaging the draws' quantiles also averages their Monte Carlo error
    problem = _grid_problem(weights=[1.0, -0.5, 2.0])
    model = _fitted(problem, rng.uniform(size=(6, 1)), rng, draws_per)
    X = problem.domain.X
    beta = 2.0
    exact = acq.DGPUCB(model, beta)(X)
    mc = acq.MonteCarloUCB(model, beta, n_samples=40_000, seed=1)(X)
    np.testing.assert_allclose(mc, exact, atol=tol * np.ptp(exact))
    assert (
        maximize_candidates(acq.MonteCarloUCB(model, beta, 40_000, seed=2), X)[2]
        == maximize_candidates(acq.DGPUCB(model, beta), X)[2]
    )


@pytest.mark.parametrize("draws_per", [1, 4])
@pytest.mark.parametrize("kind", ["ucb", "ei", "pi"])
def test_mc_acquisitions_in_blocks_are_the_acquisitions_in_one(rng, draws_per, kind, monkeypatch):
    # blocks of inputs (to keep the samples in cache) change no number
    from pp_decomp.acquisition import ucb

    def g(F, X):
        return F[..., 0] * (1 + 0.3 * np.tanh(F[..., 1])) - 0.5 * F[..., 2] ** 2 + X[..., 0]

    problem = _grid_problem(g=g)
    model = _fitted(problem, rng.uniform(size=(6, 1)), rng, draws_per)
    X = problem.domain.X
    if kind == "ucb":
        mc = acq.MonteCarloUCB(model, 4.0, n_samples=512, seed=1)
    else:
        cls = acq.ExpectedImprovement if kind == "ei" else acq.ProbabilityOfImprovement
        mc = cls(model, 0.5, 0.0, n_samples=512, seed=1)
    monkeypatch.setattr(ucb, "MC_BLOCK_BYTES", 1 << 40)  # one block
    whole = mc(X), getattr(mc, "tie_break", lambda X: None)(X)
    monkeypatch.setattr(ucb, "MC_BLOCK_BYTES", 1)  # blocks of MC_BLOCK_MIN_ROWS inputs
    assert len(X) > 3 * ucb.MC_BLOCK_MIN_ROWS
    np.testing.assert_array_equal(mc(X), whole[0])
    if whole[1] is not None:
        np.testing.assert_array_equal(mc.tie_break(X), whole[1])


def test_lipschitz_bound_never_below_mc_quantile(rng):
    # perceived-temperature-like nonlinear g: product plus a smooth saturation
    def g(F, X):
        return F[..., 0] * (1 + 0.3 * np.tanh(F[..., 1])) - 0.5 * F[..., 2] ** 2

    problem = _grid_problem(g=g)
    X = problem.domain.X
    for draws_per in (1, 8):
        model = _fitted(problem, rng.uniform(size=(5, 1)), rng, draws_per)
        for beta in (1.0, 4.0, 9.0):
            lip = acq.LipschitzUCB(model, beta, None, X)(X)
            mc = acq.MonteCarloUCB(model, beta, n_samples=20_000, seed=3)(X)
            assert np.all(lip >= mc - 1e-9)


def test_local_lipschitz_bound_holds_on_its_box_and_is_never_wider_than_wangs(rng):
    targets = np.array([0.3, -0.2, 0.5])

    def sse(F, X):  # a calibration objective: its |∂g/∂f_j| peaks at the box's axis extremes
        return -np.sum((F - targets) ** 2, axis=-1)

    def product(F, X):  # |∂g/∂f_j| peaks at the box's corners
        return F[..., 0] * (1 + F[..., 1]) + F[..., 2]

    for g in (sse, product):
        problem = _grid_problem(g=g)
        X = problem.domain.X
        model = _fitted(problem, rng.uniform(size=(5, 1)), rng, 4)
        beta = 4.0
        local = acq.LocalLipschitzUCB(model, beta, seed=0)
        a = local(X)
        mu, var = model.moments(X)
        r = np.sqrt(beta * var)
        # every component vector inside the credible box R(x) is bounded by a(x)
        F = mu + rng.uniform(-1, 1, size=(4000, *mu.shape)) * r
        assert np.all(model.h(F, X) <= a + 1e-6 * (1 + np.abs(a)))
        # Wang's global bound (its B_j over the whole posterior range) is never tighter
        wang = acq.LipschitzUCB(model, beta, None, X)(X)
        assert np.all(a <= wang + 1e-9) and np.mean(a < wang - 1e-6) > 0.9


def test_local_lipschitz_bound_of_a_linear_g_uses_its_weights(rng):
    w = np.array([1.0, -0.5, 2.0])
    problem = _grid_problem(weights=w)
    model = _fitted(problem, rng.uniform(size=(6, 1)), rng)
    X = problem.domain.X
    mu, var = model.moments(X)
    expected = mu @ w + np.sqrt(4.0 * var) @ np.abs(w)
    np.testing.assert_allclose(acq.LocalLipschitzUCB(model, 4.0)(X), expected, rtol=1e-6)


def test_credible_box_bound_holds_on_its_box_and_is_never_above_the_local_lipschitz_one(rng):
    def product(F, X):  # monotone in each component over these boxes: max at a corner
        return F[..., 0] * (2.0 + np.tanh(F[..., 1])) + np.exp(0.3 * F[..., 2])

    problem = _grid_problem(g=product)
    X = problem.domain.X
    model = _fitted(problem, rng.uniform(size=(5, 1)), rng, 4)
    beta = 4.0
    box = acq.CredibleBoxUCB(model, beta, seed=0)(X)
    mu, var = model.moments(X)
    r = np.sqrt(beta * var)
    F = mu + rng.uniform(-1, 1, size=(4000, *mu.shape)) * r
    inside = model.h(F, X).max(axis=0)
    assert np.all(inside <= box + 1e-9)
    corners = [mu + np.array(c) * r for c in itertools.product([-1.0, 1.0], repeat=3)]
    np.testing.assert_allclose(box, np.max([model.h(c, X) for c in corners], axis=0))
    local = acq.LocalLipschitzUCB(model, beta, seed=0)(X)
    assert np.all(box <= local + 1e-9) and np.mean(box < local - 1e-6) > 0.9


def test_credible_box_bound_of_a_linear_g_is_the_local_lipschitz_one(rng):
    problem = _grid_problem(weights=[1.0, -0.5, 2.0])
    model = _fitted(problem, rng.uniform(size=(6, 1)), rng)
    X = problem.domain.X
    np.testing.assert_allclose(
        acq.CredibleBoxUCB(model, 4.0)(X), acq.LocalLipschitzUCB(model, 4.0)(X), rtol=1e-6
    )


def test_numeric_lipschitz_recovers_linear_weights(rng):
    problem = _grid_problem(weights=[1.0, -0.5, 2.0])
    model = _fitted(problem, rng.uniform(size=(6, 1)), rng)
    B = acq.numeric_lipschitz(model, problem.domain.X)
    np.testing.assert_allclose(B, 1.1 * np.array([1.0, 0.5, 2.0]), rtol=1e-6)


def test_dgpucb_averages_wangs_bound_over_joint_hyperparameter_draws(rng):
    problem = _grid_problem(weights=[1.0, -0.5, 2.0])
    X0 = rng.uniform(size=(6, 1))
    Y = problem.evaluate(X0, seed=rng)
    draws = [
        HyperDraws(
            ls=rng.uniform(0.1, 0.5, (3, 1)), eta=rng.uniform(0.5, 1.5, 3), sigma=np.full(3, 0.05)
        )
        for _ in range(3)
    ]

    def surrogate(idx):
        return acq.DecomposedSurrogate(
            [
                ComponentGP("se", 1, name=f"f{j}").condition(X0, Y[:, j], d.subset(idx))
                for j, d in enumerate(draws)
            ],
            problem,
        )

    X, beta = problem.domain.X, 3.0
    model = surrogate(np.arange(3))
    integrated = acq.DGPUCB(model, beta)(X)
    # draw s of every component is one joint draw: the mean of Wang's bound under each
    wang = [acq.DGPUCB(surrogate([s]), beta)(X) for s in range(3)]
    np.testing.assert_allclose(integrated, np.mean(wang, axis=0), rtol=1e-10)
    mu, var = model.moments(X)  # the mixture's bound counts the draws' disagreement too
    G = np.array([1.0, -0.5, 2.0])
    mixture = mu @ G + np.sqrt(beta * (var @ G**2))
    assert np.all(integrated <= mixture + 1e-12) and np.any(integrated < mixture - 1e-3)


def test_minimisation_flips_the_sign(rng):
    up = _grid_problem(weights=[1.0, 1.0, 1.0])
    down = _grid_problem(weights=[1.0, 1.0, 1.0], maximize=False)
    X = rng.uniform(size=(6, 1))
    m_up, m_down = (
        _fitted(up, X, np.random.default_rng(0)),
        _fitted(down, X, np.random.default_rng(0)),
    )
    a_up = acq.DGPUCB(m_up, 0.0)(up.domain.X)
    a_down = acq.DGPUCB(m_down, 0.0)(down.domain.X)
    np.testing.assert_allclose(a_up, -a_down)


def test_ei_closed_form_matches_monte_carlo(rng):
    lin = _grid_problem(weights=[1.0, 1.0, 1.0])
    nonlin = _grid_problem(g=lambda F, X: F.sum(-1))  # same g, taken as general: Monte Carlo
    X = rng.uniform(size=(6, 1))
    m_lin = _fitted(lin, X, np.random.default_rng(5))
    m_mc = _fitted(nonlin, X, np.random.default_rng(5))
    Xc = lin.domain.X[::10]
    best = 1.0
    for cls in (acq.ExpectedImprovement, acq.ProbabilityOfImprovement):
        exact = np.exp(cls(m_lin, best)(Xc))  # the acquisitions are log EI and log PI
        mc = np.exp(cls(m_mc, best, n_samples=100_000, seed=4)(Xc))
        np.testing.assert_allclose(mc, exact, atol=0.01)


def test_log_ei_is_accurate_and_never_flat(rng):
    from scipy.stats import norm

    from pp_decomp.acquisition.improvement import log_h

    u = np.linspace(-30, 5, 200)
    with np.errstate(divide="ignore"):
        direct = np.log(norm.pdf(u) + u * norm.cdf(u))
    ok = np.isfinite(direct)
    np.testing.assert_allclose(log_h(u)[ok], direct[ok], rtol=1e-9, atol=1e-12)
    deep = log_h(np.array([-1e3, -1e2, -50.0]))  # EI underflows to 0 here; log EI does not
    assert np.all(np.isfinite(deep)) and np.all(np.diff(deep) > 0)
    # far below the incumbent, Monte Carlo EI is exactly 0; the smoothed log EI still ranks inputs
    nonlin = _grid_problem(g=lambda F, X: F.sum(-1))
    m_mc = _fitted(nonlin, rng.uniform(size=(6, 1)), np.random.default_rng(5))
    vals = acq.ExpectedImprovement(m_mc, 1e6, n_samples=256, seed=1)(nonlin.domain.X)
    assert np.all(np.isfinite(vals)) and np.ptp(vals) > 0


def test_high_quantile_is_the_sample_quantile_then_extrapolates():
    from scipy.stats import norm

    from pp_decomp.acquisition.ucb import high_quantile

    z = np.random.default_rng(0).standard_normal((512, 3)) * [1.0, 2.0, 0.5] + [0.0, 1.0, -1.0]
    np.testing.assert_array_equal(high_quantile(z, 0.9), np.quantile(z, 0.9, axis=0))
    q = norm.cdf(np.sqrt(15.0))  # beyond what 512 samples resolve
    est = high_quantile(z, q)
    truth = [0.0, 1.0, -1.0] + norm.ppf(q) * np.array([1.0, 2.0, 0.5])
    assert np.all(est < z.max(0) + 1.5 * np.array([1.0, 2.0, 0.5]))
    assert np.all(np.abs(est - truth) < 0.5 * np.array([1.0, 2.0, 0.5]))  # within half an sd
    big = np.random.default_rng(1).standard_normal((2_000_000, 1))
    assert abs(high_quantile(big, q)[0] - norm.ppf(q)) < 0.1  # consistent


def test_gpmi_formula_and_gamma_update(rng):
    X = rng.uniform(size=(5, 1))
    gp = ComponentGP("se", 1).condition(X, np.sin(X[:, 0]), HyperDraws([[0.3]], [1.0], [0.1]))
    a = acq.GPMI(acq.ComposedSurrogate(gp), gamma=0.5, delta=0.1)
    Xc = np.linspace(0, 1, 7)[:, None]
    mu, var = gp.predict(Xc)
    expected = mu + np.sqrt(np.log(20)) * (np.sqrt(var + 0.5) - np.sqrt(0.5))
    np.testing.assert_allclose(a(Xc), expected)
    assert a.updated_gamma(Xc[3]) == pytest.approx(0.5 + var[3])


def test_beta_schedules():
    b = BetaDiscrete(1000, delta=0.05, n_components=1, scale=0.2)
    assert b(1) == pytest.approx(0.2 * 2 * np.log(1000 * np.pi**2 / (6 * 0.05)))
    assert BetaDiscrete(1000, n_components=3)(5) > b(5)
    assert BetaKandasamy(4)(10) == pytest.approx(0.2 * 4 * np.log(20))
    assert BetaRolland()(3) == pytest.approx(0.5 * np.log(6))
    c = BetaContinuous(2)
    assert c(10) > c(2) > 0


def test_maximize_candidates_is_chunked_and_exact(rng):
    X = rng.uniform(size=(100_000, 2))
    calls = []

    def f(Z):
        calls.append(len(Z))
        return -np.sum((Z - 0.3) ** 2, 1)

    x, v, i = maximize_candidates(f, X, chunk=8192)
    assert i == int(np.argmax(f(X))) and max(calls[:-1]) <= 8192


@pytest.mark.parametrize("method", ["lbfgs", "direct"])
def test_maximize_box_with_budget_constraint(method):
    box = Box([0, 0, 0], [1, 1, 1], A=[[1, 1, 1]], b=[1.0])
    target = np.array([0.6, 0.6, 0.2])  # infeasible: the optimum sits on the budget face

    def f(Z):
        return -np.sum((Z - target) ** 2, 1)

    x, _ = maximize_box(f, box, seed=0, method=method)
    assert x.sum() <= 1.0 + 1e-9
    np.testing.assert_allclose(
        x, [0.4667, 0.4667, 0.0667], atol=0.02 if method == "direct" else 1e-3
    )


def test_local_searches_take_their_gradient_from_one_batched_call():
    from pp_decomp.optim import value_and_fd_gradient

    calls = []

    def f(U):
        calls.append(len(U))
        return np.sin(3 * U[:, 0]) + U[:, 1] ** 2 - U[:, 0] * U[:, 2]

    u = np.array([0.2, 0.5, 1.0])  # the last coordinate on the cube's upper face
    value, grad = value_and_fd_gradient(f, u)
    assert calls == [4] and value == pytest.approx(f(u[None])[0])
    exact = [3 * np.cos(0.6) - 1.0, 1.0, -0.2]
    np.testing.assert_allclose(grad, exact, atol=1e-6)

    with warnings.catch_warnings():  # an excluded input (inf there): a flat, silent gradient
        warnings.simplefilter("error")
        value, grad = value_and_fd_gradient(lambda U: np.full(len(U), np.inf), u)
    assert value == np.inf and np.all(grad == 0.0)

    sizes = []

    def bowl(Z):
        sizes.append(len(Z))
        return -np.sum((Z - 0.3) ** 2, 1)

    x, _ = maximize_box(bowl, Box([0, 0], [1, 1]), seed=0, n_raw=64, n_starts=2)
    np.testing.assert_allclose(x, [0.3, 0.3], atol=1e-6)
    # the raw points, then d + 1 per search still running: the two in lockstep, one alone
    assert sizes[0] == 64 and sizes[1] == 6 and set(sizes[1:]) == {6, 3}


def test_a_screen_scores_the_raw_points_and_searches_and_the_acquisition_decides():
    box = Box([0, 0], [1, 1])
    calls = {"screen": [], "acq": []}

    class Bowl:
        """The acquisition peaks at 0.3; its screen, a rough copy, at 0.35."""

        def __init__(self, centre, log):
            self.centre, self.log = centre, log

        def __call__(self, Z):
            self.log.append(len(Z))
            return -np.sum((Z - self.centre) ** 2, 1)

    f = Bowl(0.3, calls["acq"])
    f.screen = Bowl(0.35, calls["screen"])
    x, v = maximize_box(f, box, seed=0, n_raw=64, n_starts=2)
    np.testing.assert_allclose(x, [0.3, 0.3], atol=1e-6)  # polished on the acquisition
    assert v == pytest.approx(f(x[None])[0])
    assert calls["screen"][0] == 64 and 64 not in calls["acq"]
    # the acquisition scores the searches' ends with the starts once, then polishes
    assert calls["acq"][0] == 5 and set(calls["acq"][1:-1]) == {3}


def test_smaller_ucb_is_the_smaller_of_the_decomposed_and_the_composed_bound(rng):
    def heat(F, X):  # convex in the components, as the heat index
        return F[..., 0] + 0.5 * F[..., 1] ** 2 + np.exp(0.5 * F[..., 2])

    problem = _grid_problem(g=heat)
    Xobs = rng.uniform(size=(6, 1))
    model = _fitted(problem, Xobs, rng)
    h = problem.compose(problem.evaluate(Xobs, seed=rng), Xobs)
    draws = HyperDraws(ls=np.array([[0.05]]), eta=np.array([1.0]), sigma=np.array([0.05]))
    composed = acq.ComposedSurrogate(
        ComponentGP("se", 1, name="composed").condition(Xobs, h, draws)
    )
    X, beta = problem.domain.X, 4.0
    mc = acq.MonteCarloUCB(model, beta, seed=3)(X)
    gp = acq.UCB(composed, beta)(X)
    both = acq.SmallerUCB(acq.MonteCarloUCB(model, beta, seed=3), composed, beta)(X)
    np.testing.assert_array_equal(both, np.minimum(mc, gp))
    # a short GP of g is the tighter bound at its observations and the wider away
    # from them: the minimum is neither bound alone
    assert np.any(mc < gp) and np.any(gp < mc)


@pytest.mark.parametrize("beta", [-1.0, np.nan, np.inf, "wide"])
def test_every_ucb_refuses_a_bad_beta_by_name(rng, beta):
    problem = _grid_problem(g=lambda F, X: F.sum(-1), weights=[1.0, 1.0, 1.0])
    model = _fitted(problem, rng.uniform(size=(4, 1)), rng)
    X = problem.domain.X
    builds = [
        lambda b: acq.DGPUCB(model, b),
        lambda b: acq.LipschitzUCB(model, b, None, X),
        lambda b: acq.LocalLipschitzUCB(model, b),
        lambda b: acq.CredibleBoxUCB(model, b),
        lambda b: acq.MonteCarloUCB(model, b),
        lambda b: acq.UCB(acq.ComposedSurrogate(model.components[0]), b),
    ]
    for build in builds:
        with pytest.raises((ValueError, TypeError), match="beta must be"):
            build(beta)
