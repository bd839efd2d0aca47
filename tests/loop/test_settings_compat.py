"""Settings stored by earlier versions resume with the behaviour they were run with."""

from __future__ import annotations

from pp_decomp.loop.settings import RunSettings
from pp_decomp.models import get_problem


def _stored(**additive) -> dict:
    problem = get_problem("kandasamy-10-3-3", seed=0)
    settings = RunSettings.build(problem, strategy="add-gp-ucb", n_init=3, seed=0)
    stored = settings.to_dict()
    stored["additive_settings"] = additive
    return stored


def test_checkpoints_from_before_shared_hyperparameters_resume_untied():
    kw = RunSettings.kwargs_from_dict(_stored(n_cyc=25))  # no shared_hyperparameters key
    assert kw["additive_settings"].shared_hyperparameters is False


def test_stored_shared_hyperparameters_are_kept():
    kw = RunSettings.kwargs_from_dict(_stored(n_cyc=25, shared_hyperparameters=True))
    assert kw["additive_settings"].shared_hyperparameters is True


def test_fast_checkpoints_from_before_lag_prior_and_draw_sizing_keep_them_off():
    problem = get_problem("synthetic", seed=0, n_components=2, n_points=50)
    stored = RunSettings.build(problem, strategy="d-gpucb", inference="nuts", seed=0).to_dict()
    for key in ("lag_fraction", "prior_draws", "min_draws", "ess_collapse"):
        del stored["fast_settings"][key]
    fs = RunSettings.kwargs_from_dict(stored)["fast_settings"]
    assert fs.lag_fraction == 0.0 and fs.prior_draws == 0 and fs.lag_at(100) == fs.lag
    assert fs.ess_collapse == 0.0  # collapsed draws waited for their lag
    assert fs.draws_for(1.0) == fs.draws  # every refit of full size
    fresh = RunSettings.kwargs_from_dict(
        RunSettings.build(problem, "d-gpucb", inference="nuts").to_dict()
    )
    assert fresh["fast_settings"].lag_fraction > 0 and fresh["fast_settings"].prior_draws > 0
    assert fresh["fast_settings"].ess_collapse > 0


def test_checkpoints_from_before_reweight_keep_their_behaviour_and_resume():
    """A NUTS run stored before ``reweight`` existed used a relearning's draws
    unweighed and keeps doing so; a MAP run, which reweighting never touches,
    resumes under the default (so a bench of it can be extended)."""
    stored = _stored(n_cyc=25, shared_hyperparameters=True)  # inference "map"
    assert RunSettings.kwargs_from_dict(stored)["additive_settings"].reweight is True
    stored["inference"] = "nuts"
    assert RunSettings.kwargs_from_dict(stored)["additive_settings"].reweight is False
    stored["additive_settings"]["reweight"] = True
    assert RunSettings.kwargs_from_dict(stored)["additive_settings"].reweight is True
