"""A function network in the loop: the network strategies' runs, their results and
posterior, resume to the same choices, and the refusals before any evaluation."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import pp_decomp as ppd
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


def test_a_log_outcome_transform_is_refused_before_any_evaluation():
    calls = []

    def node(Z):
        calls.append(len(Z))
        return np.exp(Z[:, 0])

    p = network_problem(Network([Node("a", node, inputs=(0,))], dim=1), ppd.Box([0], [1]))
    calls.clear()  # the problem's own shape check
    with pytest.raises(ValueError, match="outcome_transform='log'"):
        ppd.Optimizer(p, strategy="network-ucb", outcome_transform="log").run(5)
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
