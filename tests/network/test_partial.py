"""Which node to evaluate next (pp_decomp.network.partial) and sampling a network with
some nodes' values known (NetworkSurrogate.samples with fixed)."""

from __future__ import annotations

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.models.networks import alpine2_network
from pp_decomp.network import (
    Network,
    NetworkEI,
    NetworkSurrogate,
    Node,
    next_node,
    node_bounds,
    node_choice,
    problem_network,
    remaining_cost,
)


@pytest.fixture(scope="module")
def diamond():
    # a -> b, a -> c, (b, c) -> d: b and c become evaluable together, in the graph's order
    return Network(
        [
            Node("d", None, parents=("b", "c"), cost=5.0),
            Node("a", None, inputs=(0,), cost=1.0),
            Node("b", None, inputs=(0,), parents=("a",), cost=2.0),
            Node("c", None, inputs=(1,), parents=("a",), cost=3.0),
        ],
        dim=2,
    )


def test_the_next_node_is_the_first_evaluable_one_in_the_graphs_order(diamond):
    known = lambda *names: np.array([n in names for n in diamond.names])  # noqa: E731
    assert diamond.names[next_node(diamond, known())] == "a"
    assert diamond.names[next_node(diamond, known("a"))] in ("b", "c")
    assert diamond.names[next_node(diamond, known("a", "b"))] == "c"
    assert diamond.names[next_node(diamond, known("a", "b", "c"))] == "d"
    assert next_node(diamond, known("a", "b", "c", "d")) is None
    assert remaining_cost(diamond, known("a", "c")) == 7.0


def test_expected_improvement_per_cost_picks_the_row_or_the_new_input(diamond):
    known = np.array([[False, True, False, False], [True, True, True, True]])
    # new: 1.1 / 11 = 0.1; row 0 (a known): 1.0 / 10 = 0.1, a tie keeps the new input
    c = node_choice(diamond, 1.1, np.array([1.0, 50.0]), known)
    assert c.row is None and diamond.names[c.node] == "a" and c.ei_per_cost == pytest.approx(0.1)
    c = node_choice(diamond, 1.1, np.array([1.2, 50.0]), known)  # row 1 has nothing left
    assert c.row == 0 and c.ei_per_cost == pytest.approx(0.12) and c.ei_per_cost_new == 0.1


@pytest.fixture(scope="module")
def fitted():
    p = alpine2_network(n_nodes=3)
    net = problem_network(p)
    X = p.domain.sample(10, seed=0)
    Y = p.evaluate(X)
    gps = [
        ppd.ComponentGP(bounds=node_bounds(net, k, p.domain, Y)).fit(
            net.node_inputs(k, X, Y), Y[:, k], "map", seed=0
        )
        for k in range(len(net))
    ]
    return p, NetworkSurrogate(net, gps, p.sign)


def test_known_values_are_held_on_every_path_and_children_sampled_at_them(fitted):
    p, s = fitted
    X = p.domain.sample(4, seed=1)
    z, idx = s.base_samples(32, np.random.default_rng(0))
    fixed = np.full((4, 3), np.nan)
    fixed[:2, 0] = [1.5, -2.0]  # node y0 known at the first two inputs
    F = s.samples(X, z, idx, fixed)
    free = s.samples(X, z, idx)
    np.testing.assert_array_equal(F[:, :2, 0], np.broadcast_to([1.5, -2.0], (32, 2)))
    np.testing.assert_array_equal(F[:, 2:], free[:, 2:])  # the other inputs are untouched
    # y1 at the first input is sampled at y0 = 1.5: its draw's mean at (x_1, 1.5)
    gp, path = s.gps[1], 0
    Z = np.array([[X[0, 1], 1.5]])
    mean, var = gp.posterior.per_draw_of(gp.scale_X(Z), [idx[path, 1]])
    want = gp.y_mean + gp.y_std * mean[0, 0] + gp.y_std * np.sqrt(var[0, 0]) * z[path, 1]
    assert F[path, 0, 1] == pytest.approx(want)


def test_expected_improvement_with_every_node_known_is_the_improvement_itself(fitted):
    p, s = fitted
    x = p.domain.sample(1, seed=2)
    y = p.evaluate(x)
    ei = NetworkEI(s, best=float(y[0, 2]) - 0.5, n_samples=64, rng=np.random.default_rng(0))
    assert ei(x, y)[0] == pytest.approx(0.5)
    half = ei(x, np.array([[y[0, 0], y[0, 1], np.nan]]))[0]
    assert half != pytest.approx(0.5) and half >= 0
