"""The sinh-arcsinh output warp: inverse, slope, identity, monotonicity, PyTensor form."""

from __future__ import annotations

import numpy as np
import pytest

from pp_decomp.components.output_warps import (
    box_cox,
    box_cox_inverse,
    box_cox_log_slope,
    sinh_arcsinh,
    sinh_arcsinh_inverse,
    sinh_arcsinh_log_slope,
)

U = np.linspace(-40.0, 40.0, 401)
PARAMS = [(0.0, 1.0), (0.8, 0.5), (-1.2, 1.7), (2.0, 0.2)]


@pytest.mark.parametrize("skew, tail", PARAMS)
def test_the_inverse_undoes_the_warp(skew, tail):
    z = sinh_arcsinh(U, skew, tail)
    np.testing.assert_allclose(sinh_arcsinh_inverse(z, skew, tail), U, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("skew, tail", PARAMS)
def test_the_log_slope_is_the_derivative(skew, tail):
    h = 1e-6
    fd = (sinh_arcsinh(U + h, skew, tail) - sinh_arcsinh(U - h, skew, tail)) / (2 * h)
    assert np.all(fd > 0)  # monotone increasing
    np.testing.assert_allclose(sinh_arcsinh_log_slope(U, skew, tail), np.log(fd), atol=1e-6)


def test_zero_skew_unit_tail_is_the_identity():
    np.testing.assert_allclose(sinh_arcsinh(U, 0.0, 1.0), U, rtol=1e-12)
    np.testing.assert_allclose(sinh_arcsinh_log_slope(U, 0.0, 1.0), 0.0, atol=1e-12)


def test_the_log_slope_stays_finite_where_cosh_overflows():
    value = sinh_arcsinh_log_slope(np.array([1e300]), 0.0, 3.0)
    assert np.isfinite(value).all()
    # log cosh(3 asinh u) ≈ 3 log(2u) - log 2 there; minus log u for the 1/sqrt(1 + u²)
    np.testing.assert_allclose(value, np.log(3) + 3 * np.log(2e300) - np.log(2) - np.log(1e300))


def test_draws_broadcast_against_points():
    skew, tail = np.array([[0.0], [0.5]]), np.array([[1.0], [0.7]])
    z = sinh_arcsinh(U[:5], skew, tail)
    assert z.shape == (2, 5)
    np.testing.assert_allclose(z[1], sinh_arcsinh(U[:5], 0.5, 0.7))
    assert sinh_arcsinh_log_slope(U[:5], skew, tail).shape == (2, 5)


def test_the_pytensor_form_is_the_numpy_one():
    import pytensor.tensor as pt

    u, skew, tail = pt.dvector("u"), pt.dscalar("skew"), pt.dscalar("tail")
    f = (sinh_arcsinh(u, skew, tail, pt), sinh_arcsinh_log_slope(u, skew, tail, pt))
    z, slope = (out.eval({u: U, skew: 0.8, tail: 0.5}) for out in f)
    np.testing.assert_allclose(z, sinh_arcsinh(U, 0.8, 0.5), rtol=1e-12)
    np.testing.assert_allclose(slope, sinh_arcsinh_log_slope(U, 0.8, 0.5), rtol=1e-12)


R = np.geomspace(1e-3, 1e3, 301)


@pytest.mark.parametrize("lam", [-0.7, 0.0, 1e-9, 0.3, 1.0, 1.8])
def test_box_cox_inverse_slope_and_limits(lam):
    z = box_cox(R, lam)
    np.testing.assert_allclose(box_cox_inverse(z, lam), R, rtol=1e-7)
    h = 1e-5 * R
    fd = (box_cox(R + h, lam) - box_cox(R - h, lam)) / (2 * h)
    np.testing.assert_allclose(box_cox_log_slope(R, lam), np.log(fd), atol=1e-5)
    if abs(lam) < 1e-8:
        np.testing.assert_allclose(z, np.log(R), rtol=1e-7, atol=1e-12)
    if lam == 1.0:
        np.testing.assert_allclose(z, R - 1, rtol=1e-12)


def test_box_cox_inverse_is_the_images_edge_beyond_it():
    assert box_cox_inverse(-3.0, 0.5) == 0.0  # 1 + λz < 0, λ > 0
    assert box_cox_inverse(3.0, -0.5) == np.inf  # λ < 0
    np.testing.assert_allclose(
        box_cox_inverse(np.array([[1.0], [2.0]]), np.array([[0.5], [0.0]])), [[2.25], [np.exp(2.0)]]
    )


def test_box_cox_pytensor_form_and_gradient_at_the_log():
    import pytensor
    import pytensor.tensor as pt

    r, lam = pt.dvector("r"), pt.dscalar("lam")
    z = box_cox(r, lam, pt)
    grad = pytensor.grad(pt.sum(z + box_cox_log_slope(r, lam, pt)), lam)
    f = pytensor.function([r, lam], [z, grad])
    for value in (0.0, 0.4):
        out, g = f(R, value)
        np.testing.assert_allclose(out, box_cox(R, value), rtol=1e-10)
        h = 1e-5
        fd = (
            np.sum(box_cox(R, value + h) + box_cox_log_slope(R, value + h))
            - np.sum(box_cox(R, value - h) + box_cox_log_slope(R, value - h))
        ) / (2 * h)
        assert np.isfinite(g) and g == pytest.approx(fd, rel=1e-4)


def test_box_cox_second_derivative_in_lambda_at_the_log():
    import pytensor
    import pytensor.tensor as pt

    r, lam = pt.dvector("r"), pt.dscalar("lam")
    grad = pytensor.grad(pt.sum(box_cox(r, lam, pt)), lam)
    second = pytensor.function([r, lam], pytensor.grad(grad, lam))
    big = R[R > 1]  # (log r)³ of one sign, so the sum is far from zero
    # w = log r + λ (log r)²/2 + λ² (log r)³/6 + ...: w'' = (log r)³/3 at λ = 0
    assert second(big, 0.0) == pytest.approx(np.sum(np.log(big) ** 3) / 3, rel=1e-6)
