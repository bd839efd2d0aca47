"""The compiled Gaussian log likelihood of many covariance matrices."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from pp_decomp.components.posterior.batched import gaussian_log_likelihood
from pp_decomp.components.posterior.likelihood import gaussian_log_likelihoods


def _covariances(S: int, n: int, rng) -> np.ndarray:
    A = rng.normal(size=(S, n, n))
    return A @ A.transpose(0, 2, 1) + 0.1 * np.eye(n)


@pytest.mark.parametrize("n", [1, 4, 33, 200])  # 200: LAPACK's blocked factorisation
def test_matches_scipy_and_a_matrix_that_is_not_positive_definite_weighs_nothing(n):
    rng = np.random.default_rng(n)
    K = _covariances(5, n, rng)
    K[2] = -np.eye(n)
    r = rng.normal(size=n)
    got = gaussian_log_likelihoods(K, r)
    assert got[2] == -np.inf
    for s in (0, 1, 3, 4):
        want = multivariate_normal(np.zeros(n), K[s]).logpdf(r)
        assert got[s] == pytest.approx(want, rel=1e-10, abs=1e-10)


def test_the_input_is_kept_unless_overwriting_is_asked_and_other_layouts_are_taken():
    rng = np.random.default_rng(1)
    K = _covariances(3, 6, rng)
    r = rng.normal(size=6)
    before = K.copy()
    want = gaussian_log_likelihoods(K, r)
    np.testing.assert_array_equal(K, before)
    np.testing.assert_allclose(gaussian_log_likelihoods(np.asfortranarray(K), r), want)
    np.testing.assert_allclose(gaussian_log_likelihoods(K.astype(np.float32), r), want, rtol=1e-5)
    np.testing.assert_allclose(gaussian_log_likelihoods(K, r, overwrite_K=True), want)
    np.testing.assert_allclose(np.tril(K[1]), np.linalg.cholesky(before[1]), rtol=1e-12)


def test_residuals_of_their_own_per_matrix_are_each_matrixs_likelihood():
    rng = np.random.default_rng(2)
    K, R = _covariances(4, 5, rng), rng.normal(size=(4, 5))
    each = [gaussian_log_likelihoods(K[s : s + 1], R[s])[0] for s in range(4)]
    np.testing.assert_allclose(gaussian_log_likelihoods(K, R), each, rtol=1e-12)
    with pytest.raises(ValueError, match=r"got K \(4, 5, 5\) and r \(3, 5\)"):
        gaussian_log_likelihoods(K, R[:3])


def test_empty_batches_and_points_and_shapes_refused_by_name():
    assert gaussian_log_likelihoods(np.zeros((0, 3, 3)), np.zeros(3)).shape == (0,)
    np.testing.assert_array_equal(gaussian_log_likelihoods(np.zeros((2, 0, 0)), np.zeros(0)), 0.0)
    with pytest.raises(
        ValueError, match=r"K must be \(S, n, n\) and r \(n,\) or \(S, n\); got K \(3, 3\)"
    ):
        gaussian_log_likelihoods(np.eye(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"got K \(1, 3, 3\) and r \(2,\)"):
        gaussian_log_likelihoods(np.eye(3)[None], np.zeros(2))


def test_one_matrix_gives_a_float_and_names_its_own_shape():
    K, r = np.eye(3) + 0.5, np.array([0.3, -1.0, 2.0])
    want = multivariate_normal(np.zeros(3), K).logpdf(r)
    assert gaussian_log_likelihood(K, r) == pytest.approx(want, rel=1e-12)
    assert np.isnan(gaussian_log_likelihood(K, np.array([0.3, np.nan, 2.0])))
    with pytest.raises(ValueError, match=r"got K \(3,\) and r \(3,\)"):
        gaussian_log_likelihood(np.ones(3), r)
    with pytest.raises(ValueError, match=r"got K \(3, 3\) and r \(2,\)"):
        gaussian_log_likelihood(K, r[:2])
