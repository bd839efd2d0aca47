"""A user's own Strategy object and Updater: kept as given, predicted with, resumed."""

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


class _Counting:
    """A user's updater: the settings' own, counting its updates."""

    def __init__(self, inner):
        self.inner, self.calls = inner, 0

    def update(self, data, t, rng, rec):
        self.calls += 1
        return self.inner.update(data, t, rng, rec)

    def state(self):
        return self.inner.state()

    def restore(self, state, data):
        self.inner.restore(state, data)


def test_an_injected_updater_keeps_the_models_and_the_same_choices(tmp_path):
    from pp_decomp.loop.updaters.factory import make_updater

    plain = ppd.Optimizer(_problem(), "d-gpucb", n_init=4, seed=0)
    plain.run(8)
    counting = _Counting(make_updater(plain.settings, plain.strategy, plain.model_problem))
    path = tmp_path / "run.nc"
    opt = ppd.Optimizer(_problem(), "d-gpucb", n_init=4, seed=0, updater=counting, checkpoint=path)
    opt.run(6)
    assert opt.updater is counting and counting.calls == 2  # steps 5 and 6 chose with models
    opt.close()
    again = _Counting(make_updater(plain.settings, plain.strategy, plain.model_problem))
    resumed = ppd.Optimizer.resume(path, _problem(), updater=again)
    resumed.run(8)
    assert again.calls == 2
    np.testing.assert_array_equal(resumed.X, plain.X)
    with pytest.raises(TypeError, match="updater must have update, state and restore; got 'refit'"):
        ppd.Optimizer(_problem(), "d-gpucb", updater="refit")
