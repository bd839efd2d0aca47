"""opt.posterior: each GP's hyperparameter posterior as ArviZ takes it, every model kind."""

from __future__ import annotations

import warnings

import arviz_stats
import numpy as np
import pytest
import xarray as xr

import pp_decomp as ppd
from pp_decomp.loop import FastSettings
from pp_decomp.models import get_problem


def _synthetic():
    return get_problem("synthetic", seed=5, n_components=2, n_points=120)


def _weights(tree) -> np.ndarray:
    return np.exp(tree["draws_in_use"]["log_weight"].values.ravel())


def test_a_map_run_gives_its_mode_as_one_draw(tmp_path):
    opt = ppd.Optimizer(_synthetic(), n_init=4, seed=0)
    opt.run(7)
    trees = opt.posterior()
    assert set(trees) == {"f0", "f1"}
    tree = trees["f0"]
    assert tree.attrs["fit_draws"] == "map" and "mode" in tree.attrs["description"]
    assert tree["posterior"].sizes["chain"] == 1 and tree["posterior"].sizes["draw"] == 1
    table = arviz_stats.summary(tree, var_names=["ls", "eta", "sigma"], kind="stats")
    assert len(table) == 3 and np.isclose(_weights(tree).sum(), 1.0)
    tree.to_netcdf(tmp_path / "f0.nc")  # its attributes are netCDF's
    assert xr.open_datatree(tmp_path / "f0.nc")["draws_in_use"]["ls"].shape == (1, 1, 1)


@pytest.mark.slow
def test_full_bayes_chains_give_r_hat_from_two_chains_and_the_weights_in_use():
    kw = dict(inference="nuts", n_init=4, seed=4, mc_samples=64)
    fast = dict(draws=100, tune=150, chains=2, kept_draws=64, prior_draws=0, max_age=None)
    kw["fast_settings"] = FastSettings(**fast)  # no prior importance: the first fit is NUTS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny NUTS settings: diagnostics may complain
        opt = ppd.Optimizer(_synthetic(), "d-gpucb", **kw)
        opt.run(8)
    tree = opt.posterior("f0")
    assert tree.attrs["fit_draws"] in ("chains", "reweighted chains", "posterior importance")
    if tree.attrs["fit_draws"] == "posterior importance":
        pytest.skip("the last refit refreshed the draws by importance sampling")
    assert tree["posterior"].sizes["chain"] == 2 and "sample_stats" in tree.children
    table = arviz_stats.summary(tree, var_names=["ls", "eta", "sigma"])
    assert np.all(np.isfinite(table["r_hat"].astype(float)))
    assert tree.attrs["description"].startswith("NUTS, 2 chains")
    w = _weights(tree)  # reweighted by the observations since the refit
    assert np.isclose(w.sum(), 1.0) and 1 <= tree.attrs["ess_in_use"] <= len(w)


def test_importance_draws_say_so_with_their_ess_and_k():
    opt = ppd.Optimizer(_synthetic(), "d-gpucb", inference="nuts", n_init=4, seed=0)
    opt.run(6)
    tree = opt.posterior("f1")
    assert tree.attrs["fit_draws"] == "prior importance"
    assert "importance weights (weights' ESS" in tree.attrs["description"]
    assert np.isfinite(tree.attrs["ess_bulk_min"]) and np.isfinite(tree.attrs["fit_pareto_k"])
    table = arviz_stats.summary(tree, var_names=["ls", "eta", "sigma"], kind="diagnostics")
    assert np.all(np.isnan(table["r_hat"].astype(float)))  # one chain: no r-hat


@pytest.mark.parametrize(
    "strategy,kw,name,var,fit",
    [
        ("d-gpucb", dict(correlated=True), "f0", "corr", "map"),
        ("gp-ucb", {}, "composed", "ls", "map"),
        # between structure searches the additive GP keeps the last search's draws
        ("add-gp-ucb", {}, "additive", "ls", "fixed"),
    ],
)
def test_every_model_kind_has_a_tree(strategy, kw, name, var, fit):
    problem = get_problem("kandasamy-10-3-3", seed=0) if "add" in strategy else _synthetic()
    opt = ppd.Optimizer(problem, strategy, n_init=4, seed=0, **kw)
    opt.run(6)
    tree = opt.posterior(name)
    assert var in tree["posterior"] and var in tree["draws_in_use"]
    assert tree.attrs["fit_draws"] == fit


def test_asking_before_a_fit_or_for_an_unknown_gp_is_refused_by_name():
    opt = ppd.Optimizer(_synthetic(), n_init=4, seed=0)
    with pytest.raises(ValueError, match="posterior needs a model fitted on the initial design"):
        opt.posterior()
    opt.run(6)
    with pytest.raises(KeyError, match=r"name must be one of \['f0', 'f1'\]; got 'f9'"):
        opt.posterior("f9")
