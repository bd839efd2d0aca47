"""Sampling through a function network and the acquisitions on it
(:mod:`pp_decomp.network.surrogate`, :mod:`pp_decomp.network.acquisition`)."""

from __future__ import annotations

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.models.networks import alpine2_network
from pp_decomp.network import NetworkEI, NetworkSurrogate, NetworkUCB, node_bounds


@pytest.fixture(scope="module")
def fitted():
    p = alpine2_network(n_nodes=3)
    net = p.metadata["network"]
    X = p.domain.sample(15, seed=0)
    Y = p.evaluate(X)
    gps = [
        ppd.ComponentGP(bounds=node_bounds(net, k, p.domain, Y)).fit(
            net.node_inputs(k, X, Y), Y[:, k], "map", seed=k
        )
        for k in range(len(net))
    ]
    return p, net, X, Y, gps


def test_posterior_of_chosen_draws_is_those_rows_of_every_draw():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(12, 2))
    gp = ppd.ComponentGP(bounds=[[0, 0], [1, 1]]).fit(X, np.sin(4 * X[:, 0]), "map", seed=0)
    draws = gp.draws.subset(np.zeros(3, dtype=int))  # three draws, all the mode
    draws.ls[1] *= 2
    draws.eta[2] *= 0.5
    gp.condition(X, np.sin(4 * X[:, 0]), draws)
    Xnew = rng.uniform(size=(7, 2))
    mean, var = gp.predict_per_draw(Xnew)
    m1, v1 = gp.posterior.per_draw_of(gp.scale_X(Xnew), [2, 1])
    m1, v1 = gp.y_mean + gp.y_std * m1, gp.y_std**2 * v1
    np.testing.assert_allclose(m1, mean[[2, 1]], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(v1, var[[2, 1]], rtol=1e-8, atol=1e-12)


def test_a_child_is_sampled_at_its_parents_sampled_values(fitted):
    p, net, X, Y, gps = fitted
    s = NetworkSurrogate(net, gps, p.sign)
    z, idx = s.base_samples(32, np.random.default_rng(1))
    Xq = p.domain.sample(4, seed=2)
    F = s.samples(Xq, z, idx)
    n = 5  # one path, by hand: each node at its inputs and its parent's sampled value
    by_hand = np.empty((4, 3))
    for k in range(3):
        Z = net.node_inputs(k, Xq, by_hand)
        mean, var = gps[k].predict_per_draw(Z)
        by_hand[:, k] = mean[idx[n, k]] + np.sqrt(var[idx[n, k]]) * z[n, k]
    np.testing.assert_allclose(F[n], by_hand, rtol=1e-9)
    np.testing.assert_allclose(s.objective_samples(Xq, z, idx), F[..., -1])


def test_the_network_posterior_carries_the_parents_uncertainty(fitted):
    p, net, X, Y, gps = fitted
    s = NetworkSurrogate(net, gps, p.sign)
    z, idx = s.base_samples(512, np.random.default_rng(3))
    Xq = p.domain.sample(64, seed=4)
    F = s.samples(Xq, z, idx)
    # the last node's spread exceeds its own GP's at the parent's mean: the chain adds
    # the parent's uncertainty to its own
    parent_mean = F[..., 1].mean(0)
    _, own_var = gps[2].predict(np.c_[Xq[:, 2], parent_mean])
    assert np.median(F[..., 2].std(0) / np.sqrt(own_var)) > 1.2  # 1.47 measured
    # and it is right about the truth: the observed values fall inside its 99% band
    F_obs = s.samples(X, z, idx)
    lo, hi = np.quantile(F_obs, [0.005, 0.995], axis=0)
    assert np.mean((Y >= lo) & (Y <= hi)) > 0.9


def test_base_samples_share_the_draws_equally_and_are_reproducible(fitted):
    p, net, X, Y, gps = fitted
    s = NetworkSurrogate(net, gps, p.sign)
    z1, i1 = s.base_samples(100, np.random.default_rng(7))
    z2, i2 = s.base_samples(100, np.random.default_rng(7))
    np.testing.assert_array_equal(z1, z2)
    np.testing.assert_array_equal(i1, i2)
    assert z1.shape == (100, 3) and i1.shape == (100, 3) and np.all(i1 == 0)  # MAP: one draw
    assert abs(z1.mean()) < 0.05 and abs(z1.std() - 1) < 0.05


class _Gaussian:
    """A stand-in surrogate: ``h_n(x) = μ(x) + σ(x) z_n``."""

    def base_samples(self, n, rng):
        return rng.standard_normal((n, 1)), None

    def objective_samples(self, X, z, idx, fixed=None):
        return X[:, 0] + X[:, 1] * z


def test_ucb_is_mean_plus_root_beta_sd_on_gaussian_samples_and_ei_is_the_closed_form():
    from scipy.stats import norm

    X = np.array([[0.0, 1.0], [1.0, 2.0], [-3.0, 0.5]])
    ucb = NetworkUCB(_Gaussian(), 4.0, 200_000, np.random.default_rng(0))(X)
    np.testing.assert_allclose(ucb, X[:, 0] + 2 * X[:, 1], atol=0.02)
    assert NetworkUCB(_Gaussian(), 0.0, 1000, np.random.default_rng(0))(X)[0] == pytest.approx(
        0.0, abs=0.1
    )
    ei = NetworkEI(_Gaussian(), 0.5, 200_000, np.random.default_rng(0))(X)
    u = (X[:, 0] - 0.5) / X[:, 1]
    exact = X[:, 1] * (u * norm.cdf(u) + norm.pdf(u))
    np.testing.assert_allclose(ei, exact, atol=0.01)


def test_a_tie_is_broken_by_the_means_the_last_call_kept_without_sampling_again():
    class Counted(_Gaussian):
        calls = 0

        def objective_samples(self, X, z, idx, fixed=None):
            Counted.calls += 1
            return super().objective_samples(X, z, idx, fixed)

    X = np.array([[0.0, 1.0], [1.0, 2.0], [-3.0, 0.5]])
    ei = NetworkEI(Counted(), 100.0, 256, np.random.default_rng(0))
    ei(X)
    means = ei.tie_break(X[[2, 0]])
    assert Counted.calls == 1
    np.testing.assert_array_equal(means, ei.samples(X[[2, 0]]).mean(0))
    ei.tie_break(np.array([[5.0, 1.0]]))  # an input the last call did not value is sampled
    assert Counted.calls == 3


def test_paths_take_every_draw_or_distinct_ones_at_random():
    from pp_decomp.network.surrogate import _draws_for

    rng = np.random.default_rng(0)
    many = _draws_for(256, 128, rng)  # a NUTS fit's 256 draws, 128 paths
    assert len(set(many)) == 128 and many.max() > 200  # not only the first chains' draws
    few = _draws_for(3, 8, rng)
    assert sorted(np.bincount(few, minlength=3)) == [2, 3, 3]


def _several_draws(gp, rng):
    """``gp`` conditioned on three draws around its mode (a full-Bayes stand-in)."""
    draws = gp.draws.subset(np.zeros(3, dtype=int))
    draws.ls[1] *= 1.7
    draws.eta[2] *= 0.6
    return gp.condition(gp.X_train, gp.y_train, draws)


def _fd(f, x, h=1e-6):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.shape[1])], axis=-1)


@pytest.mark.parametrize("draws", ["map", "several"])
def test_the_acquisitions_gradients_are_those_of_their_values(fitted, draws):
    p, net, X, Y, gps = fitted
    rng = np.random.default_rng(1)
    if draws == "several":
        gps = [_several_draws(gp, rng) for gp in gps]
    s = NetworkSurrogate(net, gps, p.sign)
    x = p.domain.sample(4, seed=3)
    best = float(np.median(Y[:, -1]))
    for acq in (NetworkEI(s, best, 48, rng), NetworkUCB(s, 3.0, 48, rng)):
        value, grad = acq.value_and_grad(x)
        np.testing.assert_allclose(value, acq(x), rtol=1e-12)
        np.testing.assert_allclose(grad, _fd(acq, x), rtol=1e-5, atol=1e-7)
    assert NetworkUCB.gradient_min_dim == 1  # the searches climb on it at every dimension


def test_a_given_objective_climbs_on_its_own_gradient_or_on_differences(fitted):
    p, _, X, Y, gps = fitted
    nodes = p.metadata["network"].nodes
    target = Y[0]
    sq = lambda F: -np.sum((F - target) ** 2, axis=-1)  # noqa: E731
    with_grad = ppd.network.Network(
        nodes, 3, objective=sq, objective_grad=lambda F: -2 * (F - target)
    )
    acq = NetworkUCB(NetworkSurrogate(with_grad, gps), 2.0, 32, np.random.default_rng(0))
    x = p.domain.sample(3, seed=4)
    np.testing.assert_allclose(acq.value_and_grad(x)[1], _fd(acq, x), rtol=1e-5, atol=1e-7)
    without = NetworkUCB(
        NetworkSurrogate(ppd.network.Network(nodes, 3, objective=sq), gps),
        2.0,
        32,
        np.random.default_rng(0),
    )
    with pytest.raises(NotImplementedError, match="objective_grad"):
        without.value_and_grad(x)
    with pytest.raises(TypeError, match="objective_grad must be a function"):
        ppd.network.Network(nodes, 3, objective=sq, objective_grad=2.0)


@pytest.fixture(scope="module")
def positive():
    """A positive two-node network spanning two orders of magnitude, its GPs on the
    log of each node."""
    from tests.network.test_network_loop import positive_network

    p = positive_network()
    net = p.metadata["network"]
    X = p.domain.sample(14, seed=0)
    Y = p.evaluate(X)
    gps = [
        ppd.ComponentGP(bounds=node_bounds(net, k, p.domain, Y)).fit(
            net.node_inputs(k, X, Y), np.log(Y[:, k]), "map", seed=k
        )
        for k in range(len(net))
    ]
    return p, net, X, Y, gps


def test_a_logged_node_is_sampled_as_exp_of_its_gp_and_its_child_reads_that_value(positive):
    p, net, X, Y, gps = positive
    s = NetworkSurrogate(net, gps, p.sign, logged=[True, True])
    z, idx = s.base_samples(32, np.random.default_rng(1))
    Xq = p.domain.sample(4, seed=2)
    F = s.samples(Xq, z, idx)
    n = 7
    by_hand = np.empty((4, 2))
    for k in range(2):
        mean, var = gps[k].predict_per_draw(net.node_inputs(k, Xq, by_hand))
        by_hand[:, k] = np.exp(mean[idx[n, k]] + np.sqrt(var[idx[n, k]]) * z[n, k])
    np.testing.assert_allclose(F[n], by_hand, rtol=1e-9)
    assert np.all(F > 0)
    # believed values: the log-normal's median, the child at its parent's
    med_a = np.exp(gps[0].predict(Xq[:, :1])[0])
    med_b = np.exp(gps[1].predict(np.c_[Xq[:, 1], med_a])[0])
    np.testing.assert_allclose(s.believed(Xq), np.c_[med_a, med_b], rtol=1e-9)
    # at the data, the paths' median is the observation (the GPs nearly interpolate)
    F_obs = s.samples(X[:5], *s.base_samples(512, np.random.default_rng(2)))
    np.testing.assert_allclose(np.median(F_obs[..., 0], axis=0), Y[:5, 0], rtol=0.1)
    with pytest.raises(ValueError, match="logged must name each of the 2 nodes"):
        NetworkSurrogate(net, gps, p.sign, logged=[True])


@pytest.mark.parametrize("draws, logs", [("map", [True, False]), ("several", [True, True])])
def test_gradients_through_logged_nodes_are_those_of_their_values(positive, draws, logs):
    p, net, X, Y, gps = positive
    rng = np.random.default_rng(1)
    if draws == "several":
        gps = [_several_draws(gp, rng) for gp in gps]
    s = NetworkSurrogate(net, gps, p.sign, logged=logs)
    x = p.domain.sample(4, seed=3)
    z, idx = s.base_samples(16, rng)
    F, dF = s.samples_and_grad(x, z, idx)
    np.testing.assert_allclose(F, s.samples(x, z, idx), rtol=1e-12)
    for k in range(2):
        fd = _fd(lambda v, k=k: s.samples(v, z, idx)[..., k], x)
        np.testing.assert_allclose(dF[:, :, k], fd, rtol=1e-5, atol=1e-7)
    acq = NetworkUCB(s, 3.0, 48, rng)
    np.testing.assert_allclose(acq.value_and_grad(x)[1], _fd(acq, x), rtol=1e-5, atol=1e-7)
