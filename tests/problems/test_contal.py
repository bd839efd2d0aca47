"""Contal et al. (2014)'s tasks: the generated GPs, Mackey-Glass, the protocol's
search sets with kernels fitted beforehand, and GP-MI's linear regret."""

import numpy as np
import pytest

from pp_decomp import Optimizer
from pp_decomp.apps.bench.spec import BenchSpec, contal_beta, preset
from pp_decomp.models import get_problem
from pp_decomp.models.classic import branin
from pp_decomp.models.contal import fitted_on_half, gp_sample_problem, search_set_problem
from pp_decomp.models.mackey_glass import (
    HORIZON,
    delay_vectors,
    mackey_glass,
    mackey_glass_series,
)


def test_generated_gp_carries_the_kernel_it_was_drawn_from():
    p = gp_sample_problem(seed=1, dim=4, n_points=300)
    X = p.domain.X
    assert X.shape == (300, 4) and X.min() >= 0 and X.max() <= 40
    known = p.known_kernels.draws[0]
    # lengthscale 16 in the data's units, stated on the unit-scaled domain
    np.testing.assert_allclose(known.ls[0] * p.domain.widths, 16.0)
    assert p.known_kernels.kernel == "matern32" and known.sigma[0] == p.noise_sd[0] == 0.01
    f = p.components(X)[:, 0]
    assert p.optimum == f.max() and 0.2 < f.std() < 3  # a unit-variance draw
    with pytest.raises(ValueError, match="dim must be one of"):
        gp_sample_problem(dim=3)


def test_mackey_glass_integration_converges_and_stays_on_its_attractor():
    coarse = mackey_glass_series(60, transient=0, step=0.1)
    fine = mackey_glass_series(60, transient=0, step=0.05)
    # halving the step changes the first 60 time units by far less than the series'
    # range (second order: the delayed value at a half step is interpolated linearly)
    assert np.abs(coarse - fine).max() < 1e-4
    x = mackey_glass_series()
    assert 0.2 < x.min() and x.max() < 1.5  # the chaotic attractor's band
    with pytest.raises(ValueError, match="step must divide"):
        mackey_glass_series(10, step=0.3)
    for kwargs, name in [
        ({"step": 1e-4}, "step must be at least"),
        ({"length": 0}, "length"),
        ({"transient": -1}, "transient"),
        ({"step": 0.0}, "step"),
        ({"step": -0.1}, "step"),
    ]:
        with pytest.raises(ValueError, match=name):
            mackey_glass_series(**kwargs)


def test_mackey_glass_series_is_pinned():
    # The series is chaotic: one last-bit difference in a step (libm's pow, say)
    # grows to an O(1) difference within a few thousand units, changing every
    # task built on it. These values pin it.
    x = mackey_glass_series()
    np.testing.assert_allclose(
        x[[0, 1000, 5000, 19999]],
        [0.946426656601, 0.754388895048, 0.526091243042, 1.140090342891],
        atol=1e-9,
    )


def test_mackey_glass_points_are_delay_vectors_valued_85_steps_ahead():
    p = mackey_glass(seed=2, n_points=50)
    x = mackey_glass_series()
    Z = p.domain.X
    # recover each point's time from its first coordinate and check the rest of its vector
    times = np.array([int(np.flatnonzero(x == z0)[0]) for z0 in Z[:, 0]])
    np.testing.assert_array_equal(delay_vectors(x, times), Z)
    np.testing.assert_array_equal(p.components(Z)[:, 0], x[times + HORIZON])
    assert p.noise_sd[0] == 0 and p.optimum == x[times + HORIZON].max()
    assert not np.array_equal(mackey_glass(seed=3, n_points=50).domain.X, Z)


@pytest.mark.parametrize("name", ["mackey-glass", "gp-sample-2d", "independent-sites"])
def test_new_problems_refuse_points_outside_their_set_and_nan_by_name(name):
    p = get_problem(name, seed=0)
    inside = p.domain.X[:1]
    with pytest.raises(ValueError, match=f"{name}: .* is not a candidate point"):
        p.components(inside + 0.5)
    with pytest.raises(ValueError, match="X must be finite"):
        p.evaluate(np.full_like(inside, np.nan))


def test_search_sets_hold_the_closed_form_and_a_kernel_fitted_on_half():
    p = search_set_problem("branin", seed=0, n_points=200)
    X = p.domain.X
    np.testing.assert_allclose(p.components(X)[:, 0], -branin(X))
    assert p.optimum <= -0.397887 and p.name == "branin-known"
    known = p.known_kernels.draws[0]
    assert known.ls.shape == (1, 2) and np.all(known.ls > 0)
    with pytest.raises(ValueError, match="name must be one of"):
        search_set_problem("rosenbrock")


def test_contal_beta_is_srinivas_unscaled_and_needs_a_search_set():
    p = get_problem("independent-sites", seed=0)
    beta = contal_beta(p)
    assert beta(3) == pytest.approx(2 * np.log(100 * 9 * np.pi**2 / (6 * 1e-6)))
    with pytest.raises(ValueError, match="beta_schedule 'contal' needs a finite search set"):
        BenchSpec(["branin"], ["gp-ucb"], trials=1, iterations=3, beta_schedule="contal")


@pytest.mark.slow  # builds all seven problems, fitting five kernels
def test_contal2014_preset_is_the_papers_protocol():
    spec = preset("contal2014")
    assert spec.inference == "fixed" and spec.n_init == 10 and spec.beta_schedule == "contal"
    assert "mackey-glass-known" in spec.problems and len(spec.problems) == 7
    assert not spec.skipped


def _tail_regret(strategy, seed, iterations=200, tail=50):
    p = get_problem("independent-sites", seed=seed)  # 100 sites
    beta = contal_beta(p) if strategy == "gp-ucb" else None
    opt = Optimizer(p, strategy=strategy, inference="fixed", n_init=2, seed=seed, beta=beta)
    opt.run(iterations)
    ds = opt.results()
    return ds["regret"].values[-tail:], ds["x"].values[-tail:, 0]


@pytest.mark.parametrize("seed", [0, 1])
def test_gp_mi_stops_exploring_on_a_gp_sample_and_keeps_a_linear_regret(seed):
    # the paper's erratum: told the true kernel, GP-MI's exploration bonus
    # sqrt(alpha) (sqrt(sigma^2 + gamma) - sqrt(gamma)) shrinks with gamma, so after a
    # few unseen sites it repeats the best one seen, whatever the others hold
    regret, sites = _tail_regret("gp-mi", seed)
    assert len(np.unique(sites)) == 1 and regret.min() > 0.1
    np.testing.assert_allclose(regret, regret[0])  # the same regret every step: linear R_T
    # GP-UCB's growing beta visits every site and then mostly plays the best one (an
    # occasional revisit of another is allowed: its mean, not its maximum, is bounded)
    ucb_regret, _ = _tail_regret("gp-ucb", seed)
    assert ucb_regret.mean() < 0.05
    assert regret.mean() > 10 * ucb_regret.mean()


def test_fitted_on_half_refuses_bad_input_by_name():
    X = np.linspace(0, 1, 10)[:, None]
    with pytest.raises(ValueError, match="X needs at least 4"):
        fitted_on_half(X[:3], np.zeros(3), seed=0)
    with pytest.raises(ValueError, match="values has 9 value"):
        fitted_on_half(X, np.zeros(9), seed=0)
    with pytest.raises(ValueError, match="X must be finite"):
        fitted_on_half(np.full_like(X, np.nan), np.zeros(10), seed=0)
    with pytest.raises(ValueError, match="noise_sd"):
        fitted_on_half(X, np.zeros(10), seed=0, noise_sd=-1.0)


def test_the_half_is_observed_with_the_tasks_noise():
    # a noisy task's kernel must be fitted on noisy observations, as the paper's
    # were: a fit on the exact values would learn a near-zero noise
    X = np.linspace(0, 1, 100)[:, None]
    f = np.sin(6 * X[:, 0])
    clean = fitted_on_half(X, f, seed=0).draws[0].sigma[0]
    noisy = fitted_on_half(X, f, seed=0, noise_sd=0.05).draws[0].sigma[0]
    assert clean < 0.01 and 0.025 < noisy < 0.1
    p = get_problem("gaussian-mixture-known", seed=0)
    X, f = p.domain.X, p.components(p.domain.X)[:, 0]
    expected = fitted_on_half(X, f, seed=0, noise_sd=p.noise_sd[0]).draws[0]
    np.testing.assert_array_equal(p.known_kernels.draws[0].sigma, expected.sigma)
