"""Products with the draws' triangular factors read in a buffer with spare rows."""

import numpy as np
import pytest

from pp_decomp.components.posterior.triangular import lower_times, lower_transposed_times


def _buffer(S: int, n: int, cap: int, rng) -> np.ndarray:
    buf = rng.normal(size=(S, cap, cap))  # what is above the diagonal must not be read
    for s in range(S):
        buf[s, :n, :n] = np.tril(buf[s, :n, :n]) + np.triu(np.full((n, n), np.nan), 1)
    return buf


@pytest.mark.parametrize("m", [1, 3])
def test_products_match_numpy_on_the_lower_triangle_of_chosen_factors(m):
    rng = np.random.default_rng(0)
    n, cap = 7, 12
    buf = _buffer(5, n, cap, rng)
    keep = np.array([4, 1, 1])
    K = rng.normal(size=(3, n, m))
    L = [np.tril(np.nan_to_num(buf[s, :n, :n])) for s in keep]
    want = np.stack([Ls @ Kk for Ls, Kk in zip(L, K, strict=True)])
    want_t = np.stack([Ls.T @ Kk for Ls, Kk in zip(L, K, strict=True)])
    np.testing.assert_allclose(lower_times(buf, keep, n, K), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        lower_transposed_times(buf, keep, n, K), want_t, rtol=1e-12, atol=1e-12
    )


def test_a_strided_input_is_taken_and_not_overwritten():
    rng = np.random.default_rng(1)
    buf = _buffer(2, 4, 6, rng)
    K = rng.normal(size=(2, 6, 3))[:, :4, :]  # not contiguous
    before = K.copy()
    out = lower_times(buf, [0, 1], 4, K)
    np.testing.assert_array_equal(K, before)
    np.testing.assert_allclose(out[1], np.tril(np.nan_to_num(buf[1, :4, :4])) @ K[1])


@pytest.mark.parametrize(
    "keep, n, shape, match",
    [
        ([0, 2], 3, (2, 3, 1), "keep must index"),
        ([0], 5, (1, 5, 1), "K must have shape"),
        ([0, 1], 3, (1, 3, 1), "K must have shape"),
    ],
)
def test_bad_arguments_are_named(keep, n, shape, match):
    buf = np.zeros((2, 4, 4))
    with pytest.raises(ValueError, match=match):
        lower_times(buf, keep, n, np.zeros(shape))


def test_a_buffer_that_is_not_a_c_ordered_stack_of_squares_is_refused():
    with pytest.raises(ValueError, match="buf must be"):
        lower_times(np.zeros((2, 4, 4))[:, :3, :3], [0], 2, np.zeros((1, 2, 1)))


def test_empty_products_are_empty_and_silent(capfd):
    buf = np.zeros((2, 4, 4))
    assert lower_times(buf, [0, 1], 3, np.zeros((2, 3, 0))).shape == (2, 3, 0)
    assert lower_times(buf, [0], 0, np.zeros((1, 0, 2))).shape == (1, 0, 2)
    assert lower_transposed_times(buf, [], 3, np.zeros((0, 3, 1))).shape == (0, 3, 1)
    assert lower_times(buf, [0], 0, np.zeros((1, 0, 1))).shape == (1, 0, 1)
    out, err = capfd.readouterr()
    assert "illegal" not in out + err  # BLAS's complaint at a zero leading dimension


@pytest.mark.parametrize(
    "buf, keep, K, match",
    [
        (np.zeros((2, 4, 4), dtype=np.float32), [0], np.zeros((1, 3, 1)), "float64"),
        (np.zeros((2, 4, 4)), [0], np.zeros((3, 1)), "K must have shape"),
        (np.zeros((2, 4, 4)), [0.0], np.zeros((1, 3, 1)), "keep must be a 1-D array of integers"),
        (np.zeros((2, 4, 4)), [[0]], np.zeros((1, 3, 1)), "keep must be a 1-D array of integers"),
    ],
)
def test_wrong_types_and_shapes_are_refused_by_name(buf, keep, K, match):
    with pytest.raises(ValueError, match=match):
        lower_times(buf, keep, 3, K)


def test_a_read_only_input_is_multiplied_as_any_other():
    rng = np.random.default_rng(2)
    buf = _buffer(1, 3, 5, rng)
    y = rng.normal(size=3)
    K = np.broadcast_to(y[:, None], (1, 3, 1))  # read-only, as IncrementalPosterior passes y
    want = np.tril(np.nan_to_num(buf[0, :3, :3])) @ y
    np.testing.assert_allclose(lower_times(buf, [0], 3, K)[0, :, 0], want, rtol=1e-12)
