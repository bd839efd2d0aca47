"""A function network in the loop: the network strategies' runs, their results and
posterior, resume to the same choices, and the refusals before any evaluation."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp import kernels as K
from pp_decomp.models import get_problem
from pp_decomp.models.networks import alpine2_network
from pp_decomp.network import Network, Node, network_problem


@pytest.fixture(scope="module")
def chain():
    return alpine2_network(n_nodes=3)


def test_a_resumed_network_run_makes_the_same_choices(chain, tmp_path):
    kw = dict(strategy="network-ei", n_init=5, seed=3, refit_every=2)
    straight = ppd.Optimizer(chain, **kw).run(9)
    path = tmp_path / "net.nc"
    ppd.Optimizer.open(path, chain, **kw).run(7)
    resumed = ppd.Optimizer.open(path, chain, **kw)
    assert resumed.n == 7
    ds = resumed.run(9)
    np.testing.assert_array_equal(ds["x"].values, straight["x"].values)
    # the results keep each node's lengthscales on the inputs it reads, NaN elsewhere
    ls = ds["ls_mean"].sel(model="y1").values[ds["refit"].sel(model="y1").values]
    assert np.all(np.isnan(ls[:, [0, 2]])) and np.all(np.isfinite(ls[:, 1]))
    assert list(ds["model"].values) == ["y0", "y1", "y2"]


def test_a_node_keeps_its_refits_bounds_until_the_next_refit(chain):
    opt = ppd.Optimizer(chain, strategy="network-ucb", n_init=5, seed=0, refit_every=3)
    seen = []
    for n in range(6, 12):
        opt.run(n)
        refit = bool(opt.results()["refit"].sel(model="y2").values[-1])
        seen.append((refit, opt.models["y2"].bounds.copy()))
    for (_, before), (refit, after) in itertools.pairwise(seen):
        assert refit or np.array_equal(before, after)
    assert any(not np.array_equal(a, b) for (_, a), (_, b) in itertools.pairwise(seen))


def test_predict_samples_every_node_through_the_network(chain, tmp_path):
    opt = ppd.Optimizer(chain, strategy="network-ucb", n_init=6, seed=0)
    opt.run(7)
    X = chain.domain.sample(5, seed=1)
    ds = opt.predict(X, n_samples=256)
    assert ds["component_draws"].shape == (256, 5, 3)
    assert ds.attrs["component_method"] == "monte carlo"
    np.testing.assert_allclose(ds["objective_draws"].values, ds["component_draws"].values[..., 2])
    assert np.all(ds["bound"].values >= ds["objective_mean"].values)
    report = opt.report(tmp_path / "report").read_text()
    assert "network.png" in report and (tmp_path / "report" / "network.png").exists()


def test_a_network_strategy_on_a_problem_without_a_network_is_refused():
    with pytest.raises(ValueError, match="network"):
        ppd.Optimizer(get_problem("synthetic"), strategy="network-ei")


def positive_network() -> ppd.Problem:
    """Two positive nodes: ``a`` spans two orders of magnitude, ``b`` reads it."""
    nodes = [
        Node("a", lambda Z: np.exp(2.5 * np.sin(3 * Z[:, 0])), inputs=(0,)),
        Node("b", lambda Z: Z[:, 1] * (1 + Z[:, 0]), inputs=(1,), parents=("a",)),
    ]
    return network_problem(Network(nodes, dim=2), ppd.Box([0, 0], [1, 1]), name="positive")


def test_a_network_problem_defaults_to_network_ucb_where_it_can_run():
    p = positive_network()  # a network the package did not write
    opt = ppd.Optimizer(p, n_init=3, seed=0)
    assert opt.strategy.name == "network-ucb"
    opt.run(4)
    # each node's GP reads the node's own inputs and its parents' outputs
    Z = opt.models["b"].X_train  # as fitted for the last ask
    assert Z.shape == (3, 2)
    np.testing.assert_allclose(Z[:, 1], opt.state.Y[:3, 0])
    # models given for the nodes are node models, on Z_k = (inputs, parents)
    node_model = {"b": K.Matern52(active_dims=[0, 1])}
    assert ppd.Optimizer(p, seed=0, components=node_model).strategy.name == "network-ucb"
    with pytest.raises(ValueError, match="active_dims"):  # b reads 2 columns, not x's
        ppd.Optimizer(p, seed=0, components={"b": K.Matern52(active_dims=[2])})
    # where network-ucb cannot run, the decomposed default, on x alone
    fast = ppd.Optimizer(p, n_init=3, seed=0, inference="nuts", fast=True)
    assert fast.strategy.name == "d-gpucb-mc-min"
    assert ppd.Optimizer(p, n_init=3, seed=0, correlated=True).strategy.name == "d-gpucb-mc"


def test_a_network_on_the_log_scale_fits_log_y_and_samples_positive_nodes(tmp_path):
    p = positive_network()
    kw = dict(strategy="network-ucb", n_init=5, seed=1, outcome_transform="log")
    opt = ppd.Optimizer(p, **kw)
    opt.run(8)
    Y = opt.state.Y
    for k, name in enumerate(p.component_names):  # each GP on the log of its node
        gp = opt.models[name]
        np.testing.assert_allclose(gp.y_train, np.log(Y[: len(gp.y_train), k]), rtol=1e-12)
        # its parent's column in the system's units, as the child reads it
    b_inputs = opt.models["b"].X_train
    np.testing.assert_allclose(b_inputs[:, 1], Y[: len(b_inputs), 0], rtol=1e-12)
    ds = opt.predict(p.domain.sample(6, seed=2), n_samples=256)
    assert np.all(ds["component_draws"].values > 0)
    # the report's network picture draws each fit in the node's units
    from pp_decomp.apps.network_picture import _fit

    class Axes:  # records what a panel draws
        def __init__(self):
            self.bars = []

        def errorbar(self, x, y, yerr, **kw):
            self.bars.append((x, y, yerr))

        def __getattr__(self, name):
            return lambda *a, **k: None

    ax = Axes()
    _fit(ax, opt.report_view(), p.metadata["network"], 0)
    x, median, err = ax.bars[0]
    np.testing.assert_allclose(median, x, rtol=0.05)  # fitted, in a's units
    assert np.all(err > 0) and np.all(err[1] > err[0])  # a log-normal's interval
    # a resumed run makes the same choices
    path = tmp_path / "log.nc"
    ppd.Optimizer.open(path, p, **kw).run(6)
    resumed = ppd.Optimizer.open(path, p, **kw).run(8)
    np.testing.assert_array_equal(resumed["x"].values, opt.results()["x"].values)


def test_a_nodes_own_log_transform_logs_that_node_only():
    p = positive_network()
    opt = ppd.Optimizer(
        p, strategy="network-ei", n_init=5, seed=0,
        components={"a": ppd.ComponentGP("matern32", transform="log")},
    )  # fmt: skip
    opt.run(7)
    Y = opt.state.Y
    n = len(opt.models["a"].y_train)
    np.testing.assert_allclose(opt.models["a"].y_train, np.log(Y[:n, 0]), rtol=1e-12)
    np.testing.assert_allclose(opt.models["b"].y_train, Y[:n, 1], rtol=1e-12)
    assert opt.settings.model.outcome_transform == ("log", "none")


def test_a_non_positive_output_told_to_a_logged_node_is_named_and_nothing_is_dropped():
    opt = ppd.Optimizer(positive_network(), strategy="network-ucb", n_init=3, seed=0,
                        outcome_transform="log")  # fmt: skip
    x = opt.ask()
    with pytest.raises(ValueError, match=r"needs positive components; b = -1\.0"):
        opt.tell(x, [2.0, -1.0])
    assert opt.n == 0 and len(opt.pending) == 1
    opt.tell(x, [2.0, 1.0])
    assert opt.n == 1


def test_a_log_transform_on_a_composed_strategy_is_refused_before_any_evaluation():
    calls = []

    def node(Z):
        calls.append(len(Z))
        return np.exp(Z[:, 0])

    p = network_problem(Network([Node("a", node, inputs=(0,))], dim=1), ppd.Box([0], [1]))
    calls.clear()  # the problem's own shape check
    with pytest.raises(Exception, match="node GPs of a network strategy"):
        ppd.Optimizer(p, strategy="gp-ucb", outcome_transform="log").run(5)
    assert not calls


NUTS_FITS = {"chains", "reweighted chains"}


@pytest.mark.slow
def test_a_full_bayes_network_run_refreshes_each_node_between_nuts_fits(chain):
    from pp_decomp.loop import FastSettings

    kw = dict(
        strategy="network-ucb", inference="nuts", n_init=5, seed=0,
        nuts_kwargs={"draws": 100, "tune": 100, "chains": 2},
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = ppd.Optimizer(chain, **kw)
        ds = opt.run(12)
        never = ppd.Optimizer(chain, **kw, fast_settings=FastSettings(max_refreshes=0)).run(8)
    assert ds["refit"].values[5:].all()
    fits = ds["fit_draws"].values[5:]  # (steps, nodes)
    assert set(fits[0]) <= NUTS_FITS  # the first fit has no draws to refresh
    assert set(fits.ravel()) <= NUTS_FITS | {"posterior importance"}
    assert (fits == "posterior importance").any()
    for node in fits.T:  # at most max_refreshes (3) refreshes in a row, then NUTS
        row = "".join("r" if f == "posterior importance" else "n" for f in node)
        assert "rrrr" not in row, row
    assert all(opt.models[n].n_draws > 1 for n in ("y0", "y1", "y2"))
    assert set(never["fit_draws"].values[5:].ravel()) <= NUTS_FITS


RUN = """
import sys, warnings
import pp_decomp as ppd
from pp_decomp.models.networks import alpine2_network

warnings.simplefilter("ignore")
with ppd.Optimizer.open({path!r}, alpine2_network(n_nodes=3), **{kw!r}) as opt:
    opt.run({n})
"""


@pytest.mark.slow
def test_a_full_bayes_network_run_killed_mid_run_resumes_to_the_same_choices(chain, tmp_path):
    from tests.loop.test_user_path import killed_after

    kw = dict(
        strategy="network-ucb", inference="nuts", n_init=5, seed=4,
        nuts_kwargs={"draws": 100, "tune": 100, "chains": 2},
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        straight = ppd.Optimizer(chain, **kw).run(10)
    path = tmp_path / "net.nc"
    told = killed_after(RUN.format(path=str(path), kw=kw, n=10), path, 7, 600)
    assert 7 <= told < 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed = ppd.Optimizer.open(path, chain, **kw)
        assert resumed.n == told
        ds = resumed.run(10)
    np.testing.assert_array_equal(ds["x"].values, straight["x"].values)


def test_the_calibration_scores_each_node_through_the_network(chain):
    from pp_decomp.apps.calibration import calibration_run

    ds = calibration_run(
        chain, "network-ucb", seeds=[0], iterations=9, every=2, n_points=40, n_init=6,
        n_samples=256,
    )  # fmt: skip
    cover = ds["component_coverage"] if "component_coverage" in ds else None
    assert cover is not None and set(cover["component"].values) == {"y0", "y1", "y2"}
    assert np.all(np.isfinite(cover.values)) and np.all((cover.values >= 0) & (cover.values <= 1))


def test_a_told_node_output_that_is_nan_is_named_and_nothing_is_dropped(chain):
    opt = ppd.Optimizer(chain, strategy="network-ei", n_init=3, seed=0)
    x = opt.ask()
    with pytest.raises(ValueError, match=r"component 'y1' is nan at index \(0, 1\)"):
        opt.tell(x, [1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match="must have 3 column"):
        opt.tell(x, [1.0, 2.0])
    assert opt.n == 0 and len(opt.pending) == 1
    opt.tell(x, [1.0, 1.5, 2.0])
    assert opt.n == 1 and len(opt.pending) == 0
