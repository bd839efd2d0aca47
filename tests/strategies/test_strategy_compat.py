"""Strategy/problem compatibility is decided when the optimiser is built (issue 14)."""

import numpy as np
import pytest

from pp_decomp import Box, Optimizer, Problem


class CountingSystem:
    """A two-output system that counts its evaluations."""

    def __init__(self):
        self.calls = 0

    def __call__(self, X):
        self.calls += len(X)
        return np.c_[np.sin(3 * X[:, 0]), (X[:, 1] - 0.3) ** 2]


def _nonlinear_problem(system):
    return Problem(
        Box([0, 0], [1, 1]),
        system,
        2,
        g=lambda F: F[..., 0] * np.exp(-F[..., 1]),  # one argument: g(F)
        noise_sd=0.01,
        name="counting",
    )


def test_nonlinear_g_runs_with_the_default_strategy():
    system = CountingSystem()
    problem = _nonlinear_problem(system)
    system.calls = 0
    opt = Optimizer(problem, seed=0, n_init=3)
    assert opt.strategy.name == "d-gpucb-mc-min"
    # where no GP of g can be had, the Monte Carlo bound alone
    assert Optimizer(problem, seed=0, correlated=True).strategy.name == "d-gpucb-mc"
    ds = opt.run(5)
    assert ds.sizes["iteration"] == 5 and system.calls == 5
    assert (ds["phase"].values == "acquisition").sum() == 2


@pytest.mark.parametrize("strategy", ["d-gpucb", "add-gp-ucb-oracle"])
def test_an_incompatible_strategy_is_refused_before_any_evaluation(strategy):
    system = CountingSystem()
    problem = _nonlinear_problem(system)
    system.calls = 0
    with pytest.raises(ValueError, match=strategy):
        Optimizer(problem, strategy, seed=0).run(6)
    assert system.calls == 0
