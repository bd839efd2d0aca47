"""A user's own Strategy object: kept as given, predicted with, resumed."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pp_decomp as ppd
from pp_decomp.acquisition import DGPUCB
from pp_decomp.models import get_problem
from pp_decomp.strategies import STRATEGIES


def _mine():
    return dataclasses.replace(
        STRATEGIES["d-gpucb"],
        name="my-ucb",
        description="D-GPUCB with β doubled",
        build=lambda ctx: DGPUCB(ctx.decomposed, 2.0 * ctx.beta),
    )


def _problem():
    return get_problem("synthetic", seed=5, n_components=2, n_points=120)


def test_an_unregistered_strategy_runs_predicts_and_resumes_with_the_same_choices(tmp_path):
    mine = _mine()
    opt = ppd.Optimizer(_problem(), mine, n_init=4, seed=0, checkpoint=tmp_path / "run.nc")
    opt.run(7)
    assert opt.strategy is mine and opt.results().attrs["settings"].count('"my-ucb"') == 1
    post = opt.predict(opt.problem.domain.X[:3], n_samples=64)
    assert np.all(np.isfinite(post["bound"].values))
    opt.close()
    with pytest.raises(ValueError, match="user strategy 'my-ucb'; pass the same Strategy"):
        ppd.Optimizer.resume(tmp_path / "run.nc", _problem())
    resumed = ppd.Optimizer.resume(tmp_path / "run.nc", _problem(), strategy=mine)
    resumed.run(9)
    whole = ppd.Optimizer(_problem(), mine, n_init=4, seed=0)
    whole.run(9)
    np.testing.assert_array_equal(resumed.X, whole.X)
    # the doubled β is used: the same run with D-GPUCB chooses otherwise
    plain = ppd.Optimizer(_problem(), "d-gpucb", n_init=4, seed=0)
    plain.run(9)
    assert not np.array_equal(plain.X, whole.X)
