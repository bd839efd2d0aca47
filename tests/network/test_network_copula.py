"""The copula on a function network (``copula=True`` on a network strategy): the
nodes' normals coupled by the correlation of their whitened residuals, each node
keeping its marginal; recorded, resumed to the same choices, refused where it
cannot apply."""

from __future__ import annotations

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.models.networks import alpine2_network
from pp_decomp.network import Network, NetworkSurrogate, Node, network_problem, node_bounds
from pp_decomp.network.surrogate import node_correlation
from pp_decomp.strategies.compat import UnsupportedSetting


def _twins(sign: float) -> ppd.Problem:
    """Two roots on the same input whose truths move together (``sign=1``) or against
    each other (``-1``), and their sum."""
    bump = lambda Z: np.sin(7 * Z[:, 0]) + Z[:, 0]  # noqa: E731
    nodes = [
        Node("a", bump, inputs=(0,)),
        Node("b", lambda Z: sign * bump(Z), inputs=(0,)),
        Node("sum", lambda Z: Z[:, 0] + Z[:, 1], parents=("a", "b")),
    ]
    return network_problem(Network(nodes, dim=1), ppd.Box([0], [1]))


def _fits(problem, n=9, rows=lambda k, n: n):
    """One MAP GP per node on ``n`` random evaluations, node ``k`` on the first
    ``rows(k, n)`` of them."""
    net = problem.metadata["network"]
    X = problem.domain.sample(n, seed=0)
    Y = problem.evaluate(X)
    fits = []
    for k in range(len(net)):
        m = rows(k, n)
        gp = ppd.ComponentGP(bounds=node_bounds(net, k, problem.domain, Y))
        fits.append(gp.fit(net.node_inputs(k, X, Y)[:m], Y[:m, k], "map", seed=0))
    return fits


def _by_name(problem, gps) -> dict:
    return dict(zip(problem.component_names, gps, strict=True))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_nodes_that_err_together_get_their_correlation(sign):
    gps = _fits(_twins(sign))
    C = node_correlation(gps)
    n = len(gps[0].posterior.y)
    # the twins' GPs see the same data up to sign: the same residuals, so n / (n + 1)
    np.testing.assert_allclose(C[0, 1], sign * n / (n + 1), rtol=1e-6)
    np.testing.assert_allclose(np.diag(C), 1.0)
    assert np.all(np.linalg.eigvalsh(C) > 0)


def test_the_copula_keeps_each_node_marginal_and_widens_a_sum_of_twins():
    problem = _twins(1.0)
    net, gps = problem.metadata["network"], _fits(problem)
    plain = NetworkSurrogate(net, gps, problem.sign)
    coupled = NetworkSurrogate.of(problem, _by_name(problem, gps), copula=True)
    assert coupled.corr[0, 1] > 0.8
    z, _ = coupled.base_samples(4096, np.random.default_rng(1))
    np.testing.assert_allclose(z.std(0), 1.0, atol=0.03)  # each node's normals: N(0, 1)
    np.testing.assert_allclose(np.corrcoef(z.T), coupled.corr, atol=0.03)
    x = np.array([[0.37]])
    F_plain = plain.sample(x, 4096, np.random.default_rng(2))[:, 0]
    F_coupled = coupled.sample(x, 4096, np.random.default_rng(2))[:, 0]
    for k in (0, 1):  # the roots' marginals are the same
        assert F_coupled[:, k].std() == pytest.approx(F_plain[:, k].std(), rel=0.05)
    # the sum of two nodes that err together is wider than their independent parts say
    a, b = F_coupled[:, 0].std(), F_coupled[:, 1].std()
    assert (F_coupled[:, 0] + F_coupled[:, 1]).std() > 1.3 * np.hypot(a, b)
    assert (F_plain[:, 0] + F_plain[:, 1]).std() < 1.1 * np.hypot(a, b)


def test_nodes_observed_at_different_rows_stay_independent():
    problem = _twins(1.0)
    # node k evaluated at the first 9 - k rows only, as after partial evaluations
    gps = _fits(problem, rows=lambda k, n: n - k)
    assert node_correlation(gps) is None
    with pytest.warns(UserWarning, match="take the nodes as independent"):  # said, not silent
        assert NetworkSurrogate.of(problem, _by_name(problem, gps), True).corr is None


def test_nodes_fitted_beyond_the_evaluations_are_paired_on_the_shared_ones():
    # a run's nodes: 9 evaluations, then each root's own open rows, equally many
    problem = _twins(1.0)
    net = problem.metadata["network"]
    X = problem.domain.sample(15, seed=1)
    Y = problem.evaluate(X)
    draws = HyperDraws(ls=np.array([[0.3]]), eta=np.array([1.0]), sigma=np.array([0.05]))

    def conditioned(rows):
        gps = []
        for k in range(2):
            gp = ppd.ComponentGP(bounds=problem.domain.bounds, standardize=False)
            gps.append(gp.condition(net.node_inputs(k, X, Y)[rows[k]], Y[rows[k], k], draws))
        return gps

    shared = np.arange(9)
    extended = conditioned([np.r_[shared, 9, 10, 11], np.r_[shared, 12, 13, 14]])
    alone = conditioned([shared, shared])
    # whitened residuals are one-step-ahead errors: the first 9 are the shared rows' alone
    np.testing.assert_allclose(node_correlation(extended, 9), node_correlation(alone), rtol=1e-10)
    assert not np.allclose(node_correlation(extended), node_correlation(alone), rtol=1e-3)
    assert node_correlation(extended, 1) is None  # one shared row: nothing to estimate
    assert node_correlation(extended, 13) is None  # more than a node has


def test_a_network_run_with_the_copula_records_it_and_resumes_to_the_same_choices(tmp_path):
    chain = alpine2_network(n_nodes=3)
    kw = dict(strategy="network-ucb", n_init=5, seed=4, copula=True)
    ref = ppd.Optimizer(chain, **kw)
    ref.run(9)
    off = ppd.Optimizer(chain, **{**kw, "copula": False})
    off.run(9)
    assert not np.array_equal(ref.X, off.X)  # the copula is used, not only recorded
    path = tmp_path / "net.nc"
    opt = ppd.Optimizer(chain, checkpoint=path, **kw)
    opt.run(7)
    opt.close()
    resumed = ppd.Optimizer.resume(path, chain)
    assert resumed.settings.model.copula is True
    resumed.run(9)
    np.testing.assert_array_equal(resumed.X, ref.X)
    resumed.close()


def test_the_copula_on_one_node_or_a_composed_strategy_is_refused_by_name():
    lone = network_problem(
        Network([Node("only", lambda Z: Z[:, 0], inputs=(0,))], dim=1), ppd.Box([0], [1])
    )
    with pytest.raises(UnsupportedSetting, match="at least 2 components"):
        ppd.Optimizer(lone, strategy="network-ucb", copula=True)
    with pytest.raises(UnsupportedSetting, match="node GPs of a network strategy"):
        ppd.Optimizer(alpine2_network(n_nodes=3), strategy="ei", copula=True)
