import numpy as np
import pytest

from pp_decomp import ComponentGP, HyperDraws
from pp_decomp.calibration import ucb_coverage
from pp_decomp.gp_samples import sample_function


def test_gp_from_its_own_prior_is_calibrated():
    """Functions drawn from the GP prior, predicted with the true kernel: coverage = nominal."""
    rng = np.random.default_rng(0)
    draws = HyperDraws(ls=[[0.2]], eta=[1.0], sigma=[0.1])
    means, sds, truths = [], [], []
    for _ in range(200):
        X = rng.uniform(size=(40, 1))
        f = sample_function("se", X, draws, rng)
        train, test = slice(0, 10), slice(10, 40)
        y = f[train] + 0.1 * rng.standard_normal(10)
        gp = ComponentGP("se", 1, standardize=False).condition(X[train], y, draws)
        m, v = gp.predict(X[test])
        means.append(m)
        sds.append(np.sqrt(v))
        truths.append(f[test])
    cov = ucb_coverage(means, sds, truths)
    # points within a function are correlated: allow 4 binomial SEs on the pooled count x 3
    assert np.all(np.abs(cov["empirical"] - cov["nominal"]) < 12 * cov["stderr"])
    assert np.all(np.abs(cov["empirical"] - cov["nominal"]) < 0.03)


def test_overconfident_bounds_undercover():
    rng = np.random.default_rng(1)
    truth = rng.standard_normal(20_000)
    cov = ucb_coverage(np.zeros_like(truth), np.full_like(truth, 0.5), truth, levels=[0.9])
    assert float(cov["empirical"][0]) < 0.8


def test_validation():
    with pytest.raises(ValueError, match="one shape"):
        ucb_coverage([0, 1], [1, 1], [0])
    with pytest.raises(ValueError, match=r"levels must lie in \(0, 1\)"):
        ucb_coverage([0], [1], [0], levels=[1.0])
    with pytest.raises(ValueError, match="truth must be finite"):
        ucb_coverage([0], [1], [np.nan])
