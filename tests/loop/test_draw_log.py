"""The draw log: every step's hyperparameter draws kept with the run, and re-read from the file."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import pp_decomp as ppd
from pp_decomp.loop.checkpoint import read_draws
from pp_decomp.loop.records import step_posterior
from pp_decomp.models import get_problem


def _synthetic():
    return get_problem("synthetic", seed=5, n_components=2, n_points=120)


def _full_bayes(**kw):
    return ppd.Optimizer(_synthetic(), "d-gpucb", inference="nuts", n_init=4, seed=0, **kw)


def test_the_file_alone_holds_each_steps_draws_and_they_agree_with_the_summaries(tmp_path):
    path = tmp_path / "run.nc"
    opt = _full_bayes(checkpoint=path)
    opt.run(9)
    opt.close()
    results = xr.open_dataset(path)
    draws = xr.open_dataset(path, group="draws")  # no pp_decomp needed
    assert draws["gp"].values.tolist() == ["f0", "f1"]
    chose = results["iteration"].values[results["phase"].values == "acquisition"]
    for g in ("f0", "f1"):
        at = draws["step_iteration"].sel(gp=g).values
        assert at[at >= 0].tolist() == chose.tolist()
    # each refit's hyper_posterior summary is the mean of the draws stored for that step
    refits = 0
    for i in chose:
        for g in ("f0", "f1"):
            if not results["refit"].sel(iteration=i, model=g):
                continue
            tree = step_posterior(draws, g, int(i))
            stored = tree["posterior"]["eta"].values.mean()
            summary = results["hyper_posterior"].sel(
                iteration=i, model=g, parameter="eta", statistic="mean"
            )
            np.testing.assert_allclose(stored, float(summary), rtol=1e-12)
            refits += 1
    assert refits >= 2
    # between refits the fast path reweights the same draws: the weights move, the fit stays
    s = draws.sel(gp="f0")
    used = s["fit_used"].values[s["step_iteration"].values >= 0]
    assert len(set(used.tolist())) < len(used)
    w = np.exp(s["log_weight"].values[s["step_iteration"].values >= 0])
    np.testing.assert_allclose(np.nansum(w, axis=1), 1.0)
    assert not np.allclose(w[-1], w[-1][0])


def test_a_resumed_run_extends_the_same_log_as_the_uninterrupted_run(tmp_path):
    path = tmp_path / "run.nc"
    first = ppd.Optimizer(_synthetic(), n_init=4, seed=1, checkpoint=path)
    first.run(7)
    first.close()
    resumed = ppd.Optimizer.resume(path, _synthetic())
    resumed.run(10)
    resumed.close()
    whole = ppd.Optimizer(_synthetic(), n_init=4, seed=1)
    whole.run(10)
    xr.testing.assert_identical(read_draws(path), whole.draw_log.to_dataset(whole.records))
    # MAP: one draw per fit, and the optimiser's own view of a past step
    tree = whole.posterior("f1", iteration=8)
    assert tree["posterior"].sizes["draw"] == 1 and tree.attrs["iteration"] == 8


def test_asking_for_a_step_without_a_model_is_refused_by_name():
    opt = ppd.Optimizer(_synthetic(), n_init=4, seed=0)
    with pytest.raises(ValueError, match="no step of this run chose with a model"):
        opt.posterior("f0", iteration=0)
    opt.run(6)
    with pytest.raises(ValueError, match=r"iteration must be a step .*\[5, 6\]\); got 2"):
        opt.posterior("f0", iteration=2)
    with pytest.raises(KeyError, match="name must be one of"):
        opt.posterior("nope", iteration=5)
