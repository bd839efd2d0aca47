"""A function network evaluated node by node: ask_node / tell_node / run_nodes, the
design first, expected improvement per unit cost after it, the rows in progress
feeding the node GPs, resume to the same choices, and the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.models import get_problem
from pp_decomp.models.networks import alpine2_network
from pp_decomp.network import Network, NetworkSurrogate, Node, network_problem, node_correlation


@pytest.fixture(scope="module")
def chain():
    return alpine2_network(n_nodes=3)


def test_run_nodes_finishes_the_design_then_chooses_node_by_node(chain):
    opt = ppd.Optimizer(chain, strategy="network-ei", n_init=4, seed=0)
    ds = opt.run_nodes(budget=24)
    nodes, phases = ds["node_evaluation_node"].values, ds["node_evaluation_phase"].values
    assert list(nodes[:12]) == ["y0", "y1", "y2"] * 4 and set(phases[:12]) == {"init"}
    assert set(phases[12:]) == {"acquisition"}
    assert opt.cost_spent() == pytest.approx(float(ds["node_evaluation_cost"].sum()))
    assert 24 <= opt.cost_spent() < 25
    became = ds["partial_became"].values
    for r in np.flatnonzero(became):  # a completed row is an evaluation of the run
        np.testing.assert_array_equal(ds["y"].values[became[r] - 1], ds["partial_y"].values[r])
        np.testing.assert_array_equal(ds["x"].values[became[r] - 1], ds["partial_x"].values[r])
    assert opt.n == int(np.sum(became > 0)) and all(r["by_node"] for r in opt.records)
    # every node GP learns from the evaluations and the open rows where it is known
    log = opt.state.nodes
    opt.ask_node()
    for k, name in enumerate(chain.component_names):
        known = np.isfinite(log.Y[log.open_rows(), k]).sum()
        assert len(opt.models[name].X_train) == opt.n + known


def test_a_node_by_node_run_resumes_to_the_same_choices(chain, tmp_path):
    kw = dict(strategy="network-ei", n_init=4, seed=1)
    straight = ppd.Optimizer(chain, **kw).run_nodes(22)
    path = tmp_path / "nodes.nc"
    with ppd.Optimizer.open(path, chain, **kw) as opt:
        opt.run_nodes(16)
        asked = opt.ask_node()
    resumed = ppd.Optimizer.open(path, chain, **kw)
    again = resumed.ask_node()  # the node asked before the stop, as it was
    assert again.node == asked.node and np.array_equal(again.x, asked.x)
    assert again.parents == asked.parents
    ds = resumed.run_nodes(22)
    for name in ("node_evaluation_node", "node_evaluation_value", "partial_x", "x"):
        np.testing.assert_array_equal(ds[name].values, straight[name].values)


def test_bad_node_tells_are_refused_naming_the_node_and_nothing_is_recorded(chain):
    opt = ppd.Optimizer(chain, strategy="network-ucb", n_init=4, seed=0)
    x = np.full(3, 0.5)
    cases = [
        (dict(node="y9", x=x, value=1.0), ValueError, "'y9' is not in the network"),
        (dict(node=0, x=x, value=1.0), TypeError, "node must be a node's name"),
        (dict(node="y0", x=x, value=np.nan), ValueError, "node 'y0': value must be"),
        (dict(node="y0", x=x, value=[1.0, 2.0]), ValueError, "node 'y0': value must be"),
        (dict(node="y0", x=np.full(3, 2.0), value=1.0), ValueError, "outside the problem"),
        (dict(node="y1", x=x, value=1.0), ValueError, r"node 'y1' reads \['y0'\]"),
        (dict(node="y1", x=x, value=1.0, parents={"y2": 1.0}), ValueError, "reads parents"),
        (dict(node="y1", x=x, value=1.0, parents={"y0": np.inf}), ValueError, "finite"),
        (dict(node="y1", x=x, value=1.0, parents={"y0": [1.0, 2.0]}), ValueError, "y1'.*one"),
        (dict(node="y1", x=x, value=1.0, parents={"y0": []}), ValueError, "y1'.*one"),
        (dict(node="y0", x=[0.5], value=1.0), ValueError, "node 'y0': "),
        (dict(node="y0", x=x, value="abc"), TypeError, "node 'y0': value must be"),
        (dict(node="y0", x=np.full(3, 2.0), value=1.0), ValueError, "node 'y0': x="),
    ]
    for kwargs, err, match in cases:
        with pytest.raises(err, match=match):
            opt.tell_node(**kwargs)
    assert len(opt.state.nodes) == 0 and opt.n == 0
    opt.tell_node("y0", x, 1.0)
    with pytest.raises(ValueError, match=r"node 'y0' was told at x=\[0.5, 0.5, 0.5\] before"):
        opt.tell_node("y0", x, 2.0)
    assert opt.state.nodes.Y[0, 0] == 1.0 and len(opt.state.nodes) == 1


def test_a_users_node_values_complete_a_row_and_given_parents_feed_only_the_child(chain):
    opt = ppd.Optimizer(chain, strategy="network-ucb", n_init=4, seed=0)
    opt.run(4)
    x = np.full(3, 0.3)
    y = chain.evaluate(x[None])[0]
    opt.tell_node("y0", x, y[0])
    opt.tell_node("y1", x, y[1])
    assert opt.n == 4
    opt.tell_node("y2", x, y[2])
    assert opt.n == 5 and np.array_equal(opt.X[-1], x) and opt.records[-1]["phase"] == "user"
    opt.tell_node("y2", np.full(3, 0.6), 3.0, parents={"y1": 2.0})
    assert opt.n == 5  # a row with a given value never becomes an evaluation
    opt.ask_node()
    assert len(opt.models["y2"].X_train) == 6 and len(opt.models["y1"].X_train) == 5
    assert opt.models["y2"].X_train[-1].tolist() == [0.6, 2.0]


def test_a_row_whose_costly_first_node_came_out_well_is_finished_and_a_poor_one_left():
    # a is the costly stage (10), b a cheap one after it (1): finishing a good row is cheap
    net = Network(
        [
            Node("a", lambda Z: Z[:, 0], inputs=(0,), cost=10.0),
            Node("b", lambda Z: Z[:, 1] + 0.1 * Z[:, 0], inputs=(0,), parents=("a",), cost=1.0),
        ],
        dim=1,
    )
    p = network_problem(net, ppd.Box([0], [1]), name="stages")
    opt = ppd.Optimizer(p, strategy="network-ei", n_init=6, seed=0)
    opt.run(6)
    opt.tell_node("a", [0.98], 0.98)
    opt.tell_node("a", [0.3], 0.3)
    first = opt.ask_node()
    assert first.node == "b" and first.x.tolist() == [0.98] and first.parents == {"a": 0.98}
    opt.tell_node("b", first.x, 0.98 + 0.098)
    second = opt.ask_node()
    assert second.node == "a" and second.x.tolist() != [0.3]
    assert opt.state.nodes.pending["record"]["ei_per_cost"] > 0


def test_ask_node_needs_a_network_strategy_and_tell_node_a_network():
    with pytest.raises(ValueError, match="ask_node .* 'gp-ucb' does not model the nodes"):
        ppd.Optimizer(alpine2_network(n_nodes=2), strategy="gp-ucb").ask_node()
    with pytest.raises(ValueError, match="not a function network"):
        ppd.Optimizer(get_problem("synthetic")).tell_node("f0", [0.5, 0.5], 1.0)


def test_a_failed_node_closes_its_row_and_the_run_goes_on(chain):
    opt = ppd.Optimizer(chain, strategy="network-ei", n_init=4, seed=0)
    a = opt.ask_node()
    opt.tell_failure(a.x, "the first stage broke")
    b = opt.ask_node()
    assert not np.array_equal(a.x, b.x) and len(opt.failures) == 1
    ds = opt.results()
    assert ds["failed_phase"].values.tolist() == ["init"]
    assert ds["partial_became"].values.tolist() == [-1, 0]


def test_the_asks_own_parents_told_back_and_whole_tells_at_a_row_close_it(chain):
    opt = ppd.Optimizer(chain, strategy="network-ei", n_init=4, seed=0)
    for _ in range(2):  # the ask's parents passed back are the row's values: no new row
        a = opt.ask_node()
        y = chain.evaluate(a.x[None])[0]
        opt.tell_node(a.node, a.x, y[chain.component_names.index(a.node)], parents=a.parents)
    log = opt.state.nodes
    assert len(log.starts) == 1 and np.isfinite(log.Y[0, :2]).all() and log.pending is None
    opt.tell(a.x, chain.evaluate(a.x[None])[0])  # told whole: the row is closed, not asked again
    assert log.became == [1] and opt.records[0]["phase"] == "init"
    assert not np.array_equal(opt.ask_node().x, a.x) and opt.state.design_left == 2


def test_an_input_from_ask_told_node_by_node_keeps_its_record(chain):
    opt = ppd.Optimizer(chain, strategy="network-ei", n_init=4, seed=0)
    x = opt.ask()
    y = chain.evaluate(x[None])[0]
    for k, name in enumerate(chain.component_names):
        opt.tell_node(name, x, y[k])
    assert len(opt.pending) == 0 and opt.n == 1 and opt.records[0]["phase"] == "init"
    assert opt.state.design_left == 3


def test_run_nodes_computes_a_child_from_its_parents_true_outputs_under_noise():
    net = Network(
        [
            Node("a", lambda Z: Z[:, 0], inputs=(0,)),
            Node("b", lambda Z: Z[:, 1], inputs=(0,), parents=("a",)),
        ],
        dim=1,
    )
    p = network_problem(net, ppd.Box([0], [1]), noise_sd=[0.5, 0.0], name="copy")
    opt = ppd.Optimizer(p, strategy="network-ei", n_init=3, seed=0)
    opt.run_nodes(budget=10)
    np.testing.assert_allclose(opt.Y[:, 1], opt.X[:, 0])  # b copies a's truth, not its reading
    assert np.abs(opt.Y[:, 0] - opt.X[:, 0]).max() > 0.05


def test_a_node_by_node_run_with_the_copula_couples_its_nodes_on_the_evaluations(chain):
    opt = ppd.Optimizer(chain, strategy="network-ucb", n_init=4, seed=0, copula=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.run_nodes(budget=21)
        opt.ask_node()
    assert not [w for w in caught if "as independent" in str(w.message)]
    gps = [opt.models[name] for name in chain.component_names]
    assert len({len(gp.X_train) for gp in gps}) > 1  # open rows: the nodes' data differ
    C = NetworkSurrogate.of(chain, opt.models, copula=True, shared=opt.n).corr
    np.testing.assert_allclose(C, node_correlation(gps, opt.n))
    assert not np.allclose(C, np.eye(3))


def test_a_node_by_node_run_on_the_log_scale_fits_log_y_on_its_open_rows_too():
    from tests.network.test_network_loop import positive_network

    p = positive_network()
    opt = ppd.Optimizer(p, strategy="network-ucb", n_init=4, seed=0, outcome_transform="log")
    opt.run_nodes(budget=16)
    log = opt.state.nodes
    a = opt.models["a"]
    told_a = np.concatenate([opt.state.Y[:, 0], log.Y[log.open_rows(), 0]])
    told_a = told_a[np.isfinite(told_a)]
    assert len(a.y_train) > opt.n  # node a also learnt from rows left open
    # every value it regresses is the log of a value told for it (the last fit's data)
    gap = np.abs(a.y_train[:, None] - np.log(told_a)[None]).min(axis=1)
    assert gap.max() < 1e-12
    ask = opt.ask_node()
    if ask.node == "a":  # a non-positive value for a logged node is refused, nothing told
        with pytest.raises(ValueError, match="node 'a' is on the log scale .* got -0.5"):
            opt.tell_node(ask.node, ask.x, -0.5, parents=ask.parents)
    with pytest.raises(ValueError, match="node 'a' is on the log scale .* got 0.0"):
        opt.tell_node("a", p.domain.sample(1, seed=9)[0], 0.0)
    assert len(opt.state.nodes) == len(log)
